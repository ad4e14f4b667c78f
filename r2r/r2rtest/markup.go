package r2rtest

import (
	"html"
	"regexp"
	"strconv"
	"strings"
)

// R2R 3.6.6 turns Markdown into text by rendering it with Python-Markdown (no extensions)
// and taking BeautifulSoup's get_text() of the HTML; HTML files get get_text() directly. So
// headings lose their #, emphasis, links and list markers disappear, and blocks are separated
// by the newlines Python-Markdown puts between block elements. markdownText follows
// Python-Markdown's block rules for the common constructs (paragraphs, ATX and setext
// headings, rules, indented code, block quotes, lists with their loose/tight quirks) and
// flattens inline markup; conformance test TestLive/ingestion_outcomes/markdown_text compares
// it with R2R.

// mdNode is a block element of the rendered document.
type mdNode struct {
	tag      string // root, p, h, hr, pre, ul, ol, li, blockquote
	text     string // inline Markdown (code text for pre)
	tail     string // inline Markdown after the element (tight lists), "" = a newline
	children []*mdNode
}

func (n *mdNode) last() *mdNode {
	if len(n.children) == 0 {
		return nil
	}
	return n.children[len(n.children)-1]
}

func (n *mdNode) add(tag, text string) *mdNode {
	c := &mdNode{tag: tag, text: text}
	n.children = append(n.children, c)
	return c
}

type mdParser struct {
	states []string
	refs   map[string]bool
}

func (p *mdParser) state() string {
	if len(p.states) == 0 {
		return ""
	}
	return p.states[len(p.states)-1]
}

func (p *mdParser) push(s string) { p.states = append(p.states, s) }
func (p *mdParser) pop()          { p.states = p.states[:len(p.states)-1] }

var (
	mdRefDef       = regexp.MustCompile(`(?m)^ {0,3}\[([^\[\]]+)\]:[ \t]*\S+[ \t]*(?:(?:"[^"]*"|'[^']*'|\([^)]*\))[ \t]*)?$\n?`)
	mdHashHeader   = regexp.MustCompile(`(?:^|\n)(#{1,6})((?:\\.|[^\\\n])*?)#*(?:\n|$)`)
	mdSetext       = regexp.MustCompile(`^.*?\n([=-])+[ ]*(?:\n|$)`)
	mdBlockComment = regexp.MustCompile(`(?s)(^|\n)<!--.*?-->[ \t]*(\n|$)`)
	mdHR           = regexp.MustCompile(`(?m)^[ ]{0,3}(?:(?:-+[ ]{0,2}){3,}|(?:_+[ ]{0,2}){3,}|(?:\*+[ ]{0,2}){3,})[ ]*$`)
	mdOList        = regexp.MustCompile(`^[ ]{0,3}\d+\.[ ]+`)
	mdUList        = regexp.MustCompile(`^[ ]{0,3}[*+-][ ]+`)
	mdListChild    = regexp.MustCompile(`^[ ]{0,3}(?:\d+\.|[*+-])[ ]+(.*)$`)
	mdListIndent   = regexp.MustCompile(`^[ ]{4,7}(?:\d+\.|[*+-])[ ]+`)
	mdQuote        = regexp.MustCompile(`(?:^|\n)[ ]{0,3}>`)
	mdQuoteLine    = regexp.MustCompile(`^[ ]{0,3}>[ ]?(.*)$`)
)

// markdownText is the text R2R extracts from a Markdown document.
func markdownText(src string) string {
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		l = expandTabs(l)
		if strings.TrimSpace(l) == "" {
			l = ""
		}
		lines[i] = l
	}
	src = strings.Join(lines, "\n")
	p := &mdParser{refs: map[string]bool{}}
	for _, m := range mdRefDef.FindAllStringSubmatch(src, -1) {
		p.refs[strings.ToLower(m[1])] = true
	}
	src = mdRefDef.ReplaceAllString(src, "")
	// A comment that starts a line is a raw HTML block: no text, but a block of its own.
	src = mdBlockComment.ReplaceAllString(src, "$1\x01$2")
	root := &mdNode{tag: "root"}
	p.parseChunk(root, strings.Trim(src, "\n"))
	var b strings.Builder
	for _, c := range root.children {
		p.write(&b, c)
	}
	return b.String()
}

func expandTabs(l string) string {
	if !strings.Contains(l, "\t") {
		return l
	}
	var b strings.Builder
	col := 0
	for _, r := range l {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

func (p *mdParser) parseChunk(parent *mdNode, text string) {
	p.parseBlocks(parent, strings.Split(text, "\n\n"))
}

func (p *mdParser) parseBlocks(parent *mdNode, blocks []string) {
	for len(blocks) > 0 {
		b := blocks[0]
		blocks = blocks[1:]
		if rest := p.parseBlock(parent, b); rest != "" {
			blocks = append([]string{rest}, blocks...)
		}
	}
}

// parseBlock applies the first block processor that takes b and returns what it left over.
func (p *mdParser) parseBlock(parent *mdNode, b string) string {
	if b == "" || b[0] == '\n' {
		filler, rest := "\n\n", ""
		if b != "" {
			filler, rest = "\n", b[1:]
		}
		if s := parent.last(); s != nil && s.tag == "pre" {
			s.text += filler
		}
		return rest
	}
	if strings.TrimSpace(b) == "\x01" {
		parent.add("hr", "")
		return ""
	}
	sibling := parent.last()
	indented := strings.HasPrefix(b, "    ")
	isList := func(n *mdNode) bool { return n != nil && (n.tag == "ul" || n.tag == "ol") }
	if indented && p.state() != "detabbed" && (parent.tag == "li" || isList(sibling)) {
		block := looseDetab(b)
		p.push("detabbed")
		switch {
		case parent.tag == "li":
			if isList(parent.last()) {
				p.parseBlocks(parent.last(), []string{block})
			} else {
				p.parseBlocks(parent, []string{block})
			}
		default:
			li := sibling.last()
			if li.text != "" {
				li.children = append([]*mdNode{{tag: "p", text: li.text}}, li.children...)
				li.text = ""
			}
			p.parseChunk(li, block)
		}
		p.pop()
		return ""
	}
	if indented {
		block, rest := detab(b)
		if sibling != nil && sibling.tag == "pre" {
			sibling.text = sibling.text + "\n" + strings.TrimRight(block, " \n") + "\n"
		} else {
			parent.add("pre", strings.TrimRight(block, " \n")+"\n")
		}
		return rest
	}
	if m := mdHashHeader.FindStringSubmatchIndex(b); m != nil {
		if before := b[:m[0]]; before != "" {
			p.parseBlocks(parent, []string{before})
		}
		parent.add("h", strings.TrimSpace(b[m[4]:m[5]]))
		return b[m[1]:]
	}
	if m := mdSetext.FindStringIndex(b); m != nil {
		first, _, _ := strings.Cut(b, "\n")
		parent.add("h", strings.TrimSpace(first))
		return b[m[1]:]
	}
	if m := mdHR.FindStringIndex(b); m != nil {
		if before := strings.TrimRight(b[:m[0]], "\n"); before != "" {
			p.parseBlocks(parent, []string{before})
		}
		parent.add("hr", "")
		return strings.TrimLeft(b[m[1]:], "\n")
	}
	if tag := listTag(b); tag != "" {
		p.parseList(parent, tag, b)
		return ""
	}
	if m := mdQuote.FindStringIndex(b); m != nil {
		if before := b[:m[0]]; before != "" {
			p.parseBlocks(parent, []string{before})
		}
		ls := strings.Split(strings.TrimLeft(b[m[0]:], "\n"), "\n")
		for i, l := range ls {
			if q := mdQuoteLine.FindStringSubmatch(l); q != nil {
				ls[i] = q[1]
			}
		}
		quote := parent.last()
		if quote == nil || quote.tag != "blockquote" {
			quote = parent.add("blockquote", "")
		}
		p.push("blockquote")
		p.parseChunk(quote, strings.Join(ls, "\n"))
		p.pop()
		return ""
	}
	p.paragraph(parent, b)
	return ""
}

func listTag(b string) string {
	switch {
	case mdOList.MatchString(b):
		return "ol"
	case mdUList.MatchString(b):
		return "ul"
	}
	return ""
}

func (p *mdParser) paragraph(parent *mdNode, b string) {
	if p.state() == "list" {
		if s := parent.last(); s != nil {
			s.tail = s.tail + "\n" + b
		} else if parent.text != "" {
			parent.text = parent.text + "\n" + b
		} else {
			parent.text = strings.TrimLeft(b, " \t\n")
		}
		return
	}
	parent.add("p", strings.TrimLeft(b, " \t\n"))
}

// parseList is Python-Markdown's OListProcessor: a list right after another one continues it
// and makes the items on either side of the blank line loose (wrapped in paragraphs).
func (p *mdParser) parseList(parent *mdNode, tag, b string) {
	var items []string
	for _, l := range strings.Split(b, "\n") {
		switch m := mdListChild.FindStringSubmatch(l); {
		case m != nil:
			items = append(items, m[1])
		case mdListIndent.MatchString(l) && len(items) > 0 && !strings.HasPrefix(items[len(items)-1], "    "):
			items = append(items, l)
		case len(items) > 0:
			items[len(items)-1] += "\n" + l
		default:
			items = append(items, l)
		}
	}
	sibling := parent.last()
	var lst *mdNode
	switch {
	case sibling != nil && (sibling.tag == "ul" || sibling.tag == "ol"):
		lst = sibling
		if li := lst.last(); li != nil {
			if li.text != "" {
				li.children = append([]*mdNode{{tag: "p", text: li.text}}, li.children...)
				li.text = ""
			}
			if lch := li.last(); lch != nil && strings.TrimSpace(lch.tail) != "" {
				li.add("p", strings.TrimLeft(lch.tail, " \t\n"))
				lch.tail = ""
			}
		}
		li := lst.add("li", "")
		p.push("looselist")
		p.parseBlocks(li, items[:1])
		p.pop()
		items = items[1:]
	case parent.tag == "ul" || parent.tag == "ol":
		lst = parent
	default:
		lst = parent.add(tag, "")
	}
	p.push("list")
	for _, it := range items {
		if strings.HasPrefix(it, "    ") {
			p.parseBlocks(lst.last(), []string{it})
		} else {
			p.parseBlocks(lst.add("li", ""), []string{it})
		}
	}
	p.pop()
}

// looseDetab removes four leading spaces from the lines that have them.
func looseDetab(b string) string {
	ls := strings.Split(b, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimPrefix(l, "    ")
	}
	return strings.Join(ls, "\n")
}

// detab removes four spaces from the lines of b up to the first one that has fewer (blank
// lines included), which starts the rest.
func detab(b string) (block, rest string) {
	ls := strings.Split(b, "\n")
	var out []string
	for i, l := range ls {
		switch {
		case strings.HasPrefix(l, "    "):
			out = append(out, l[4:])
		case strings.TrimSpace(l) == "":
			out = append(out, "")
		default:
			return strings.Join(out, "\n"), strings.Join(ls[i:], "\n")
		}
	}
	return strings.Join(out, "\n"), ""
}

// write appends a block's get_text() and its tail, as Python-Markdown's prettifier lays
// the HTML out.
func (p *mdParser) write(b *strings.Builder, n *mdNode) {
	switch n.tag {
	case "p", "h":
		b.WriteString(p.inline(n.text))
	case "pre":
		b.WriteString(strings.TrimRight(n.text, " \t\n") + "\n")
	case "hr":
	default:
		text := p.inline(n.text)
		if strings.TrimSpace(text) == "" && len(n.children) > 0 {
			text = "\n"
		}
		b.WriteString(text)
		for _, c := range n.children {
			p.write(b, c)
		}
	}
	if strings.TrimSpace(n.tail) == "" {
		b.WriteString("\n")
	} else {
		b.WriteString(p.inline(n.tail))
	}
}

var (
	mdEscape    = regexp.MustCompile("\\\\([\\\\`*_{}\\[\\]()>#+\\-.!])")
	mdImage     = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdImageRef  = regexp.MustCompile(`!\[([^\]]*)\] ?\[([^\]]*)\]`)
	mdLink      = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdLinkRef   = regexp.MustCompile(`\[([^\]]*)\] ?\[([^\]]*)\]`)
	mdShortRef  = regexp.MustCompile(`\[([^\]]+)\]`)
	mdAutolink  = regexp.MustCompile(`<((?:[Ff]|[Hh][Tt])[Tt][Pp][Ss]?://[^<>]*)>`)
	mdAutomail  = regexp.MustCompile(`<(?:mailto:)?([^<> !]+@[^@<> ]+)>`)
	mdBreak     = regexp.MustCompile(`  \n`)
	mdComment   = regexp.MustCompile(`(?s)<!--.*?-->`)
	mdTag       = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
	mdStrong    = regexp.MustCompile(`(\*\*|__)([^\s*_](?:[\s\S]*?[^\s])?)(\*\*|__)`)
	mdEmStar    = regexp.MustCompile(`\*([^\s*](?:[^*]*?[^\s*])?)\*`)
	mdEmUnder   = regexp.MustCompile(`(^|[^\w])_([^\s_](?:[^_]*?[^\s_])?)_([^\w]|$)`)
	placeholder = regexp.MustCompile("\x02(\\d+)\x03")
)

// inline flattens inline Markdown to the text get_text() returns for it.
func (p *mdParser) inline(s string) string {
	var kept []string
	keep := func(t string) string {
		kept = append(kept, t)
		return "\x02" + strconv.Itoa(len(kept)-1) + "\x03"
	}
	s = codeSpans(s, keep)
	s = mdEscape.ReplaceAllStringFunc(s, func(m string) string { return keep(m[1:]) })
	s = mdImage.ReplaceAllString(s, "")
	s = mdImageRef.ReplaceAllStringFunc(s, func(m string) string {
		g := mdImageRef.FindStringSubmatch(m)
		if p.defined(g[2], g[1]) {
			return ""
		}
		return m
	})
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdLinkRef.ReplaceAllStringFunc(s, func(m string) string {
		g := mdLinkRef.FindStringSubmatch(m)
		if p.defined(g[2], g[1]) {
			return g[1]
		}
		return m
	})
	s = mdShortRef.ReplaceAllStringFunc(s, func(m string) string {
		if g := mdShortRef.FindStringSubmatch(m); p.defined("", g[1]) {
			return g[1]
		}
		return m
	})
	s = mdAutolink.ReplaceAllStringFunc(s, func(m string) string { return keep(m[1 : len(m)-1]) })
	s = mdAutomail.ReplaceAllStringFunc(s, func(m string) string {
		return keep(strings.TrimPrefix(m[1:len(m)-1], "mailto:"))
	})
	s = mdBreak.ReplaceAllString(s, "\n")
	s = mdComment.ReplaceAllString(s, "")
	s = mdTag.ReplaceAllString(s, "")
	for {
		t := mdStrong.ReplaceAllString(s, "$2")
		t = mdEmStar.ReplaceAllString(t, "$1")
		t = mdEmUnder.ReplaceAllString(t, "$1$2$3")
		if t == s {
			break
		}
		s = t
	}
	s = strings.ReplaceAll(html.UnescapeString(s), "\x01", "")
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		var i int
		for _, r := range m[1 : len(m)-1] {
			i = i*10 + int(r-'0')
		}
		return kept[i]
	})
}

func (p *mdParser) defined(id, text string) bool {
	if id == "" {
		id = text
	}
	return p.refs[strings.ToLower(strings.Join(strings.Fields(id), " "))]
}

var (
	htmlScript = regexp.MustCompile(`(?is)<(script|style|template)\b[^>]*>.*?</(?:script|style|template)\s*>`)
	htmlDecl   = regexp.MustCompile(`(?s)<![^>]*>|<\?[^>]*>`)
)

// htmlText is BeautifulSoup's get_text() of an HTML document: the text nodes as written,
// without comments, declarations, scripts and styles, entities decoded.
func htmlText(src string) string {
	src = mdComment.ReplaceAllString(src, "")
	src = htmlScript.ReplaceAllString(src, "")
	src = htmlDecl.ReplaceAllString(src, "")
	src = mdTag.ReplaceAllString(src, "")
	return html.UnescapeString(src)
}

// codeSpans replaces each code span (a run of backticks closed by a run of the same length)
// with keep(its trimmed content); an unclosed run stays as it is.
func codeSpans(s string, keep func(string) string) string {
	var b strings.Builder
	run := func(i int) int {
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(s); {
		if s[i] != '`' || (i > 0 && s[i-1] == '\\') {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := run(i)
		closed := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			if m := run(j); m == n {
				closed = j
				break
			} else {
				j += m
			}
		}
		if closed < 0 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteString(keep(strings.TrimSpace(s[i+n : closed])))
		i = closed + n
	}
	return b.String()
}
