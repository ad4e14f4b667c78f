package analytics

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// The same question asked with other case, spacing and punctuation is one gap, counted
// each time; a found-something search is no gap; weak hits are.
func TestSummarizeGaps(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		want   []Gap
	}{
		{"normalised together", []Event{
			{Kind: KindSearch, Query: Normalize("How do I rotate the ledger key?"), Hits: 0},
			{Kind: KindSearch, Query: Normalize("  how do i   rotate the LEDGER key "), Hits: 0},
			{Kind: KindRAG, Query: Normalize("how do i rotate the ledger key"), Hits: 3, Weak: true},
			{Kind: KindSearch, Query: Normalize("deploy worker"), Hits: 4},
		}, []Gap{{Query: "how do i rotate the ledger key", Asked: 3, Nothing: 2, Weak: 1}}},
		{"unknown hits are no gap", []Event{{Kind: KindRAG, Query: "x", Hits: HitsUnknown}}, []Gap{}},
		{"withheld is no gap", []Event{{Kind: KindSearch, Query: Withheld}}, []Gap{}},
		{"most asked first", []Event{
			{Kind: KindSearch, Query: "a"}, {Kind: KindSearch, Query: "b"}, {Kind: KindSearch, Query: "b"},
		}, []Gap{{Query: "b", Asked: 2, Nothing: 2}, {Query: "a", Asked: 1, Nothing: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.events {
				tt.events[i].Time = t0
			}
			r := Summarize(tt.events, t0.Add(-time.Hour), t0.Add(time.Hour), 10)
			for i := range r.Gaps {
				r.Gaps[i].Last = time.Time{}
			}
			if fmt.Sprint(r.Gaps) != fmt.Sprint(tt.want) {
				t.Errorf("gaps %+v, want %+v", r.Gaps, tt.want)
			}
		})
	}
}

// The report counts searches, questions, recalls and cache hits, ranks documents and
// leaves out events outside the period; its text names a gap with its count.
func TestSummarizeReport(t *testing.T) {
	doc := Doc{ID: "d1", Title: "runbook.md"}
	events := []Event{
		{Time: t0, Kind: KindSearch, Query: "ledger", Hits: 2, Cached: true, Docs: []Doc{doc}},
		{Time: t0, Kind: KindRAG, Query: "why", Hits: 1, Docs: []Doc{doc, {ID: "d2"}}},
		{Time: t0, Kind: KindRecall, Hits: 2, MemoryKinds: []string{"fix", "fix"}},
		{Time: t0, Kind: KindSearch, Query: "quokka", Hits: 0},
		{Time: t0.Add(-48 * time.Hour), Kind: KindSearch, Query: "old", Hits: 0},
	}
	r := Summarize(events, t0.Add(-24*time.Hour), t0, 10)
	if r.Searches != 2 || r.Questions != 1 || r.Recalls != 1 || r.CacheHitRate != 0.333 {
		t.Errorf("counts %+v", r)
	}
	if len(r.TopDocuments) != 2 || r.TopDocuments[0] != (DocCount{ID: "d1", Title: "runbook.md", Returned: 2}) {
		t.Errorf("documents %+v", r.TopDocuments)
	}
	if r.Recalled["fix"] != 2 {
		t.Errorf("recalled %+v", r.Recalled)
	}
	text := r.Text()
	if !strings.Contains(text, `1× "quokka" — found nothing`) || strings.Contains(text, "old") {
		t.Errorf("text:\n%s", text)
	}
}

// A query holding a secret, as typed or encoded, is kept as Withheld; others are kept
// normalised.
func TestCleanWithholdsSecrets(t *testing.T) {
	key := "AKIA" + "Z7QRSTUVWXYZ2345"
	tests := []struct{ query, want string }{
		{"where is " + key + " used", Withheld},
		{"decode " + base64.StdEncoding.EncodeToString([]byte("token ghp_"+strings.Repeat("A1b2", 9))), Withheld},
		{"  Where is the LEDGER? ", "where is the ledger"},
	}
	for _, tt := range tests {
		if got := clean(Event{Query: tt.query}).Query; got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// A key's files never hold more than MaxBytes, whatever arrives; events older than MaxAge
// are not read and files not written for MaxAge are removed.
func TestFileStoreBounded(t *testing.T) {
	dir := t.TempDir()
	now := t0
	s := &FileStore{Dir: dir, MaxBytes: 64 << 10, MaxAge: 24 * time.Hour, Now: func() time.Time { return now }}
	big := strings.Repeat("x", 1000)
	for i := range 150 {
		batch := make([]Event, 0, 8)
		for j := range 8 {
			batch = append(batch, clean(Event{Time: now, Kind: KindSearch, Query: fmt.Sprintf("%s %d %d", big, i, j),
				Docs: []Doc{{ID: big, Title: big}, {ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}}))
		}
		if err := s.Append("p", batch); err != nil {
			t.Fatal(err)
		}
		if sz := dirBytes(t, dir); sz > s.MaxBytes {
			t.Fatalf("after %d batches the store holds %d bytes, bound %d", i+1, sz, s.MaxBytes)
		}
	}
	evs, err := s.Read("p")
	if err != nil || len(evs) == 0 {
		t.Fatalf("read %d events, %v", len(evs), err)
	}
	for _, e := range evs {
		if len([]rune(e.Query)) > MaxQueryRunes || len(e.Docs) > MaxDocs {
			t.Fatalf("unbounded event kept: %d runes, %d docs", len([]rune(e.Query)), len(e.Docs))
		}
	}
	// A day later nothing is read; a new store (a new serve) removes the stale files.
	now = now.Add(25 * time.Hour)
	if evs, _ := s.Read("p"); len(evs) != 0 {
		t.Errorf("read %d events older than MaxAge", len(evs))
	}
	old := now.Add(-26 * time.Hour)
	for _, p := range []string{s.path("p"), s.path("p") + ".1"} {
		_ = os.Chtimes(p, old, old)
	}
	s2 := &FileStore{Dir: dir, MaxAge: 24 * time.Hour, Now: func() time.Time { return now }}
	if err := s2.Append("q", []Event{{Time: now, Kind: KindSearch, Query: "new"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.path("p"), s.path("p") + ".1"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s not removed after MaxAge", filepath.Base(p))
		}
	}
}

// Several writers (as several serve processes of one user) keep every line whole and the
// bound.
func TestFileStoreConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 4 {
		s := &FileStore{Dir: dir, MaxBytes: 32 << 10}
		wg.Go(func() {
			for i := range 200 {
				_ = s.Append("p", []Event{{Time: time.Now(), Kind: KindSearch, Query: fmt.Sprintf("writer %d query %d", w, i)}})
			}
		})
	}
	wg.Wait()
	if sz := dirBytes(t, dir); sz > 32<<10 {
		t.Errorf("%d bytes, bound 32KiB", sz)
	}
	for _, p := range []string{"p"} {
		s := &FileStore{Dir: dir}
		raw, _ := os.ReadFile(s.path(p))
		for line := range strings.Lines(string(raw)) {
			if !strings.HasPrefix(line, `{"t":`) || !strings.HasSuffix(line, "}\n") {
				t.Fatalf("torn line %q", line)
			}
		}
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		fi, err := e.Info()
		if err == nil {
			n += fi.Size()
		}
	}
	return n
}

// blockedStore never returns from Append until released.
type blockedStore struct {
	release chan struct{}
	mu      sync.Mutex
	got     int
}

func (b *blockedStore) Append(_ string, evs []Event) error {
	<-b.release
	b.mu.Lock()
	b.got += len(evs)
	b.mu.Unlock()
	return nil
}
func (b *blockedStore) Read(string) ([]Event, error) { return nil, nil }

// A store that hangs never holds up Record: past QueueSize events are dropped and counted,
// so memory stays bounded.
func TestRecorderNeverBlocks(t *testing.T) {
	st := &blockedStore{release: make(chan struct{})}
	r := NewRecorder(st, nil)
	done := make(chan struct{})
	go func() {
		for range 10 * QueueSize {
			r.Record("p", Event{Time: t0, Kind: KindSearch, Query: "q"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Record blocked on a hung store")
	}
	if d := r.Dropped(); d < int64(10*QueueSize-QueueSize-batchSize) {
		t.Errorf("dropped %d of %d", d, 10*QueueSize)
	}
	close(st.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Close(ctx)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.got == 0 || int64(st.got)+r.Dropped() != 10*QueueSize {
		t.Errorf("stored %d + dropped %d != %d", st.got, r.Dropped(), 10*QueueSize)
	}
	r.Record("p", Event{}) // after Close: ignored, no panic
}
