package e2ereal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// BenchmarkRealSearchMiss compares an uncached r2r_search through the built r2r-mcp (stdio,
// every query distinct so the cache never answers) with the same search sent straight to
// R2R's /v3/retrieval/search, on the same real R2R and the same ingested document. "The same
// search" is exact: r2r-mcp reaches R2R through a recording proxy, and the direct run replays
// the body r2r-mcp sent with only the query changed (the proxy's cost counts against r2r-mcp).
//
//	make r2r-real; set R2R_CONFORMANCE_*; go test -run '^$' -bench RealSearchMiss ./server/e2ereal/
func BenchmarkRealSearchMiss(b *testing.B) {
	r := realR2RFromEnv(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	proj := servertest.GitProject(b, "bench-"+fmt.Sprint(time.Now().UnixNano()), map[string]string{mdPath: mdText})
	rec := newRecorder(b, r.URL)
	env := servertest.Env(b, rec.URL, "R2R_EMAIL="+r.Email, "R2R_PASSWORD="+r.Password, "NO_PROXY=127.0.0.1,localhost")
	s := servertest.Serve(ctx, b, proj, env, "--rate-limit", "0")
	defer s.Close()
	ing, err := s.Call(ctx, "r2r_ingest_document", map[string]any{"file_path": mdPath, "run_async": false})
	if err != nil || ing.IsError {
		b.Fatalf("ingest: %v %s", err, ing.Text)
	}

	n := 0 // across b.Run's rounds too, so no query repeats and the cache never answers
	b.Run("via r2r-mcp", func(b *testing.B) {
		for b.Loop() {
			n++
			res, err := s.Call(ctx, "r2r_search", map[string]any{"query": fmt.Sprintf("payout queue backlog %d mcp", n)})
			if err != nil || res.IsError {
				b.Fatalf("r2r_search: %v %s", err, res.Text)
			}
		}
	})
	b.Run("straight to R2R", func(b *testing.B) {
		token := login(b, r)
		var body map[string]any
		if err := json.Unmarshal(rec.lastSearch(), &body); err != nil {
			b.Fatalf("r2r-mcp's search body: %v", err)
		}
		b.Logf("r2r-mcp's search body: %s", rec.lastSearch())
		for b.Loop() {
			n++
			body["query"] = fmt.Sprintf("payout queue backlog %d direct", n)
			post(b, r.URL+"/v3/retrieval/search", token, body)
		}
	})
}

// recorder is a reverse proxy to R2R that keeps the last search request body.
type recorder struct {
	URL  string
	mu   sync.Mutex
	body []byte
}

func newRecorder(b *testing.B, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v3/retrieval/search" {
			raw, _ := io.ReadAll(req.Body)
			rec.mu.Lock()
			rec.body = raw
			rec.mu.Unlock()
			req.Body = io.NopCloser(bytes.NewReader(raw))
		}
		proxy.ServeHTTP(w, req)
	}))
	b.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

func (r *recorder) lastSearch() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body
}

func realR2RFromEnv(b *testing.B) realR2R {
	r := realR2R{os.Getenv("R2R_CONFORMANCE_URL"), os.Getenv("R2R_CONFORMANCE_EMAIL"), os.Getenv("R2R_CONFORMANCE_PASSWORD")}
	if r.URL == "" || r.Email == "" || r.Password == "" {
		b.Skip("no real R2R: set R2R_CONFORMANCE_URL/EMAIL/PASSWORD, or run make r2r-real")
	}
	return r
}

// login returns an access token for the admin.
func login(b *testing.B, r realR2R) string {
	form := url.Values{"username": {r.Email}, "password": {r.Password}}
	resp, err := http.Post(r.URL+"/v3/users/login", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results struct {
			AccessToken struct{ Token string } `json:"access_token"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Results.AccessToken.Token == "" {
		b.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	return out.Results.AccessToken.Token
}

// post sends body as JSON and decodes the answer, as a client of R2R's API would.
func post(b *testing.B, u, token string, body any) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("search: %d %v %s", resp.StatusCode, err, msg)
	}
}
