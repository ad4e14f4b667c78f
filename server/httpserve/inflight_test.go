package httpserve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// gatedR2R is a proxy in front of the emulator that holds every request but users/me
// until opened, counting the requests it holds at once.
type gatedR2R struct {
	URL        string
	open       chan struct{}
	held, peak atomic.Int64
	arrived    chan struct{}
}

func newGatedR2R(t *testing.T, target string) *gatedR2R {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	g := &gatedR2R{open: make(chan struct{}), arrived: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/users/me" && r.URL.Path != "/v3/health" {
			n := g.held.Add(1)
			for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
			}
			g.arrived <- struct{}{}
			select {
			case <-g.open:
			case <-r.Context().Done():
			}
			g.held.Add(-1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(g.release)
	g.URL = srv.URL
	return g
}

var releaseOnce sync.Map

func (g *gatedR2R) release() {
	if _, done := releaseOnce.LoadOrStore(g, true); !done {
		close(g.open)
	}
}

// Over HTTP --max-inflight bounds every request whatever its method or id: tool calls with
// an object id and 3 MiB completion/complete requests alike get 429 beyond the bound while
// R2R holds the admitted ones, R2R never sees more than the bound at once, and a ping is
// answered meanwhile.
func TestMaxInflightBoundsEveryHTTPRequest(t *testing.T) {
	const bound, sent = 2, 12
	big := strings.Repeat("a", 3<<20)
	for _, tc := range []struct {
		name string
		body func(i int) string
	}{
		{"tools/call with an object id", func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":{"n":%d},"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"payout %d"}}}`, i, i)
		}},
		{"tools/call with a string id", func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"payout %d"}}}`, i, i)
		}},
		{"completion/complete of 3 MiB", func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"sync"},"argument":{"name":"collection","value":"%s"}}}`, i, big)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t)
			gate := newGatedR2R(t, tm.Emu.URL)
			rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) {
				c.R2RURL, c.Options.MaxInflight = gate.URL, bound
			})
			post := func(body string) int {
				req, _ := http.NewRequest(http.MethodPost, rep.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				req.Header.Set("Authorization", "Bearer "+tm.Alice.Key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if s := post(`{"jsonrpc":"2.0","id":0,"method":"ping"}`); s != http.StatusOK { // the key is checked once, outside the gate
				t.Fatalf("warm-up ping: %d", s)
			}
			statuses := make(chan int, sent)
			var wg sync.WaitGroup
			for i := range sent {
				wg.Go(func() { statuses <- post(tc.body(i)) })
			}
			<-gate.arrived // at least one admitted request waits on R2R (completions share one load)
			refused := 0
			for refused < sent-bound {
				if s := <-statuses; s != http.StatusTooManyRequests {
					t.Fatalf("a request beyond the bound got %d, want 429", s)
				}
				refused++
			}
			if s := post(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); s != http.StatusOK && s != http.StatusTooManyRequests {
				t.Errorf("a ping while R2R holds every slot: %d", s)
			}
			gate.release()
			wg.Wait()
			close(statuses)
			for s := range statuses {
				if s != http.StatusOK {
					t.Errorf("an admitted request got %d", s)
				}
			}
			if p := gate.peak.Load(); p > bound {
				t.Errorf("R2R saw %d requests at once, --max-inflight is %d", p, bound)
			}
		})
	}
}
