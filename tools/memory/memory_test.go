package memory

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

func TestNormalise(t *testing.T) {
	long := strings.Repeat("x", MaxBodyBytes+1)
	for _, tc := range []struct {
		name  string
		in    Draft
		field string // "" = accepted
		check func(*testing.T, Draft)
	}{
		{name: "canonical_text", in: Draft{Kind: " Fix ", Title: "  Fix \n the  build ", Body: "line one   \r\nline two\r\n\r\n\r\n\r\nend\x00\n\n", Error: "E1\r\n"},
			check: func(t *testing.T, d Draft) {
				if d.Kind != "fix" || d.Title != "Fix the build" || d.Body != "line one\nline two\n\nend" || d.Error != "E1" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "paths_and_tags", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{"b/x.go", "./a.go", `c\d.go`, "a.go"}, Tags: []string{"db", " db ", "api"}},
			check: func(t *testing.T, d Draft) {
				if !slices.Equal(d.Paths, []string{"a.go", "b/x.go", "c/d.go"}) || !slices.Equal(d.Tags, []string{"api", "db"}) {
					t.Errorf("paths %v tags %v", d.Paths, d.Tags)
				}
			}},
		{name: "unknown_kind", in: Draft{Kind: "todo", Title: "t", Body: "b"}, field: "kind"},
		{name: "blank_title", in: Draft{Kind: "note", Title: " \n ", Body: "b"}, field: "title"},
		{name: "long_title", in: Draft{Kind: "note", Title: strings.Repeat("é", MaxTitleChars+1), Body: "b"}, field: "title"},
		{name: "blank_body", in: Draft{Kind: "note", Title: "t", Body: "\x00 \n"}, field: "body"},
		{name: "long_body", in: Draft{Kind: "note", Title: "t", Body: long}, field: "body"},
		{name: "error_not_fix", in: Draft{Kind: "note", Title: "t", Body: "b", Error: "E"}, field: "error"},
		{name: "long_error", in: Draft{Kind: "fix", Title: "t", Body: "b", Error: strings.Repeat("e", MaxErrorBytes+1)}, field: "error"},
		{name: "absolute_path", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{"/etc/passwd"}}, field: "paths"},
		{name: "escaping_path", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{"a/../../x"}}, field: "paths"},
		{name: "too_many_tags", in: Draft{Kind: "note", Title: "t", Body: "b", Tags: strings.Split("a b c d e f g h i j k", " ")}, field: "tags"},
		{name: "dot_path", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{"a/.."}}, field: "paths"},
		{name: "backslash_escaping_path", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{`..\x.go`}}, field: "paths"},
		{name: "long_path", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: []string{strings.Repeat("p", MaxPathChars+1)}}, field: "paths"},
		{name: "too_many_paths", in: Draft{Kind: "note", Title: "t", Body: "b", Paths: strings.Split(strings.Repeat("a ", MaxPaths+1), " ")[:MaxPaths+1]}, field: "paths"},
		{name: "blank_tag", in: Draft{Kind: "note", Title: "t", Body: "b", Tags: []string{"db", " \n "}}, field: "tags"},
		{name: "long_tag", in: Draft{Kind: "note", Title: "t", Body: "b", Tags: []string{strings.Repeat("é", MaxTagChars+1)}}, field: "tags"},
		{name: "bad_supersedes", in: Draft{Kind: "note", Title: "t", Body: "b", Supersedes: "last one"}, field: "supersedes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Normalise(tc.in)
			var me *Error
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && (!errors.As(err, &me) || me.Field != tc.field):
				t.Fatalf("err %v, want a refusal of %s", err, tc.field)
			case tc.check != nil:
				tc.check(t, d)
			}
		})
	}
}

// TestIDIsTheNormalisedContent: the same content however it is spaced is one id per
// collection and owner; another body, kind, error, collection or owner is another id;
// paths and tags are not content.
func TestIDIsTheNormalisedContent(t *testing.T) {
	id := func(coll string, d Draft) string {
		t.Helper()
		n, err := Normalise(d)
		if err != nil {
			t.Fatal(err)
		}
		return ID(coll, "u1", ContentSHA(n))
	}
	base := Draft{Kind: "fix", Title: "Pool exhausted", Body: "Raise max_conns.", Error: "too many clients"}
	want := id("c1", base)
	same := []Draft{
		{Kind: "FIX", Title: " Pool  exhausted\n", Body: "Raise max_conns.\r\n\r\n", Error: "too many clients  "},
		{Kind: "fix", Title: "Pool exhausted", Body: "Raise max_conns.", Error: "too many clients", Paths: []string{"db.go"}, Tags: []string{"db"}},
	}
	for _, d := range same {
		if got := id("c1", d); got != want {
			t.Errorf("%+v: id %s, want %s", d, got, want)
		}
	}
	other := []Draft{
		{Kind: "gotcha", Title: "Pool exhausted", Body: "Raise max_conns."},
		{Kind: "fix", Title: "Pool exhausted", Body: "Raise max_conns!", Error: "too many clients"},
		{Kind: "fix", Title: "Pool exhausted", Body: "Raise max_conns.", Error: "too many connections"},
	}
	for _, d := range other {
		if got := id("c1", d); got == want {
			t.Errorf("%+v has the id of another memory", d)
		}
	}
	if n, _ := Normalise(base); ID("c1", "u2", ContentSHA(n)) == want {
		t.Error("the same memory of another owner has the same id")
	}
	if id("c2", base) == want {
		t.Error("the same memory in another collection has the same id")
	}
}

func TestTextAndMetadataRoundTrip(t *testing.T) {
	d, err := Normalise(Draft{Kind: "fix", Title: "Port in use", Body: "Stop the old server.\n\nThen start again.",
		Error: "listen tcp :8080: bind: address already in use", Paths: []string{"cmd/serve.go"}, Tags: []string{"dev"}, Supersedes: "9fbe403b-c11c-5aae-8ade-ef22980c3ad1"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	st := Stamp{UserID: "u1", Time: at, Commit: strings.Repeat("a", 40)}
	md := Metadata(d, ContentSHA(d), st)
	for _, k := range []string{"type", "status", "id", "text", "created_at", "source_path", "source"} {
		if _, ok := md[k]; ok {
			t.Errorf("metadata sets %q, a key R2R or sync reads as its own", k)
		}
	}
	if md["title"] != "memory (fix): Port in use" {
		t.Errorf("title %v", md["title"])
	}
	m, ok := FromMetadata("id1", "u1", roundTripJSON(t, md))
	if !ok {
		t.Fatal("not read back as a memory")
	}
	if m.Kind != "fix" || m.Title != d.Title || m.Error != d.Error || m.OwnerID != "u1" || !m.Created.Equal(at) ||
		!slices.Equal(m.Paths, d.Paths) || !slices.Equal(m.Tags, d.Tags) || m.Commit != st.Commit || m.Supersedes != d.Supersedes ||
		m.Excerpt != "Stop the old server. Then start again." {
		t.Errorf("read back %+v", m)
	}
	txt := Text(d)
	if !strings.HasPrefix(txt, "memory (fix): Port in use\nError:\nlisten tcp") {
		t.Errorf("text %q does not lead with the label and the error", txt)
	}
	if got := Body(m, txt); got != d.Body {
		t.Errorf("Body = %q, want %q", got, d.Body)
	}
	if _, ok := FromMetadata("x", "u1", map[string]any{MetaKind: "todo"}); ok {
		t.Error("an unknown kind is read as a memory")
	}
	if _, ok := FromDocument(r2r.Document{ID: "x", Metadata: map[string]any{"title": "a file"}}); ok {
		t.Error("a plain document is read as a memory")
	}
}

// TestCheckFindsSecretsInEveryField: a secret in the body, title, error, a tag or a path
// is found (the rule named, the secret not echoed).
func TestCheckFindsSecretsInEveryField(t *testing.T) {
	key := "AKIA" + "Z7QRSTUVWXYZ2345"
	base := Draft{Kind: "fix", Title: "t", Body: "b", Error: "e"}
	for _, tc := range []struct {
		name string
		set  func(*Draft)
	}{
		{"body", func(d *Draft) { d.Body = "the key is " + key }},
		{"title", func(d *Draft) { d.Title = "key " + key }},
		{"error", func(d *Draft) { d.Error = "denied for " + key }},
		{"tag", func(d *Draft) { d.Tags = []string{key} }},
		{"path", func(d *Draft) { d.Paths = []string{"keys/" + key} }},
		{"pem_across_lines", func(d *Draft) {
			d.Body = "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("QUJD", 20) + "\n-----END RSA PRIVATE KEY-----"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			tc.set(&d)
			n, err := Normalise(d)
			if err != nil {
				t.Fatal(err)
			}
			err = Check(n)
			var me *Error
			if !errors.As(err, &me) || !me.Secret {
				t.Fatalf("Check = %v, want a secret refusal", err)
			}
			if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "(") {
				t.Errorf("refusal %q echoes the secret or names no rule", err)
			}
		})
	}
	n, _ := Normalise(base)
	if err := Check(n); err != nil {
		t.Errorf("a clean memory: %v", err)
	}
}

// TestCheckFindsDisguisedSecrets: a secret a memory disguises (base64, hex, \u escapes,
// a zero-width space inside it, split across two tags, reversed) is refused in every field
// as a plain one is; text that merely looks encoded is not.
func TestCheckFindsDisguisedSecrets(t *testing.T) {
	key := "AKIA" + "Z7QRSTUVWXYZ2345"
	gh := "ghp_" + "abcdefghij" + "KLMNOPQRSTUVWXYZ0123456789"
	rev := func(s string) string {
		r := []rune(s)
		slices.Reverse(r)
		return string(r)
	}
	escaped := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		return b.String()
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("aws " + key))
	base := Draft{Kind: "fix", Title: "t", Body: "b", Error: "e"}
	for _, tc := range []struct {
		name string
		set  func(*Draft)
	}{
		{"body_base64", func(d *Draft) { d.Body = "the key: " + b64 }},
		{"body_base64_url_unpadded", func(d *Draft) {
			d.Body = "key " + base64.RawURLEncoding.EncodeToString([]byte(gh))
		}},
		{"body_hex", func(d *Draft) { d.Body = "hex " + hex.EncodeToString([]byte(key)) }},
		{"body_unicode_escapes", func(d *Draft) { d.Body = "escaped " + escaped(key) }},
		{"body_zero_width_space", func(d *Draft) { d.Body = "AKIA\u200bZ7QRSTUVWXYZ2345" }},
		{"body_reversed", func(d *Draft) { d.Body = "backwards: " + rev(key) }},
		{"tags_split", func(d *Draft) { d.Tags = []string{gh[:14], gh[14:]} }},
		{"tag_and_path_split", func(d *Draft) { d.Tags = []string{gh[14:]}; d.Paths = []string{gh[:14]} }},
		{"title_base64", func(d *Draft) { d.Title = "key " + b64 }},
		{"error_hex", func(d *Draft) { d.Error = "denied " + hex.EncodeToString([]byte(key)) }},
		{"path_reversed", func(d *Draft) { d.Paths = []string{"keys/" + rev(key)} }},
		{"tag_zero_width", func(d *Draft) { d.Tags = []string{"AKIA\u2060Z7QRSTUVWXYZ2345"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			tc.set(&d)
			n, err := Normalise(d)
			if err != nil {
				t.Fatal(err)
			}
			err = Check(n)
			var me *Error
			if !errors.As(err, &me) || !me.Secret {
				t.Fatalf("Check = %v, want a secret refusal", err)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), gh) {
				t.Errorf("refusal %q echoes the secret", err)
			}
		})
	}
	clean := base
	clean.Body = "Commit 0123456789abcdef0123456789abcdef01234567 fixed it; see " +
		base64.StdEncoding.EncodeToString([]byte("nothing secret here at all")) + " and internationalization."
	clean.Tags = []string{"api", "db"}
	n, _ := Normalise(clean)
	if err := Check(n); err != nil {
		t.Errorf("a clean memory: %v", err)
	}
}

func TestQueryFilterAndMatch(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := Query{Kinds: []string{"fix"}, Path: "a.go", Tag: "db", Author: "ann@example.com", OwnerIDs: []string{"u1"}, Since: since}
	f := q.Filter()
	parts := f["$and"].([]any)
	if len(parts) != 5 {
		t.Fatalf("filter %v", f)
	}
	for _, p := range parts {
		for k := range p.(map[string]any) {
			if !strings.HasPrefix(k, kbsync.MemoryPrefix) && k != "owner_id" {
				t.Errorf("filter key %q is neither namespaced nor R2R's owner_id", k)
			}
		}
	}
	m := Memory{Kind: "fix", Paths: []string{"a.go"}, Tags: []string{"db"}, OwnerID: "u1", Created: since.Add(time.Hour)}
	if !q.Match(m) {
		t.Error("matching memory rejected")
	}
	for _, change := range []func(*Memory){
		func(m *Memory) { m.Kind = "note" },
		func(m *Memory) { m.Paths = []string{"b.go"} },
		func(m *Memory) { m.Tags = nil },
		func(m *Memory) { m.OwnerID = "u2"; m.Author = "ann@example.com" },
		func(m *Memory) { m.Created = since.Add(-time.Second) },
	} {
		x := m
		change(&x)
		if q.Match(x) {
			t.Errorf("%+v matched", x)
		}
	}
}
