package e2ereal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// errorFixes are realistic errors a team meets, each with the fix a teammate saved (the
// error as first seen) and the text a later agent pastes: the same error with its own
// paths, line numbers, stack and log lines around it.
var errorFixes = []struct {
	title, stored, fix, pasted string
}{
	{"Nil map in the registry", "panic: assignment to entry in nil map",
		"Initialise the map in NewRegistry (make(map[string]Handler)) before Add is called; a zero Registry{} has a nil map.",
		"panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\nmain.(*Registry).Add(...)\n\t/home/dev/src/app/registry.go:57 +0x1a5\nexit status 2"},
	{"yaml import in the render script", "ModuleNotFoundError: No module named 'yaml'",
		"The package is PyYAML, not yaml: pip install PyYAML (it is in requirements-dev.txt).",
		"Traceback (most recent call last):\n  File \"/opt/ci/tools/render.py\", line 3, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'"},
	{"Port 3000 already taken", "Error: listen EADDRINUSE: address already in use :::3000",
		"An old dev server still holds port 3000: find it with lsof -i :3000 and kill it, or start with PORT=3001 npm run dev.",
		"node:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\nError: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle [as _listen2] (node:net:1872:16)"},
	{"Duplicate email in the seed", "ERROR: duplicate key value violates unique constraint \"users_email_key\"",
		"Emails are unique case-insensitively: lower-case the email before the INSERT and use ON CONFLICT (email) DO NOTHING in the seed script.",
		"pq: duplicate key value violates unique constraint \"users_email_key\" (SQLSTATE 23505)\nDETAIL: Key (email)=(ann@example.com) already exists."},
	{"Docker socket permission", "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock",
		"Add your user to the docker group (sudo usermod -aG docker $USER) and log in again.",
		"Got permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.45/containers/json\": dial unix /var/run/docker.sock: connect: permission denied"},
	{"Unrelated histories after the re-init", "fatal: refusing to merge unrelated histories",
		"The repository was re-initialised; rebase onto origin/main, or pull once with --allow-unrelated-histories.",
		"$ git pull origin main\nFrom github.com:acme/site\n * branch            main       -> FETCH_HEAD\nfatal: refusing to merge unrelated histories"},
	{"The @/ import alias", "error TS2307: Cannot find module '@/lib/db' or its corresponding type declarations.",
		"The @/ alias needs paths in tsconfig.json and the same alias in vitest.config.ts; tsc alone reads only tsconfig.",
		"src/routes/users.ts(3,20): error TS2307: Cannot find module '@/lib/db' or its corresponding type declarations.\n\nFound 1 error in src/routes/users.ts:3"},
	{"Report export runs out of heap", "java.lang.OutOfMemoryError: Java heap space",
		"The report exporter loads every row; stream them with a cursor (fetchSize 1000) instead of raising -Xmx.",
		"Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n\tat com.acme.report.Exporter.write(Exporter.java:88)"},
	{"Borrowing items while pushing", "error[E0502]: cannot borrow `self.items` as mutable because it is also borrowed as immutable",
		"Copy what you need from the first item before pushing, so the immutable borrow ends first.",
		"error[E0502]: cannot borrow `self.items` as mutable because it is also borrowed as immutable\n  --> src/cache.rs:42:9\n   |\n41 |         let first = self.items.first();\n   |                     ---------- immutable borrow occurs here\n42 |         self.items.push(value);"},
	{"Internal registry certificate", "x509: certificate signed by unknown authority",
		"Install the company root CA (certs/acme-root.pem) into the system store with update-ca-certificates; never set InsecureSkipVerify.",
		"Get \"https://registry.internal.acme.net/v2/\": tls: failed to verify certificate: x509: certificate signed by unknown authority"},
}

// distractors are memories of the same project that share words with the errors above.
var distractors = []memory.Draft{
	{Kind: "fix", Title: "Database not started", Error: "dial tcp 127.0.0.1:5432: connect: connection refused", Body: "Run make db-up before the integration tests."},
	{Kind: "fix", Title: "Port 80 needs root", Error: "Error: listen EACCES: permission denied 0.0.0.0:80", Body: "Listen on 8080 in development; only the proxy binds port 80."},
	{Kind: "fix", Title: "Run the app as a module", Error: "ModuleNotFoundError: No module named 'app'", Body: "Run python -m app from the repository root, not python app/main.py."},
	{Kind: "fix", Title: "String ids from the router", Error: "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.", Body: "Route params are strings; parse them with Number() at the edge."},
	{Kind: "fix", Title: "Nil client in tests", Error: "panic: runtime error: invalid memory address or nil pointer dereference", Body: "Tests must build the client with NewClient; the zero Client has no transport."},
	{Kind: "fix", Title: "Hooks outside the repository", Error: "fatal: not a git repository (or any of the parent directories): .git", Body: "Run the pre-commit install from the repository root."},
	{Kind: "decision", Title: "Unique emails in Postgres", Body: "Email uniqueness is enforced by a unique index on lower(email), not in application code."},
	{Kind: "convention", Title: "Distroless images", Body: "Docker images are built FROM gcr.io/distroless/static; no shell in production containers."},
	{Kind: "gotcha", Title: "JVM heap in containers", Body: "The JVM takes a quarter of the container's memory for the heap by default; set MaxRAMPercentage."},
	{Kind: "note", Title: "Certificate renewal", Body: "The internal certificates renew on the first of every month; the CA stays the same."},
	{Kind: "decision", Title: "Rebase, do not merge", Body: "Feature branches are rebased onto main; merge commits are not allowed on main."},
	{Kind: "convention", Title: "Maps are made in constructors", Body: "Every struct with a map field has a New function that makes the map."},
}

// TestRealMemoryPastedErrorFindsFix measures what r2r_recall does with a pasted error on
// the real R2R embedding with all-MiniLM-L6-v2: the fix saved for it must be among the
// first three memories for at least 9 of the 10 errors. The store's search is exactly
// r2r_recall's request (hybrid search restricted to the collection's memories).
func TestRealMemoryPastedErrorFindsFix(t *testing.T) {
	r := liveR2R(t)
	if e := os.Getenv("R2R_CONFORMANCE_EMBED"); e != "minilm" {
		t.Skipf("the R2R under test embeds with %q, not all-MiniLM-L6-v2: run R2R_REAL_EMBED=minilm make test-real", e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := adminClient(ctx, t, r)
	coll, err := c.CreateCollection(ctx, "memory-quality-"+unique(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteCollection(context.Background(), coll.ID) })
	st := &memory.Store{API: c, CollectionID: coll.ID, Wait: 2 * time.Minute}
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	save := func(d memory.Draft) string {
		t.Helper()
		n, err := memory.Normalise(d)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := st.Remember(ctx, n, memory.Stamp{UserID: me.ID, Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.DeleteDocument(context.Background(), saved.ID) })
		return saved.ID
	}
	want := make([]string, len(errorFixes))
	for i, ef := range errorFixes {
		want[i] = save(memory.Draft{Kind: memory.KindFix, Title: ef.title, Error: ef.stored, Body: ef.fix})
	}
	for _, d := range distractors {
		save(d)
	}
	waitAllIngested(ctx, t, c, coll.ID, len(errorFixes)+len(distractors))
	top3 := 0
	for i, ef := range errorFixes {
		hits, err := st.Search(ctx, memory.Query{Text: ef.pasted, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		for j, h := range hits {
			if h.ID == want[i] {
				rank = j + 1
			}
		}
		if rank >= 1 && rank <= 3 {
			top3++
		}
		first := ""
		if len(hits) > 0 {
			first = hits[0].Title
		}
		t.Logf("%-40s rank %d of %d (first: %s)", ef.title, rank, len(hits), first)
	}
	t.Logf("pasted error → its fix in the top 3: %d of %d", top3, len(errorFixes))
	if top3 < 9 {
		t.Errorf("the fix was in the top 3 for %d of %d pasted errors, want at least 9", top3, len(errorFixes))
	}
}
