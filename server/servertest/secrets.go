package servertest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// RecordingR2R is the R2R emulator behind a listener that collects every credential that
// crosses the wire: access and refresh tokens and API keys in responses, and the Bearer
// tokens and X-API-Key values of requests.
type RecordingR2R struct {
	*r2rtest.Emulator
	// URL is the base URL without a trailing slash.
	URL string

	mu      sync.Mutex
	secrets map[string]bool
}

var (
	jwtPattern    = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
	apiKeyPattern = regexp.MustCompile(`key_[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+`)
)

// NewRecordingR2R starts an emulator with opts on a loopback port; it stops when t ends.
func NewRecordingR2R(t testing.TB, opts r2rtest.Options) *RecordingR2R {
	t.Helper()
	r := &RecordingR2R{Emulator: r2rtest.New(opts), secrets: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	r.URL = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		r.Emulator.Close()
	})
	return r
}

func (r *RecordingR2R) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		r.add(tok)
	}
	r.add(req.Header.Get("X-API-Key"))
	tw := &teeWriter{ResponseWriter: w}
	r.Emulator.ServeHTTP(tw, req)
	body := tw.body.String()
	for _, m := range jwtPattern.FindAllString(body, -1) {
		r.add(m)
	}
	for _, m := range apiKeyPattern.FindAllString(body, -1) {
		r.add(m)
	}
}

func (r *RecordingR2R) add(s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	r.mu.Lock()
	r.secrets[s] = true
	r.mu.Unlock()
}

// Credentials returns every token and API key seen so far, sorted.
func (r *RecordingR2R) Credentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// teeWriter copies the response body aside (the emulator's responses are small).
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets the emulator's Down mode drop connections through the wrapper.
func (t *teeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := t.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("hijack not supported")
	}
	return h.Hijack()
}

// SecretVariants returns what must never be printed for one secret: the secret itself
// and, for an R2R API key "key_PUBLIC.RAW", RAW and its first 8 characters (the public
// "key_PUBLIC" part is an identifier, not a secret); for a JWT, its signature.
func SecretVariants(secret string) []string {
	out := []string{secret}
	if pub, raw, ok := strings.Cut(secret, "."); ok && strings.HasPrefix(pub, "key_") && !strings.Contains(raw, ".") {
		out = append(out, raw)
		if len(raw) > 8 {
			out = append(out, raw[:8])
		}
	}
	if parts := strings.Split(secret, "."); len(parts) == 3 && strings.HasPrefix(secret, "eyJ") {
		out = append(out, parts[2])
	}
	return out
}

// FindSecrets returns, for each text in texts (name → content) that contains one of the
// secrets (or a variant of it, see SecretVariants), a line naming both without quoting
// the secret.
func FindSecrets(texts map[string]string, secrets []string) []string {
	var leaks []string
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, s := range secrets {
		for _, v := range SecretVariants(s) {
			if len(v) < 8 {
				continue
			}
			for _, n := range names {
				if strings.Contains(texts[n], v) {
					leaks = append(leaks, fmt.Sprintf("%s contains secret #%d (a %d-character form of it)", n, i, len(v)))
				}
			}
		}
	}
	return leaks
}
