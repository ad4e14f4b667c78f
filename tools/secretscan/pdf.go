package secretscan

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// maxPDFPages bounds the pages of a PDF read.
const maxPDFPages = 10_000

// pdfText is a PDF's text as pypdf's extract_text gives it to R2R: text operators decoded
// through the fonts' encodings and character maps, the pieces of a line joined. A PDF that
// cannot be read (encrypted, damaged, over the bounds) is refused.
func pdfText(b []byte) (text []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = nil, unscannable("its text cannot be extracted (%v)", truncate(fmt.Sprint(r), 80))
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, unscannable("its text cannot be extracted (%v)", err)
	}
	if n := r.NumPage(); n > maxPDFPages {
		return nil, unscannable("it has %d pages, more than the %d r2r-mcp reads", n, maxPDFPages)
	}
	rd, err := r.GetPlainText()
	if err != nil {
		return nil, unscannable("its text cannot be extracted (%v)", err)
	}
	text, err = io.ReadAll(io.LimitReader(rd, MaxDecodedBytes+1))
	switch {
	case err != nil:
		return nil, unscannable("its text cannot be extracted (%v)", err)
	case len(text) > MaxDecodedBytes:
		return nil, unscannable("its text is larger than %d MiB", MaxDecodedBytes>>20)
	}
	return text, nil
}
