package secretscan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
)

// Bounds of reading one PDF.
const (
	maxPDFPages = 10_000
	maxPDFDepth = 8 // form XObjects drawn inside form XObjects
)

// pdfText is a PDF's text as R2R reads it with pypdf's extract_text: the strings of the
// text operators of each page and of the form XObjects it draws, decoded through the
// font's encoding and, where the font has one, its ToUnicode map (pypdf prefers it; the
// scan reads both). Pieces are joined without separators, so words split across
// operators or text objects are read whole. The decompressed content is bounded.
func pdfText(b []byte) (text []byte, err error) {
	w := &pdfWalk{budget: int64(maxDecoded)}
	defer func() {
		if r := recover(); r != nil {
			var u *Unscannable
			if e, ok := r.(error); ok && errors.As(e, &u) {
				text, err = nil, u
				return
			}
			text, err = nil, unscannable("its text cannot be extracted (%v)", truncate(fmt.Sprint(r), 80))
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, unscannable("its text cannot be extracted (%v)", err)
	}
	w.pages(r.Trailer().Key("Root").Key("Pages"), pdf.Value{}, 0)
	w.out.WriteByte('\n')
	w.out.Write(w.uni.Bytes())
	return w.out.Bytes(), nil
}

// pdfWalk collects a PDF's text twice: decoded by each font's encoding (out) and by its
// ToUnicode map where it has one (uni).
type pdfWalk struct {
	out, uni bytes.Buffer
	budget   int64
	nodes    int // page tree nodes visited
}

// pages reads the pages below a node of the page tree in order, once each (Reader.Page
// walks the tree from its root for every page), with the resources they inherit.
func (w *pdfWalk) pages(node, res pdf.Value, depth int) {
	w.nodes++
	if w.nodes > maxPDFPages || depth > 64 {
		panic(unscannable("it has more than %d pages", maxPDFPages))
	}
	if r := node.Key("Resources"); r.Kind() == pdf.Dict {
		res = r
	}
	// A node with kids is an inner node whatever its /Type says (pypdf reads it so).
	if kids := node.Key("Kids"); kids.Kind() == pdf.Array {
		for i := range kids.Len() {
			w.pages(kids.Index(i), res, depth+1)
		}
		return
	}
	w.stream(node.Key("Contents"), res, 0)
}

// spend measures the decompressed size of strm (a stream or an array of them) against
// the budget before it is interpreted.
func (w *pdfWalk) spend(strm pdf.Value) {
	parts := []pdf.Value{strm}
	if strm.Kind() == pdf.Array {
		parts = parts[:0]
		for i := range strm.Len() {
			parts = append(parts, strm.Index(i))
		}
	}
	for _, s := range parts {
		if s.Kind() != pdf.Stream {
			continue
		}
		rc := s.Reader()
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, w.budget+1))
		rc.Close()
		w.budget -= n
		if w.budget < 0 {
			panic(unscannable("it decompresses to more than %d MiB", maxDecoded>>20))
		}
	}
}

// stream reads the text operators of one content stream with resources res.
func (w *pdfWalk) stream(strm, res pdf.Value, depth int) {
	if strm.Kind() != pdf.Stream && strm.Kind() != pdf.Array {
		return
	}
	w.spend(strm)
	fonts := map[string]*pdfFont{}
	var font *pdfFont
	show := func(raw string) {
		if font == nil {
			w.out.WriteString(raw)
			w.uni.WriteString(raw)
			return
		}
		text := font.enc.Encoder().Decode(raw)
		w.out.WriteString(text)
		if font.cmap != nil {
			text = font.cmap.decode(raw)
		}
		w.uni.WriteString(text)
	}
	pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
		args := operands(stk)
		switch op {
		case "Tf":
			if len(args) == 2 {
				name := args[0].Name()
				if fonts[name] == nil {
					fonts[name] = newPDFFont(res.Key("Font").Key(name))
				}
				font = fonts[name]
			}
		case "Tj", "'", "\"":
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "TJ":
			if len(args) == 1 {
				for i := range args[0].Len() {
					if x := args[0].Index(i); x.Kind() == pdf.String {
						show(x.RawString())
					}
				}
			}
		case "Do":
			if len(args) == 1 && depth < maxPDFDepth {
				x := res.Key("XObject").Key(args[0].Name())
				if x.Key("Subtype").Name() == "Form" {
					xres := x.Key("Resources")
					if xres.Kind() == pdf.Null {
						xres = res
					}
					w.stream(x, xres, depth+1)
				}
			}
		}
		if w.out.Len()+w.uni.Len() > maxDecoded {
			panic(unscannable("its text is larger than %d MiB", maxDecoded>>20))
		}
	})
}

// pdfFont is a font's encoding and, when it has one, its ToUnicode map.
type pdfFont struct {
	enc  *pdf.Font
	cmap *toUnicode
}

func newPDFFont(v pdf.Value) *pdfFont {
	f := &pdfFont{enc: &pdf.Font{V: v}}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		f.cmap = readToUnicode(tu)
	}
	return f
}

// toUnicode maps character codes (1 to 4 bytes) to text, from a ToUnicode CMap's bfchar
// and bfrange entries.
type toUnicode struct {
	codes map[string]string
	lens  []int // code lengths present, longest first
}

func readToUnicode(strm pdf.Value) *toUnicode {
	m := &toUnicode{codes: map[string]string{}}
	add := func(code, text string) {
		if len(code) == 0 || len(code) > 4 || len(m.codes) > 1<<16 {
			return
		}
		m.codes[code] = text
		for _, l := range m.lens {
			if l == len(code) {
				return
			}
		}
		m.lens = append(m.lens, len(code))
		for i := len(m.lens) - 1; i > 0 && m.lens[i] > m.lens[i-1]; i-- {
			m.lens[i], m.lens[i-1] = m.lens[i-1], m.lens[i]
		}
	}
	pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
		args := operands(stk)
		switch op {
		case "endbfchar":
			for i := 0; i+1 < len(args); i += 2 {
				add(args[i].RawString(), utf16BE(args[i+1].RawString()))
			}
		case "endbfrange":
			for i := 0; i+2 < len(args); i += 3 {
				lo, hi, dst := args[i].RawString(), args[i+1].RawString(), args[i+2]
				if len(lo) != len(hi) || len(lo) == 0 {
					continue
				}
				for c, k := codeInt(lo), 0; c <= codeInt(hi) && k < 1<<16; c, k = c+1, k+1 {
					code := intCode(c, len(lo))
					switch dst.Kind() {
					case pdf.String:
						d := []byte(dst.RawString())
						if len(d) > 0 {
							d[len(d)-1] += byte(k)
						}
						add(code, utf16BE(string(d)))
					case pdf.Array:
						if k < dst.Len() {
							add(code, utf16BE(dst.Index(k).RawString()))
						}
					}
				}
			}
		}
	})
	return m
}

// decode maps raw through the CMap, longest code first; unmapped bytes are kept.
func (m *toUnicode) decode(raw string) string {
	var out bytes.Buffer
	for i := 0; i < len(raw); {
		n := 0
		for _, l := range m.lens {
			if i+l <= len(raw) {
				if t, ok := m.codes[raw[i:i+l]]; ok {
					out.WriteString(t)
					n = l
					break
				}
			}
		}
		if n == 0 {
			out.WriteByte(raw[i])
			n = 1
		}
		i += n
	}
	return out.String()
}

func codeInt(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v<<8 | int(s[i])
	}
	return v
}

func intCode(v, n int) string {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return string(b)
}

// utf16BE decodes a CMap destination string (UTF-16BE).
func utf16BE(s string) string {
	u := make([]uint16, 0, len(s)/2)
	for i := 0; i+1 < len(s); i += 2 {
		u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
	}
	return string(utf16.Decode(u))
}

// operands empties the stack of an operator's operands, in the order they were written.
func operands(stk *pdf.Stack) []pdf.Value {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	return args
}
