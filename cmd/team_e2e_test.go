package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// teamRepo is the repository three teammates clone: six files, one fact each.
var teamRepo = map[string]string{
	"docs/runbooks/quasar-queue.md": "# Quasar queue\n\nWhen the quasar backlog grows, raise the drain workers to 14.\n",
	"docs/runbooks/nebula-cache.md": "# Nebula cache\n\nThe nebula cache keeps entries for 45 minutes.\n",
	"docs/onboarding.md":            "# Onboarding\n\nNew engineers pair with the pulsar rotation for two weeks.\n",
	"src/limits.go":                 "package limits\n\n// MaxComets is how many comets one orbit holds.\nconst MaxComets = 31\n",
	"src/orbit.py":                  "ORBIT_PERIOD_DAYS = 83\n\ndef period():\n    return ORBIT_PERIOD_DAYS\n",
	"README.md":                     "# Orbital\n\nThe orbital service tracks comets.\n",
}

// teammate is one developer: their R2R account, their clone and their r2r-mcp environment.
type teammate struct {
	email, id string
	password  string
	clone     string
	env       []string
}

type teamWorld struct {
	t      *testing.T
	url    string
	origin string
	mates  map[string]*teammate
}

// teamBackend is the R2R a team flow runs on: its URL and a way to make a user (their id).
type teamBackend struct {
	url     string
	newUser func(email, password string) (id, actual string)
}

// emulatorBackend is an emulated R2R with authentication on.
func emulatorBackend(t *testing.T) teamBackend {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	return teamBackend{url: srv.URL, newUser: func(email, password string) (string, string) { return srv.CreateUser(email, password, false), email }}
}

// realBackend is the real R2R at R2R_CONFORMANCE_URL (make test-real), whose superuser
// registers this run's users and deletes them with their documents when the test ends.
func realBackend(t *testing.T) teamBackend {
	url := os.Getenv("R2R_CONFORMANCE_URL")
	if url == "" {
		t.Skip("R2R_CONFORMANCE_URL is not set: make test-real runs this against the real R2R")
	}
	ctx := context.Background()
	anon, err := r2r.New(r2r.Options{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := anon.Login(ctx, os.Getenv("R2R_CONFORMANCE_EMAIL"), os.Getenv("R2R_CONFORMANCE_PASSWORD"))
	if err != nil {
		t.Fatalf("superuser login: %v", err)
	}
	bearer := "Bearer " + tp.AccessToken.Token
	send := func(method, path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(url, "/")+path, bytes.NewReader(b))
		req.Header.Set("Authorization", bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	sfx := fmt.Sprintf("%x", time.Now().UnixNano())[8:]
	return teamBackend{url: url, newUser: func(email, password string) (string, string) {
		email = strings.Replace(email, "@", "-"+sfx+"@", 1)
		res := send(http.MethodPost, "/v3/users", map[string]any{"email": email, "password": password, "is_verified": true})
		id := res["results"].(map[string]any)["id"].(string)
		t.Cleanup(func() {
			send(http.MethodDelete, "/v3/users/"+id, map[string]any{"password": password, "delete_vector_data": true})
		})
		return id, email
	}}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeRepoFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newTeamWorld(t *testing.T, be teamBackend) *teamWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := &teamWorld{t: t, url: be.url, mates: map[string]*teammate{}}
	base := t.TempDir()
	seed := filepath.Join(base, "seed")
	for rel, content := range teamRepo {
		writeRepoFile(t, seed, rel, content)
	}
	git(t, seed, "init", "-q", "-b", "main")
	git(t, seed, "add", ".")
	git(t, seed, "commit", "-q", "-m", "orbital")
	w.origin = filepath.Join(base, "origin.git")
	git(t, base, "clone", "-q", "--bare", seed, w.origin)
	for _, name := range []string{"ann", "bob", "cat"} {
		m := &teammate{email: name + "@example.com", password: "Team-pw-" + name + "-1"}
		m.id, m.email = be.newUser(m.email, m.password)
		m.env = servertest.Env(t, w.url, "R2R_EMAIL="+m.email, "R2R_PASSWORD="+m.password)
		w.mates[name] = m
	}
	return w
}

// clone gives who their own clone of origin.
func (w *teamWorld) clone(who string) {
	m := w.mates[who]
	m.clone = filepath.Join(w.t.TempDir(), "orbital")
	git(w.t, filepath.Dir(m.clone), "clone", "-q", w.origin, m.clone)
	if real, err := filepath.EvalSymlinks(m.clone); err == nil {
		m.clone = real
	}
}

func (w *teamWorld) run(who string, args ...string) servertest.Result {
	w.t.Helper()
	r := servertest.Run(w.t, w.mates[who].clone, w.mates[who].env, "", args...)
	if r.Code != 0 {
		w.t.Fatalf("%s: r2r-mcp %s exited %d:\n%s%s", who, strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// search runs r2r_search as who in a fresh serve and returns the hits' titles and texts.
func (w *teamWorld) search(who, query string) []map[string]any {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, w.t, w.mates[who].clone, w.mates[who].env)
	defer s.Close()
	r := mustCall(ctx, w.t, s, "r2r_search", map[string]any{"query": query, "limit": 10})
	var hits []map[string]any
	for _, h := range r.Structured["results"].([]any) {
		hits = append(hits, h.(map[string]any))
	}
	return hits
}

// clientAs is an R2R client acting as who.
func (w *teamWorld) clientAs(who string) *r2r.Client {
	w.t.Helper()
	ctx := context.Background()
	anon, err := r2r.New(r2r.Options{BaseURL: w.url})
	if err != nil {
		w.t.Fatal(err)
	}
	tp, err := anon.Login(ctx, w.mates[who].email, w.mates[who].password)
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := r2r.New(r2r.Options{BaseURL: w.url, Credentials: r2r.Bearer(tp.AccessToken.Token)})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// collectionDocs counts the documents of a collection, as who sees them.
func (w *teamWorld) collectionDocs(who, id string) int {
	w.t.Helper()
	p, err := w.clientAs(who).ListCollectionDocuments(context.Background(), id, r2r.ListParams{Limit: 1000})
	if err != nil {
		w.t.Fatal(err)
	}
	return p.Total
}

// firstFor returns the first hit whose title starts with path, and how many hits have it.
func firstFor(hits []map[string]any, path string) (map[string]any, int) {
	var first map[string]any
	n := 0
	for _, h := range hits {
		if title, _ := h["title"].(string); strings.HasPrefix(title, path) {
			if first == nil {
				first = h
			}
			n++
		}
	}
	return first, n
}

// duplicatePaths returns the paths that more than one hit is a version of.
func duplicatePaths(hits []map[string]any) []string {
	seen := map[string]int{}
	var dup []string
	for _, h := range hits {
		title, _ := h["title"].(string)
		for _, label := range []string{" (team's version", " (your working copy)"} {
			title, _, _ = strings.Cut(title, label)
		}
		if seen[title]++; seen[title] == 2 {
			dup = append(dup, title)
		}
	}
	return dup
}

func hitText(h map[string]any) string {
	b, _ := json.Marshal(h)
	return string(b)
}

// TestTeamFlow is the team's day on the emulator, through the binary: three teammates
// syncing the same commit store each file once; a branch edit is the editor's alone until
// it reaches the team's ref, then everyone's, whoever synced; a clone that is behind
// writes nothing of the team's version.
func TestTeamFlow(t *testing.T) {
	servertest.Build(t)
	teamFlow(t, emulatorBackend(t))
}

// TestTeamFlowReal is TestTeamFlow on the real R2R (make test-real).
func TestTeamFlowReal(t *testing.T) {
	servertest.Build(t)
	teamFlow(t, realBackend(t))
}

func teamFlow(t *testing.T, be teamBackend) {
	w := newTeamWorld(t, be)
	w.clone("ann")
	ann := w.mates["ann"]
	teamID := strings.TrimSpace(w.run("ann", "team", "init").Stdout)
	git(t, ann.clone, "add", ".r2r-mcp.json")
	git(t, ann.clone, "commit", "-q", "-m", "share the knowledge base")
	git(t, ann.clone, "push", "-q", "origin", "main")
	w.run("ann", "team", "add", w.mates["bob"].id, w.mates["cat"].id)
	w.clone("bob")
	w.clone("cat")
	for _, who := range []string{"ann", "bob", "cat"} {
		w.run(who, "sync")
	}
	files := len(teamRepo) + 1 // and .r2r-mcp.json
	if n := w.collectionDocs("ann", teamID); n != files {
		t.Fatalf("after three teammates synced one commit the team collection holds %d documents for %d files", n, files)
	}

	// Bob changes five facts: three committed on a branch, two not committed.
	bob := w.mates["bob"]
	git(t, bob.clone, "checkout", "-q", "-b", "drain")
	for _, f := range teamFacts {
		writeRepoFile(t, bob.clone, f.path, strings.Replace(teamRepo[f.path], f.old, f.new, 1))
		if f.committed {
			git(t, bob.clone, "commit", "-q", "-am", "change "+f.path)
		}
	}
	w.run("bob", "sync")
	if n := w.collectionDocs("ann", teamID); n != files {
		t.Fatalf("bob's branch sync changed the team collection: %d documents", n)
	}
	// Until the merge: bob's values first for bob, the team's for the others.
	w.checkFacts(func(who string, f teamFact) string {
		if who == "bob" {
			return f.new
		}
		return f.old
	})

	// The branch is merged; ann fetches (without pulling) and syncs; cat does nothing.
	git(t, bob.clone, "push", "-q", "origin", "drain:main")
	git(t, ann.clone, "fetch", "-q")
	w.run("ann", "sync")
	// Cat, whose clone is behind, syncs: nothing of the team's version goes back.
	cat := w.run("cat", "sync")
	if !strings.Contains(cat.Stdout, "Not written") {
		t.Errorf("cat's sync behind the team's ref does not say so:\n%s", cat.Stdout)
	}
	w.run("bob", "sync")
	if n := w.collectionDocs("ann", teamID); n != files {
		t.Fatalf("after the merge the team collection holds %d documents for %d files", n, files)
	}
	// After the merge: the committed values first for everyone; bob's uncommitted ones his alone.
	w.checkFacts(func(who string, f teamFact) string {
		if f.committed || who == "bob" {
			return f.new
		}
		return f.old
	})

	// Offboarding: a copy cat wrote into the team collection outside the team's version (as
	// an older r2r-mcp did) shows beside it until ann removes cat and cleans up.
	w.writeAs("cat", teamID, "docs/runbooks/quasar-queue.md", "When the quasar backlog grows, raise the drain workers to 14.")
	if _, n := firstFor(w.search("ann", teamFacts[0].query), "docs/runbooks/quasar-queue.md"); n != 2 {
		t.Fatalf("cat's stray copy is not found beside the team's version (%d hits of the runbook)", n)
	}
	w.run("ann", "team", "remove", w.mates["cat"].id)
	w.run("ann", "team", "cleanup")
	w.checkFacts(func(who string, f teamFact) string {
		if f.committed || who == "bob" {
			return f.new
		}
		return f.old
	}, "ann", "bob")
}

// teamFact is one fact of teamRepo that bob changes, and a question that finds it.
type teamFact struct {
	path, old, new, query string
	committed             bool
}

var teamFacts = []teamFact{
	{"docs/runbooks/quasar-queue.md", "drain workers to 14", "drain workers to 22", "how many drain workers for the quasar backlog", true},
	{"docs/onboarding.md", "for two weeks", "for three weeks", "how long do new engineers pair with the pulsar rotation", true},
	{"src/limits.go", "MaxComets = 31", "MaxComets = 44", "MaxComets how many comets one orbit holds", true},
	{"docs/runbooks/nebula-cache.md", "for 45 minutes", "for 90 minutes", "how long does the nebula cache keep entries", false},
	{"src/orbit.py", "ORBIT_PERIOD_DAYS = 83", "ORBIT_PERIOD_DAYS = 91", "ORBIT_PERIOD_DAYS orbit period in days", false},
}

// checkFacts searches each fact as each teammate (or those named) and wants the value
// want gives first among the fact's file, one version of it, and no path twice in the top 10.
func (w *teamWorld) checkFacts(want func(who string, f teamFact) string, who ...string) {
	w.t.Helper()
	if len(who) == 0 {
		who = []string{"ann", "bob", "cat"}
	}
	for _, name := range who {
		for _, f := range teamFacts {
			hits := w.search(name, f.query)
			if dup := duplicatePaths(hits); len(dup) > 0 {
				w.t.Errorf("%s, %q: the top 10 holds two versions of %v", name, f.query, dup)
			}
			h, n := firstFor(hits, f.path)
			if h == nil || n != 1 || !strings.Contains(hitText(h), want(name, f)) {
				w.t.Errorf("%s, %q: %d hits of %s, first %s; want one saying %q", name, f.query, n, f.path, hitText(h), want(name, f))
			}
		}
	}
}

// writeAs writes a document of path into collection as who, straight through R2R, as an
// older r2r-mcp (or another client) would.
func (w *teamWorld) writeAs(who, collection, path, text string) {
	w.t.Helper()
	c, ctx := w.clientAs(who), context.Background()
	res, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: text, CollectionIDs: []string{collection},
		Metadata: map[string]any{"title": path, "source_path": path, "source": "r2r-mcp"}, IngestionMode: "fast"})
	if err != nil {
		w.t.Fatalf("%s writes %s: %v", who, path, err)
	}
	// R2R files the document in the collection once it is ingested.
	if doc, err := kbsync.WaitIngested(ctx, c, res.DocumentID, time.Minute, 0, nil); err != nil || doc == nil || doc.IngestionStatus != r2r.IngestionSuccess {
		w.t.Fatalf("%s's document of %s was not ingested: %+v %v", who, path, doc, err)
	}
}
