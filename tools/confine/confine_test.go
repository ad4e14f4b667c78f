package confine

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/secretscan"
)

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestConfinementOpensBeneathTheRoot swaps a checked directory for a symlink between the
// checks and the open, the race Read's os.Root handle closes.
func TestConfinementOpensBeneathTheRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "proj")
	mustMkdir(t, filepath.Join(root, "docs"))
	mustMkdir(t, filepath.Join(root, "other"))
	mustMkdir(t, filepath.Join(base, "outside"))
	for p, body := range map[string]string{
		"proj/docs/a.md": "# a", "proj/other/a.md": "# other", "outside/a.md": "# outside",
	} {
		if err := os.WriteFile(filepath.Join(base, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := filepath.Join("docs", "a.md")
	swap := func(t *testing.T, target string) os.FileInfo {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, rel)) // the check
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, "docs")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, "docs")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			os.Remove(filepath.Join(root, "docs"))
			mustMkdir(t, filepath.Join(root, "docs"))
			os.WriteFile(filepath.Join(root, rel), []byte("# a"), 0o644)
		})
		return fi
	}
	open := func(t *testing.T, checked os.FileInfo) error {
		r, err := os.OpenRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, _, err = readRegular(r, rel, rel, root, checked, 1<<20)
		return err
	}

	t.Run("directory swapped for a link leaving the root", func(t *testing.T) {
		checked := swap(t, filepath.Join(base, "outside"))
		var ce *Error
		// The link is refused at the first component (safeopen), before it could lead out.
		if err := open(t, checked); !errors.As(err, &ce) || ce.Kind != Special || !strings.Contains(ce.Msg, "changed") {
			t.Fatalf("err = %v, want a changed-file refusal", err)
		}
	})
	t.Run("directory swapped for a link inside the root", func(t *testing.T) {
		checked := swap(t, "other")
		var ce *Error
		if err := open(t, checked); !errors.As(err, &ce) || ce.Kind != Special || !strings.Contains(ce.Msg, "changed") {
			t.Fatalf("err = %v, want a changed-file refusal", err)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		fi, err := os.Lstat(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := open(t, fi); err != nil {
			t.Fatal(err)
		}
	})
}

// TestEveryParsedTypeScannedOrRefused: each type R2R parses is read by the secret scan as
// R2R's parser reads it, or refused.
func TestEveryParsedTypeScannedOrRefused(t *testing.T) {
	for _, ext := range documentTypes {
		if !secretscan.Decided(ext) {
			t.Errorf(".%s: R2R parses it, the secret scan has no rule for it", ext)
		}
	}
}

// TestSecretInEncodedFormRefused: a secret R2R would decode (an HTML entity, a JSON
// escape) is refused like a plain one, and a type whose text cannot be scanned is refused.
func TestSecretInEncodedFormRefused(t *testing.T) {
	root := t.TempDir()
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	for _, tt := range []struct{ name, content, kind string }{
		{"page.html", "<p>&#103;" + tok[1:] + "</p>", Secret},
		{"conf.json", `{"t": "\u0067` + tok[1:] + `"}`, Secret},
		{"notes.md", "gh*p*_" + tok[4:], Secret},
		{"shot.png", "\x89PNG\r\n", Unscannable},
		{"main.go", "// &#103;" + tok[1:] + " stays text: R2R reads source as it is\n", ""},
		{tok + ".md", "# Named after a token\n", Secret},
	} {
		if err := os.WriteFile(filepath.Join(root, tt.name), []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(tt.name, []string{root})
		var ce *Error
		if errors.As(err, &ce) != (tt.kind != "") || (ce != nil && ce.Kind != tt.kind) {
			t.Errorf("Read(%s) = %v, want kind %q", tt.name, err, tt.kind)
		}
		if err != nil && strings.Contains(err.Error(), tok[4:]) {
			t.Errorf("the refusal repeats the secret: %v", err)
		}
	}
}

func TestBlankFileRefusedAsEmpty(t *testing.T) {
	for _, c := range []struct {
		rel, data string
		empty     bool
	}{
		{"pkg/__init__.py", "", true},
		{"pkg/py.typed", "", true}, // sent as text: would be an empty raw_text
		{".gitkeep", "", true},
		{"docs/empty.md", "", true},
		{"docs/blank.md", "  \n\t\r\n", true},
		{"go.sum", "\n", true},
		{"report.pdf", "", true},
		{"notes.txt", "\u00a0\u3000\n", true}, // Unicode spaces
		{"bom.md", "\uFEFF\n", true},          // an editor's "empty" UTF-8 file
		{"docs/a.md", " x ", false},
		{"bom2.md", "\uFEFFx", false},
		{"pkg/a.py", "def f():\n    return 1\n", false},
	} {
		t.Run(c.rel, func(t *testing.T) {
			if got := Blank([]byte(c.data)); got != c.empty {
				t.Errorf("Blank(%q) = %v, want %v", c.data, got, c.empty)
			}
			_, err := Check(c.rel, []byte(c.data))
			ce, ok := errors.AsType[*Error](err)
			switch {
			case !c.empty && err != nil:
				t.Errorf("Check: %v, want the file", err)
			case c.empty && (!ok || ce.Kind != Empty):
				t.Errorf("Check: %v, want an %s refusal", err, Empty)
			case c.empty && (!strings.Contains(ce.Msg, c.rel) || !strings.Contains(ce.Msg, "Write its content")):
				t.Errorf("refusal %q names neither the file nor the next step", ce.Msg)
			}
		})
	}
}
