package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// TestToolNamesStayInTheirFiles: a tool owns its policy (Tool's fields), so no Go file of
// the module but the one that defines a tool (its newTool call, with a literal or a constant
// of that file) holds a string literal equal to the tool's name. Tests are exempt, and so are testdata's programs, which are MCP
// clients calling the tools by name.
func TestToolNamesStayInTheirFiles(t *testing.T) {
	client, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range Registry(&Deps{Client: client, Projects: project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-"})}) {
		names[tl.Def.Name] = true
	}
	fset := token.NewFileSet()
	definedIn := map[string]string{} // tool name → file of its newTool call
	uses := map[string][]string{}    // tool name → "file:line" of each literal
	err = filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) && path != "..":
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		consts := map[string]string{} // this file's string constants
		var defined []ast.Expr        // first arguments of this file's newTool calls
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if i < len(n.Values) {
						if v, ok := stringLit(n.Values[i]); ok {
							consts[id.Name] = v
						}
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "newTool" && len(n.Args) > 0 {
					defined = append(defined, n.Args[0])
				}
			case *ast.BasicLit:
				if name, ok := stringLit(n); ok && names[name] {
					uses[name] = append(uses[name], fset.Position(n.Pos()).String())
				}
			}
			return true
		})
		for _, arg := range defined {
			name, ok := stringLit(arg)
			if id, isIdent := arg.(*ast.Ident); isIdent {
				name, ok = consts[id.Name]
			}
			if ok {
				definedIn[name] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range names {
		file, ok := definedIn[name]
		if !ok {
			t.Errorf("%s: no newTool(%q, ...) found", name, name)
			continue
		}
		for _, at := range uses[name] {
			if !strings.HasPrefix(at, file+":") {
				t.Errorf("%s: the tool's name appears at %s, outside %s, which defines it; use the tool's policy fields (or a constant of its file)", name, at, file)
			}
		}
	}
}

// stringLit is the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
