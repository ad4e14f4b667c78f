package secretscan

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"strings"
)

// archiveText reads an office document or EPUB (a zip archive) as R2R's parsers do: the
// text of its XML and XHTML parts, entities decoded, the text nodes of an element joined
// without a separator (python-docx joins a paragraph's runs so). Each part contributes
// its raw bytes and its text; other parts (images, embedded files) are not read by R2R.
func archiveText(b []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, unscannable("it cannot be read as the zip archive its type is (%v)", err)
	}
	if len(zr.File) > maxEntries {
		return nil, unscannable("it holds %d parts, more than the %d r2r-mcp reads", len(zr.File), maxEntries)
	}
	var out bytes.Buffer
	budget := int64(maxDecoded)
	for _, f := range zr.File {
		if !isMarkupPart(f.Name) {
			continue
		}
		part, err := readPart(f, budget)
		if err != nil {
			return nil, err
		}
		budget -= int64(len(part))
		if _, err := checkCharset(part); err != nil {
			return nil, unscannable("its part %s: %s", truncate(f.Name, 80), err.(*Unscannable).Reason)
		}
		if bytes.Contains(part, []byte("<!ENTITY")) {
			// Python's XML parsers expand a document's own entities, which can put a
			// secret together from pieces.
			return nil, unscannable("its part %s declares XML entities", truncate(f.Name, 80))
		}
		out.Write(part)
		out.WriteByte('\n')
		for _, v := range []view{xmlText(false), xmlText(true), markupText, validUTF8} {
			text, err := v(part)
			if err != nil {
				return nil, err
			}
			out.Write(text)
			out.WriteByte('\n')
		}
		if out.Len() > 4*maxDecoded {
			return nil, unscannable("its text is larger than %d MiB", maxDecoded>>20)
		}
	}
	return out.Bytes(), nil
}

func isMarkupPart(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".xml", ".rels", ".xhtml", ".xht", ".html", ".htm", ".opf", ".ncx":
		return true
	}
	return false
}

// readPart decompresses one part within budget bytes.
func readPart(f *zip.File, budget int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, unscannable("its part %s cannot be read (%v)", truncate(f.Name, 80), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, budget+1))
	switch {
	case err != nil:
		return nil, unscannable("its part %s cannot be read (%v)", truncate(f.Name, 80), err)
	case int64(len(data)) > budget:
		return nil, unscannable("it decompresses to more than %d MiB", maxDecoded>>20)
	}
	return data, nil
}

// xmlText is the character data of an XML document joined without separators (entities
// decoded); with skipBlank, whitespace-only runs between elements are left out, as
// python-docx reads only the text elements of an indented document. A part that is not
// well-formed XML gives no text here (markupText reads it leniently).
func xmlText(skipBlank bool) view {
	return func(b []byte) ([]byte, error) {
		d := xml.NewDecoder(bytes.NewReader(b))
		d.Strict = false
		d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
			return nil, errors.New("not UTF-8")
		}
		var out bytes.Buffer
		for {
			tok, err := d.RawToken()
			if err != nil {
				return out.Bytes(), nil
			}
			if cd, ok := tok.(xml.CharData); ok && !(skipBlank && len(bytes.TrimSpace(cd)) == 0) {
				out.Write(cd)
			}
		}
	}
}
