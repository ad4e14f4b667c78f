package chunking

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"unicode/utf8"
)

// maxSignature bounds a declaration's signature in a context line.
const maxSignature = 120

// goBlocks cuts Go source with go/parser: one block per top-level declaration (function,
// method, type, const or var group) with its doc comment, whose path names the receiver type
// and the signature, so a chunk found alone says which function it is; what lies between
// declarations (package clause, imports, loose comments) is cut into paragraphs. pack starts
// a chunk at each declaration once the chunk holds minChunk characters, so small ones share
// a chunk under what their paths share. nil when the file does not parse (codeBlocks then
// cuts it at blank lines).
func goBlocks(text string) []block {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	tf := fset.File(f.Pos())
	var blocks []block
	prev := 0
	for _, d := range f.Decls {
		start, end := d.Pos(), d.End()
		if doc := declDoc(d); doc != nil {
			start = doc.Pos()
		}
		from, to := tf.Offset(start), tf.Offset(end)
		if from < prev || to > len(text) {
			return nil
		}
		blocks = append(blocks, paragraphs(text[prev:from], nil)...)
		if body := strings.TrimSpace(text[from:to]); body != "" {
			blocks = append(blocks, block{text: body, path: declPath(d, text, tf), decl: true})
		}
		prev = to
	}
	return append(blocks, paragraphs(text[prev:], nil)...)
}

func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// declPath is a declaration's place: its receiver type for a method, then its signature as
// written (a function's up to its body, a type's name and kind, a group's names).
func declPath(d ast.Decl, text string, tf *token.File) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		end := d.End()
		if d.Body != nil {
			end = d.Body.Lbrace
		}
		sig := signature(text[tf.Offset(d.Pos()):tf.Offset(end)])
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return []string{receiverType(d.Recv.List[0].Type), sig}
		}
		return []string{sig}
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		if len(names) == 0 {
			return nil
		}
		sig := signature(d.Tok.String() + " " + strings.Join(names, ", "))
		if d.Tok == token.TYPE && len(names) == 1 {
			return []string{names[0], sig} // its methods' chunks are under it too
		}
		return []string{sig}
	}
	return nil
}

// receiverType is the type name of a method's receiver, without pointer or type parameters.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// signature is s on one line, spaces collapsed, bounded.
func signature(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxSignature {
		s = string([]rune(s)[:maxSignature-1]) + "…"
	}
	return s
}
