package conformance

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// memories checks what team memories (tools/memory) rely on, through the store itself, so
// the requests are exactly r2r-mcp's: a memory is a raw-text document whose r2r_mcp_*
// metadata keys R2R reads as metadata paths in filters ($in on the kind, $contains on the
// paths and tags lists, a numeric $gte on the creation time; its author is R2R's owner_id
// column, which a filter reads with $in), copies
// into every chunk hit, and lists back with the collection's documents. Bare keys such as
// type and status are R2R's own columns, which its chunks table lacks: a filter on them
// fails, which is why the keys are namespaced.
func (s *suite) memories(t *testing.T) {
	ctx := t.Context()
	coll, err := s.admin.CreateCollection(ctx, "conf-"+s.sfx+"-memories", "")
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupCollection(coll.ID)
	st := &memory.Store{API: s.admin, CollectionID: coll.ID, Wait: s.tg.ingestWait, Poll: 100 * time.Millisecond}
	now := time.Now().UTC().Truncate(time.Second)
	save := func(t *testing.T, d memory.Draft, at time.Time) memory.Saved {
		t.Helper()
		d, err := memory.Normalise(d)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := st.Remember(ctx, d, memory.Stamp{UserID: s.adminID, Time: at, Commit: "0123456789abcdef0123456789abcdef01234567"})
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupDocument(saved.ID)
		s.waitIngested(t, saved.ID)
		return saved
	}
	fix := save(t, memory.Draft{Kind: memory.KindFix, Title: "Pelican importer crash " + s.sfx,
		Error: "panic: pelican migration index out of range [3] with length 3",
		Body:  "The pelican migration importer read one row past the end; bound the loop by len(rows).",
		Paths: []string{"importer/pelican.go"}, Tags: []string{"importer"}}, now.Add(-10*24*time.Hour))
	decision := save(t, memory.Draft{Kind: memory.KindDecision, Title: "Pelican counts in UTC " + s.sfx,
		Body:  "Pelican migration counts are stored in UTC so that colonies in two time zones compare.",
		Paths: []string{"counts/store.go"}, Tags: []string{"api"}}, now)
	plainID := memory.ID(coll.ID, s.adminID, "plain-"+s.sfx) // a document of the collection that is no memory
	s.cleanupDocument(plainID)
	if _, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{ID: plainID, RawText: "Pelican migration plain notes " + s.sfx,
		Metadata: map[string]any{"title": "plain-" + s.sfx}, CollectionIDs: []string{coll.ID}, IngestionMode: "fast"}); err != nil {
		t.Fatal(err)
	}
	s.waitIngested(t, plainID)

	for _, tc := range []struct {
		name string
		q    memory.Query
		want []string
	}{
		{"filter_all_memories", memory.Query{}, []string{fix.ID, decision.ID}},
		{"filter_kind_in", memory.Query{Kinds: []string{memory.KindFix}}, []string{fix.ID}},
		{"filter_paths_contains", memory.Query{Path: "counts/store.go"}, []string{decision.ID}},
		{"filter_tags_contains", memory.Query{Tag: "importer"}, []string{fix.ID}},
		{"filter_owner_in", memory.Query{Author: s.tg.email, OwnerIDs: []string{s.adminID}}, []string{fix.ID, decision.ID}},
		{"filter_owner_other", memory.Query{Author: "nobody", OwnerIDs: []string{s.userID}}, nil},
		{"filter_created_unix_gte", memory.Query{Since: now.Add(-24 * time.Hour)}, []string{decision.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Text = "pelican migration"
			// The R2R filter alone, not the store's own check of the hits.
			res, err := s.admin.Search(ctx, r2r.SearchRequest{Query: tc.q.Text, SearchMode: r2r.SearchModeCustom,
				SearchSettings: modeSettings(r2r.SearchModeAdvanced, scoped(coll.ID, tc.q.Filter()), 20)})
			if err != nil {
				t.Fatal(err)
			}
			got := uniqueDocs(res.ChunkSearchResults)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("documents %v, want %v", got, want)
			}
		})
	}
	t.Run("hit_metadata_carries_memory_keys", func(t *testing.T) {
		hits, err := st.Search(ctx, memory.Query{Text: "pelican importer index out of range", Kinds: []string{memory.KindFix}})
		if err != nil || len(hits) != 1 {
			t.Fatalf("hits %v %v", hits, err)
		}
		h := hits[0]
		if h.ID != fix.ID || h.Kind != memory.KindFix || h.Author != s.tg.email || !slices.Equal(h.Paths, []string{"importer/pelican.go"}) ||
			!h.Created.Equal(now.Add(-10*24*time.Hour)) || h.Commit == "" || h.Excerpt == "" {
			t.Errorf("hit %+v", h)
		}
	})
	t.Run("collection_lists_newest_first", func(t *testing.T) { // what List's early stop relies on
		p, err := s.admin.ListCollectionDocuments(ctx, coll.ID, r2r.ListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(p.Items, func(d r2r.Document) string { return d.ID })
		if !slices.Equal(got, []string{plainID, decision.ID, fix.ID}) {
			t.Errorf("listed %v, want [%s %s %s] (newest first)", got, plainID, decision.ID, fix.ID)
		}
	})
	t.Run("list_stops_at_the_limit", func(t *testing.T) {
		l, err := st.List(ctx, memory.Query{}, 1)
		if err != nil || !l.More || !slices.Equal(memoryIDs(l.Memories), []string{decision.ID}) {
			t.Errorf("List(limit 1) = %+v %v, want [%s] and more", l, err, decision.ID)
		}
	})
	t.Run("list_newest_first", func(t *testing.T) {
		l, err := st.List(ctx, memory.Query{}, -1)
		if err != nil {
			t.Fatal(err)
		}
		if got := memoryIDs(l.Memories); !slices.Equal(got, []string{decision.ID, fix.ID}) {
			t.Errorf("listed %v, want [%s %s]", got, decision.ID, fix.ID)
		}
	})
	for _, key := range []string{"type", "status"} {
		t.Run("bare_key_"+key+"_is_a_column", func(t *testing.T) {
			_, err := s.admin.Search(ctx, r2r.SearchRequest{Query: "pelican", SearchMode: r2r.SearchModeCustom,
				SearchSettings: modeSettings(r2r.SearchModeBasic, scoped(coll.ID, map[string]any{key: map[string]any{"$eq": "fix"}}), 3)})
			wantStatus(t, err, http.StatusInternalServerError, nil)
		})
	}
	s.memoryWrites(t, st, fix, decision, plainID, save)
	t.Run("team", s.memoryTeam)
	t.Run("skills", s.skillsTeam)
}

// memoryWrites checks saving the same content again, superseding and forgetting.
func (s *suite) memoryWrites(t *testing.T, st *memory.Store, fix, decision memory.Saved, plainID string,
	save func(*testing.T, memory.Draft, time.Time) memory.Saved) {
	ctx := t.Context()
	t.Run("same_content_is_one_document", func(t *testing.T) {
		d, _ := memory.Normalise(memory.Draft{Kind: memory.KindDecision, Title: "  Pelican counts in UTC " + s.sfx + " ",
			Body: "Pelican migration counts are stored in UTC so that colonies in two time zones compare.\r\n\r\n\r\n"})
		saved, err := st.Remember(ctx, d, memory.Stamp{UserID: s.adminID, Time: time.Now()})
		if err != nil || !saved.Already || saved.ID != decision.ID {
			t.Fatalf("saved %+v %v, want already %s", saved, err, decision.ID)
		}
	})
	var newFix memory.Saved
	t.Run("supersede_ingests_then_deletes", func(t *testing.T) {
		newFix = save(t, memory.Draft{Kind: memory.KindFix, Title: "Pelican importer crash, fixed for good " + s.sfx,
			Error: "panic: pelican migration index out of range [3] with length 3",
			Body:  "Iterate with range over rows; the importer never indexes by hand any more.", Supersedes: fix.ID}, time.Now())
		if newFix.Supersedes != fix.ID || newFix.Outcome != memory.OutcomeDeleted {
			t.Fatalf("saved %+v, want %s superseded", newFix, fix.ID)
		}
		if _, err := s.admin.GetDocument(ctx, fix.ID); !errors.Is(err, r2r.ErrNotFound) {
			t.Errorf("the superseded memory: %v, want 404", err)
		}
	})
	t.Run("forget_refuses_other_documents", func(t *testing.T) {
		if _, err := st.Forget(ctx, plainID); !errors.Is(err, memory.ErrNotMemory) {
			t.Errorf("forget of a plain document: %v, want ErrNotMemory", err)
		}
	})
	t.Run("forget", func(t *testing.T) {
		need(t, newFix.ID)
		if _, err := st.Forget(ctx, newFix.ID); err != nil {
			t.Fatal(err)
		}
		l, err := st.List(ctx, memory.Query{}, -1)
		if err != nil {
			t.Fatal(err)
		}
		if got := memoryIDs(l.Memories); !slices.Equal(got, []string{decision.ID}) {
			t.Errorf("left %v, want [%s]", got, decision.ID)
		}
	})
}

func uniqueDocs(hits []r2r.ChunkSearchResult) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.DocumentID) {
			out = append(out, h.DocumentID)
		}
	}
	return out
}

func memoryIDs(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
