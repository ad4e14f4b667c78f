package r2r

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	micro := time.Date(2025, 11, 6, 12, 34, 56, 123456000, time.UTC)
	whole := time.Date(2025, 11, 6, 12, 34, 56, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2025-11-06T12:34:56.123456Z", micro},
		{"2025-11-06T12:34:56Z", whole},
		{"2025-11-06T12:34:56.123456+00:00", micro},
		{"2025-11-06T14:34:56.123456+02:00", micro},
		{"2025-11-06T07:34:56.123456-05:00", micro},
		{"2025-11-06T12:34:56.123456+0000", micro},
		{"2025-11-06T12:34:56.123456+00", micro},
		{"2025-11-06T12:34:56.123456", micro}, // naive: UTC
		{"2025-11-06T12:34:56", whole},
		{"2025-11-06 12:34:56.123456", micro},
		{"2025-11-06 12:34:56.123456+00:00", micro},
		{" 2025-11-06T12:34:56Z ", whole},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"yesterday", "2025-11-06", "2025-13-06T12:34:56Z", "12:34:56", "2025-11-06T12:34:56.123456+25:00"} {
		if got, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, got)
		}
	}
}

func TestTimeJSON(t *testing.T) {
	var v struct {
		A, B, C, D Time
	}
	in := `{"A":"2025-11-06T12:34:56.5","B":null,"C":"","D":"2025-11-06T12:34:56+01:00"}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if !v.A.Equal(time.Date(2025, 11, 6, 12, 34, 56, 5e8, time.UTC)) || !v.B.IsZero() || !v.C.IsZero() ||
		!v.D.Equal(time.Date(2025, 11, 6, 11, 34, 56, 0, time.UTC)) {
		t.Fatalf("decoded %+v", v)
	}
	out, err := json.Marshal(v)
	if err != nil || string(out) != `{"A":"2025-11-06T12:34:56.5Z","B":null,"C":null,"D":"2025-11-06T12:34:56+01:00"}` {
		t.Fatalf("encoded %s, %v", out, err)
	}
	for _, bad := range []string{`{"A":12}`, `{"A":"soon"}`, `{"A":{}}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	var tx Time
	if err := tx.UnmarshalText([]byte("2025-11-06 12:34:56")); err != nil || tx.Hour() != 12 {
		t.Fatalf("UnmarshalText: %v %v", tx, err)
	}
}

// TestWireTypesDecodeTimestampsLeniently: every timestamp of the wire types goes through
// Time, and the other fields still decode.
func TestWireTypesDecodeTimestampsLeniently(t *testing.T) {
	const naive, offset = `"2025-11-06T12:34:56.123456"`, `"2025-11-06T12:34:56.123456+00:00"`
	want := time.Date(2025, 11, 6, 12, 34, 56, 123456000, time.UTC)

	var d Document
	if err := json.Unmarshal([]byte(`{"id":"d1","title":"T","created_at":`+naive+`,"updated_at":`+offset+`,"metadata":{"k":"v"}}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != "d1" || *d.Title != "T" || d.Metadata["k"] != "v" || !d.CreatedAt.Equal(want) || !d.UpdatedAt.Equal(want) {
		t.Fatalf("document %+v", d)
	}
	var col Collection
	if err := json.Unmarshal([]byte(`{"id":"c1","name":"n","document_count":3,"created_at":null,"updated_at":`+naive+`}`), &col); err != nil {
		t.Fatal(err)
	}
	if col.ID != "c1" || col.DocumentCount != 3 || !col.CreatedAt.IsZero() || !col.UpdatedAt.Equal(want) {
		t.Fatalf("collection %+v", col)
	}
	var u User
	if err := json.Unmarshal([]byte(`{"id":"u1","email":"e@x","is_superuser":true,"created_at":`+naive+`}`), &u); err != nil {
		t.Fatal(err)
	}
	if u.ID != "u1" || !u.IsSuperuser || !u.CreatedAt.Equal(want) || !u.UpdatedAt.IsZero() {
		t.Fatalf("user %+v", u)
	}
	var keys Page[APIKeyInfo]
	if err := json.Unmarshal([]byte(`{"results":[{"key_id":"k","updated_at":`+naive+`}],"total_entries":1}`), &keys); err != nil {
		t.Fatal(err)
	}
	if keys.Items[0].KeyID != "k" || !keys.Items[0].UpdatedAt.Equal(want) {
		t.Fatalf("keys %+v", keys)
	}
	// A broken timestamp is still an error: it is not silently a zero time.
	if err := json.Unmarshal([]byte(`{"id":"d1","created_at":"last tuesday"}`), &d); err == nil {
		t.Fatal("garbage timestamp decoded")
	}
}

// ragBody is a RAG answer with every kind of citation this client meets: a chunk, a graph
// result, a web result, a numeric id, a payload whose chunk id has the wrong type, one
// citation that is not an object, and metadata that is not an object.
const ragBody = `{"results":{
 "generated_answer":"Breakers open after five failures [abc1234] [g1] [w1] [42] [bad1].",
 "search_results":{"chunk_search_results":[
   {"id":"abc12345-0000-0000-0000-000000000000","document_id":"doc-1","owner_id":"o","collection_ids":["c"],"score":0.9,"text":"five failures","metadata":{}},
   {"id":7,"document_id":"doc-2","score":"high","text":"odd hit"}],
  "graph_search_results":[{"content":{"name":"Breaker"},"result_type":"entity"}]},
 "citations":[
   {"id":"abc1234","object":"citation","is_new":true,"span":null,"source_type":null,
    "payload":{"id":"abc12345-0000-0000-0000-000000000000","document_id":"doc-1","owner_id":"o","collection_ids":["c"],"score":0.9,"text":"five failures","metadata":{"title":"a.md"}}},
   {"id":"g1","object":"citation","is_new":true,"span":{"start":1,"end":5},"source_type":"graph",
    "payload":{"id":"e1","content":{"name":"Breaker","description":"a switch"},"result_type":"entity","chunk_ids":["x"]}},
   {"id":"w1","object":"citation","payload":{"title":"Docs","link":"https://example.com","snippet":"..."}},
   {"id":42,"object":"citation","payload":null},
   {"id":"bad1","object":"citation","span":"oops","payload":{"id":99,"document_id":"doc-3","text":"x"}},
   "not a citation"],
 "metadata":"unexpected",
 "completion":"Breakers open after five failures [abc1234] [g1] [w1] [42] [bad1]."}}`

func TestRAGDecodesBestEffort(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, ragBody)
	}, Options{})
	res, err := c.RAG(t.Context(), RAGRequest{Query: "when does the breaker open?"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.GeneratedAnswer, "Breakers open after five failures") || res.Completion != res.GeneratedAnswer {
		t.Fatalf("answer %q", res.GeneratedAnswer)
	}
	if len(res.Citations) != 5 {
		t.Fatalf("citations %+v", res.Citations)
	}
	chunk, graph, web, numeric, bad := res.Citations[0], res.Citations[1], res.Citations[2], res.Citations[3], res.Citations[4]
	if chunk.ID != "abc1234" || chunk.Payload == nil || chunk.Payload.DocumentID != "doc-1" || chunk.Payload.Metadata["title"] != "a.md" || !chunk.IsNew {
		t.Errorf("chunk citation %+v", chunk)
	}
	if graph.Payload != nil || graph.Span == nil || graph.Span.End != 5 || !strings.Contains(string(graph.RawPayload), `"result_type":"entity"`) {
		t.Errorf("graph citation %+v", graph)
	}
	if web.Payload != nil || !strings.Contains(string(web.RawPayload), "example.com") {
		t.Errorf("web citation %+v", web)
	}
	if numeric.ID != "42" || numeric.Payload != nil || numeric.RawPayload != nil {
		t.Errorf("numeric citation %+v", numeric)
	}
	if bad.ID != "bad1" || bad.Span != nil || bad.Payload != nil || bad.RawPayload == nil {
		t.Errorf("malformed citation %+v", bad)
	}
	// One chunk hit had wrong types; the good one and the graph results survive.
	sr := res.SearchResults
	if len(sr.ChunkSearchResults) != 1 || sr.ChunkSearchResults[0].DocumentID != "doc-1" || len(sr.GraphSearchResults) != 1 {
		t.Errorf("search results %+v", sr)
	}
	if res.Metadata != nil {
		t.Errorf("metadata %v", res.Metadata)
	}
	skipped := strings.Join(res.Skipped, "\n")
	for _, want := range []string{"citations[5]:", "metadata:", "search_results.chunk_search_results[1]:"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("Skipped lacks %q:\n%s", want, skipped)
		}
	}
	if len(res.Skipped) != 3 {
		t.Errorf("Skipped = %q", res.Skipped)
	}
}

func TestRAGDecodeEdgeCases(t *testing.T) {
	tests := []struct {
		name, body string
		check      func(t *testing.T, r RAGResponse)
	}{
		{"well-formed answer skips nothing", `{"generated_answer":"a","search_results":{"chunk_search_results":[],"graph_search_results":null},"citations":null,"metadata":{"model":"m"},"completion":"a"}`,
			func(t *testing.T, r RAGResponse) {
				if r.GeneratedAnswer != "a" || r.Citations != nil || r.Metadata["model"] != "m" || len(r.Skipped) != 0 {
					t.Fatalf("%+v", r)
				}
			}},
		{"answer falls back to completion", `{"completion":"from completion"}`,
			func(t *testing.T, r RAGResponse) {
				if r.GeneratedAnswer != "from completion" {
					t.Fatalf("%+v", r)
				}
			}},
		{"citations not a list", `{"generated_answer":"a","citations":{"id":"x"}}`,
			func(t *testing.T, r RAGResponse) {
				if r.GeneratedAnswer != "a" || len(r.Citations) != 0 || len(r.Skipped) != 1 || !strings.HasPrefix(r.Skipped[0], "citations:") {
					t.Fatalf("%+v", r)
				}
			}},
		{"search results not an object", `{"generated_answer":"a","search_results":[1,2]}`,
			func(t *testing.T, r RAGResponse) {
				if r.GeneratedAnswer != "a" || len(r.Skipped) != 1 || !strings.HasPrefix(r.Skipped[0], "search_results:") {
					t.Fatalf("%+v", r)
				}
			}},
		{"chunk-shaped payload with another source type", `{"generated_answer":"a","citations":[{"id":"x","source_type":"web","payload":{"id":"c","document_id":"d"}}]}`,
			func(t *testing.T, r RAGResponse) {
				if len(r.Citations) != 1 || r.Citations[0].Payload != nil || *r.Citations[0].SourceType != "web" {
					t.Fatalf("%+v", r)
				}
			}},
		{"skipped notes are bounded", `{"generated_answer":"a","citations":[` + strings.Repeat(`1,`, 40) + `1]}`,
			func(t *testing.T, r RAGResponse) {
				if len(r.Citations) != 0 || len(r.Skipped) != maxSkipped {
					t.Fatalf("%d citations, %d skipped", len(r.Citations), len(r.Skipped))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r RAGResponse
			if err := json.Unmarshal([]byte(tt.body), &r); err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
	var r RAGResponse
	for _, bad := range []string{`[]`, `{"generated_answer":5}`} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// TestRAGResponseRoundTrip: a decoded answer encodes and decodes to the same chunk
// citations (e.g. for a cache that stores JSON).
func TestRAGResponseRoundTrip(t *testing.T) {
	var env struct{ Results RAGResponse }
	if err := json.Unmarshal([]byte(ragBody), &env); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(env.Results)
	if err != nil {
		t.Fatal(err)
	}
	var again RAGResponse
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if again.GeneratedAnswer != env.Results.GeneratedAnswer || len(again.Citations) != 5 || again.Citations[0].Payload == nil ||
		again.Citations[0].Payload.Metadata["title"] != "a.md" {
		t.Fatalf("round trip %+v", again)
	}
}
