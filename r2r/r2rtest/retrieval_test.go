package r2rtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func searchHits(t *testing.T, r *resp) []map[string]any {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var out []map[string]any
	for _, h := range r.results()["chunk_search_results"].([]any) {
		out = append(out, h.(map[string]any))
	}
	return out
}

func TestSearch(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	if resp, err := s.HTTPClient().Get(s.URL + "/v3/health"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTPClient: %v", err)
	} else {
		resp.Body.Close()
	}
	volc := c.rawText("Volcanoes erupt molten lava when magma pressure builds under the crust.", map[string]any{"title": "Volcanoes"})
	c.rawText("Glaciers carve valleys as compacted ice slowly flows downhill.", nil)
	c.rawText("Deserts receive little rain; dunes shift with the wind.", map[string]any{"title": "Deserts"})

	t.Run("best match first, scores in 0..1", func(t *testing.T) {
		hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "magma pressure under the crust"}))
		if len(hits) != 3 || hits[0]["document_id"] != volc {
			t.Fatalf("hits %v", hits)
		}
		prev := 2.0
		for _, h := range hits {
			sc := h["score"].(float64)
			if sc < 0 || sc > 1 || sc > prev {
				t.Fatalf("scores not descending in 0..1: %v", hits)
			}
			prev = sc
		}
		if hits[2]["score"].(float64) != 0 {
			t.Fatalf("unrelated chunk scored %v", hits[2]["score"])
		}
		h := hits[0]
		if h["text"] != "Document Title: Volcanoes\n\nText: Volcanoes erupt molten lava when magma pressure builds under the crust." {
			t.Fatalf("text %q", h["text"])
		}
		meta := h["metadata"].(map[string]any)
		if meta["associated_query"] != "magma pressure under the crust" || meta["title"] != "Volcanoes" || meta["chunk_order"] != float64(0) {
			t.Fatalf("metadata %v", meta)
		}
		for _, k := range []string{"id", "owner_id", "collection_ids"} {
			if _, ok := h[k]; !ok {
				t.Fatalf("missing %s", k)
			}
		}
		agg := c.postJSON("/v3/retrieval/search", map[string]any{"query": "x"}).results()
		if g, ok := agg["graph_search_results"].([]any); !ok || len(g) != 0 {
			t.Fatalf("graph results %v", agg["graph_search_results"])
		}
		for _, k := range []string{"web_page_search_results", "web_search_results", "document_search_results", "generic_tool_result"} {
			if v, ok := agg[k]; !ok || v != nil {
				t.Fatalf("%s should be present and null", k)
			}
		}
	})
	t.Run("include_scores and include_metadatas false", func(t *testing.T) {
		hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "volcanoes",
			"search_settings": map[string]any{"include_scores": false, "include_metadatas": false}}))
		h := hits[0]
		if h["score"] != float64(-1) || !strings.HasPrefix(h["text"].(string), "Volcanoes erupt") {
			t.Fatalf("%v", h)
		}
		if meta := h["metadata"].(map[string]any); len(meta) != 1 || meta["associated_query"] != "volcanoes" {
			t.Fatalf("metadata %v", meta)
		}
	})
	t.Run("limit, offset, legacy search_filters", func(t *testing.T) {
		all := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "dunes wind rain"}))
		page := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "dunes wind rain",
			"search_settings": map[string]any{"limit": 1, "offset": 1}}))
		if len(page) != 1 || page[0]["id"] != all[1]["id"] {
			t.Fatalf("page %v", page)
		}
		f := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x",
			"search_settings": map[string]any{"search_filters": map[string]any{"title": "Deserts"}}}))
		if len(f) != 1 || f[0]["metadata"].(map[string]any)["title"] != "Deserts" {
			t.Fatalf("search_filters %v", f)
		}
	})
	t.Run("modes", func(t *testing.T) {
		for _, mode := range []string{"basic", "advanced", "custom"} {
			hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "glaciers ice", "search_mode": mode,
				"search_settings": map[string]any{"limit": 2}}))
			if len(hits) != 2 || !strings.Contains(hits[0]["text"].(string), "Glaciers") {
				t.Fatalf("mode %s: %v", mode, hits)
			}
		}
		// Full-text only returns matching chunks.
		ft := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "glaciers",
			"search_settings": map[string]any{"use_semantic_search": false, "use_fulltext_search": true}}))
		if len(ft) != 1 {
			t.Fatalf("full-text hits %v", ft)
		}
		wantInternal(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x",
			"search_settings": map[string]any{"use_semantic_search": false}}), "ValueError", "At least one of")
		off := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "glaciers",
			"search_settings": map[string]any{"chunk_settings": map[string]any{"enabled": false}}}))
		if len(off) != 0 {
			t.Fatalf("chunk search disabled but got %v", off)
		}
		// Explicit nulls mean "not provided".
		wantStatus(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x", "search_settings": nil, "search_mode": nil}), 200)
	})
	t.Run("errors", func(t *testing.T) {
		wantR2RError(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": ""}), 400, "Query cannot be empty")
		wantValidation(t, c.postJSON("/v3/retrieval/search", map[string]any{}), "body", "query")
		wantValidation(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": 5}), "body", "query")
		wantValidation(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x", "search_mode": "fuzzy"}), "body", "search_mode")
		wantValidation(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x", "search_settings": "x"}), "body", "search_settings")
		for _, tt := range []struct {
			settings map[string]any
			field    string
		}{
			{map[string]any{"limit": 0}, "limit"},
			{map[string]any{"limit": 1001}, "limit"},
			{map[string]any{"limit": 1.5}, "limit"},
			{map[string]any{"offset": -1}, "offset"},
			{map[string]any{"filters": []any{}}, "filters"},
			{map[string]any{"include_scores": "yes"}, "include_scores"},
		} {
			wantValidation(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "x", "search_settings": tt.settings}),
				"body", "search_settings", tt.field)
		}
		wantValidation(t, c.do("POST", "/v3/retrieval/search", "application/json", strings.NewReader("nope")), "body", 0)
	})
}

func TestRAG(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	doc := c.rawText("Lighthouses guide ships at night. Their lamps rotate.\n\nKeepers maintained the lenses.", map[string]any{"title": "Lights"})
	c.rawText("Bread rises because yeast ferments sugar.", nil)

	r := c.postJSON("/v3/retrieval/rag", map[string]any{"query": "How do lighthouses guide ships?",
		"search_settings": map[string]any{"limit": 5}, "rag_generation_config": map[string]any{"model": "openai/gpt-4o-mini"}})
	wantStatus(t, r, 200)
	res := r.results()
	answer := res["generated_answer"].(string)
	if answer != res["completion"] || !strings.HasPrefix(answer, "Lighthouses guide ships at night. [") {
		t.Fatalf("answer %q", answer)
	}
	// Extractive: only sentences that share a term with the question, so the unrelated bread
	// chunk, though retrieved, is neither quoted nor cited.
	cits := res["citations"].([]any)
	if len(cits) != 1 || strings.Contains(answer, "yeast") {
		t.Fatalf("answer %q citations %v, want only the lighthouse chunk", answer, cits)
	}
	c0 := cits[0].(map[string]any)
	payload := c0["payload"].(map[string]any)
	if c0["object"] != "citation" || c0["is_new"] != true || c0["span"] != nil || c0["source_type"] != nil ||
		!strings.HasPrefix(payload["id"].(string), c0["id"].(string)) || len(c0["id"].(string)) != 7 ||
		payload["document_id"] != doc || !strings.Contains(answer, "["+c0["id"].(string)+"]") {
		t.Fatalf("citation %v", c0)
	}
	meta := res["metadata"].(map[string]any)
	choice := meta["choices"].([]any)[0].(map[string]any)
	if meta["model"] != "gpt-4o-mini" || choice["finish_reason"] != "stop" { // asked: openai/gpt-4o-mini
		t.Fatalf("metadata %v", meta)
	}
	if _, hasContent := choice["message"].(map[string]any)["content"]; hasContent {
		t.Fatal("content must be removed from metadata")
	}
	if n := len(res["search_results"].(map[string]any)["chunk_search_results"].([]any)); n != 2 {
		t.Fatalf("search results %d", n)
	}

	t.Run("max_tokens caps the answer", func(t *testing.T) {
		r := c.postJSON("/v3/retrieval/rag", map[string]any{"query": "lighthouses",
			"rag_generation_config": map[string]any{"max_tokens": 2}})
		res := r.results()
		if got := res["generated_answer"].(string); len(strings.Fields(got)) != 3 || !strings.HasPrefix(got, "Lighthouses guide [") {
			t.Fatalf("answer %q", got)
		}
		if res["metadata"].(map[string]any)["model"] != DefaultRAGModel ||
			res["metadata"].(map[string]any)["choices"].([]any)[0].(map[string]any)["finish_reason"] != "length" {
			t.Fatalf("%v", res["metadata"])
		}
	})
	t.Run("filters apply and nothing found", func(t *testing.T) {
		r := c.postJSON("/v3/retrieval/rag", map[string]any{"query": "lighthouses",
			"search_settings": map[string]any{"filters": map[string]any{"title": "none"}}})
		res := r.results()
		if len(res["citations"].([]any)) != 0 || !strings.Contains(res["generated_answer"].(string), "could not find") {
			t.Fatalf("%v", res)
		}
		wantInternal(t, c.postJSON("/v3/retrieval/rag", map[string]any{"query": "x",
			"search_settings": map[string]any{"filters": map[string]any{"id": map[string]any{"$neq": 1}}}}), "FilterError", "$neq")
		wantValidation(t, c.postJSON("/v3/retrieval/rag", map[string]any{}), "body", "query")
	})
	t.Run("streaming", func(t *testing.T) {
		r := c.postJSON("/v3/retrieval/rag", map[string]any{"query": "lighthouses keepers",
			"rag_generation_config": map[string]any{"stream": true}})
		wantStatus(t, r, 200)
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("content type %q", r.header.Get("Content-Type"))
		}
		var events []string
		var text strings.Builder
		var final map[string]any
		sc := bufio.NewScanner(bytes.NewReader(r.raw))
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
				events = append(events, event)
			case strings.HasPrefix(line, "data: "):
				data := strings.TrimPrefix(line, "data: ")
				if event == "done" {
					if data != "[DONE]" {
						t.Fatalf("done data %q", data)
					}
					continue
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(data), &v); err != nil {
					t.Fatalf("event %s: %v", event, err)
				}
				switch event {
				case "message":
					for _, part := range v["delta"].(map[string]any)["content"].([]any) {
						text.WriteString(part.(map[string]any)["payload"].(map[string]any)["value"].(string))
					}
				case "final_answer":
					final = v
				case "search_results":
					if v["object"] != "rag.search_results" {
						t.Fatalf("%v", v)
					}
				case "citation":
					if v["payload"] == nil || v["span"] == nil {
						t.Fatalf("citation %v", v)
					}
				}
			}
		}
		seq := strings.Join(events, ",")
		if !strings.HasPrefix(seq, "search_results,message") || !strings.Contains(seq, "citation") || !strings.HasSuffix(seq, "final_answer,done") {
			t.Fatalf("events %s", seq)
		}
		if final["generated_answer"] != text.String() || len(final["citations"].([]any)) == 0 {
			t.Fatalf("final %v vs %q", final, text.String())
		}
	})
}
