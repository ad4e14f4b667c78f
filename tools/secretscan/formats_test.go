package secretscan

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest/minipdf"
)

// tok is a fake GitHub token (token-shaped, not a credential); tokRest is it without "g".
var (
	tok     = "ghp_" + rep("a1B2", 9)
	tokRest = tok[1:]
)

// zipOf builds a zip archive of name/content pairs.
func zipOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func docx(t *testing.T, body string) []byte {
	return zipOf(t, "[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types/>`,
		"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
			`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+body+`</w:body></w:document>`,
		"word/media/image1.png", "\x89PNG not text "+tok)
}

func eml(headers, body string) string {
	return "From: a@example.com\r\nTo: b@example.com\r\n" + headers + "\r\n" + body
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestFindIn: a secret is found in every encoding R2R's parser for the type decodes, and
// a file whose text cannot be read as R2R reads it is refused.
func TestFindIn(t *testing.T) {
	defer func(d, e int) { maxDecoded, maxEntries = d, e }(maxDecoded, maxEntries)
	maxDecoded, maxEntries = 1<<20, 100 // the bounds work the same at full size, only slower to build
	bomb := zipOf(t, "word/document.xml", strings.Repeat(" ", maxDecoded+1))
	many := make([]string, 0, 2*(maxEntries+1))
	for i := range maxEntries + 1 {
		many = append(many, fmt.Sprintf("p%d.bin", i), "")
	}
	tests := []struct {
		name, ext string
		data      []byte
		want      string // "secret", "unscannable" or "" (clean)
	}{
		{"txt raw", "txt", []byte("token " + tok), "secret"},
		{"txt entity stays text", "txt", []byte("&#103;" + tokRest), ""},
		{"md entity", "md", []byte("# Keys\n\n&#103;" + tokRest + "\n"), "secret"},
		{"md hex entity", "md", []byte("&#x67;" + tokRest), "secret"},
		{"md backslash escape", "md", []byte("ghp\\_" + tok[4:]), "secret"},
		{"md emphasis splits", "md", []byte("gh*p*_" + tok[4:]), "secret"},
		{"md code splits", "md", []byte("gh`p`_" + tok[4:]), "secret"},
		{"md inline html splits", "md", []byte("gh<span>p</span>_" + tok[4:]), "secret"},
		{"md comment splits", "md", []byte("gh<!-- x -->p_" + tok[4:]), "secret"},
		{"md clean", "md", []byte("# Runbook\n\nUse *ghp_* tokens; see `gh auth`.\n"), ""},
		{"html entity", "html", []byte("<p>&#103;" + tokRest + "</p>"), "secret"},
		{"html named entities", "htm", []byte("<p>gh&#112;&lowbar;" + tok[4:] + "</p>"), "secret"},
		{"html tags split", "html", []byte("<p>gh<b>p_</b>" + tok[4:] + "</p>"), "secret"},
		{"html script split", "html", []byte("<p>gh<script>var x</script>p_" + tok[4:] + "</p>"), "secret"},
		{"html cdata split", "html", []byte("<p>gh<![CDATA[p_]]>" + tok[4:] + "</p>"), "secret"},
		{"html lone less-than", "html", []byte("<p>a < &#103;" + tokRest + " > b</p>"), "secret"},
		{"html unterminated comment", "html", []byte("<p>a</p><!-- notes &#103;" + tokRest), "secret"},
		{"md unterminated comment", "md", []byte("a\n\n<!-- notes &#103;" + tokRest), "secret"},
		{"html utf-7", "html", []byte(`<meta charset="utf-7"><p>+AGc-hp_</p>`), "unscannable"},
		{"html utf-16", "html", append([]byte{0xff, 0xfe}, []byte("<\x00p\x00>\x00")...), "unscannable"},
		{"html prose about encodings", "html", []byte(`<p>Set encoding=utf-16 or charset=utf-7 in the exporter.</p>`), ""},
		{"html xml declaration", "html", []byte(`<?xml version="1.0" encoding="UTF-16"?><html/>`), "unscannable"},
		{"html latin-1", "html", []byte(`<meta charset="iso-8859-1"><p>caf\xe9</p>`), ""},
		{"json escape", "json", []byte(`{"token": "\u0067` + tokRest + `"}`), "secret"},
		{"json all escaped", "json", []byte(`{"t": "\u0067\u0068\u0070\u005f` + tok[4:] + `"}`), "secret"},
		{"json clean", "json", []byte(`{"name": "pelican", "path": "a\/b\n"}`), ""},
		{"csv quotes", "csv", []byte(`name,token` + "\n" + `a,"gh"p_` + tok[4:] + "\n"), "secret"},
		{"py invalid utf-8", "py", []byte("T = 'gh\xffp_" + tok[4:] + "'"), "secret"},
		{"rst escaped space", "rst", []byte("Token: gh\\ p_" + tok[4:] + "\n"), "secret"},
		{"rst unicode directive", "rst", []byte(".. |g| unicode:: U+0067\n\n|g|hp_x\n"), "unscannable"},
		{"rst include", "rst", []byte(".. include:: /etc/hosts\n"), "unscannable"},
		{"rst raw", "rst", []byte(".. raw:: html\n\n   <b>x</b>\n"), "unscannable"},
		{"rst substitution joins a secret", "rst", []byte(".. |a| replace:: gh\n.. |b| replace:: p_" + tok[4:] + "\n\nToken: |a|\\ |b|\n"), "secret"},
		{"rst nested substitution", "rst", []byte(".. |a| replace:: gh\n.. |B  c| replace:: |a|p_" + tok[4:] + "\n\nToken: |b c|_\n"), "secret"},
		{"rst continuation line joins with a space", "rst", []byte(".. |a| replace:: ghp_\n   " + tok[4:] + "\n\nToken: |a|\n"), ""},
		{"rst nested substitution joined", "rst", []byte(".. |a| replace:: gh\n.. |b| replace:: |a|\\ p_" + tok[4:] + "\n\nToken: |B|\n"), "secret"},
		{"rst substitution of plain words", "rst", []byte(".. |project| replace:: Flask\n\nWelcome to |project|'s docs.\n"), ""},
		{"rst self-referencing substitution", "rst", []byte(".. |a| replace:: x|a|x\n\n|a|\n"), "unscannable"},
		{"sphinx literalinclude", "rst", []byte("Example:\n\n.. literalinclude:: ../examples/app.py\n   :language: python\n"), ""},
		{"sphinx code-block", "rst", []byte(".. code-block:: python\n\n   import os\n"), ""},
		{"docx runs", "docx", docx(t, "<w:p><w:r><w:t>gh</w:t></w:r>\n  <w:r><w:t>p_"+tok[4:]+"</w:t></w:r></w:p>"), "secret"},
		{"docx entity", "docx", docx(t, "<w:p><w:r><w:t>&#103;"+tokRest+"</w:t></w:r></w:p>"), "secret"},
		{"docx clean", "docx", docx(t, "<w:p><w:r><w:t>Pelicans glide.</w:t></w:r></w:p>"), ""},
		{"docx utf-16 part", "docx", zipOf(t, "word/document.xml", `<?xml version="1.0" encoding="UTF-16"?><w/>`), "unscannable"},
		{"odt entity declarations", "odt", zipOf(t, "content.xml", `<!DOCTYPE d [<!ENTITY a "gh"><!ENTITY b "p_`+tok[4:10]+`">]><d><text:p>&a;&b;`+tok[10:]+`</text:p></d>`), "unscannable"},
		{"xlsx shared string", "xlsx", zipOf(t, "xl/sharedStrings.xml", `<sst><si><t>&#x67;`+tokRest+`</t></si></sst>`), "secret"},
		{"pptx slide", "pptx", zipOf(t, "ppt/slides/slide1.xml", `<p:sld><a:t>gh</a:t><a:t>p_`+tok[4:]+`</a:t></p:sld>`), "secret"},
		{"odt content", "odt", zipOf(t, "content.xml", `<office:document-content><text:p>gh<text:span>p_`+tok[4:]+`</text:span></text:p></office:document-content>`), "secret"},
		{"epub chapter", "epub", zipOf(t, "OEBPS/ch1.xhtml", `<html><body><p>`+tok+`</p></body></html>`), "secret"},
		{"docx not a zip", "docx", []byte("plain text"), "unscannable"},
		{"docx zip bomb", "docx", bomb, "unscannable"},
		{"docx too many parts", "docx", zipOf(t, many...), "unscannable"},
		{"eml quoted-printable", "eml", []byte(eml("Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n", "token: gh=\r\np=5F"+tok[4:]+"\r\n")), "secret"},
		{"eml base64", "eml", []byte(eml("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n", b64("token: "+tok)+"\r\n")), "secret"},
		{"eml encoded subject", "eml", []byte(eml("Subject: =?utf-8?b?"+b64(tok)+"?=\r\n", "hi\r\n")), "secret"},
		{"eml nested multipart", "eml", []byte(eml("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n",
			"--XX\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XX\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n"+b64(tok)+"\r\n--XX--\r\n")), "secret"},
		{"eml utf-16 part", "eml", []byte(eml("Content-Type: text/plain; charset=utf-16le\r\nContent-Transfer-Encoding: base64\r\n",
			b64(utf16le(tok))+"\r\n")), "secret"},
		{"eml utf-7 part", "eml", []byte(eml("Content-Type: text/plain; charset=utf-7\r\n", "+AGc-hp_\r\n")), "unscannable"},
		{"eml uuencode", "eml", []byte(eml("Content-Type: text/plain\r\nContent-Transfer-Encoding: x-uuencode\r\n", "begin 644 x\r\n")), "unscannable"},
		{"eml clean", "eml", []byte(eml("Subject: Lunch\r\n", "Pelicans at noon.\r\n")), ""},
		{"pdf plain", "pdf", pdfOf("(" + tok + ") Tj"), "secret"},
		{"pdf octal escape", "pdf", pdfOf(`(\147` + tokRest + ") Tj"), "secret"},
		{"pdf split and hex", "pdf", pdfOf("<6768> Tj (p_" + tok[4:] + ") Tj"), "secret"},
		{"pdf TJ array", "pdf", pdfOf("[(gh) -20 (p_" + tok[4:] + ")] TJ"), "secret"},
		{"pdf across text objects", "pdf", pdfOf("(gh) Tj ET BT /F1 12 Tf 72 700 Td (p_" + tok[4:] + ") Tj"), "secret"},
		{"pdf form xobject", "pdf", pdfWith("/Fm1 Do", "/XObject << /Fm1 6 0 R >>",
			minipdf.Stream("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>", "BT /F1 12 Tf ("+tok+") Tj ET")), "secret"},
		{"pdf ToUnicode remaps", "pdf", toUnicodePDF("(x" + tokRest + ") Tj"), "secret"},
		{"pdf ToUnicode clean", "pdf", toUnicodePDF("(xyz) Tj"), ""},
		{"pdf clean", "pdf", pdfOf("(Pelicans glide low.) Tj"), ""},
		{"pdf damaged", "pdf", []byte("%PDF-1.4\n"), "unscannable"},
		{"png", "png", []byte("\x89PNG\r\n"), "unscannable"},
		{"rtf", "rtf", []byte(`{\rtf1 hello}`), "unscannable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, found, err := FindIn(tt.ext, tt.data)
			var u *Unscannable
			got := ""
			switch {
			case errors.As(err, &u):
				got = "unscannable"
				if u.Reason == "" || strings.Contains(u.Reason, tokRest) {
					t.Errorf("reason %q", u.Reason)
				}
			case err != nil:
				t.Fatalf("error %v", err)
			case found:
				got = "secret"
				if f.Rule != "GitHub token" {
					t.Errorf("rule %q", f.Rule)
				}
			}
			if got != tt.want {
				t.Errorf("FindIn(%s) = %q (%v), want %q", tt.ext, got, err, tt.want)
			}
		})
	}
}

// pdfOf is a one-page PDF whose content stream shows ops in Helvetica.
func pdfOf(ops string) []byte {
	return pdfWith("BT /F1 12 Tf 72 720 Td "+ops+" ET", "")
}

// toUnicodePDF shows ops in a WinAnsi font whose ToUnicode map reads "x" as "g".
func toUnicodePDF(ops string) []byte {
	return pdfWith("BT /F2 12 Tf 72 720 Td "+ops+" ET", "/Font << /F2 6 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 7 0 R >>",
		minipdf.Stream("", "begincmap 1 beginbfchar <78> <0067> endbfchar endcmap"))
}

// pdfWith is a one-page PDF with the content stream content, the page resources res
// besides font F1 (Helvetica, object 5), and further objects from number 6 on.
func pdfWith(content, res string, more ...string) []byte {
	fonts := "/Font << /F1 5 0 R >>"
	if strings.HasPrefix(res, "/Font") {
		fonts, res = "/Font << /F1 5 0 R "+strings.TrimPrefix(res, "/Font <<"), ""
	}
	objects := append([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << " + fonts + " " + res + " >> >>",
		minipdf.Stream("", content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}, more...)
	return minipdf.Assemble(objects...)
}

func utf16le(s string) string {
	out := make([]byte, 0, 2*len(s))
	for _, c := range []byte(s) {
		out = append(out, c, 0)
	}
	return string(out)
}

// TestEveryExtensionDecided: each extension FindIn knows is either read or refused.
func TestEveryExtensionDecided(t *testing.T) {
	for ext := range formats {
		if _, ok := refused[ext]; ok {
			t.Errorf("%s is both read and refused", ext)
		}
	}
}
