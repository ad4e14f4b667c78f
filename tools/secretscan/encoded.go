package secretscan

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// minEncodedRun is the shortest run of base64 or hex characters decoded: shorter ones
// cannot hold a token any rule matches.
const minEncodedRun = 16

// encodedRuns finds the runs FindEncoded decodes; compiled on first use, like the rules.
var encodedRuns = sync.OnceValues(func() (*regexp.Regexp, *regexp.Regexp) {
	return re(`[A-Za-z0-9+/_-]{16,}={0,2}`), re(`(?i)[0-9a-f]{16,}`)
})

// FindEncoded reports the first secret in text written by a person or a model (a team
// memory), in the text itself or in a form it may disguise one in, which no parser of
// R2R decodes but every reader can: with invisible format characters removed (a
// zero-width space inside a token), with backslash escapes decoded (\u0041), reversed,
// and with each run of base64 (standard or URL alphabet) or hex decoded.
func FindEncoded(text []byte) (Finding, bool) {
	if f, ok := Find(text); ok {
		return f, true
	}
	forms := [][]byte{text}
	if visible := withoutFormatChars(text); !bytes.Equal(visible, text) {
		forms = append(forms, visible)
	}
	for _, form := range forms {
		views := [][]byte{form, reversed(form)}
		if un, _ := jsonUnescaped(form); un != nil {
			views = append(views, un)
		}
		views = append(views, decodedRuns(form)...)
		for _, v := range views {
			if f, ok := Find(v); ok {
				return f, true
			}
		}
	}
	return Finding{}, false
}

// FindJoined reports a secret split across pieces (a memory's tags, paths, title): in
// all of them joined in their order, and in every two of them joined in either order, each
// as FindEncoded reads it.
func FindJoined(pieces []string) (Finding, bool) {
	if f, ok := FindEncoded([]byte(joined(pieces))); ok {
		return f, true
	}
	for i, a := range pieces {
		for j, b := range pieces {
			if i == j {
				continue
			}
			if f, ok := FindEncoded([]byte(a + b)); ok {
				return f, true
			}
		}
	}
	return Finding{}, false
}

func joined(pieces []string) string {
	var b bytes.Buffer
	for _, p := range pieces {
		b.WriteString(p)
	}
	return b.String()
}

// withoutFormatChars drops Unicode format characters (category Cf: zero-width spaces and
// joiners, soft hyphens, bidi marks, word joiners), which render as nothing.
func withoutFormatChars(b []byte) []byte {
	return bytes.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, b)
}

// reversed is b with its characters in reverse order.
func reversed(b []byte) []byte {
	rs := []rune(string(b))
	slices.Reverse(rs)
	return []byte(string(rs))
}

// decodedRuns decodes every run of base64 and of hex in b.
func decodedRuns(b []byte) [][]byte {
	b64, hx := encodedRuns()
	var out [][]byte
	urlSafe := strings.NewReplacer("-", "+", "_", "/")
	for _, run := range b64.FindAll(b, -1) {
		std := urlSafe.Replace(string(run))
		// The run may begin with a word that is not part of the encoding: try each
		// alignment of the 4-character groups.
		for skip := range min(4, len(std)-minEncodedRun+1) {
			if d := lenientBase64([]byte(std[skip:])); len(d) > 0 {
				out = append(out, d)
			}
		}
	}
	for _, run := range hx.FindAll(b, -1) {
		for skip := range min(2, len(run)-minEncodedRun+1) {
			n := (len(run) - skip) &^ 1
			if d, err := hex.DecodeString(string(run[skip : skip+n])); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}
