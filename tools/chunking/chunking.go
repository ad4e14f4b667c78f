// Package chunking cuts a text file into chunks that follow its structure — Markdown
// sections, code declarations, paragraphs — each opening with a context line that names the
// file and the heading path it sits under, so that a chunk found on its own says where it
// is from and its embedding knows what it is about.
package chunking

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	// Target is the length a chunk grows to, in characters, context line included: about
	// 256 word pieces, what small sentence-embedding models such as all-MiniLM-L6-v2 read
	// before they truncate.
	Target = 900
	// minChunk is the length below which a chunk takes in the next section too.
	minChunk = 300
	// maxContext bounds the context line before its part number.
	maxContext = 200
	// maxPartChars is the room a part number takes at most (" ¶" and six digits).
	maxPartChars = 8
	// Marker opens a chunk's context line.
	Marker = "§ "
	// sep joins the parts of a heading path.
	sep = " › "
	// partMark ends a context line with the chunk's place in the file: R2R 3.6.6 keeps no
	// chunk_order for chunks it is given, so this is how a reader puts them back in order
	// and knows which ones are neighbours.
	partMark = " ¶"
)

// Version names how Split cuts files. A document r2r-mcp chunked carries it in its
// metadata, so a reader knows each chunk opens with a context line.
const Version = "context-v1"

// textExt are the extensions of files R2R would parse as plain text or Markdown, which
// r2r-mcp chunks itself.
var textExt = map[string]bool{".md": true, ".markdown": true, ".mdx": true, ".txt": true, ".rst": true}

// For is the chunks r2r-mcp sends for a file instead of its bytes: nil unless it is UTF-8
// text that R2R would read as text anyway (Markdown, plain text, or a type R2R has no parser
// for, which r2r-mcp sends as text: asText) or source code, which R2R 3.6.6's .py/.js/.ts
// parsers reduce to an outline without function bodies.
func For(file string, data []byte, asText bool) []string {
	ext := strings.ToLower(path.Ext(file))
	if !asText && !textExt[ext] && !codeExt[ext] || !utf8.Valid(data) {
		return nil
	}
	return Split(file, string(data))
}

// block is a paragraph, fenced code block or list, with the heading path above it.
type block struct {
	text    string
	path    []string // headings above it
	heading bool     // the block is the heading that starts a section
	decl    bool     // a code declaration starts here
}

// Split cuts a file's text into chunks, each beginning with its context line; nil for
// blank text.
func Split(file, text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var blocks []block
	ext := strings.ToLower(path.Ext(file))
	switch cutDecls := declarations[ext]; {
	case ext == ".md" || ext == ".markdown" || ext == ".mdx" || ext == ".rst":
		blocks = markdownBlocks(text)
	case cutDecls != nil:
		if blocks = cutDecls(text); blocks == nil {
			blocks = codeBlocks(text) // it does not parse: cut at blank lines
		}
	case codeExt[ext]:
		blocks = codeBlocks(text)
	default:
		blocks = paragraphs(text, nil)
	}
	return pack(file, blocks)
}

// Context splits a chunk made by Split for file into its heading path (without the file),
// its part number (1 for the file's first chunk) and its body; a chunk without a context
// line has an empty path and part 0. The file is what Split was given: its name may hold
// the separator of the heading path, so the path is what follows the file's name, and
// nothing when the context line was cut inside the name. With file "" (not known) the
// path is what follows the first separator.
func Context(chunk, file string) (section string, part int, body string) {
	if !strings.HasPrefix(chunk, Marker) {
		return "", 0, chunk
	}
	line, body, _ := strings.Cut(chunk, "\n")
	if i := strings.LastIndex(line, partMark); i >= 0 {
		if n, err := strconv.Atoi(line[i+len(partMark):]); err == nil && n > 0 {
			line, part = line[:i], n
		}
	}
	if file == "" {
		_, section, _ = strings.Cut(line[len(Marker):], sep)
		return section, part, body
	}
	rest, ok := strings.CutPrefix(line, contextLine(file, nil))
	if !ok {
		return "", part, body
	}
	return strings.TrimPrefix(rest, sep), part, body
}

// pack joins consecutive blocks into chunks of about Target characters. A chunk ends before
// a heading or declaration once it holds minChunk characters, and before any block that
// would take it past Target; a block longer than Target is cut at lines, then words. A chunk
// of declarations still under minChunk when it ends (a constant before a long function) joins
// the chunk of declarations before it if that has room, rather than standing alone.
func pack(file string, blocks []block) []string {
	type chunk struct {
		parts []string
		path  []string
		n     int
		decl  bool // path is what the chunk's declarations share, even if nothing
	}
	var out []chunk
	var cur chunk
	lines := lineMemo{file: file}
	flush := func() {
		if len(cur.parts) == 0 {
			return
		}
		if k := len(out) - 1; cur.decl && cur.n < minChunk && k >= 0 && out[k].decl {
			path := commonPrefix(out[k].path, cur.path)
			if out[k].n+cur.n+2 <= Target-lines.width(path)-maxPartChars-1 {
				out[k].parts, out[k].path, out[k].n = append(out[k].parts, cur.parts...), path, out[k].n+cur.n+2
				cur = chunk{}
				return
			}
		}
		out = append(out, cur)
		cur = chunk{}
	}
	for _, b := range blocks {
		room := Target - lines.width(b.path) - maxPartChars - 1
		size := utf8.RuneCountInString(b.text)
		if len(cur.parts) > 0 && ((b.heading || b.decl) && cur.n >= minChunk || cur.n+2+size > room) {
			flush()
		}
		switch {
		case len(cur.parts) == 0 || len(cur.path) == 0 && !cur.decl:
			cur.path = b.path
		case b.heading || b.decl:
			cur.path = commonPrefix(cur.path, b.path) // a chunk of several sections is under what they share
		}
		cur.decl = cur.decl || b.decl
		if size <= room {
			cur.parts = append(cur.parts, b.text)
			cur.n += size + 2
			continue
		}
		for _, piece := range cut(b.text, room) {
			if len(cur.parts) > 0 {
				flush()
				cur.path, cur.decl = b.path, b.decl
			}
			cur.parts, cur.n = []string{piece}, utf8.RuneCountInString(piece)
		}
	}
	flush()
	texts := make([]string, len(out))
	for i, c := range out {
		texts[i] = contextLine(file, c.path) + partMark + strconv.Itoa(i+1) + "\n" + strings.Join(c.parts, "\n\n")
	}
	return texts
}

// lineMemo is the width of the context line of the path asked last: consecutive blocks
// mostly share one, and pack asks for each block's.
type lineMemo struct {
	file  string
	path  []string
	n     int
	known bool
}

func (m *lineMemo) width(path []string) int {
	if !m.known || !slices.Equal(m.path, path) {
		m.path, m.n, m.known = path, min(contextRunes(nil, m.file, path), maxContext), true
	}
	return m.n
}

// contextLine names the file and the heading path, bounded, its white space collapsed to
// single spaces.
func contextLine(file string, headings []string) string {
	var b strings.Builder
	b.Grow(len(Marker) + len(file) + 64)
	if n := contextRunes(&b, file, headings); n > maxContext {
		return string([]rune(b.String())[:maxContext-1]) + "…"
	}
	return b.String()
}

// contextRunes writes the context line of file and headings, unbounded, to b (when not nil)
// and returns its length in characters. It walks each part once and writes whole words: pack
// asks for a block's width before it knows the block's chunk.
func contextRunes(b *strings.Builder, file string, headings []string) int {
	n, space := 0, false
	add := func(s string) {
		word := -1 // where the word being read starts
		for i := 0; i <= len(s); {
			r, size := rune(' '), 1
			if i < len(s) {
				if r = rune(s[i]); r >= utf8.RuneSelf {
					r, size = utf8.DecodeRuneInString(s[i:])
				}
			}
			if !unicode.IsSpace(r) {
				if word < 0 {
					word = i
				}
				i += size
				continue
			}
			if word >= 0 {
				if space {
					n++
					if b != nil {
						b.WriteByte(' ')
					}
				}
				n += utf8.RuneCountInString(s[word:i])
				if b != nil {
					b.WriteString(s[word:i])
				}
				word, space = -1, false
			}
			space = n > 0 && (i < len(s) || space) // the end of s is no space
			i += size
		}
	}
	add(Marker)
	add(file)
	for _, h := range headings {
		add(sep)
		add(h)
	}
	return n
}

// cut splits text longer than n characters at line ends, and lines longer than n at spaces.
// Every piece is found by walking its own characters once, so the cost is linear in the
// text's length however long its lines are.
func cut(text string, n int) []string {
	var out []string
	var cur strings.Builder
	curN := 0
	emit := func() {
		if s := strings.TrimRight(cur.String(), "\n"); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
		cur.Reset()
		curN = 0
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		lineN := utf8.RuneCountInString(line)
		for lineN > n {
			emit()
			end := runeOffset(line, n)
			if i := strings.LastIndexByte(line[:end], ' '); i > 0 {
				end = i
			}
			if piece := strings.TrimSpace(line[:end]); piece != "" {
				out = append(out, piece)
			}
			lineN -= utf8.RuneCountInString(line[:end])
			line = line[end:]
		}
		if curN+lineN > n {
			emit()
		}
		cur.WriteString(line)
		curN += lineN
	}
	emit()
	return out
}

// runeOffset is the byte offset of s's n-th character (len(s) when it has fewer).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// The patterns are compiled on first use: every process that links this package would
// otherwise compile them at start-up, serve included, before it can answer initialize.
var (
	atxHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`) })
	fence      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(```|~~~)") })
)

// markdownBlocks reads Markdown into blocks under their heading paths; code fences are
// kept whole and a # inside them is not a heading.
func markdownBlocks(text string) []block {
	var out []block
	var headings []string
	var para []string
	inFence := ""
	levels := map[byte]int{} // reStructuredText: an underline character's level is the order it first appears in
	heading := func(level int, title, line string) {
		if len(headings) >= level {
			headings = headings[:level-1]
		}
		for len(headings) < level-1 {
			headings = append(headings, "")
		}
		headings = append(headings, title)
		out = append(out, block{text: line, path: nonEmpty(headings), heading: true})
	}
	flush := func() {
		if len(para) > 0 {
			out = append(out, block{text: strings.Join(para, "\n"), path: nonEmpty(headings)})
			para = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if inFence != "" {
			para = append(para, line)
			if strings.HasPrefix(strings.TrimSpace(line), inFence) {
				inFence = ""
				flush()
			}
			continue
		}
		if c, ok := underline(line); ok && len(para) == 1 && utf8.RuneCountInString(strings.TrimSpace(para[0])) <= len(strings.TrimSpace(line)) {
			title := strings.TrimSpace(para[0])
			para = nil
			if _, seen := levels[c]; !seen {
				levels[c] = len(levels) + 1
			}
			heading(min(levels[c], 6), title, title)
			continue
		}
		if _, ok := underline(line); ok && len(para) == 0 {
			continue // a reStructuredText overline
		}
		if m := fence().FindStringSubmatch(line); m != nil {
			flush()
			inFence = m[1]
			para = append(para, line)
			continue
		}
		if m := atxHeading().FindStringSubmatch(line); m != nil {
			flush()
			heading(len(m[1]), m[2], strings.TrimSpace(line))
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, line)
	}
	flush()
	return out
}

// paragraphs splits text at blank lines, every block under path.
func paragraphs(text string, path []string) []block {
	var out []block
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.Trim(p, "\n"); strings.TrimSpace(p) != "" {
			out = append(out, block{text: p, path: path})
		}
	}
	return out
}

// declarations are the languages cut by declaration, by extension: each returns nil when
// the file does not parse.
var declarations = map[string]func(string) []block{".go": goBlocks, ".py": pythonBlocks, ".pyi": pythonBlocks,
	".js": jsBlocks, ".mjs": jsBlocks, ".cjs": jsBlocks, ".jsx": jsBlocks, ".ts": jsBlocks, ".mts": jsBlocks,
	".cts": jsBlocks, ".tsx": jsBlocks}

// codeExt are the extensions read as source code.
var codeExt = map[string]bool{".go": true, ".py": true, ".js": true, ".mjs": true, ".ts": true, ".tsx": true,
	".jsx": true, ".java": true, ".kt": true, ".rs": true, ".rb": true, ".php": true, ".c": true, ".h": true,
	".cc": true, ".cpp": true, ".hpp": true, ".cs": true, ".swift": true, ".scala": true, ".sh": true}

// declaration matches a top-level declaration line in common languages and captures its name.
var declaration = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?` +
		`(?:func|type|class|def|function|fn|interface|struct|enum|trait|impl|module|object|const|var|let)\s+` +
		`(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)`)
})

// codeBlocks splits source at blank lines; a block starting with a top-level declaration
// starts a new section named after it (with its comment block above it kept in front).
func codeBlocks(text string) []block {
	blocks := paragraphs(text, nil)
	var name []string
	for i := range blocks {
		for _, line := range strings.Split(blocks[i].text, "\n") {
			if m := declaration().FindStringSubmatch(line); m != nil {
				name = []string{m[1]}
				blocks[i].decl = true
				break
			}
		}
		blocks[i].path = name
	}
	return blocks
}

// underline reports whether line is a Setext or reStructuredText heading underline (or
// overline): one punctuation character repeated, at least three times.
func underline(line string) (byte, bool) {
	l := strings.TrimRight(line, " \t")
	if len(l) < 3 || !strings.ContainsRune("=-~^*+#\"'`:._", rune(l[0])) {
		return 0, false
	}
	return l[0], strings.Count(l, l[:1]) == len(l)
}

func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// nonEmpty is a copy of s without its empty strings (levels a heading skipped).
func nonEmpty(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
