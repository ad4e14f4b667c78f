package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// teamFixture is one repository cloned by three R2R users of one emulator (authentication on).
type teamFixture struct {
	t    *testing.T
	srv  *r2rtest.Server
	root string
	ids  map[string]string // email -> user id
}

func newTeamFixture(t *testing.T) *teamFixture {
	t.Helper()
	auth.MockKeyring()
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	f := &teamFixture{t: t, srv: srv, root: statusProject(t, "orbital", ""), ids: map[string]string{}}
	for _, who := range []string{"ann", "bob", "cat"} {
		f.ids[who+"@example.com"] = srv.CreateUser(who+"@example.com", "pw-"+who, false)
	}
	return f
}

// run runs `r2r-mcp team args...` as who (ann, bob or cat).
func (f *teamFixture) run(who string, args ...string) cmdResult {
	f.t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"R2R_EMAIL": who + "@example.com", "R2R_PASSWORD": "pw-" + who}
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(k string) string { return env[k] }}
	config := f.t.TempDir()
	c := newTeamCmd(deps, func(o *teamOptions) error {
		o.Env = authEnv{ConfigDir: config}
		switch {
		case strings.HasPrefix(c0(args), "init"):
			return runTeamInit(o)
		case c0(args) == "add":
			return runTeamAdd(o)
		case c0(args) == "remove":
			return runTeamRemove(o)
		case c0(args) == "cleanup":
			return runTeamCleanup(o)
		}
		return runTeamShow(o)
	})
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(append(args, "--url", f.srv.URL, "--dir", f.root))
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return cmdResult{out.String(), errOut.String(), err}
}

func c0(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func (f *teamFixture) show(who string) *team.Team {
	f.t.Helper()
	r := f.run(who, "--json")
	if r.err != nil {
		f.t.Fatalf("team as %s: %v %s", who, r.err, r.stderr)
	}
	var rep teamReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		f.t.Fatalf("team --json: %v: %s", err, r.stdout)
	}
	return rep.Team
}

// client is an R2R client acting as who.
func (f *teamFixture) client(who string) *r2r.Client {
	f.t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: f.srv.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	tp, err := c.Login(context.Background(), who+"@example.com", "pw-"+who)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err = r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.Bearer(tp.AccessToken.Token)})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// TestTeamSetUp walks a team of three through setting up: the owner's init writes the id
// and owner into .r2r-mcp.json (keeping what it held), a non-member is told whom to ask and
// the exact command, the owner adds and removes members by id and email, and a member
// cannot manage members.
func TestTeamSetUp(t *testing.T) {
	f := newTeamFixture(t)
	cfg := filepath.Join(f.root, ".r2r-mcp.json")
	if err := os.WriteFile(cfg, []byte("{\n  \"exclude\": [\"vendor/**\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.run("ann"); r.err != nil || !strings.Contains(r.stdout, "team init") {
		t.Fatalf("team before init: %v %q %q", r.err, r.stdout, r.stderr)
	}
	r := f.run("ann", "init")
	if r.err != nil {
		t.Fatalf("init: %v %s", r.err, r.stderr)
	}
	id := strings.TrimSpace(r.stdout)
	b, _ := os.ReadFile(cfg)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("config after init: %v: %s", err, b)
	}
	if got["collection"] != id || got["owner"] != "ann@example.com" || got["exclude"] == nil {
		t.Fatalf("config after init = %s, want collection %s, owner ann and the exclude list kept", b, id)
	}
	if r := f.run("ann", "init"); r.err != nil || !strings.Contains(r.stderr, "already names") {
		t.Fatalf("second init: %v %q", r.err, r.stderr)
	}

	bob := f.show("bob")
	if bob.Access != team.AccessNone || bob.OwnerEmail != "ann@example.com" {
		t.Fatalf("bob before being added: %+v", bob)
	}
	advice := f.run("bob").stdout
	if !strings.Contains(advice, "ann@example.com") || !strings.Contains(advice, "r2r-mcp team add "+f.ids["bob@example.com"]) {
		t.Fatalf("a non-member's advice does not name the owner and the command:\n%s", advice)
	}

	if r := f.run("ann", "add", f.ids["bob@example.com"]); r.err != nil || !strings.Contains(r.stdout, "added") {
		t.Fatalf("add by id: %v %q %q", r.err, r.stdout, r.stderr)
	}
	if r := f.run("ann", "add", "cat@example.com"); r.err == nil || !strings.Contains(r.stderr, "only a superuser") {
		t.Fatalf("add by email of a non-member, as a non-superuser: %v %q", r.err, r.stderr)
	}
	if bob = f.show("bob"); bob.Access != team.AccessMember || len(bob.Members) != 2 {
		t.Fatalf("bob after being added: %+v", bob)
	}
	if r := f.run("bob", "add", f.ids["cat@example.com"]); r.err == nil || !strings.Contains(r.err.Error(), "only the team collection's owner") {
		t.Fatalf("a member adding someone: %v", r.err)
	}
	if r := f.run("ann", "add", "bob@example.com"); r.err != nil || !strings.Contains(r.stdout, "member already") {
		t.Fatalf("adding a member again by email: %v %q %q", r.err, r.stdout, r.stderr)
	}
	if r := f.run("ann", "remove", "bob@example.com"); r.err != nil || !strings.Contains(r.stdout, "removed bob@example.com") {
		t.Fatalf("remove by email: %v %q %q", r.err, r.stdout, r.stderr)
	}
	if bob = f.show("bob"); bob.Access != team.AccessNone {
		t.Fatalf("bob after being removed: %+v", bob)
	}
}

// TestTeamCleanup: the documents of a member who was removed are taken out of the team
// collection by the owner's cleanup (their memories only with --memories); a dry run
// changes nothing; the others' documents stay.
func TestTeamCleanup(t *testing.T) {
	f := newTeamFixture(t)
	id := strings.TrimSpace(f.run("ann", "init").stdout)
	for _, who := range []string{"bob", "cat"} {
		if r := f.run("ann", "add", f.ids[who+"@example.com"]); r.err != nil {
			t.Fatalf("add %s: %v %s", who, r.err, r.stderr)
		}
	}
	ctx := context.Background()
	put := func(who, text string, md map[string]any) string {
		t.Helper()
		res, err := f.client(who).CreateDocument(ctx, r2r.DocumentCreate{RawText: text, Metadata: md, CollectionIDs: []string{id}})
		if err != nil {
			t.Fatalf("%s ingests: %v", who, err)
		}
		return res.DocumentID
	}
	annDoc := put("ann", "ann's notes", nil)
	bobDoc := put("bob", "bob's notes", nil)
	bobMemory := put("bob", "bob's fix", map[string]any{"r2r_mcp_memory": "fix"})
	catDoc := put("cat", "cat's notes", nil)
	if r := f.run("ann", "remove", "bob@example.com"); r.err != nil {
		t.Fatalf("remove bob: %v %s", r.err, r.stderr)
	}
	if r := f.run("cat", "cleanup"); r.err == nil {
		t.Fatal("a member ran cleanup")
	}
	if r := f.run("ann", "cleanup", "--dry-run"); r.err != nil || !strings.Contains(r.stdout, bobDoc) || strings.Contains(r.stdout, bobMemory) {
		t.Fatalf("dry run: %v %q %q", r.err, r.stdout, r.stderr)
	}
	in := func() map[string]bool {
		page, err := f.client("ann").ListCollectionDocuments(ctx, id, r2r.ListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, d := range page.Items {
			m[d.ID] = true
		}
		return m
	}
	if !in()[bobDoc] {
		t.Fatal("the dry run took a document out")
	}
	if r := f.run("ann", "cleanup"); r.err != nil {
		t.Fatalf("cleanup: %v %s", r.err, r.stderr)
	}
	left := in()
	if left[bobDoc] || !left[bobMemory] || !left[annDoc] || !left[catDoc] {
		t.Fatalf("after cleanup the collection holds %v; want ann's, cat's and bob's memory, not bob's document", left)
	}
	if r := f.run("ann", "cleanup", "--memories"); r.err != nil || in()[bobMemory] {
		t.Fatalf("cleanup --memories: %v, memory still in: %v", r.err, in()[bobMemory])
	}
}
