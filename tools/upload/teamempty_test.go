package upload

import (
	"context"
	"os/exec"
	"slices"
	"testing"
)

// TestTeamSyncEmptyFiles: a team sync sends nothing of files with no text, in either layer,
// and reports them as empty, not refused or failed (an empty file of the ref is known from
// its size, a whitespace-only one when it is read); a file emptied on the ref retires its
// team version.
func TestTeamSyncEmptyFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tg := newTarget(t)
	ctx := context.Background()
	tg.write(t, "docs/a.md", "# A\n\nThe narwhal.\n")
	tg.write(t, "pkg/py.typed", "")
	tg.write(t, "docs/blank.md", " \n\t\n")
	gitIn(t, tg.root, "init", "-q", "-b", "main")
	gitIn(t, tg.root, "add", ".")
	gitIn(t, tg.root, "commit", "-q", "-m", "one")
	for _, step := range []struct {
		name                    string
		edit                    func()
		uploaded, retired       []string
		teamEmpty, privateEmpty int
	}{
		{name: "first sync", edit: func() {}, uploaded: []string{"docs/a.md"}, retired: []string{}, teamEmpty: 2, privateEmpty: 2},
		{name: "a.md emptied on the ref", edit: func() {
			tg.write(t, "docs/a.md", "")
			gitIn(t, tg.root, "commit", "-q", "-am", "two")
		}, uploaded: []string{}, retired: []string{"docs/a.md"}, teamEmpty: 3, privateEmpty: 3},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.edit()
			ts, err := TeamSync(ctx, tg.api, tg.scope.CollectionID, "", tg.root, tg.scope, true)
			if err != nil {
				t.Fatal(err)
			}
			syncer, _, _, err := NewSyncer(SyncConfig{API: tg.api, Root: tg.root, Scope: ts.Private, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			Join(syncer, ts.Team, ts.CollectionID)
			plan, err := syncer.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sum := syncer.Run(ctx, plan, nil)
			tm := sum.Team
			if !sum.OK() || len(sum.Refused) != 0 || tm == nil || !slices.Equal(tm.Uploaded, step.uploaded) ||
				!slices.Equal(tm.Deleted, step.retired) || tm.Empty != step.teamEmpty || sum.Empty != step.privateEmpty {
				t.Fatalf("summary %+v, team %+v; want team uploaded %v, retired %v, %d empty; %d empty in the private layer",
					sum, tm, step.uploaded, step.retired, step.teamEmpty, step.privateEmpty)
			}
		})
	}
}
