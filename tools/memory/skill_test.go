package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

const deploySkill = "---\nname: deploy-staging\ndescription: \"Deploy the service to staging\"\nallowed-tools: Bash\n---\n\n# Deploy\n\nRun make deploy ENV=staging.\n"

func TestParseSkill(t *testing.T) {
	for _, tc := range []struct {
		name, md, field, wantName, wantBody string
	}{
		{name: "valid", md: deploySkill, wantName: "deploy-staging", wantBody: "# Deploy\n\nRun make deploy ENV=staging."},
		{name: "single quotes", md: "---\nname: 'x-y'\ndescription: 'it''s'\n---\nbody", wantName: "x-y", wantBody: "body"},
		{name: "no front matter", md: "# Deploy\n", field: "body"},
		{name: "unclosed", md: "---\nname: a\ndescription: b\n", field: "body"},
		{name: "upper-case name", md: "---\nname: Deploy\ndescription: b\n---\nx", field: "name"},
		{name: "long name", md: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\nx", field: "name"},
		{name: "no description", md: "---\nname: a\n---\nx", field: "description"},
		{name: "blank body", md: "---\nname: a\ndescription: b\n---\n\n", field: "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sf, err := ParseSkill(tc.md)
			if tc.field != "" {
				var me *Error
				if !errors.As(err, &me) || me.Field != tc.field {
					t.Fatalf("err = %v, want a refusal of %s", err, tc.field)
				}
				return
			}
			if err != nil || sf.Name != tc.wantName || sf.Body != tc.wantBody {
				t.Fatalf("got %+v, %v", sf, err)
			}
		})
	}
}

func TestNormaliseSkill(t *testing.T) {
	d, err := Normalise(Draft{Kind: KindSkill, Body: deploySkill})
	if err != nil || d.Title != "deploy-staging" {
		t.Fatalf("got %+v, %v", d, err)
	}
	if _, err := Normalise(Draft{Kind: KindSkill, Title: "other", Body: deploySkill}); err == nil {
		t.Fatal("a title other than the name was accepted")
	}
	big := strings.Replace(deploySkill, "Run", strings.Repeat("x", MaxSkillBytes), 1)
	if _, err := Normalise(Draft{Kind: KindSkill, Body: big}); err == nil {
		t.Fatal("an oversized skill was accepted")
	}
	secret := strings.Replace(deploySkill, "Run", "Use token ghp_"+strings.Repeat("a1B2", 9), 1)
	n, err := Normalise(Draft{Kind: KindSkill, Body: secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(n); err == nil {
		t.Fatal("a skill holding a token passed the secret scan")
	}
}

// A skill saved again unchanged is the same; changed, by a teammate too, it is the next
// version, and the listing shows one skill of that name.
func TestSaveSkillVersions(t *testing.T) {
	f := newTeamFixture(t)
	ctx := context.Background()
	save := func(st *Store, user, md string) (Saved, int) {
		t.Helper()
		d, err := Normalise(Draft{Kind: KindSkill, Body: md})
		if err != nil {
			t.Fatal(err)
		}
		s, v, err := st.SaveSkill(ctx, d, Stamp{UserID: user, Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return s, v
	}
	s1, v1 := save(f.aSt, f.aID, deploySkill)
	if v1 != 1 || s1.Already {
		t.Fatalf("first save: %+v v%d", s1, v1)
	}
	if s, v := save(f.aSt, f.aID, deploySkill); !s.Already || v != 1 || s.ID != s1.ID {
		t.Fatalf("same again: %+v v%d", s, v)
	}
	changed := strings.Replace(deploySkill, "staging.", "staging, then make smoke.", 1)
	s2, v2 := save(f.bSt, f.bID, changed)
	if v2 != 2 || s2.Supersedes != s1.ID {
		t.Fatalf("update: %+v v%d", s2, v2)
	}
	skills, _, err := f.aSt.Skills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 || skills[0].ID != s2.ID || skills[0].Version != 2 || skills[0].Description != "Deploy the service to staging" {
		t.Fatalf("skills = %+v", skills)
	}
	if _, err := f.bSt.RemoveSkill(ctx, "deploy-staging"); err != nil {
		t.Fatal(err)
	}
	// Ann's first version, which R2R kept (only she can delete it), is the skill again once
	// Bob's is gone, and Bob may not delete it.
	var no *NotOwnerError
	if _, err := f.bSt.RemoveSkill(ctx, "deploy-staging"); !errors.As(err, &no) {
		t.Fatalf("removing Ann's version as Bob: %v", err)
	}
	if _, err := f.aSt.RemoveSkill(ctx, "deploy-staging"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.aSt.RemoveSkill(ctx, "deploy-staging"); err == nil {
		t.Fatal("removing a missing skill succeeded")
	}
}

func TestTextKinds(t *testing.T) {
	if len(TextKinds) != len(Kinds)-1 || slices.Contains(TextKinds, KindSkill) {
		t.Fatalf("TextKinds = %v", TextKinds)
	}
}
