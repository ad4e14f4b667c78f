package conformance

import (
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// skillsTeam checks what team skills and troubleshooting rely on across two users of one
// collection: the exact full-text search by kind that serve polls (memory.Store.Indexed)
// finds a teammate's skill with its description and version as numbers read back, a
// teammate's changed skill is the next version and hides the first from the other user's
// poll though R2R keeps it, and a fix is found by kind with its error text, whose signature
// a variant of the error shares.
func (s *suite) skillsTeam(t *testing.T) {
	ctx := t.Context()
	ann, annID, _ := s.newUser(t, "skills-ann")
	bob, bobID := s.user, s.userID
	coll, err := ann.CreateCollection(ctx, "conf-"+s.sfx+"-skills", "")
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupCollection(coll.ID)
	if err := ann.AddUserToCollection(ctx, coll.ID, bobID); err != nil {
		t.Fatal(err)
	}
	store := func(c *r2r.Client) *memory.Store {
		return &memory.Store{API: c, CollectionID: coll.ID, Wait: s.tg.ingestWait, Poll: 100 * time.Millisecond}
	}
	annSt, bobSt := store(ann), store(bob)
	saveSkill := func(st *memory.Store, c *r2r.Client, userID, md string) (memory.Saved, int) {
		t.Helper()
		d, err := memory.Normalise(memory.Draft{Kind: memory.KindSkill, Body: md})
		if err != nil {
			t.Fatal(err)
		}
		saved, v, err := st.SaveSkill(ctx, d, memory.Stamp{UserID: userID, Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupDocument(saved.ID)
		s.waitIngestedAs(t, c, saved.ID)
		return saved, v
	}
	const v1 = "---\nname: deploy-staging\ndescription: Deploy the service to staging\n---\n\nRun make deploy ENV=staging.\n"
	first, _ := saveSkill(annSt, ann, annID, v1)
	skills, err := bobSt.Indexed(ctx, memory.KindSkill)
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 || skills[0].ID != first.ID || skills[0].Version != 1 || skills[0].Description != "Deploy the service to staging" {
		t.Fatalf("bob's poll: %+v", skills)
	}
	second, v := saveSkill(bobSt, bob, bobID, v1+"Then make smoke.\n")
	if v != 2 || second.Supersedes != first.ID || second.Outcome != memory.OutcomeHidden {
		t.Fatalf("bob's update: v%d %+v", v, second)
	}
	skills, err = annSt.Indexed(ctx, memory.KindSkill)
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 || skills[0].ID != second.ID || skills[0].Version != 2 {
		t.Fatalf("ann's poll after bob's update: %+v", skills)
	}

	d, err := memory.Normalise(memory.Draft{Kind: memory.KindFix, Title: "Raise the open-file limit", Body: "ulimit -n 65536",
		Error: "open /tmp/build-4412/cache.db: too many open files (pid 4242)"})
	if err != nil {
		t.Fatal(err)
	}
	fix, err := annSt.Remember(ctx, d, memory.Stamp{UserID: annID, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupDocument(fix.ID)
	s.waitIngestedAs(t, ann, fix.ID)
	fixes, err := bobSt.Indexed(ctx, memory.KindFix)
	if err != nil {
		t.Fatal(err)
	}
	variant := memory.Signature("goroutine 7 [running]:\nopen /tmp/build-9/cache.db: too many open files (pid 77)\n\tmain.go:12")
	if len(fixes) != 1 || fixes[0].ID != fix.ID || !memory.SameError(variant, memory.Signature(fixes[0].Error)) {
		t.Fatalf("fixes by kind: %+v (variant %q)", fixes, variant)
	}
}
