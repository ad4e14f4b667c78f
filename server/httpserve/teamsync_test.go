package httpserve_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// teamRepoIn makes a git repository "orbital" inside root whose .r2r-mcp.json names the
// team collection teamID, with files (one commit on main).
func teamRepoIn(t *testing.T, root, teamID string, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(root, "orbital")
	files[".r2r-mcp.json"] = `{"collection": "` + teamID + `", "owner": "alice@example.com"}` + "\n"
	for rel, text := range files {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "orbital"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// Over HTTP, r2r_sync of a team repository inside an --allow-dir root writes the team's
// version once, whoever syncs it, under the paths and titles a local sync gives (docs/…,
// not orbital/docs/…); its dry run names the team collection and the team's plan.
func TestSyncOverHTTPTeamRepository(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice, err := r2r.New(r2r.Options{BaseURL: tm.Emu.URL, Credentials: r2r.APIKey(tm.Alice.Key)})
	if err != nil {
		t.Fatal(err)
	}
	teamCol, err := alice.CreateCollection(ctx, "claude-code-orbital", "the team's")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.AddUserToCollection(ctx, teamCol.ID, tm.Bob.UserID); err != nil {
		t.Fatal(err)
	}
	root, _ := syncDocs(t, "unused")
	repo := teamRepoIn(t, root, teamCol.ID, map[string]string{
		"docs/runbooks/quasar-queue.md": "# Quasar queue\n\nRaise the drain workers to 14.\n",
		"docs/onboarding.md":            "# Onboarding\n\nNew engineers pair with the pulsar rotation.\n",
	})
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{root} })

	status, out, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_sync", map[string]any{"directory": repo, "dry_run": true})
	st, _ := out.Structured.(map[string]any)
	if status != http.StatusOK || strings.Contains(out.Text, "unknown") || !strings.Contains(out.Text, "claude-code-orbital") {
		t.Fatalf("dry run: %d %s", status, out.Text)
	}
	if team, _ := st["team"].(map[string]any); team == nil || team["upload"] != 3.0 || team["ref"] != "refs/heads/main" {
		t.Fatalf("dry run's team plan: %v\n%s", st["team"], out.Text)
	}
	for _, who := range []member{tm.Alice, tm.Bob} {
		status, out, _ := invoke(t, rep.URL, who.Key, "r2r_sync", map[string]any{"directory": repo})
		st, _ := out.Structured.(map[string]any)
		if status != http.StatusOK || st["job_id"] == nil {
			t.Fatalf("%s's sync: %d %s", who.Email, status, out.Text)
		}
		_, st, text := syncStatus(t, rep.URL, who.Key, st["job_id"].(string), 10)
		if st["state"] != "done" || st["collection_name"] != "claude-code-orbital" {
			t.Fatalf("%s's sync job: %s", who.Email, text)
		}
		// The team's version is written once: by whoever syncs first.
		if team, _ := st["result"].(map[string]any)["team"].(map[string]any); team == nil ||
			team["uploaded"].(float64)+team["unchanged"].(float64) != 3 || !strings.Contains(text, "Team's version") {
			t.Errorf("%s's sync job's team result: %v\n%s", who.Email, st["result"], text)
		}
	}
	page, err := alice.ListCollectionDocuments(ctx, teamCol.ID, r2r.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range page.Items {
		p, _ := d.Metadata[kbsync.MetaSourcePath].(string)
		title := ""
		if d.Title != nil {
			title = *d.Title
		}
		if d.Metadata[kbsync.MetaLayer] != kbsync.LayerTeam || title != p || strings.HasPrefix(p, "orbital/") {
			t.Errorf("document %s: title %q, source path %q, layer %v", d.ID, title, p, d.Metadata[kbsync.MetaLayer])
		}
		paths = append(paths, p)
	}
	if len(page.Items) != 3 {
		t.Errorf("after alice and bob synced one commit the team collection holds %d documents: %v", len(page.Items), paths)
	}
}
