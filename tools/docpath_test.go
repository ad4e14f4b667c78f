package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

const (
	runbookPath    = "docs/runbooks/quasar-queue.md"
	onboardingPath = "docs/onboarding.md"
)

// teamVersions fills te's team collection with the team's version of two files (written by
// ann) and bob's private collection with his own version of the runbook; it makes bob a
// member and returns the document ids by version.
func teamVersions(t *testing.T, te *viewEnv) (teamRunbook, teamOnboarding, bobRunbook string) {
	t.Helper()
	ctx := context.Background()
	if err := te.ann.AddUserToCollection(ctx, te.teamID, te.bobID); err != nil {
		t.Fatal(err)
	}
	private, err := te.bob.CreateCollection(ctx, team.PrivateCollectionName(te.teamID), "bob's own versions")
	if err != nil {
		t.Fatal(err)
	}
	put := func(c *r2r.Client, col, p, layer, text string) string {
		t.Helper()
		res, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: text, CollectionIDs: []string{col},
			Metadata: map[string]any{"title": p, kbsync.MetaSourcePath: p, kbsync.MetaLayer: layer, kbsync.MetaSource: "r2r-mcp", kbsync.MetaProject: "demo-app"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.DocumentID
	}
	teamRunbook = put(te.ann, te.teamID, runbookPath, kbsync.LayerTeam, "When the quasar backlog grows, raise the drain workers to 14.")
	teamOnboarding = put(te.ann, te.teamID, onboardingPath, kbsync.LayerTeam, "New engineers pair with the pulsar rotation for two weeks.")
	bobRunbook = put(te.bob, private.ID, runbookPath, kbsync.LayerPrivate, "When the quasar backlog grows, raise the drain workers to 22.")
	return teamRunbook, teamOnboarding, bobRunbook
}

// r2r_get_document with a path reads the version the caller sees: their own when they have
// one, else the team's.
func TestGetDocumentByPathInTeamProject(t *testing.T) {
	te := newViewEnv(t)
	teamRunbook, teamOnboarding, bobRunbook := teamVersions(t, te)
	for _, tc := range []struct {
		who      *r2r.Client
		name     string
		path     string
		id, text string
		label    string
	}{
		{te.bob, "bob", runbookPath, bobRunbook, "workers to 22", "(your working copy)"},
		{te.bob, "bob", "./docs/onboarding.md", teamOnboarding, "pulsar rotation", "(team's version)"},
		{te.ann, "ann", runbookPath, teamRunbook, "workers to 14", "(team's version)"},
	} {
		te.as(tc.who)
		var o GetDocumentOutput
		structured(t, te.ok("r2r_get_document", map[string]any{"path": tc.path}), &o)
		if o.DocumentID != tc.id || !strings.Contains(o.Text, tc.text) || !strings.HasSuffix(o.Title, tc.label) {
			t.Errorf("%s reading %s: document %s %q, text %q; want %s", tc.name, tc.path, o.DocumentID, o.Title, o.Text, tc.id)
		}
	}
	if _, info := te.fail("r2r_get_document", map[string]any{"path": "docs/gone.md"}); info.Type != "invalid_params" || !strings.Contains(info.Message, "No document of docs/gone.md") {
		t.Errorf("a path without a document: %+v", info)
	}
}

// r2r_get_document takes exactly one of document_id and path, a path inside the
// repository; outside team projects a path reads the project's document of that file.
func TestGetDocumentByPathArguments(t *testing.T) {
	e := newEnv(t)
	e.write("docs/a.md", "# A\n\nThe wombat rotates the ledger keys.\n")
	var in IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"}), &in)
	var o GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"path": "docs/a.md"}), &o)
	if o.DocumentID != in.DocumentID || !strings.Contains(o.Text, "wombat") {
		t.Errorf("path docs/a.md read %s %q, want %s", o.DocumentID, o.Text, in.DocumentID)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"neither", map[string]any{}, "give document_id"},
		{"both", map[string]any{"document_id": in.DocumentID, "path": "docs/a.md"}, "not both"},
		{"outside", map[string]any{"path": "../other/a.md"}, "relative to the repository root"},
		{"blank", map[string]any{"path": "  "}, "path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, info := e.fail("r2r_get_document", tc.args); info.Type != "invalid_params" || !strings.Contains(info.Message, tc.want) {
				t.Errorf("%+v", info)
			}
		})
	}
}

// r2r_rag_query never cites two versions of one path: bob, who has his own version of the
// runbook, gets it and not the team's; ann gets the team's.
func TestRAGOneVersionPerPath(t *testing.T) {
	te := newViewEnv(t)
	teamRunbook, _, bobRunbook := teamVersions(t, te)
	for _, tc := range []struct {
		name      string
		who       *r2r.Client
		want, not string
	}{{"bob", te.bob, bobRunbook, teamRunbook}, {"ann", te.ann, teamRunbook, bobRunbook}} {
		te.as(tc.who)
		var o RAGOutput
		structured(t, te.ok("r2r_rag_query", map[string]any{"question": "how many drain workers when the quasar backlog grows"}), &o)
		seen := map[string]int{}
		for _, s := range o.Sources {
			seen[s.DocumentID]++
		}
		if seen[tc.want] == 0 || seen[tc.not] != 0 {
			t.Errorf("%s's sources %+v: want %s, not %s", tc.name, o.Sources, tc.want, tc.not)
		}
	}
}
