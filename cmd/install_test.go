package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/cmd/jsonc"
)

// installFixture is a temp machine: a home, a git project with a subdirectory the command runs
// in, and an r2r-mcp binary reached through a symlink.
type installFixture struct {
	t           *testing.T
	goos        string
	home, proj  string
	wd          string
	exe         string // what install must write: the resolved binary path
	exeLink     string // what os.Executable reports
	env         map[string]string
	now         time.Time
	out, errOut bytes.Buffer
}

func newInstallFixture(t *testing.T, goos string) *installFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &installFixture{
		t: t, goos: goos,
		home: filepath.Join(root, "home"),
		proj: filepath.Join(root, "proj"),
		exe:  filepath.Join(root, "opt", "r2r-mcp-1.0", "r2r-mcp"),
		env:  map[string]string{},
		now:  time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC),
	}
	f.wd = filepath.Join(f.proj, "internal", "pkg")
	f.exeLink = filepath.Join(root, "bin", "r2r-mcp")
	for _, d := range []string{f.home, f.wd, filepath.Join(f.proj, ".git"), filepath.Dir(f.exe), filepath.Dir(f.exeLink)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.exe, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.exe, f.exeLink); err != nil {
		t.Fatal(err)
	}
	return f
}

// run executes "install args..." against the fixture and returns the command's error.
func (f *installFixture) run(args ...string) error {
	f.t.Helper()
	f.out.Reset()
	f.errOut.Reset()
	deps := Deps{
		IO:     IOStreams{In: strings.NewReader(""), Out: &f.out, ErrOut: &f.errOut},
		Getenv: func(k string) string { return f.env[k] },
	}
	c := newInstallCmd(deps, func(o *installOptions) error {
		o.Env.GOOS = f.goos
		o.Env.HomeDir = func() (string, error) { return f.home, nil }
		o.Env.WorkDir = func() (string, error) { return f.wd, nil }
		o.Env.Executable = func() (string, error) { return f.exeLink, nil }
		o.Env.Now = func() time.Time { return f.now }
		return runInstall(o)
	})
	c.SilenceErrors, c.SilenceUsage = true, true
	c.SetOut(&f.out)
	c.SetErr(&f.errOut)
	c.SetArgs(args)
	return c.Execute()
}

// exeJSON is the binary path as it appears inside a JSON string.
func (f *installFixture) exeJSON() string { return strings.Trim(jsonc.Quote(f.exe), `"`) }

func (f *installFixture) expand(s string) string { return strings.ReplaceAll(s, "EXE", f.exeJSON()) }

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listDir returns the names in dir ("" for a directory that does not exist).
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".*.bak")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fileClients are the clients whose config install edits itself, with where the file lands.
var fileClients = []struct {
	name   string
	args   []string
	path   func(f *installFixture) string
	wantIn string // the fresh file, with EXE for the binary path
	mode   os.FileMode
}{
	{"claude-desktop", []string{"claude-desktop"},
		func(f *installFixture) string {
			return filepath.Join(f.home, ".config", "Claude", "claude_desktop_config.json")
		},
		"{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n", 0o600},
	{"cursor user", []string{"cursor"},
		func(f *installFixture) string { return filepath.Join(f.home, ".cursor", "mcp.json") },
		"{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n", 0o600},
	{"cursor project", []string{"cursor", "--scope", "project"},
		func(f *installFixture) string { return filepath.Join(f.proj, ".cursor", "mcp.json") },
		"{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n", 0o644},
	{"vscode user", []string{"vscode"},
		func(f *installFixture) string { return filepath.Join(f.home, ".config", "Code", "User", "mcp.json") },
		"{\n  \"servers\": {\n    \"r2r\": {\n      \"type\": \"stdio\",\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n", 0o600},
	{"vscode project", []string{"vscode", "--scope", "project"},
		func(f *installFixture) string { return filepath.Join(f.proj, ".vscode", "mcp.json") },
		"{\n  \"servers\": {\n    \"r2r\": {\n      \"type\": \"stdio\",\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n", 0o644},
}

func TestInstallFreshFile(t *testing.T) {
	for _, tc := range fileClients {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			if err := f.run(tc.args...); err != nil {
				t.Fatalf("install: %v\nstderr: %s", err, f.errOut.String())
			}
			path := tc.path(f)
			if got, want := readFile(t, path), f.expand(tc.wantIn); got != want {
				t.Errorf("file:\n%s\nwant:\n%s", got, want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v (%v), want %v", fi.Mode().Perm(), err, tc.mode)
			}
			if names := listDir(t, filepath.Dir(path)); !slices.Equal(names, []string{filepath.Base(path)}) {
				t.Errorf("dir holds %v, want only the config (no backup of a file that did not exist, no temp files)", names)
			}
			if f.out.Len() != 0 {
				t.Errorf("stdout should be empty, got %q", f.out.String())
			}
			if !strings.Contains(f.errOut.String(), "Added r2r to") || !strings.Contains(f.errOut.String(), path) {
				t.Errorf("stderr %q should say what was written where", f.errOut.String())
			}
		})
	}
}

func TestInstallMergesExistingFile(t *testing.T) {
	tests := []struct {
		name   string
		client string
		path   func(f *installFixture) string
		before string
		after  string // EXE stands for the binary path
	}{
		{
			name:   "tabs, other servers and keys, odd values",
			client: "claude-desktop",
			before: "{\n\t\"globalShortcut\": \"Ctrl+Space\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\"command\": \"z\", \"args\": []},\n\t\t\"alpha\": {\n\t\t\t\"command\": \"npx\",\n\t\t\t\"env\": {\"NOTE\": \"caf\\u00e9 <&>\"}\n\t\t}\n\t},\n\t\"ratio\": 1.50e0,\n\t\"flags\": [true, false, null]\n}",
			after:  "{\n\t\"globalShortcut\": \"Ctrl+Space\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\"command\": \"z\", \"args\": []},\n\t\t\"alpha\": {\n\t\t\t\"command\": \"npx\",\n\t\t\t\"env\": {\"NOTE\": \"caf\\u00e9 <&>\"}\n\t\t},\n\t\t\"r2r\": {\n\t\t\t\"command\": \"EXE\",\n\t\t\t\"args\": [\"serve\"]\n\t\t}\n\t},\n\t\"ratio\": 1.50e0,\n\t\"flags\": [true, false, null]\n}",
		},
		{
			name:   "no server key yet",
			client: "claude-desktop",
			before: "{\n    \"globalShortcut\": \"Alt+Space\"\n}\n",
			after:  "{\n    \"globalShortcut\": \"Alt+Space\",\n    \"mcpServers\": {\n        \"r2r\": {\n            \"command\": \"EXE\",\n            \"args\": [\"serve\"]\n        }\n    }\n}\n",
		},
		{
			name:   "one-line file stays on one line",
			client: "cursor",
			before: `{"mcpServers":{"x":{"command":"x"}},"z":1}`,
			after:  `{"mcpServers":{"x":{"command":"x"}, "r2r": {"command":"EXE","args":["serve"]}},"z":1}`,
		},
		{
			name:   "empty servers object",
			client: "cursor",
			before: "{\n  \"mcpServers\": {}\n}\n",
			after:  "{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
		{
			name:   "stale entry: only its command changes, the user's extra keys stay",
			client: "cursor",
			before: "{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"/old/r2r-mcp\",\n      \"args\": [\"serve\"],\n      \"env\": {\"R2R_API_URL\": \"http://r2r:7272\"}\n    },\n    \"other\": {\"command\": \"o\"}\n  }\n}\n",
			after:  "{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"],\n      \"env\": {\"R2R_API_URL\": \"http://r2r:7272\"}\n    },\n    \"other\": {\"command\": \"o\"}\n  }\n}\n",
		},
		{
			name:   "broken entry of ours is replaced",
			client: "cursor",
			before: `{"mcpServers": {"r2r": "x", "b": {}}}`,
			after:  `{"mcpServers": {"r2r": {"command":"EXE","args":["serve"]}, "b": {}}}`,
		},
		{
			name:   "empty file",
			client: "cursor",
			before: "",
			after:  "{\n  \"mcpServers\": {\n    \"r2r\": {\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
		{
			name:   "CRLF line endings",
			client: "cursor",
			before: "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"a\"}\r\n  }\r\n}\r\n",
			after:  "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"a\"},\r\n    \"r2r\": {\r\n      \"command\": \"EXE\",\r\n      \"args\": [\"serve\"]\r\n    }\r\n  }\r\n}\r\n",
		},
		{
			name:   "VS Code JSONC: comments and trailing commas survive",
			client: "vscode",
			before: "// team servers\n{\n  \"inputs\": [],\n  \"servers\": {\n    /* docs */\n    \"docs\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"}, // remote\n  },\n}\n",
			after:  "// team servers\n{\n  \"inputs\": [],\n  \"servers\": {\n    /* docs */\n    \"docs\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"}, // remote\n    \"r2r\": {\n      \"type\": \"stdio\",\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  },\n}\n",
		},
		{
			name:   "comment after the last member stays on its line",
			client: "vscode",
			before: "{\n  \"servers\": {\n    \"docs\": {\"type\": \"stdio\", \"command\": \"d\"} // keep me\n  }\n}\n",
			after:  "{\n  \"servers\": {\n    \"docs\": {\"type\": \"stdio\", \"command\": \"d\"}, // keep me\n    \"r2r\": {\n      \"type\": \"stdio\",\n      \"command\": \"EXE\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			args := []string{tc.client, "--scope", "project"}
			path := filepath.Join(f.proj, ".cursor", "mcp.json")
			switch tc.client {
			case "claude-desktop":
				args = []string{tc.client}
				path = filepath.Join(f.home, ".config", "Claude", "claude_desktop_config.json")
			case "vscode":
				path = filepath.Join(f.proj, ".vscode", "mcp.json")
			}
			writeFile(t, path, tc.before, 0o640)
			if err := f.run(args...); err != nil {
				t.Fatalf("install: %v", err)
			}
			got := readFile(t, path)
			if want := f.expand(tc.after); got != want {
				t.Fatalf("file:\n%s\nwant:\n%s", got, want)
			}
			bak := backups(t, path)
			if len(bak) != 1 || readFile(t, bak[0]) != tc.before {
				t.Errorf("want one backup holding the old bytes, got %v", bak)
			}
			wantMsg := "Added r2r to"
			if strings.Contains(tc.before, `"r2r"`) {
				wantMsg = "Updated r2r in"
			}
			if !strings.Contains(f.errOut.String(), wantMsg) {
				t.Errorf("stderr %q should contain %q", f.errOut.String(), wantMsg)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the original 0640", fi.Mode().Perm())
			}
			if tc.client == "vscode" {
				return // JSONC: encoding/json cannot read it
			}
			// Whatever the formatting, the only semantic change is our entry.
			var oldDoc, newDoc map[string]any
			if tc.before != "" {
				if err := json.Unmarshal([]byte(tc.before), &oldDoc); err != nil {
					t.Fatal(err)
				}
			}
			if err := json.Unmarshal([]byte(got), &newDoc); err != nil {
				t.Fatalf("result is not JSON: %v", err)
			}
			servers := newDoc["mcpServers"].(map[string]any)
			entry := servers["r2r"].(map[string]any)
			if entry["command"] != f.exe || !reflect.DeepEqual(entry["args"], []any{"serve"}) {
				t.Errorf("entry = %v", entry)
			}
			delete(servers, "r2r")
			if old, ok := oldDoc["mcpServers"].(map[string]any); ok {
				delete(old, "r2r")
			} else if len(servers) == 0 {
				delete(newDoc, "mcpServers")
			}
			if len(oldDoc) == 0 && len(newDoc) == 0 {
				return
			}
			if !reflect.DeepEqual(oldDoc, newDoc) {
				t.Errorf("other content changed:\nold %v\nnew %v", oldDoc, newDoc)
			}
		})
	}
}

func TestInstallSecondRunChangesNothing(t *testing.T) {
	for _, tc := range fileClients {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			path := tc.path(f)
			writeFile(t, path, "{\"mcpServers\": {\"other\": {\"command\": \"o\"}}, \"servers\": {\"other\": {\"command\": \"o\"}}}\n", 0o600)
			if err := f.run(tc.args...); err != nil {
				t.Fatal(err)
			}
			first := readFile(t, path)
			fi1, _ := os.Stat(path)
			names := listDir(t, filepath.Dir(path))
			f.now = f.now.Add(time.Hour) // a second backup would get a new name
			if err := f.run(tc.args...); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(f.errOut.String(), "already up to date") {
				t.Errorf("stderr %q should say the entry is up to date", f.errOut.String())
			}
			fi2, _ := os.Stat(path)
			if readFile(t, path) != first || !fi2.ModTime().Equal(fi1.ModTime()) || !os.SameFile(fi1, fi2) {
				t.Error("second run rewrote the file")
			}
			if got := listDir(t, filepath.Dir(path)); !slices.Equal(got, names) {
				t.Errorf("second run left %v, first left %v", got, names)
			}
			if len(backups(t, path)) != 1 {
				t.Errorf("want exactly the first run's backup, got %v", backups(t, path))
			}
		})
	}
}

func TestInstallRefusesUnparsableFile(t *testing.T) {
	tests := []struct {
		name, client, content, wantErr string
	}{
		{"truncated", "cursor", "{\"mcpServers\": {\"a\": ", "unexpected end of file"},
		{"not JSON at all", "claude-desktop", "mcpServers = {}\n", "top level must be a JSON object"},
		{"comment in strict JSON", "cursor", "{\n  // no comments here\n  \"mcpServers\": {}\n}\n", "line 2, column 3"},
		{"trailing comma in strict JSON", "claude-desktop", "{\"mcpServers\": {},}", "expected a quoted key"},
		{"servers is a list", "cursor", "{\"mcpServers\": []}", `"mcpServers" is not a JSON object`},
		{"servers is a string", "vscode", "{\"servers\": \"x\"}", "unexpected shape"},
		{"top-level array", "vscode", "[]", "top level must be a JSON object"},
		{"garbage after the object", "cursor", "{} {}", "after the end of the top-level object"},
		{"raw newline in a string", "cursor", "{\"a\": \"x\ny\"}", "control character"},
		{"unterminated JSONC comment", "vscode", "{ /* open", "unterminated /* comment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			var path string
			args := []string{tc.client}
			switch tc.client {
			case "claude-desktop":
				path = filepath.Join(f.home, ".config", "Claude", "claude_desktop_config.json")
			case "cursor":
				path = filepath.Join(f.home, ".cursor", "mcp.json")
			case "vscode":
				path, args = filepath.Join(f.proj, ".vscode", "mcp.json"), []string{"vscode", "--scope", "project"}
			}
			writeFile(t, path, tc.content, 0o600)
			fi1, _ := os.Stat(path)
			err := f.run(args...)
			if err == nil {
				t.Fatal("install succeeded on an unparsable file")
			}
			for _, w := range []string{path, tc.wantErr, "was not changed", "Fix it, or move it aside"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should contain %q", err, w)
				}
			}
			fi2, _ := os.Stat(path)
			if readFile(t, path) != tc.content || !fi2.ModTime().Equal(fi1.ModTime()) {
				t.Error("the file was modified")
			}
			if names := listDir(t, filepath.Dir(path)); len(names) != 1 {
				t.Errorf("dir holds %v, want only the untouched file", names)
			}
		})
	}
}

func TestInstallDryRun(t *testing.T) {
	t.Run("existing file", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		path := filepath.Join(f.home, ".cursor", "mcp.json")
		before := "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  },\n  \"z\": 1\n}\n"
		writeFile(t, path, before, 0o600)
		if err := f.run("cursor", "--dry-run"); err != nil {
			t.Fatal(err)
		}
		want := f.expand("--- " + path + "\n+++ " + path + "\n@@ -2,6 +2,10 @@\n" +
			"   \"mcpServers\": {\n     \"a\": {\n       \"command\": \"a\"\n+    },\n" +
			"+    \"r2r\": {\n+      \"command\": \"EXE\",\n+      \"args\": [\"serve\"]\n" +
			"     }\n   },\n   \"z\": 1\n")
		if f.out.String() != want {
			t.Errorf("diff:\n%s\nwant:\n%s", f.out.String(), want)
		}
		if !strings.Contains(f.errOut.String(), "nothing was written") {
			t.Errorf("stderr %q", f.errOut.String())
		}
		if readFile(t, path) != before || len(listDir(t, filepath.Dir(path))) != 1 {
			t.Error("dry run changed the directory")
		}
	})
	t.Run("no file yet", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		if err := f.run("vscode", "--scope", "project", "--dry-run"); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.out.String(), "--- /dev/null\n") || !strings.Contains(f.out.String(), "@@ -0,0 +1,9 @@\n+{\n") {
			t.Errorf("diff:\n%s", f.out.String())
		}
		if names := listDir(t, f.proj); !slices.Equal(names, []string{".git", "internal"}) {
			t.Errorf("dry run created files: %v", names)
		}
	})
	t.Run("up to date", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		if err := f.run("cursor"); err != nil {
			t.Fatal(err)
		}
		if err := f.run("cursor", "--dry-run"); err != nil {
			t.Fatal(err)
		}
		if f.out.Len() != 0 || !strings.Contains(f.errOut.String(), "already up to date") {
			t.Errorf("stdout %q stderr %q", f.out.String(), f.errOut.String())
		}
	})
}

func TestInstallWritesThroughSymlink(t *testing.T) {
	f := newInstallFixture(t, "linux")
	target := filepath.Join(f.home, "dotfiles", "cursor-mcp.json")
	writeFile(t, target, "{\"mcpServers\": {}}\n", 0o644)
	link := filepath.Join(f.home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := f.run("cursor"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if !strings.Contains(readFile(t, target), f.exeJSON()) {
		t.Errorf("target not updated: %s", readFile(t, target))
	}
	if names := listDir(t, filepath.Dir(target)); len(names) != 1 {
		t.Errorf("temp files left next to the target: %v", names)
	}
}

func TestInstallConfigPaths(t *testing.T) {
	tests := []struct {
		client, goos, scope string
		env                 map[string]string
		want                func(f *installFixture) string
	}{
		{"claude-desktop", "darwin", "user", nil, func(f *installFixture) string {
			return filepath.Join(f.home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
		}},
		{"claude-desktop", "windows", "user", map[string]string{"APPDATA": "/roaming"}, func(f *installFixture) string {
			return filepath.Join("/roaming", "Claude", "claude_desktop_config.json")
		}},
		{"claude-desktop", "windows", "user", nil, func(f *installFixture) string {
			return filepath.Join(f.home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
		}},
		{"claude-desktop", "linux", "user", nil, func(f *installFixture) string {
			return filepath.Join(f.home, ".config", "Claude", "claude_desktop_config.json")
		}},
		{"claude-desktop", "linux", "user", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, func(f *installFixture) string {
			return filepath.Join("/xdg", "Claude", "claude_desktop_config.json")
		}},
		{"cursor", "windows", "user", nil, func(f *installFixture) string { return filepath.Join(f.home, ".cursor", "mcp.json") }},
		{"cursor", "linux", "project", nil, func(f *installFixture) string { return filepath.Join(f.proj, ".cursor", "mcp.json") }},
		{"vscode", "darwin", "user", nil, func(f *installFixture) string {
			return filepath.Join(f.home, "Library", "Application Support", "Code", "User", "mcp.json")
		}},
		{"vscode", "windows", "user", map[string]string{"APPDATA": "/roaming"}, func(f *installFixture) string {
			return filepath.Join("/roaming", "Code", "User", "mcp.json")
		}},
		{"vscode", "linux", "user", nil, func(f *installFixture) string {
			return filepath.Join(f.home, ".config", "Code", "User", "mcp.json")
		}},
		{"vscode", "linux", "project", nil, func(f *installFixture) string { return filepath.Join(f.proj, ".vscode", "mcp.json") }},
	}
	for _, tc := range tests {
		t.Run(tc.client+"/"+tc.goos+"/"+tc.scope, func(t *testing.T) {
			f := newInstallFixture(t, tc.goos)
			o := &installOptions{Client: tc.client, Scope: tc.scope,
				Deps: Deps{Getenv: func(k string) string { return tc.env[k] }},
				Env: installEnv{GOOS: tc.goos,
					HomeDir: func() (string, error) { return f.home, nil },
					WorkDir: func() (string, error) { return f.wd, nil }}}
			cfg, err := o.clientConfig(f.exe)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(f); cfg.Path != want {
				t.Errorf("path %s, want %s", cfg.Path, want)
			}
		})
	}
}

func TestInstallRejects(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		exe     string
		wantErr string
	}{
		{"no client", nil, "", "install needs one client"},
		{"unknown client", []string{"emacs"}, "", `unknown client "emacs"`},
		{"claude desktop per project", []string{"claude-desktop", "--scope", "project"}, "", "Claude Desktop has one config"},
		{"local scope outside claude code", []string{"cursor", "--scope", "local"}, "", "--scope local is only for claude-code"},
		{"unknown scope", []string{"cursor", "--scope", "global"}, "", `unknown --scope "global"`},
		{"go run binary", []string{"cursor"}, filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "r2r-mcp"), "temporary go run build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			if tc.exe != "" {
				f.exeLink = tc.exe
			}
			err := f.run(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if names := listDir(t, f.home); len(names) != 0 {
				t.Errorf("home touched: %v", names)
			}
		})
	}
}

// fakeClaude puts a "claude" shell script first on PATH. It appends its working directory and
// arguments to a log and answers "mcp add" and "mcp get" with the given shell snippets.
func fakeClaude(t *testing.T, onAdd, onGet string) (logPath string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake claude is a shell script")
	}
	dir := t.TempDir()
	logPath = filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\n" +
		"{ echo \"pwd=$PWD\"; for a in \"$@\"; do echo \"arg=$a\"; done; echo ---; } >> '" + logPath + "'\n" +
		"case \"$2\" in\nadd) " + onAdd + " ;;\nget) " + onGet + " ;;\nesac\n"
	writeFile(t, filepath.Join(dir, "claude"), script, 0o755)
	t.Setenv("PATH", dir)
	return logPath
}

// calls parses the fake claude's log into one "pwd args..." line per call.
func calls(t *testing.T, logPath string) []string {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range strings.Split(strings.TrimSuffix(string(b), "---\n"), "---\n") {
		var parts []string
		for _, l := range strings.Split(strings.TrimSpace(c), "\n") {
			_, v, _ := strings.Cut(l, "=")
			parts = append(parts, v)
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

func TestInstallClaudeCode(t *testing.T) {
	const added = `echo "Added stdio MCP server r2r with command: $7 $8 to config"`
	t.Run("runs claude mcp add", func(t *testing.T) {
		for _, scope := range []string{"user", "project", "local"} {
			t.Run(scope, func(t *testing.T) {
				f := newInstallFixture(t, "linux")
				log := fakeClaude(t, added, "exit 1")
				if err := f.run("claude-code", "--scope", scope); err != nil {
					t.Fatalf("%v\n%s", err, f.errOut.String())
				}
				want := []string{f.proj + " mcp get r2r", f.proj + " mcp add --scope " + scope + " r2r -- " + f.exe + " serve"}
				if got := calls(t, log); !slices.Equal(got, want) {
					t.Errorf("claude calls %q, want %q", got, want)
				}
				if !strings.Contains(f.errOut.String(), "Added stdio MCP server r2r with command: "+f.exe+" serve") {
					t.Errorf("claude's output should be passed on to stderr: %q", f.errOut.String())
				}
				if f.out.Len() != 0 {
					t.Errorf("stdout %q", f.out.String())
				}
			})
		}
	})
	t.Run("already registered with this binary", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		log := fakeClaude(t, `echo "MCP server r2r already exists in user config" >&2; exit 1`,
			`printf 'r2r:\n  Scope: User config\n  Command: %s\n  Args: serve\n' '`+f.exe+`'`)
		if err := f.run("claude-code"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.errOut.String(), "already up to date") {
			t.Errorf("stderr %q", f.errOut.String())
		}
		if got := calls(t, log); len(got) != 1 || !strings.HasSuffix(got[0], " mcp get r2r") {
			t.Errorf("calls %q", got)
		}
	})
	// An r2r in another scope is kept (Claude Code would list both as conflicting), and
	// install says which.
	t.Run("this binary in another scope", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		log := fakeClaude(t, added, `printf 'r2r:\n  Scope: Local config (private to you in this project)\n  Status: ✓ Connected\n  Type: stdio\n  Command: %s\n  Args: serve\n' '`+f.exe+`'`)
		if err := f.run("claude-code"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.errOut.String(), "r2r already runs this binary in Claude Code's local scope; install keeps that entry and adds none in user scope") {
			t.Errorf("stderr %q", f.errOut.String())
		}
		if got := calls(t, log); len(got) != 1 {
			t.Errorf("calls %q, want only claude mcp get", got)
		}
	})
	t.Run("another command in another scope", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		log := fakeClaude(t, added, `printf 'r2r:\n  Scope: Project config (shared via .mcp.json)\n  Command: /opt/old/r2r-mcp\n  Args: serve\n'`)
		err := f.run("claude-code", "--scope", "user")
		if err == nil || !strings.Contains(err.Error(), "in its project config (command: /opt/old/r2r-mcp serve); install keeps it rather than add a second r2r in user scope") ||
			!strings.Contains(err.Error(), "claude mcp remove r2r --scope project") {
			t.Fatalf("err = %v", err)
		}
		if got := calls(t, log); len(got) != 1 {
			t.Errorf("calls %q, want only claude mcp get", got)
		}
	})
	t.Run("added elsewhere between get and add", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		// get finds nothing, add says it exists (another process added it), get again finds it.
		state := filepath.Join(t.TempDir(), "got")
		log := fakeClaude(t, `echo "MCP server r2r already exists in user config" >&2; exit 1`,
			`if [ -f '`+state+`' ]; then printf 'r2r:\n  Scope: User config\n  Command: %s\n  Args: serve\n' '`+f.exe+`'; else : > '`+state+`'; exit 1; fi`)
		if err := f.run("claude-code"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.errOut.String(), "already up to date") || len(calls(t, log)) != 3 {
			t.Errorf("stderr %q, calls %q", f.errOut.String(), calls(t, log))
		}
	})
	t.Run("already registered with another command", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		fakeClaude(t, `echo "MCP server r2r already exists in user config" >&2; exit 1`,
			`printf 'r2r:\n  Command: /usr/local/bin/other\n  Args: serve\n'`)
		err := f.run("claude-code")
		if err == nil || !strings.Contains(err.Error(), "claude mcp remove r2r --scope user") ||
			!strings.Contains(err.Error(), "/usr/local/bin/other") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("claude fails", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		fakeClaude(t, `echo "Invalid scope" >&2; exit 2`, "exit 1")
		err := f.run("claude-code")
		if err == nil || !strings.Contains(err.Error(), "Invalid scope") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("dry run runs nothing", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		log := fakeClaude(t, added, "exit 1")
		if err := f.run("claude-code", "--dry-run"); err != nil {
			t.Fatal(err)
		}
		if got := calls(t, log); got != nil {
			t.Errorf("dry run ran claude: %q", got)
		}
		if want := "claude mcp add --scope user r2r -- " + f.exe + " serve\n"; f.out.String() != want {
			t.Errorf("stdout %q, want %q", f.out.String(), want)
		}
	})
	t.Run("claude not on PATH", func(t *testing.T) {
		f := newInstallFixture(t, "linux")
		t.Setenv("PATH", t.TempDir())
		err := f.run("claude-code", "--scope", "project")
		if err == nil || !strings.Contains(err.Error(), "not on PATH, so nothing was installed") ||
			!strings.Contains(err.Error(), "npm install -g @anthropic-ai/claude-code") {
			t.Fatalf("install without claude: err = %v, want a failure that says nothing was installed and where claude comes from", err)
		}
		if want := "claude mcp add --scope project r2r -- " + f.exe + " serve\n"; f.out.String() != want {
			t.Errorf("stdout %q, want %q", f.out.String(), want)
		}
	})
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, goos, want string }{
		{"/usr/local/bin/r2r-mcp", "linux", "/usr/local/bin/r2r-mcp"},
		{"/Users/me/My Tools/r2r-mcp", "darwin", "'/Users/me/My Tools/r2r-mcp'"},
		{"/tmp/it's", "linux", `'/tmp/it'\''s'`},
		{`C:\Program Files\r2r-mcp.exe`, "windows", `"C:\Program Files\r2r-mcp.exe"`},
		{`C:\tools\r2r-mcp.exe`, "windows", `C:\tools\r2r-mcp.exe`},
		{"", "linux", "''"},
	}
	for _, tc := range tests {
		if got := shellQuote(tc.in, tc.goos); got != tc.want {
			t.Errorf("shellQuote(%q, %s) = %s, want %s", tc.in, tc.goos, got, tc.want)
		}
	}
}

func TestInstallIsRegistered(t *testing.T) {
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }})
	for _, name := range []string{"install", "completion"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("root has no %s command (%v)", name, err)
		}
	}
}
