// Package jsonc edits JSON and JSONC (JSON with comments and trailing commas) files in
// place, changing only the bytes an edit needs, and renders the change as a unified diff.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Files are parsed into nodes that remember their byte offsets and only the bytes an edit
// needs change, so everything else in the file — other entries, key order, indentation,
// comments in JSONC files — stays exactly as it was. Re-marshalling through map[string]any
// would sort keys and reformat the user's file.

// Obj is an object whose keys are written in this order.
type Obj []KV

// KV is one member of an Obj.
type KV struct {
	Key   string
	Value any // string, []string or Obj
}

// jsonNode is one parsed value and where its text lies in the source.
type jsonNode struct {
	kind       byte // '{' object, '[' array, 's' string, 'n' number, 'l' true/false/null
	start, end int  // the value's text is src[start:end]
	members    []jsonMember
	elems      []*jsonNode
	str        string // decoded string, for kind 's'
}

type jsonMember struct {
	key      string
	keyStart int
	value    *jsonNode
}

// find returns the member named key; with duplicate keys the last one wins, as in most parsers.
func (n *jsonNode) find(key string) *jsonMember {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// value decodes the node into plain Go values (map[string]any, []any, string, json.Number, bool, nil).
func (n *jsonNode) value(src []byte) any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.members))
		for _, mem := range n.members {
			m[mem.key] = mem.value.value(src)
		}
		return m
	case '[':
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.value(src)
		}
		return a
	case 's':
		return n.str
	case 'n':
		return json.Number(src[n.start:n.end])
	default:
		switch string(src[n.start:n.end]) {
		case "true":
			return true
		case "false":
			return false
		}
		return nil
	}
}

// SyntaxError says where a config file stops being JSON.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

const maxJSONDepth = 512

type jsonParser struct {
	src   []byte
	pos   int
	jsonc bool // allow // and /* */ comments and trailing commas (VS Code's mcp.json is JSONC)
	depth int
}

// parse parses a config file. It returns a nil node for a file that holds nothing but
// whitespace (and comments, in JSONC), which callers treat as an empty object.
func parse(src []byte, jsonc bool) (*jsonNode, error) {
	p := &jsonParser{src: src, jsonc: jsonc}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos == len(src) {
		return nil, nil
	}
	if src[p.pos] != '{' {
		return nil, p.errorf("the top level must be a JSON object ({...})")
	}
	n, err := p.parseValue()
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errorf("unexpected %q after the end of the top-level object", src[p.pos])
	}
	return n, nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// skip moves past whitespace and, in JSONC, comments.
func (p *jsonParser) skip() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case p.jsonc && c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			if i := bytes.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
				p.pos += i + 1
			} else {
				p.pos = len(p.src)
			}
		case p.jsonc && c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			i := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errorf("unterminated /* comment")
			}
			p.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) parseValue() (*jsonNode, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.parseObject()
	case c == '[':
		return p.parseArray()
	case c == '"':
		return p.parseString()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.parseNumber()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.pos:], []byte(lit)) {
				n := &jsonNode{kind: 'l', start: p.pos, end: p.pos + len(lit)}
				p.pos = n.end
				return n, nil
			}
		}
	}
	return nil, p.errorf("unexpected %q where a value should be", p.src[p.pos])
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.errorf("nested deeper than %d levels", maxJSONDepth)
	}
	return nil
}

func (p *jsonParser) parseObject() (*jsonNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jsonNode{kind: '{', start: p.pos}
	p.pos++
	for first := true; ; first = false {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' && (first || p.jsonc) {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			if p.pos >= len(p.src) {
				return nil, p.errorf("unexpected end of file inside an object")
			}
			return nil, p.errorf("expected a quoted key, found %q", p.src[p.pos])
		}
		key, err := p.parseString()
		if err != nil {
			return nil, err
		}
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errorf("expected ':' after key %q", key.str)
		}
		p.pos++
		if err := p.skip(); err != nil {
			return nil, err
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jsonMember{key: key.str, keyStart: key.start, value: v})
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf("unexpected end of file inside an object")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("expected ',' or '}' after the value of %q, found %q", key.str, p.src[p.pos])
		}
	}
}

func (p *jsonParser) parseArray() (*jsonNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jsonNode{kind: '[', start: p.pos}
	p.pos++
	for first := true; ; first = false {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' && (first || p.jsonc) {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf("unexpected end of file inside an array")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("expected ',' or ']' in an array, found %q", p.src[p.pos])
		}
	}
}

func (p *jsonParser) parseString() (*jsonNode, error) {
	start := p.pos
	for i := p.pos + 1; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '\\':
			i++
		case c == '"':
			n := &jsonNode{kind: 's', start: start, end: i + 1}
			if err := json.Unmarshal(p.src[start:i+1], &n.str); err != nil {
				return nil, p.errorf("invalid string: %v", err)
			}
			p.pos = i + 1
			return n, nil
		case c < 0x20:
			p.pos = i
			return nil, p.errorf("control character in a string (a raw line break?)")
		}
	}
	return nil, p.errorf("unterminated string")
}

func (p *jsonParser) parseNumber() (*jsonNode, error) {
	start := p.pos
	end := start
	for end < len(p.src) && strings.IndexByte("+-.eE0123456789", p.src[end]) >= 0 {
		end++
	}
	if !json.Valid(p.src[start:end]) {
		return nil, p.errorf("invalid number %q", p.src[start:end])
	}
	p.pos = end
	return &jsonNode{kind: 'n', start: start, end: end}, nil
}

// jsonStyle is how the file being edited is laid out, so inserted text looks like its neighbours.
type jsonStyle struct {
	unit string // one level of indentation
	nl   string // "\n" or "\r\n"
}

func detectStyle(src []byte, root *jsonNode) jsonStyle {
	st := jsonStyle{unit: "  ", nl: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if root == nil {
		return st
	}
	base := lineIndent(src, root.start)
	for _, m := range root.members {
		if ind, ok := ownLineIndent(src, m.keyStart); ok && len(ind) > len(base) && strings.HasPrefix(ind, base) {
			st.unit = ind[len(base):]
			break
		}
	}
	return st
}

// lineIndent returns the leading spaces and tabs of the line that holds pos.
func lineIndent(src []byte, pos int) string {
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	e := ls
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[ls:e])
}

// ownLineIndent reports the indentation before pos when only whitespace precedes it on its line.
func ownLineIndent(src []byte, pos int) (string, bool) {
	ind := lineIndent(src, pos)
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	return ind, ls+len(ind) == pos
}

// formatJSON renders v as it would appear at indentation indent. Arrays of strings stay on
// one line, objects get one member per line.
func formatJSON(v any, indent string, st jsonStyle) string {
	switch v := v.(type) {
	case string:
		return Quote(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case Obj:
		if len(v) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{" + st.nl)
		for i, kv := range v {
			b.WriteString(indent + st.unit + Quote(kv.Key) + ": " + formatJSON(kv.Value, indent+st.unit, st))
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString(st.nl)
		}
		b.WriteString(indent + "}")
		return b.String()
	}
	panic(fmt.Sprintf("formatJSON: unsupported %T", v))
}

// formatCompactJSON renders v on one line, for files written without line breaks.
func formatCompactJSON(v any) string {
	if o, ok := v.(Obj); ok {
		parts := make([]string, len(o))
		for i, kv := range o {
			parts[i] = Quote(kv.Key) + ":" + formatCompactJSON(kv.Value)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return formatJSON(v, "", jsonStyle{})
}

// Quote is s as a JSON string, without HTML escaping.
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep & < > in paths readable
	_ = enc.Encode(s)        // encoding a string cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}

// plainJSON converts a value we write into what parsing its text gives back, for comparisons.
func plainJSON(v any) any {
	switch v := v.(type) {
	case []string:
		a := make([]any, len(v))
		for i, s := range v {
			a[i] = s
		}
		return a
	case Obj:
		m := make(map[string]any, len(v))
		for _, kv := range v {
			m[kv.Key] = plainJSON(kv.Value)
		}
		return m
	}
	return v
}

type textEdit struct {
	start, end int
	text       string
}

func (e textEdit) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)-(e.end-e.start)+len(e.text))
	out = append(out, src[:e.start]...)
	out = append(out, e.text...)
	return append(out, src[e.end:]...)
}

// ErrNotObject is wrapped by Merge when a key on the way to the entry holds something else.
var ErrNotObject = errors.New("is not a JSON object")

// Merge makes path hold value in src, touching only the text that must change: a missing
// key is inserted after its last sibling, a differing scalar or array is replaced, and an existing
// object is merged key by key, so keys the user added to our entry survive. It returns src itself
// when nothing needs to change.
func Merge(src []byte, jsonc bool, path []string, value any) ([]byte, bool, error) {
	changed := false
	// Each round applies one edit and re-parses: offsets move with every edit, and config files
	// are small. The bound is generous; the number of edits is at most the keys in value plus
	// the path length.
	for range 64 {
		root, err := parse(src, jsonc)
		if err != nil {
			return nil, false, err
		}
		if root == nil {
			// Empty file: start over with a fresh document.
			st := detectStyle(src, nil)
			fresh := formatJSON(nestJSON(path, value), "", st) + st.nl
			return []byte(fresh), true, nil
		}
		edit, err := nextEdit(src, root, detectStyle(src, root), path, value)
		if err != nil {
			return nil, false, err
		}
		if edit == nil {
			return src, changed, nil
		}
		src, changed = edit.apply(src), true
	}
	return nil, false, errors.New("internal error: config edit did not converge")
}

func nestJSON(path []string, value any) any {
	if len(path) == 0 {
		return value
	}
	return Obj{{path[0], nestJSON(path[1:], value)}}
}

// nextEdit returns the first edit still needed to make path hold value, or nil.
func nextEdit(src []byte, obj *jsonNode, st jsonStyle, path []string, value any) (*textEdit, error) {
	for i, key := range path {
		m := obj.find(key)
		if m == nil {
			return insertMember(src, obj, st, key, nestJSON(path[i+1:], value)), nil
		}
		if i < len(path)-1 {
			if m.value.kind != '{' {
				return nil, fmt.Errorf("%q %w", strings.Join(path[:i+1], "."), ErrNotObject)
			}
			obj = m.value
			continue
		}
		if want, ok := value.(Obj); ok && m.value.kind == '{' {
			for _, kv := range want {
				e, err := nextEdit(src, m.value, st, []string{kv.Key}, kv.Value)
				if e != nil || err != nil {
					return e, err
				}
			}
			return nil, nil
		}
		if reflect.DeepEqual(m.value.value(src), plainJSON(value)) {
			return nil, nil
		}
		text := formatJSON(value, lineIndent(src, m.keyStart), st)
		if !bytes.Contains(src[obj.start:obj.end], []byte("\n")) {
			text = formatCompactJSON(value)
		}
		return &textEdit{start: m.value.start, end: m.value.end, text: text}, nil
	}
	return nil, nil
}

// insertMember adds "key": value as the last member of obj.
func insertMember(src []byte, obj *jsonNode, st jsonStyle, key string, value any) *textEdit {
	objText := src[obj.start:obj.end]
	if !bytes.Contains(objText, []byte("\n")) && len(obj.members) > 0 {
		// A one-line object stays on one line.
		member := Quote(key) + ": " + formatCompactJSON(value)
		last := obj.members[len(obj.members)-1].value.end
		if c := nextSignificant(src, last); c >= 0 && src[c] == ',' { // JSONC trailing comma
			return &textEdit{start: c + 1, end: c + 1, text: " " + member}
		}
		return &textEdit{start: last, end: last, text: ", " + member}
	}
	parentIndent := lineIndent(src, obj.start)
	if len(obj.members) == 0 {
		indent := parentIndent + st.unit
		member := indent + Quote(key) + ": " + formatJSON(value, indent, st)
		inner := src[obj.start+1 : obj.end-1]
		if len(bytes.TrimSpace(inner)) == 0 {
			return &textEdit{start: obj.start + 1, end: obj.end - 1, text: st.nl + member + st.nl + parentIndent}
		}
		// Only comments inside: keep them, put the member first.
		return &textEdit{start: obj.start + 1, end: obj.start + 1, text: st.nl + member}
	}
	lastM := obj.members[len(obj.members)-1]
	indent, own := ownLineIndent(src, lastM.keyStart)
	if !own {
		indent = parentIndent + st.unit
	}
	member := indent + Quote(key) + ": " + formatJSON(value, indent, st)
	after := lastM.value.end
	comma := ","
	if c := nextSignificant(src, after); c >= 0 && src[c] == ',' { // JSONC trailing comma
		after, comma = c+1, ""
	}
	// Put the new member on its own line after the last one, leaving a comment that ends
	// that line where it is.
	if nl := bytes.IndexByte(src[after:obj.end], '\n'); nl >= 0 && !bytes.Contains(src[after:after+nl], []byte("/*")) {
		at := after + nl
		if at > after && src[at-1] == '\r' {
			at--
		}
		if comma == "" {
			return &textEdit{start: at, end: at, text: st.nl + member}
		}
		// The comma goes right after the value, the member at the end of the line.
		text := string(src[after:at]) + st.nl + member
		return &textEdit{start: after, end: at, text: comma + text}
	}
	return &textEdit{start: after, end: after, text: comma + st.nl + member}
}

// nextSignificant returns the offset of the first byte at or after pos that is neither
// whitespace nor inside a comment, or -1.
func nextSignificant(src []byte, pos int) int {
	p := &jsonParser{src: src, pos: pos, jsonc: true}
	if p.skip() != nil || p.pos >= len(src) {
		return -1
	}
	return p.pos
}

// Value is a member found by Lookup.
type Value struct {
	Raw      string // its text in the source
	Str      string // the decoded string, when IsString
	IsString bool
}

// Lookup finds the member at path (a key in each nested object) in src; ok is false when src
// does not parse or an object on the way lacks the key or is not an object.
func Lookup(src []byte, jsonc bool, path ...string) (v Value, ok bool) {
	n, err := parse(src, jsonc)
	if err != nil || n == nil {
		return Value{}, false
	}
	for _, key := range path {
		if n.kind != '{' {
			return Value{}, false
		}
		m := n.find(key)
		if m == nil {
			return Value{}, false
		}
		n = m.value
	}
	return Value{Raw: string(src[n.start:n.end]), Str: n.str, IsString: n.kind == 's'}, true
}
