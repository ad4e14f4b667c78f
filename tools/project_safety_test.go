package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// userID is the R2R user the env's client acts as, asked of R2R directly.
func (e *env) userID() string {
	e.t.Helper()
	u, err := e.client.Me(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

// mustReturn bounds a file-system operation that must not hang: it fails the test when fn has
// not returned after a generous limit (a functional bound, not a timing assertion).
func mustReturn[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return: it blocks", what)
		panic("unreachable")
	}
}

func TestProjectConfigFileMustBeARegularFile(t *testing.T) {
	e := newEnv(t)
	cfg := filepath.Join(e.project, project.ConfigFile)
	outside := filepath.Join(filepath.Dir(e.project), "elsewhere.json")
	if err := os.WriteFile(outside, []byte(`{"collection": "stolen"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("conf/real.json", `{"collection": "linked-docs"}`)

	tests := []struct {
		name    string
		setup   func(t *testing.T) bool // false = not possible here
		want    string                  // in the error; "" = no error
		collect string                  // the configured collection when there is no error
	}{
		{"fifo", func(t *testing.T) bool { return mkfifo(cfg) == nil }, "named pipe", ""},
		{"symlink to /dev/zero", func(t *testing.T) bool {
			return runtime.GOOS != "windows" && os.Symlink("/dev/zero", cfg) == nil
		}, "outside the project root", ""},
		{"symlink outside the project", func(t *testing.T) bool { return os.Symlink(outside, cfg) == nil }, "outside the project root", ""},
		{"dangling symlink", func(t *testing.T) bool {
			return os.Symlink(filepath.Join(e.project, "nowhere.json"), cfg) == nil
		}, "target cannot be read", ""},
		{"directory", func(t *testing.T) bool { return os.Mkdir(cfg, 0o755) == nil }, "is a directory", ""},
		{"oversized", func(t *testing.T) bool {
			big := `{"collection": "x", "pad": "` + strings.Repeat("a", project.MaxConfigBytes) + `"}`
			return os.WriteFile(cfg, []byte(big), 0o644) == nil
		}, "larger than 64 KiB", ""},
		{"symlink inside the project", func(t *testing.T) bool {
			return os.Symlink(filepath.Join("conf", "real.json"), cfg) == nil
		}, "", "linked-docs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.RemoveAll(cfg); err != nil {
				t.Fatal(err)
			}
			if !tt.setup(t) {
				t.Skip("not possible on this system")
			}
			type outcome struct {
				pr  project.Project
				err error
			}
			out := mustReturn(t, "Project", func() outcome {
				pr, err := e.deps.Projects.Project(context.Background())
				return outcome{pr, err}
			})
			pr, err := out.pr, out.err
			if tt.want == "" {
				if err != nil || pr.CollectionName != tt.collect {
					t.Fatalf("project %+v, %v", pr, err)
				}
				return
			}
			var pe *project.Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Error(), tt.want) || !strings.Contains(pe.Error(), project.ConfigFile) {
				t.Fatalf("error %v, want a configuration error containing %q", err, tt.want)
			}
			// The tools answer with the same configuration error, and nothing reaches R2R.
			e.r2r.ResetCounts()
			res := mustReturn(t, "r2r_list_documents", func() *mcp.CallToolResult { return e.call("r2r_list_documents", nil) })
			info, ok := toolerr.Of(res)
			if !ok || info.Type != "configuration" || !strings.Contains(info.Message, tt.want) {
				t.Fatalf("result %+v: %s", info, text(res))
			}
			if n := len(e.r2r.Counts()); n != 0 {
				t.Fatalf("requests reached R2R: %v", e.r2r.Counts())
			}
		})
	}
}

func TestProjectConfigParseIsReusedUntilTheFileChanges(t *testing.T) {
	e := newEnv(t)
	cfg := e.write(project.ConfigFile, `{"collection": "aaaa"}`)
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(cfg, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	name := func() string {
		t.Helper()
		pr, err := e.deps.Projects.Project(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return pr.CollectionName
	}
	if got := name(); got != "aaaa" {
		t.Fatalf("collection %q", got)
	}
	// Same inode, size and modification time: the earlier parse stands (the file is not
	// read again on every call).
	f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"collection": "bbbb"}`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(cfg, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "aaaa" {
		t.Fatalf("an unchanged file was parsed again: %q", got)
	}
	// A new modification time is a change.
	later := mtime.Add(time.Minute)
	if err := os.Chtimes(cfg, later, later); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "bbbb" {
		t.Fatalf("a changed file was not read again: %q", got)
	}
	// So is a new size.
	e.write(project.ConfigFile, `{"collection": "cccccc"}`)
	if got := name(); got != "cccccc" {
		t.Fatalf("collection %q", got)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "claude-code-demo-app" {
		t.Fatalf("without the file: %q", got)
	}
}

// TestDocumentIDsDifferPerOwner: two users ingest the same relative path into one
// collection. R2R checks duplicate ids per owner but keys documents by id alone, so the
// same id would fail (the emulator answers 500, as R2R does) or take over the other's
// document.
func TestDocumentIDsDifferPerOwner(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{RequireAuth: true}))
	ctx := context.Background()
	login := func(email, password string) *r2r.Client {
		t.Helper()
		pair, err := e.client.Login(ctx, email, password)
		if err != nil {
			t.Fatal(err)
		}
		return e.client.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	}
	e.r2r.CreateUser("teammate@example.com", "pw-teammate", true)
	alice := login(r2rtest.AdminEmail, r2rtest.AdminPassword)
	bob := login("teammate@example.com", "pw-teammate")
	shared, err := alice.CreateCollection(ctx, "team-docs", "")
	if err != nil {
		t.Fatal(err)
	}
	e.write("docs/guide.md", ledgerDoc)
	ingest := func(c *r2r.Client) IngestOutput {
		t.Helper()
		d := &Deps{Config: testConfig(), Client: c, Projects: e.deps.Projects}
		res, err := invoke(ctx, serve(t, Registry(d), d), "r2r_ingest_document",
			map[string]any{"file_path": "docs/guide.md", "collection_id": shared.ID})
		if err != nil || res.IsError {
			t.Fatalf("ingest: %v %s", err, text(res))
		}
		var o IngestOutput
		structured(t, res, &o)
		return o
	}
	a := ingest(alice)
	b := ingest(bob)
	if a.Status != "success" || b.Status != "success" || a.DocumentID == b.DocumentID {
		t.Fatalf("alice %+v\nbob %+v", a, b)
	}
	for _, tt := range []struct {
		c     *r2r.Client
		docID string
	}{{alice, a.DocumentID}, {bob, b.DocumentID}} {
		me, err := tt.c.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := tt.c.GetDocument(ctx, tt.docID)
		if err != nil || doc.OwnerID != me.ID || tt.docID != kbsync.VersionID(shared.ID, me.ID, "docs/guide.md", kbsync.SHA256([]byte(ledgerDoc))) {
			t.Fatalf("document %s: %+v, %v", tt.docID, doc, err)
		}
	}
	// The same user again: the same id, so R2R's 409 says it is there already.
	if again := ingest(alice); again.DocumentID != a.DocumentID || again.Status != "already_current" {
		t.Fatalf("again %+v", again)
	}
	// GET /v3/users/me was asked once per identity (plus the two checks above).
	if n := e.r2r.Count("GET /v3/users/me"); n != 4 {
		t.Fatalf("users/me asked %d times", n)
	}
}

func TestIngestNeedsTheUserID(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.r2r.ForceStatus("GET /v3/users/me", 503, 1)
	_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	if info.Status != 503 || info.Code != toolerr.CodeR2RAPI {
		t.Fatalf("info = %+v", info)
	}
	for _, route := range []string{"POST /v3/documents", "POST /v3/collections"} {
		if n := e.r2r.Count(route); n != 0 {
			t.Fatalf("%s reached R2R %d times without a user id", route, n)
		}
	}
	// Not remembered as a failure: the next call asks again and succeeds.
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
}

// TestIngestNamesTheCollectionOnce: the collection goes as the form field only; naming it
// in metadata.collection_ids too makes R2R 3.6's own assignment fail (an ERROR in its log,
// the collection's document count not raised).
func TestIngestNamesTheCollectionOnce(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var o IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &o)
	form := e.r2r.LastRequest("POST /v3/documents").Form
	var md map[string]any
	if err := json.Unmarshal([]byte(form.Get("metadata")), &md); err != nil {
		t.Fatal(err)
	}
	if _, ok := md["collection_ids"]; ok || form.Get("collection_ids") != `["`+o.CollectionID+`"]` {
		t.Fatalf("metadata = %v, collection_ids field %q", md, form.Get("collection_ids"))
	}
	_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "a.md",
		"metadata": map[string]any{"collection_ids": []any{"00000000-0000-4000-8000-000000000001"}}})
	if !strings.Contains(info.Message, `must not set "collection_ids"`) {
		t.Fatalf("info = %+v", info)
	}
}

// TestMembershipRepairedOnceIngested: R2R at HEAD may leave an uploaded document outside
// the collection it was sent to; the monitor puts it in once ingestion has succeeded, and
// not before.
func TestMembershipRepairedOnceIngested(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{IngestDelay: time.Hour}))
	ctx := context.Background()
	e.write("a.md", ledgerDoc)
	var o IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &o)
	if o.Status != "pending" {
		t.Fatalf("ingest %+v", o)
	}
	inCollection := func() bool {
		doc, err := e.client.GetDocument(ctx, o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range doc.CollectionIDs {
			if id == o.CollectionID {
				return true
			}
		}
		return false
	}
	e.ok("r2r_monitor_task", map[string]any{"document_id": o.DocumentID})
	if inCollection() || e.r2r.Count("POST /v3/collections/{id}/documents/{document_id}") != 0 {
		t.Fatal("the document was assigned while R2R was still ingesting it")
	}
	for i := 0; i < 10 && e.r2r.StepIngestion() > 0; i++ {
	}
	// R2R at HEAD may not file it in the collection of the form.
	if err := e.client.RemoveDocumentFromCollection(ctx, o.CollectionID, o.DocumentID); err != nil {
		t.Fatal(err)
	}
	var mo MonitorOutput
	structured(t, e.ok("r2r_monitor_task", map[string]any{"document_id": o.DocumentID}), &mo)
	if mo.IngestionStatus != r2r.IngestionSuccess || !inCollection() {
		t.Fatalf("monitor %+v; in collection: %v", mo, inCollection())
	}
	// Settled: a later look writes nothing.
	e.r2r.ResetCounts()
	e.ok("r2r_monitor_task", map[string]any{"document_id": o.DocumentID})
	if n := e.r2r.Count("POST /v3/collections/{id}/documents/{document_id}"); n != 0 {
		t.Fatalf("assigned again %d times", n)
	}
}

// TestDeletedProjectCollection: R2R filters on a deleted collection return no hits instead
// of 404, so search checks the collection before saying "no results", and ingest resolves
// the project again instead of letting R2R invent a collection for the stale id.
func TestDeletedProjectCollection(t *testing.T) {
	e := newEnv(t)
	var clock atomic.Int64
	clock.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	e.deps.Projects = project.NewResolver(project.Options{WorkDir: e.project, CacheFile: e.deps.Projects.CacheFile(),
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	e.write("a.md", ledgerDoc)
	var first IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &first)
	if _, err := deleteCollection(e, first.CollectionID); err != nil {
		t.Fatal(err)
	}

	pc, err := e.deps.Projects.Collection(context.Background(), e.client, false)
	if err != nil || pc.ID != first.CollectionID {
		t.Fatalf("mapping %+v, %v", pc, err)
	}
	// Within project.VerifyTTL of the last check the mapping is trusted; after it, a read that
	// found nothing (search, RAG) checks it.
	s, errRes := e.deps.scopes.resolve(context.Background(), nil, "", false)
	if errRes != nil {
		t.Fatal(text(errRes))
	}
	if res := e.deps.scopes.verify(context.Background(), s); res != nil {
		t.Fatalf("checked within the TTL: %s", text(res))
	}
	clock.Add(int64(project.VerifyTTL + time.Second))
	// A search that finds nothing checks the collection and says it is gone.
	if info, ok := toolerr.Of(e.call("r2r_search", map[string]any{"query": "ledger"})); !ok || info.Type != "not_found" ||
		!strings.Contains(info.Message, first.CollectionID) {
		t.Fatalf("search after delete: %+v", info)
	}
	if err := e.deps.Projects.Verify(context.Background(), e.client, s.ID); err == nil {
		t.Fatal("Verify after delete succeeded")
	}
	res := e.deps.scopes.verify(context.Background(), s)
	if info, ok := toolerr.Of(res); !ok || info.Type != "not_found" || !strings.Contains(info.Message, first.CollectionID) {
		t.Fatalf("after delete: %+v", info)
	}
	pc, err = e.deps.Projects.Collection(context.Background(), e.client, false)
	if err != nil || pc.Exists() {
		t.Fatalf("stale mapping kept: %+v, %v", pc, err)
	}

	// Ingest recreates the project's collection by name.
	e.write("b.md", runbookDoc)
	var second IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "b.md"}), &second)
	if second.CollectionID == first.CollectionID || !second.CollectionNew || second.CollectionName != "claude-code-demo-app" {
		t.Fatalf("second ingest %+v", second)
	}

	// A stale mapping found by ingest itself (after the TTL) is resolved again too.
	if _, err := deleteCollection(e, second.CollectionID); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(project.VerifyTTL + time.Second))
	e.write("c.md", "# c")
	var third IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "c.md"}), &third)
	if third.CollectionID == second.CollectionID || !third.CollectionNew {
		t.Fatalf("third ingest %+v", third)
	}
	coll, err := e.client.GetCollection(context.Background(), third.CollectionID)
	if err != nil || coll.Name != "claude-code-demo-app" {
		t.Fatalf("collection %+v, %v", coll, err)
	}
}

func TestVerifyIsCachedAndShared(t *testing.T) {
	e := newEnv(t)
	coll, err := e.client.CreateCollection(context.Background(), "c", "")
	if err != nil {
		t.Fatal(err)
	}
	p := e.deps.Projects
	e.r2r.ResetCounts()
	for range 3 {
		if err := p.Verify(context.Background(), e.client, coll.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.r2r.Count("GET /v3/collections/{id}"); n != 1 {
		t.Fatalf("checked %d times", n)
	}
	missing := "00000000-0000-4000-8000-0000000000ff"
	for range 2 {
		if err := p.Verify(context.Background(), e.client, missing); !errors.Is(err, r2r.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
	}
	if n := e.r2r.Count("GET /v3/collections/{id}"); n != 3 {
		t.Fatalf("a failed check was remembered: %d requests", n)
	}
}

// TestFlightCallersWaitOnTheirOwnContext covers the singleflight pattern of the resolver.
func TestFlightCallersWaitOnTheirOwnContext(t *testing.T) {
	var g singleflight.Group

	t.Run("a waiter leaves when its context ends; the flight goes on", func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{})
		res := make(chan error, 1)
		go func() {
			_, _, err := cache.Flight(context.Background(), &g, "k1", func(context.Context) (int, error) {
				close(started)
				<-release
				return 1, nil
			})
			res <- err
		}()
		<-started
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := cache.Flight(ctx, &g, "k1", func(context.Context) (int, error) { return 2, nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("waiter err = %v", err)
		}
		close(release)
		if err := <-res; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a cancelled starter does not fail a live waiter", func(t *testing.T) {
		startCtx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, _, err := cache.Flight(startCtx, &g, "k2", func(ctx context.Context) (int, error) {
				close(started)
				<-ctx.Done()
				return 0, ctx.Err()
			})
			first <- err
		}()
		<-started
		second := make(chan int, 1)
		go func() {
			v, _, err := cache.Flight(context.Background(), &g, "k2", func(context.Context) (int, error) { return 7, nil })
			if err != nil {
				t.Error(err)
			}
			second <- v
		}()
		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Fatalf("starter err = %v", err)
		}
		if v := <-second; v != 7 {
			t.Fatalf("waiter got %d", v)
		}
	})
}

func TestGetDocumentReadsOnlyWhatThePageNeeds(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{ChunkSize: 200}))
	var b strings.Builder
	for i := 0; b.Len() < 200_000; i++ {
		b.WriteString("Paragraph ")
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 5))
		b.WriteString(" of the long document, with enough words to fill a chunk or two.\n")
	}
	// An HTML file goes to R2R as a file, which R2R chunks (chunk_order kept); the Markdown
	// r2r-mcp chunks itself is read whole (TestGetDocumentOrdersMadeChunks).
	e.write("long.html", b.String())
	var o IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "long.html"}), &o)

	e.r2r.ResetCounts()
	var first GetDocumentOutput
	res := e.ok("r2r_get_document", map[string]any{"document_id": o.DocumentID, "max_chars": 1000})
	structured(t, res, &first)
	if first.TotalCharsExact || !first.HasMore || first.NextOffset == nil || *first.NextOffset != 1000 ||
		first.ReturnedChars != 1000 || first.TotalChars <= 1000 || first.ChunkCount < 200 {
		t.Fatalf("first page %+v", first)
	}
	if !strings.Contains(text(res), "of at least") || !strings.Contains(text(res), "offset=1000") {
		t.Fatalf("text: %s", text(res)[len(text(res))-200:])
	}
	if n := e.r2r.Count("GET /v3/documents/{id}/chunks"); n != 1 {
		t.Fatalf("chunk pages = %d", n)
	}
	if lim := e.r2r.LastRequest("GET /v3/documents/{id}/chunks").Query.Get("limit"); lim == "1000" {
		t.Fatalf("the first page asked for %s chunks", lim)
	}

	// The whole document, read to its end: exact.
	var all GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": o.DocumentID, "offset": 190_000, "max_chars": 50_000}), &all)
	if !all.TotalCharsExact || all.TotalChars < 200_000 || all.HasMore || all.NextOffset != nil ||
		all.ReturnedChars != all.TotalChars-190_000 {
		t.Fatalf("last page %+v", all)
	}
	var again GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": o.DocumentID, "offset": 0, "max_chars": 1000}), &again)
	if again.Text != first.Text {
		t.Fatal("the prefix read early differs from the full reassembly")
	}
}

// TestIngestTimeoutSaysToFollowTheDocument: an upload that outlives the call may still be
// ingested by R2R, so the answer names the document to follow instead of suggesting a retry.
func TestIngestTimeoutSaysToFollowTheDocument(t *testing.T) {
	// Only the upload hangs: the lookups before it (the collection's documents) answer.
	var hang atomic.Bool
	e := newEnv(t, withMiddleware(func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, c *r2r.Call) (*r2r.Response, error) {
			if hang.Load() && c.Op == "create document" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return next(ctx, c)
		}
	}))
	e.write("a.md", ledgerDoc)
	e.write("b.md", runbookDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}) // user id and collection known now
	e.deps.CallTimeout = 50 * time.Millisecond
	hang.Store(true)
	_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "b.md"})
	// Both are remembered from the first ingest; neither asks R2R.
	uid, err := e.deps.Projects.UserID(context.Background(), e.client)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := e.deps.Projects.Collection(context.Background(), e.client, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "r2r_monitor_task document_id=" + kbsync.VersionID(pc.ID, uid, "b.md", kbsync.SHA256([]byte(runbookDoc)))
	if info.Type != "timeout" || info.Retryable || !strings.Contains(info.Message, want) {
		t.Fatalf("info = %+v", info)
	}
}

// TestNoIngestFromHomeAsProject: a server started in the home directory with no project
// around it has home as its project root; ingest refuses rather than reading, say, an
// agent's ~/.claude.json. An --allow-dir root under home still works.
func TestNoIngestFromHomeAsProject(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	shared := filepath.Join(home, "shared")
	mustMkdir(t, shared)
	for name, content := range map[string]string{"notes.md": ledgerDoc, "shared/guide.md": runbookDoc} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, withDeps(func(d *Deps) {
		d.Projects = project.NewResolver(project.Options{WorkDir: home, ExtraRoots: []string{shared}, CacheFile: "-"})
	}))
	info, ok := toolerr.Of(e.call("r2r_ingest_document", map[string]any{"file_path": "notes.md"}))
	if !ok || info.Type != confine.Outside || !strings.Contains(info.Message, "home directory") {
		t.Fatalf("ingest from home: %+v", info)
	}
	if n := e.r2r.Count("POST /v3/documents"); n != 0 {
		t.Fatalf("%d uploads, want 0", n)
	}
	var out IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": filepath.Join(shared, "guide.md")}), &out)
	if out.Status == "" || out.DocumentID == "" {
		t.Fatalf("allowed root: %+v", out)
	}
}

// TestExtraRootIDsDoNotCollideWithProjectFiles: project docs/a.md and a.md in an extra root
// named docs show the same name but are different documents.
func TestExtraRootIDsDoNotCollideWithProjectFiles(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "docs")
	mustMkdir(t, extra)
	if err := os.WriteFile(filepath.Join(extra, "a.md"), []byte(runbookDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *envConfig) { c.extraRoots = []string{extra} })
	e.write("docs/a.md", ledgerDoc)
	var inProject, fromExtra IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"}), &inProject)
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": filepath.Join(extra, "a.md")}), &fromExtra)
	if inProject.DocumentID == fromExtra.DocumentID || fromExtra.Status == "already_current" {
		t.Fatalf("project %+v and extra-root %+v collide", inProject, fromExtra)
	}
}
