// Package gittest builds hostile git repositories for tests: a real partial clone whose
// promisor remote is a command, so that any git run which lazily fetches a missing object
// runs that command and leaves a marker file behind.
//
// It is for tests only: no production package may import it.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// PartialClone is a partial clone (git clone --filter=tree:0, sparse checkout) whose
// promisor remote is `ext::sh -c "touch MARKER; false"` with protocol.ext.allow=always in
// its config. git lazily fetches from it, and so runs the command, when it needs:
//   - the blob of sub/.gitignore (outside the sparse checkout, while sub/ exists in the
//     work tree): `git ls-files -co --exclude-standard`;
//   - the tree of Old: `git diff-tree Old HEAD`;
//   - the commit Absent: `git diff-tree Absent HEAD`, and `git rev-parse HEAD^{commit}`
//     after Detach(Absent).
//
// The command always fails, so the objects stay missing and every such run tries again.
type PartialClone struct {
	// Dir is the clone's work tree (symlinks resolved). It holds a.md, docs/b.md and
	// sub/y.log; sub/.gitignore ignores *.log.
	Dir string
	// Head is the commit checked out; Old its parent, whose tree the clone lacks.
	Head, Old string
	// Absent is a commit of the remote that the clone does not have at all.
	Absent string
	marker string
}

// NewPartialClone builds a PartialClone in dir (which must not exist or be empty) and
// checks that it is hostile: the test's own git, unguarded, runs the remote's command
// through each of the three ways above. It skips without git (fails under CI).
func NewPartialClone(t testing.TB, dir string) *PartialClone {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git is not installed")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the promisor remote's command is a POSIX shell command")
	}
	base := t.TempDir()
	if strings.ContainsAny(base, " %'\"\\;") {
		t.Skipf("the temporary directory %q cannot be written in an ext:: URL", base)
	}
	src, work := filepath.Join(base, "src.git"), filepath.Join(base, "work")
	run(t, base, "init", "-q", "--bare", src)
	run(t, src, "config", "uploadpack.allowFilter", "true")
	run(t, base, "init", "-q", work)
	write(t, work, "a.md", "# A\n\nalpha\n")
	write(t, work, "docs/b.md", "# B\n\nbeta\n")
	write(t, work, "sub/.gitignore", "*.log\n")
	write(t, work, "sub/x.md", "# X\n\nxi\n")
	run(t, work, "add", "-A")
	run(t, work, "commit", "-q", "-m", "first")
	write(t, work, "a.md", "# A\n\nalpha, changed\n")
	run(t, work, "commit", "-q", "-am", "second")
	run(t, work, "push", "-q", src, "HEAD:refs/heads/main")
	run(t, work, "checkout", "-q", "-b", "other")
	write(t, work, "z.md", "# Z\n\nzeta\n")
	run(t, work, "add", "z.md")
	run(t, work, "commit", "-q", "-m", "other")
	run(t, work, "push", "-q", src, "other")

	run(t, base, "clone", "-q", "--filter=tree:0", "--no-checkout", "--single-branch", "--branch", "main", "file://"+src, dir)
	run(t, dir, "sparse-checkout", "set", "--no-cone", "/a.md", "/docs/")
	run(t, dir, "checkout", "-q", "main")
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	p := &PartialClone{Dir: dir, marker: filepath.Join(base, "MARKER"),
		Head: output(t, work, "rev-parse", "main"), Old: output(t, work, "rev-parse", "main~1"), Absent: output(t, work, "rev-parse", "other")}
	run(t, dir, "config", "remote.origin.url", "ext::sh -c touch% "+p.marker+";false")
	run(t, dir, "config", "protocol.ext.allow", "always")
	write(t, dir, "sub/y.log", "ignored\n")

	for _, args := range [][]string{
		{"ls-files", "-co", "--exclude-standard"},
		{"diff-tree", "-r", "--name-only", p.Old, "HEAD"},
		{"diff-tree", "-r", "--name-only", p.Absent, "HEAD"},
	} {
		p.mustFetch(t, args)
	}
	restore := p.Detach(t, p.Absent)
	p.mustFetch(t, []string{"rev-parse", "--verify", "HEAD^{commit}"})
	restore()
	return p
}

// Ran reports whether the remote's command has run since the clone was checked or Ran
// last reported it.
func (p *PartialClone) Ran() bool {
	return os.Remove(p.marker) == nil
}

// Detach points HEAD at commit (Old, whose tree the clone lacks, or Absent, which it lacks
// altogether); restore points it back.
func (p *PartialClone) Detach(t testing.TB, commit string) (restore func()) {
	t.Helper()
	head := filepath.Join(p.Dir, ".git", "HEAD")
	old, err := os.ReadFile(head)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(head, []byte(commit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(head, old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mustFetch runs git unguarded and fails the test unless it ran the remote's command.
func (p *PartialClone) mustFetch(t testing.TB, args []string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.Dir
	cmd.Env = hermetic()
	_ = cmd.Run() // the fetch, and so the command, fails
	if !p.Ran() {
		t.Fatalf("the fixture is not hostile: git %v did not run the promisor remote's command", args)
	}
}

// hermetic is the environment without the caller's git variables or configuration.
func hermetic() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

func run(t testing.TB, dir string, args ...string) {
	t.Helper()
	output(t, dir, args...)
}

func output(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = hermetic()
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
