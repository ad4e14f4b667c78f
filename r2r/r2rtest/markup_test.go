package r2rtest

import (
	"strings"
	"testing"
)

// The expected texts are Python-Markdown 3.7 + BeautifulSoup 4.13 get_text() of each source,
// as R2R 3.6.6's Markdown parser computes them (leading and trailing whitespace, which the
// chunker strips, aside).
func TestMarkdownText(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"heading and paragraph", "# Title\n\nSome *emphasis* and **strong** text.\n", "Title\nSome emphasis and strong text."},
		{"setext and rule", "Title\n=====\n\ntext\n\n---\n\nafter\n", "Title\ntext\n\nafter"},
		{"tight list", "- one\n- two\n", "\none\ntwo\n"},
		{"list continued after a blank line", "- a\n\n- b\n- c\n", "\n\na\n\n\nb\n\nc\n"},
		{"nested list", "- a\n    - nested\n- b\n", "\na\nnested\n\n\nb\n"},
		{"indented code", "    code\n\n    more\n\ntext\n", "code\n\nmore\n\ntext"},
		{"fenced code without blank lines", "```go\nfunc main() {}\n```\n", "go\nfunc main() {}"},
		{"quote with lazy line", "> q1\nlazy\n\n> q2\n", "\nq1\nlazy\nq2\n"},
		{"links, images and references", "See [docs](http://x) and ![img](i.png) and [ref][r].\n\n[r]: http://y\n", "See docs and  and ref."},
		{"badges", "[![npm][npm-image]][npm-url]\n\n[npm-image]: http://a\n[npm-url]: http://b\n", ""},
		{"escapes, entities and inline html", "\\*not em\\* &amp; <b>bold</b> a_b_c\n", "*not em* & bold a_b_c"},
		{"comment block", "before\n\n<!-- hidden\n\nstill hidden -->\n\nafter\n", "before\n\nafter"},
		{"hard break and tab", "one  \ntwo\tthree\n", "one\ntwo three"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := markdownText(tc.src); strings.TrimSpace(got) != strings.TrimSpace(tc.want) {
				t.Errorf("markdownText(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestHTMLText(t *testing.T) {
	src := "<html><head><title>T</title><style>p{color:red}</style><script>var x=1;</script></head>" +
		"<body><h1>Head</h1>\n<p>Para &amp; <b>bold</b></p><!-- c --><ul><li>a</li><li>b</li></ul></body></html>"
	if got, want := htmlText(src), "THead\nPara & boldab"; got != want {
		t.Errorf("htmlText = %q, want %q", got, want)
	}
}
