package secretscan

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Unscannable refuses a file whose text r2r-mcp cannot read the way R2R's parser for its
// type does: what R2R would index could hold a secret no scan has seen.
type Unscannable struct {
	Reason string
}

func (e *Unscannable) Error() string { return e.Reason }

func unscannable(format string, a ...any) *Unscannable {
	return &Unscannable{Reason: fmt.Sprintf(format, a...)}
}

// Bounds of the decoding, whatever a file claims: a file over them is refused.
const (
	// MaxDecodedBytes bounds the bytes decompressed or decoded from one file.
	MaxDecodedBytes = 64 << 20
	// MaxArchiveEntries bounds the entries of an office document or EPUB.
	MaxArchiveEntries = 10_000
)

// maxDecoded and maxEntries are the bounds in force; tests lower them.
var maxDecoded, maxEntries = MaxDecodedBytes, MaxArchiveEntries

// view turns a file's bytes into one text R2R may read from it.
type view func([]byte) ([]byte, error)

// formats are the views of each extension R2R 3.6.6 parses, as its parser reads the file
// (core/parsers): a secret is looked for in the raw bytes and in every view. Text sent as
// raw_text is read as txt.
var formats = map[string][]view{
	"txt": nil, "org": nil,
	// markdown -> HTML -> BeautifulSoup text: backslash escapes, inline HTML, entities
	"md":   {markupText, tagsStripped, func(b []byte) ([]byte, error) { return markupText(markdownEscapes(b)) }},
	"html": {checkCharset, markupText, tagsStripped},
	"htm":  {checkCharset, markupText, tagsStripped},
	// json.loads then key: value lines: string escapes decoded
	"json": {jsonUnescaped},
	// csv.reader: quotes end and resume inside a field
	"csv": {withoutQuotes}, "tsv": {withoutQuotes},
	// decoded with errors="ignore": invalid UTF-8 bytes vanish
	"py": {validUTF8}, "js": {validUTF8}, "ts": {validUTF8}, "css": {validUTF8},
	// docutils: backslash escapes; directives that assemble or insert text are refused
	"rst": {rstText},
	// zip archives of XML (python-docx, python-pptx, openpyxl, ODF content.xml, EPUB XHTML)
	"docx": {archiveText}, "pptx": {archiveText}, "xlsx": {archiveText}, "odt": {archiveText},
	"epub": {archiveText},
	// email.message_from_bytes: headers and parts decoded
	"eml": {mailText},
	// pypdf's extract_text
	"pdf": {pdfText},
}

// refused are extensions R2R parses in a way r2r-mcp cannot follow, with the reason.
var refused = map[string]string{
	"rtf":  "R2R decodes RTF escapes and groups that r2r-mcp cannot follow to scan it",
	"doc":  "R2R reads legacy binary Word files r2r-mcp cannot scan",
	"ppt":  "R2R reads legacy binary PowerPoint files r2r-mcp cannot scan",
	"xls":  "R2R reads legacy binary Excel files r2r-mcp cannot scan",
	"msg":  "R2R reads Outlook .msg files r2r-mcp cannot scan",
	"p7s":  "R2R reads signed mail r2r-mcp cannot scan",
	"mp3":  "R2R transcribes audio with a speech model; spoken text cannot be scanned",
	"bmp":  "R2R describes images with a vision model; text in an image cannot be scanned",
	"gif":  "R2R describes images with a vision model; text in an image cannot be scanned",
	"heic": "R2R describes images with a vision model; text in an image cannot be scanned",
	"jpeg": "R2R describes images with a vision model; text in an image cannot be scanned",
	"jpg":  "R2R describes images with a vision model; text in an image cannot be scanned",
	"png":  "R2R describes images with a vision model; text in an image cannot be scanned",
	"svg":  "R2R describes images with a vision model; text in an image cannot be scanned",
	"tiff": "R2R describes images with a vision model; text in an image cannot be scanned",
}

// FindIn reports the first secret in a file of extension ext (lower case, no dot; "txt"
// for text sent as raw_text) as R2R will read it: in its raw bytes and in the text R2R's
// parser for the type decodes from them. A file whose text cannot be read so is refused
// with an *Unscannable error.
func FindIn(ext string, data []byte) (Finding, bool, error) {
	if why, ok := refused[ext]; ok {
		return Finding{}, false, &Unscannable{Reason: why}
	}
	if f, ok := Find(data); ok {
		return f, true, nil
	}
	for _, v := range formats[ext] {
		text, err := v(data)
		if err != nil {
			return Finding{}, false, err
		}
		if text == nil {
			continue
		}
		if f, ok := Find(text); ok {
			return f, true, nil
		}
	}
	return Finding{}, false, nil
}

// Decided reports whether FindIn has a rule for R2R's parser of extension ext: it reads
// the file as that parser does, or refuses it.
func Decided(ext string) bool {
	_, reads := formats[ext]
	_, refuses := refused[ext]
	return reads || refuses
}

// markupText is the text BeautifulSoup's get_text() gives with Python's html.parser: tags
// removed and the text between them joined without a separator, entities decoded,
// comments, scripts and styles left out, CDATA kept. A "<" that opens no tag (not followed
// by a letter, "/", "!" or "?") is text, as html.parser reads it.
func markupText(b []byte) ([]byte, error) {
	r := markupRes()
	b = r.cdata.ReplaceAll(b, []byte("$1"))
	b = r.hidden.ReplaceAll(b, nil)
	return tagsStripped(b)
}

// tagsStripped is markup with every tag removed and entities decoded: a second reading
// that keeps the text of scripts, styles and comments.
func tagsStripped(b []byte) ([]byte, error) {
	if len(b) > maxDecoded {
		return nil, unscannable("its text is larger than %d MiB", maxDecoded>>20)
	}
	return []byte(html.UnescapeString(string(markupRes().anyTag.ReplaceAll(b, nil)))), nil
}

// markupRes are the expressions of the views, compiled on first use like the rules.
var markupRes = sync.OnceValue(func() *struct{ cdata, hidden, anyTag, charsetDecl, asciiCompatible, rstDirective, rstReplace, rstRef *regexp.Regexp } {
	return &struct{ cdata, hidden, anyTag, charsetDecl, asciiCompatible, rstDirective, rstReplace, rstRef *regexp.Regexp }{
		cdata:  re(`(?s)<!\[CDATA\[(.*?)\]\]>`),
		hidden: re(`(?is)<!--.*?-->|<script\b[^>]*>.*?</script\s*>|<style\b[^>]*>.*?</style\s*>`),
		anyTag: re(`(?s)<[a-zA-Z/!?][^>]*>`),
		// where BeautifulSoup and XML parsers look for a declared encoding: a meta tag's
		// charset, an XML declaration's encoding
		charsetDecl:     re(`(?i)<\s*meta[^>]+charset\s*=\s*["']?\s*([^\s"'/>;]*)|<\?xml[^>]*encoding\s*=\s*["']([^"']*)`),
		asciiCompatible: re(`^(?:|utf-?8|(?:us-?)?ascii|latin-?1|l1|iso[-_]?8859[-_]?\d+|(?:windows|cp)-?125\d|koi8-?[ru])$`),
		rstDirective:    re(`(?i)(?:^|[^\w-])(?:unicode|include|raw|csv-table)\s*::`),
		// a substitution definition (.. |name| replace:: text) with its indented continuation lines
		rstReplace: re(`(?m)^\.\.[ \t]+\|([^|\n]+)\|[ \t]+replace::[ \t]*(.*(?:\n[ \t]+\S.*)*)`),
		rstRef:     re(`\|([^|\s][^|\n]*)\|(?:__?)?`),
	}
})

// markdownEscapes removes markdown's backslash escapes and the inline markers (emphasis,
// code, link brackets) that split a word without adding text.
func markdownEscapes(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b) && isASCIIPunct(b[i+1]):
			i++
			out = append(out, b[i])
		case c == '*' || c == '`' || c == '~' || c == '[' || c == ']':
		default:
			out = append(out, c)
		}
	}
	return out
}

func isASCIIPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// checkCharset refuses HTML that declares an encoding in which ASCII text is not written
// as ASCII (UTF-7, UTF-16, …): BeautifulSoup decodes it, the byte scan would not see it.
func checkCharset(b []byte) ([]byte, error) {
	if bytes.HasPrefix(b, []byte{0xff, 0xfe}) || bytes.HasPrefix(b, []byte{0xfe, 0xff}) || bytes.IndexByte(b, 0) >= 0 {
		return nil, unscannable("it is not encoded in UTF-8 or another ASCII-compatible encoding")
	}
	for _, m := range markupRes().charsetDecl.FindAllSubmatch(b, -1) {
		if cs := strings.ToLower(string(m[1]) + string(m[2])); !markupRes().asciiCompatible.MatchString(cs) {
			return nil, unscannable("it declares the encoding %q; only UTF-8 and ASCII-compatible encodings can be scanned", truncate(cs, 40))
		}
	}
	return nil, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// jsonUnescaped decodes JSON string escapes wherever they occur (json.loads decodes them
// in the strings R2R prints).
func jsonUnescaped(b []byte) ([]byte, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		return nil, nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch c := b[i]; c {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b', 'f':
			out = append(out, ' ')
		case 'u':
			r, n := jsonRune(b[i+1:])
			if n == 0 {
				out = append(out, '\\', 'u')
				continue
			}
			out = utf8.AppendRune(out, r)
			i += n
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

// jsonRune decodes the hex digits after \u (and a following \uXXXX low surrogate); n is the
// bytes consumed after the u, 0 when they are not hex.
func jsonRune(b []byte) (rune, int) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[:4]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) && len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
		if lo, ok := hex4(b[6:]); ok {
			if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
				return d, 10
			}
		}
	}
	return r, 4
}

// withoutQuotes drops the quotes csv.reader ends and resumes quoted parts of a field with.
func withoutQuotes(b []byte) ([]byte, error) {
	if bytes.IndexByte(b, '"') < 0 {
		return nil, nil
	}
	return bytes.ReplaceAll(b, []byte(`"`), nil), nil
}

// validUTF8 drops the bytes decode("utf-8", errors="ignore") drops.
func validUTF8(b []byte) ([]byte, error) {
	if utf8.Valid(b) {
		return nil, nil
	}
	return []byte(strings.ToValidUTF8(string(b), "")), nil
}

// rstText reads reStructuredText as docutils does for plain paragraphs: substitutions
// defined with replace:: are put in place, escaped characters stand for themselves and an
// escaped space vanishes. Directives that build text from code points (unicode), insert
// files (include, raw, csv-table) are refused. Sphinx's own directives (literalinclude,
// code-block…) are unknown to docutils, which assembles nothing from them.
func rstText(b []byte) ([]byte, error) {
	res := markupRes()
	if m := res.rstDirective.Find(b); m != nil {
		return nil, unscannable("its %q directive puts text together (or reads a file) in a way that cannot be scanned", strings.TrimLeft(strings.TrimSpace(string(m)), ".|"))
	}
	b, substituted, err := rstSubstitute(b)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(b, '\\') < 0 {
		if substituted {
			return b, nil
		}
		return nil, nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) {
			i++
			if b[i] == ' ' || b[i] == '\n' || b[i] == '\t' {
				continue
			}
		}
		out = append(out, b[i])
	}
	return out, nil
}

// rstSubstitute puts every replace:: substitution in place of its references, as docutils
// does (names match without regard to case or runs of spaces; a definition may use another),
// so a secret split across substitutions is whole again; false when there was none.
func rstSubstitute(b []byte) ([]byte, bool, error) {
	res := markupRes()
	defs := map[string][]byte{}
	for _, m := range res.rstReplace.FindAllSubmatch(b, -1) {
		defs[rstName(m[1])] = bytes.Join(bytes.Fields(m[2]), []byte(" "))
	}
	if len(defs) == 0 {
		return b, false, nil
	}
	// Definitions may nest; docutils refuses a cycle, and 8 levels reach any real depth.
	limit := 4*len(b) + 1<<20
	for round := 0; ; round++ {
		changed := false
		b = res.rstRef.ReplaceAllFunc(b, func(ref []byte) []byte {
			name := bytes.TrimRight(ref, "_")
			if d, ok := defs[rstName(name[1:len(name)-1])]; ok {
				changed = true
				return d
			}
			return ref
		})
		if len(b) > limit {
			return nil, false, unscannable("its substitutions grow past %d bytes", limit)
		}
		if !changed {
			return b, true, nil
		}
		if round == 8 {
			return nil, false, unscannable("its substitutions nest deeper than 8 levels or refer to themselves")
		}
	}
}

// rstName is a substitution name as docutils compares them.
func rstName(n []byte) string {
	return strings.ToLower(strings.Join(strings.Fields(string(n)), " "))
}
