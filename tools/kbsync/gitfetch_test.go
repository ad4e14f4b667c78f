package kbsync

import (
	"cmp"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync/gittest"
)

// TestGitNeverFetches: in a partial clone whose promisor remote is a command (allowed by
// the repository's protocol.ext.allow), each git run of r2r-mcp that needs a missing
// object fails instead of fetching it, so the command never runs; listing the files names
// the partial clone as the cause, with the next step.
func TestGitNeverFetches(t *testing.T) {
	p := gittest.NewPartialClone(t, filepath.Join(t.TempDir(), "clone"))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"ls-files", func(t *testing.T) {
			_, err := ListFiles(ctx, p.Dir, p.Dir)
			if pe, ok := errors.AsType[*PartialCloneError](err); !ok || pe.Dir != p.Dir {
				t.Errorf("ListFiles: %v, want a PartialCloneError", err)
			}
		}},
		{"rev-parse", func(t *testing.T) {
			if got := Head(ctx, p.Dir); got != p.Head {
				t.Errorf("Head = %q, want %q", got, p.Head)
			}
			restore := p.Detach(t, p.Absent)
			defer restore()
			if got := Head(ctx, p.Dir); got != "" {
				t.Errorf("Head at a missing commit = %q", got)
			}
		}},
		{"diff-tree of a missing tree", func(t *testing.T) {
			if got, err := ChangedSince(ctx, p.Dir, p.Old, "", []string{"a.md"}); err == nil {
				t.Errorf("ChangedSince = %v without the old tree", got)
			}
		}},
		{"diff-tree of a missing commit", func(t *testing.T) {
			if got, err := ChangedSince(ctx, p.Dir, p.Absent, "", []string{"a.md"}); err == nil {
				t.Errorf("ChangedSince = %v without the commit", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t)
			if p.Ran() {
				t.Fatal("git fetched from the promisor remote and ran its command")
			}
		})
	}
}

// TestEachGitFetchGuardHoldsAlone: the variables that keep git from fetching each stop the
// fetch by themselves (a git older than 2.39.4 ignores GIT_NO_LAZY_FETCH; GIT_ALLOW_PROTOCOL
// outranks every protocol.<name>.allow of the repository's config), where git without
// either runs the promisor remote's command despite gitOverrides' protocol.allow=never.
func TestEachGitFetchGuardHoldsAlone(t *testing.T) {
	p := gittest.NewPartialClone(t, filepath.Join(t.TempDir(), "clone"))
	for _, guard := range append([]string{""}, noFetchEnv...) {
		t.Run(cmp.Or(guard, "no guard"), func(t *testing.T) {
			cmd := gitCommand(context.Background(), p.Dir, "diff-tree", "-r", "--name-only", p.Old, "HEAD")
			env := cmd.Env[:0:0]
			for _, kv := range cmd.Env {
				if kv == guard || !slices.Contains(noFetchEnv, kv) {
					env = append(env, kv)
				}
			}
			cmd.Env = env
			if err := cmd.Run(); err == nil {
				t.Error("git read a tree the clone lacks")
			}
			if ran := p.Ran(); ran != (guard == "") {
				t.Fatalf("with %q alone, the promisor remote's command ran: %v", guard, ran)
			}
		})
	}
}

// TestPartialCloneErrorNamesCauseAndNextStep: the message says what is wrong and what to do.
func TestPartialCloneErrorNamesCauseAndNextStep(t *testing.T) {
	msg := (&PartialCloneError{Dir: "/src/app"}).Error()
	for _, want := range []string{"/src/app", "partial clone", "never", "fetch --refetch", "full clone"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

// TestGitRunsOnlyThroughGitCommand: no production file of the module but gitcmd.go starts
// git (test helpers, which build hostile repositories, may).
func TestGitRunsOnlyThroughGitCommand(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var starts []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "gittest" || d.Name() == "servertest" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext") {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Trim(lit.Value, "\"`") == "git" {
					starts = append(starts, fset.Position(call.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 1 || !strings.HasSuffix(filepath.ToSlash(strings.Split(starts[0], ":")[0]), "tools/kbsync/gitcmd.go") {
		t.Errorf("git is started at %v; only gitCommand (gitcmd.go) may start it", starts)
	}
}
