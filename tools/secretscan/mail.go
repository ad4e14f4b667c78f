package secretscan

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
)

// maxMailParts bounds the parts (and nesting) of one email read.
const (
	maxMailParts = 1000
	maxMailDepth = 20
)

// mailText reads an email as Python's email package does for R2R: headers with their
// encoded words decoded, and every part's body with its transfer encoding
// (quoted-printable, base64) and charset decoded. R2R indexes the text parts; every part
// is read here.
func mailText(b []byte) ([]byte, error) {
	m, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		return nil, unscannable("it cannot be read as an email (%v)", err)
	}
	w := &mailWalk{}
	if err := w.message(textproto.MIMEHeader(m.Header), m.Body, 0); err != nil {
		return nil, err
	}
	return w.out.Bytes(), nil
}

type mailWalk struct {
	out   bytes.Buffer
	parts int
}

var wordDecoder = &mime.WordDecoder{CharsetReader: func(charset string, r io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, err
	}
	return enc.NewDecoder().Reader(r), nil
}}

func (w *mailWalk) message(h textproto.MIMEHeader, body io.Reader, depth int) error {
	w.parts++
	if w.parts > maxMailParts || depth > maxMailDepth {
		return unscannable("it has more than %d parts or %d levels of them", maxMailParts, maxMailDepth)
	}
	for k, vs := range h {
		for _, v := range vs {
			dec, err := wordDecoder.DecodeHeader(v)
			if err != nil {
				return unscannable("its %s header is encoded in a way that cannot be scanned (%v)", k, err)
			}
			w.out.WriteString(k + ": " + dec + "\n")
		}
	}
	ctype, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		ctype, params = "text/plain", map[string]string{}
	}
	data, err := w.decoded(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(ctype, "multipart/") && params["boundary"] != "":
		mr := multipart.NewReader(bytes.NewReader(data), params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return unscannable("its MIME parts cannot be read (%v)", err)
			}
			if err := w.message(p.Header, p, depth+1); err != nil {
				return err
			}
		}
	case ctype == "message/rfc822":
		m, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			return unscannable("an attached email cannot be read (%v)", err)
		}
		return w.message(textproto.MIMEHeader(m.Header), m.Body, depth+1)
	}
	text, err := charsetText(params["charset"], data)
	if err != nil {
		return err
	}
	w.out.Write(text)
	w.out.WriteByte('\n')
	return nil
}

// decoded is body with its transfer encoding undone, within the decoding budget.
func (w *mailWalk) decoded(cte string, body io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(body, int64(maxDecoded)+1))
	if err != nil {
		return nil, unscannable("its body cannot be read (%v)", err)
	}
	if len(raw) > maxDecoded || w.out.Len() > maxDecoded {
		return nil, unscannable("it is larger than %d MiB decoded", maxDecoded>>20)
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "", "7bit", "8bit", "binary":
	default: // uuencode and the like, which Python decodes too
		return nil, unscannable("a part's transfer encoding %q cannot be scanned", truncate(cte, 40))
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return nil, unscannable("a quoted-printable part cannot be decoded (%v)", err)
		}
		return out, nil
	case "base64":
		return lenientBase64(raw), nil
	}
	return raw, nil
}

// lenientBase64 decodes as Python's binascii does: characters outside the alphabet are
// skipped, decoding stops at padding.
func lenientBase64(raw []byte) []byte {
	clean := make([]byte, 0, len(raw))
	for _, c := range raw {
		if c == '=' {
			break
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	out, _ := base64.RawStdEncoding.DecodeString(string(clean))
	return out
}

// charsetText is data in UTF-8: ASCII-compatible charsets are scanned as they are, others
// decoded; one r2r-mcp does not know (UTF-7) is refused.
func charsetText(charset string, data []byte) ([]byte, error) {
	cs := strings.ToLower(strings.TrimSpace(charset))
	if markupRes().asciiCompatible.MatchString(cs) {
		return data, nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return nil, unscannable("a part is in the charset %q, which cannot be scanned", truncate(cs, 40))
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return nil, unscannable("a part in the charset %q cannot be decoded (%v)", truncate(cs, 40), err)
	}
	return out, nil
}
