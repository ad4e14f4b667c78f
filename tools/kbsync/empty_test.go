package kbsync

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// gone marks a file removed in emptyCase's maps.
const gone = "\x00gone"

// blankRefusing refuses a file with no text as the ingest rules do (confine.Check), as
// upload.ProjectFiles reads files; testFiles hands such a file over as it is.
type blankRefusing struct{ testFiles }

func (r blankRefusing) ReadFile(rel string) (File, error) {
	f, err := r.testFiles.ReadFile(rel)
	if err == nil && confine.Blank(f.Data) {
		e := confine.EmptyFile(rel)
		return File{}, &Refusal{Kind: e.Kind, Reason: e.Msg}
	}
	return f, err
}

// TestSyncEmptyFiles: a file with no text (empty or whitespace only) is never sent, never
// refused or failed, but counted as empty; a file emptied after it was synced loses its
// document (its content is now nothing), with or without --prune, so search no longer
// finds what it held. Whether the reader refuses such files (the ingest rules) or hands
// them over.
func TestSyncEmptyFiles(t *testing.T) {
	cases := []struct {
		name  string
		prune bool
		// first is synced before the plan under test; then is written after it, between
		// after the plan and before its run.
		first, then, between map[string]string
		// The plan.
		upload, replace, deleted []string
		empty, stale             int
		// The run.
		sumUploaded, sumDeleted []string
		sumEmpty                int
		// found maps a query to the files search finds for it afterwards.
		found map[string][]string
	}{
		{
			name: "new empty and whitespace-only files are not sent",
			then: map[string]string{"pkg/__init__.py": "", "pkg/py.typed": "", "empty.md": "", "blank.txt": " \n\t\r\n",
				"bom.md": "\uFEFF\n", "nbsp.yaml": "\u00a0\n", "pkg/a.py": "def walrus():\n    return 1\n"},
			upload: []string{"pkg/a.py"}, empty: 6,
			sumUploaded: []string{"pkg/a.py"}, sumEmpty: 6,
			found: map[string][]string{"walrus": {"pkg/a.py"}},
		},
		{
			name:    "emptied after a sync, without prune",
			first:   map[string]string{"a.md": "# A\n\nThe narwhal.", "b.md": "The beluga."},
			then:    map[string]string{"a.md": ""},
			deleted: []string{"a.md"}, empty: 1,
			sumDeleted: []string{"a.md"}, sumEmpty: 1,
			found: map[string][]string{"narwhal": nil, "beluga": {"b.md"}},
		},
		{
			name:    "emptied after a sync, another file gone, without prune",
			first:   map[string]string{"a.md": "The narwhal.", "c.md": "The orca."},
			then:    map[string]string{"a.md": "  \n", "c.md": gone},
			deleted: []string{"a.md"}, empty: 1, stale: 1,
			sumDeleted: []string{"a.md"}, sumEmpty: 1,
			found: map[string][]string{"narwhal": nil, "orca": {"c.md"}},
		},
		{
			name:    "emptied after a sync, with prune",
			prune:   true,
			first:   map[string]string{"a.md": "The narwhal.", "b.md": "The beluga.", "c.md": "The orca."},
			then:    map[string]string{"a.md": "\n", "c.md": gone},
			deleted: []string{"a.md", "c.md"}, empty: 1,
			sumDeleted: []string{"a.md", "c.md"}, sumEmpty: 1,
			found: map[string][]string{"narwhal": nil, "orca": nil, "beluga": {"b.md"}},
		},
		{
			name:        "filled after it was empty",
			first:       map[string]string{"a.md": ""},
			then:        map[string]string{"a.md": "The narwhal."},
			upload:      []string{"a.md"},
			sumUploaded: []string{"a.md"},
			found:       map[string][]string{"narwhal": {"a.md"}},
		},
		{
			name:       "emptied between the plan and its run",
			first:      map[string]string{"a.md": "The narwhal."},
			then:       map[string]string{"a.md": "The walrus."},
			between:    map[string]string{"a.md": ""},
			replace:    []string{"a.md"},
			sumDeleted: []string{"a.md"}, sumEmpty: 1,
			found: map[string][]string{"narwhal": nil, "walrus": nil},
		},
		{
			name:     "new file emptied between the plan and its run",
			then:     map[string]string{"n.md": "The walrus."},
			between:  map[string]string{"n.md": ""},
			upload:   []string{"n.md"},
			sumEmpty: 1,
			found:    map[string][]string{"walrus": nil},
		},
	}
	for _, refuse := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			if refuse {
				name += ", refused by the reader"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, r2rtest.Options{})
				ctx := context.Background()
				syncer := func() *Syncer {
					s := f.syncer(c.prune)
					if refuse {
						s.Opts.Files = blankRefusing{testFiles{root: f.root}}
					}
					return s
				}
				apply := func(files map[string]string) {
					for p, content := range files {
						if content == gone {
							f.remove(p)
						} else {
							f.write(p, content)
						}
					}
				}
				if c.first != nil {
					apply(c.first)
					s := syncer()
					p, err := s.Plan(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if sum := s.Run(ctx, p, nil); !sum.OK() {
						t.Fatalf("first sync %+v", sum)
					}
				}
				apply(c.then)
				f.r2r.ResetCounts()
				s := syncer()
				plan, err := s.Plan(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var dels []string
				for _, d := range plan.Delete {
					dels = append(dels, d.Path)
				}
				if got := itemPaths(plan.Upload); !slices.Equal(got, c.upload) {
					t.Errorf("plan uploads %v, want %v", got, c.upload)
				}
				if got := itemPaths(plan.Replace); !slices.Equal(got, c.replace) {
					t.Errorf("plan replaces %v, want %v", got, c.replace)
				}
				if !slices.Equal(dels, c.deleted) || plan.Empty != c.empty || plan.Stale != c.stale || len(plan.Refused) != 0 {
					t.Errorf("plan deletes %v, %d empty, %d stale, refused %v; want %v, %d, %d, none",
						dels, plan.Empty, plan.Stale, plan.Refused, c.deleted, c.empty, c.stale)
				}
				if dry := plan.DryRun(); dry.Empty != c.empty {
					t.Errorf("dry run: %d empty, want %d", dry.Empty, c.empty)
				}
				apply(c.between)
				sum := s.Run(ctx, plan, nil)
				if !sum.OK() || len(sum.Refused) != 0 || len(sum.Pending) != 0 {
					t.Fatalf("sync failed or refused: %+v", sum)
				}
				if !slices.Equal(sum.Uploaded, nonNil(c.sumUploaded)) || !slices.Equal(sum.Deleted, nonNil(c.sumDeleted)) || sum.Empty != c.sumEmpty {
					t.Errorf("summary uploaded %v, deleted %v, %d empty; want %v, %v, %d",
						sum.Uploaded, sum.Deleted, sum.Empty, c.sumUploaded, c.sumDeleted, c.sumEmpty)
				}
				if n := f.r2r.Count("POST /v3/documents"); n != len(c.sumUploaded) {
					t.Errorf("%d documents sent, want %d", n, len(c.sumUploaded))
				}
				for q, want := range c.found {
					if got := f.hits(q); !slices.Equal(got, want) {
						t.Errorf("search %q finds %v, want %v", q, got, want)
					}
				}
				// Nothing is left to do: the empty files stay counted, not sent.
				again, err := syncer().Plan(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(again.Upload)+len(again.Replace)+len(again.Delete) != 0 {
					t.Errorf("the next sync has work left: %+v", again)
				}
			})
		}
	}
}

func itemPaths(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Path)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestWriterRefusesEmpty: the Writer sends nothing for content with no text; it refuses it
// with the ingest rules' empty_file reason instead of R2R's or the encoder's.
func TestWriterRefusesEmpty(t *testing.T) {
	for _, c := range []File{
		{Path: "pkg/py.typed", AsText: true},
		{Path: "pkg/__init__.py", Data: []byte{}},
		{Path: "docs/blank.md", Data: []byte(" \n\t\n")},
		{Path: "go.sum", Data: []byte("\n"), AsText: true},
	} {
		t.Run(c.Path, func(t *testing.T) {
			f := newFixture(t, r2rtest.Options{})
			o, err := f.writer().Put(context.Background(), c, nil)
			ref, ok := errors.AsType[*Refusal](err)
			if !ok || ref.Kind != confine.Empty || !strings.Contains(ref.Reason, c.Path) {
				t.Fatalf("Put: %+v, %v; want an %s refusal naming the file", o, err, confine.Empty)
			}
			if n := f.r2r.Count("POST /v3/documents"); n != 0 {
				t.Errorf("%d documents sent for a file with no text", n)
			}
		})
	}
}
