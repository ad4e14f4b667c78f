package e2ereal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// BenchmarkRealTeamLoad is serve --http with 20 users searching at once (every query
// distinct, so each call reaches R2R), once with each user's access token and once with
// each user's API key, against the real R2R. It reports R2R's p50 for another user's
// search sent straight to R2R with a JWT while idle and during the load: R2R 3.6.6 checks
// an API key with bcrypt inside its only event loop, so keys stall everyone.
//
// Each user searches at a pace: "every 2s" is an open loop (each user starts one search
// every 2 s whatever the answer time, 10 searches/s in all, a busy team of agents);
// "closed" has every user search again as soon as an answer arrives, which saturates
// any R2R on a small machine and shows the ceiling rather than a team.
//
//	go test -run '^$' -bench RealTeamLoad -benchtime 1x -count 2 ./server/e2ereal/
func BenchmarkRealTeamLoad(b *testing.B) {
	const users, loadFor, probes, probeLimit = 20, 12 * time.Second, 15, 30 * time.Second
	r := realR2RFromEnv(b)
	ctx := context.Background()
	admin := login(b, r)
	team := make([]teamUser, users)
	sfx := fmt.Sprint(time.Now().UnixNano())
	var wg sync.WaitGroup
	for i := range team {
		wg.Go(func() { team[i] = newTeamUser(b, r, admin, fmt.Sprintf("load%d-%s@example.com", i, sfx)) })
	}
	wg.Wait()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := servertest.Start(b, b.TempDir(), servertest.Env(b, r.URL, "NO_PROXY=127.0.0.1,localhost"), "serve", "--http", addr, "--rate-limit", "0")
	defer func() { _ = srv.Cmd.Process.Signal(os.Interrupt) }()
	waitHealthy(b, "http://"+addr)
	body := map[string]any{"query": "", "search_settings": map[string]any{"limit": 10}}
	// A probe that R2R leaves unanswered for probeLimit counts as probeLimit: under API keys
	// R2R stalls for minutes, and the figure is then a lower bound.
	probeClient := &http.Client{Timeout: probeLimit}
	probe := func(label string) time.Duration {
		var ds []time.Duration
		for i := range probes {
			body["query"] = fmt.Sprintf("payout queue backlog probe %s %d %s", label, i, sfx)
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, r.URL+"/v3/retrieval/search", bytes.NewReader(raw))
			req.Header.Set("Authorization", "Bearer "+admin)
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			resp, err := probeClient.Do(req)
			d := time.Since(start)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("probe search: %s", resp.Status)
				}
			} else if d < probeLimit {
				b.Fatal(err)
			}
			ds = append(ds, min(d, probeLimit))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, c := range teamLoadCases {
		mode, every := c.mode, c.every
		b.Run(c.name(), func(b *testing.B) {
			for b.Loop() {
				idle := probe("idle")
				stop := make(chan struct{})
				lctx, cancel := context.WithCancel(ctx)
				var calls, failed atomic.Int64
				var lw sync.WaitGroup
				for i, u := range team {
					cred := u.token
					if mode == "API keys" {
						cred = u.key
					}
					search := func(n int) {
						ok := invokeSearch(lctx, "http://"+addr, cred, fmt.Sprintf("payout queue backlog %d %d %s %s", i, n, c.name(), sfx))
						if lctx.Err() != nil {
							return // cut short by the end of the load, neither done nor failed
						}
						if !ok {
							failed.Add(1)
						}
						calls.Add(1)
					}
					lw.Go(func() {
						if every == 0 {
							for n := 0; ; n++ {
								select {
								case <-stop:
									return
								default:
								}
								search(n)
							}
						}
						// Users start spread over one period, then each keeps its own beat.
						select {
						case <-stop:
							return
						case <-time.After(every * time.Duration(i) / users):
						}
						tick := time.NewTicker(every)
						defer tick.Stop()
						var sw sync.WaitGroup
						defer sw.Wait()
						for n := 0; ; n++ {
							sw.Go(func() { search(n) })
							select {
							case <-stop:
								return
							case <-tick.C:
							}
						}
					})
				}
				time.Sleep(2 * time.Second) // let the load build up
				during := probe("load")
				time.Sleep(max(0, loadFor-2*time.Second-time.Duration(probes)*during))
				close(stop)
				cancel() // searches still waiting on R2R end now
				lw.Wait()
				b.ReportMetric(float64(idle.Milliseconds()), "idle-p50-ms")
				b.ReportMetric(float64(during.Milliseconds()), "load-p50-ms")
				b.ReportMetric(float64(during)/float64(idle), "load/idle")
				b.ReportMetric(float64(calls.Load()), "team-calls")
				b.ReportMetric(float64(failed.Load()), "team-failed")
			}
		})
	}
}

// teamLoadCases are the credential kinds and paces BenchmarkRealTeamLoad runs.
var teamLoadCases = []teamLoadCase{
	{"access tokens", 2 * time.Second}, {"API keys", 2 * time.Second},
	{"access tokens", 0}, {"API keys", 0},
}

type teamLoadCase struct {
	mode  string
	every time.Duration // 0: closed loop
}

func (c teamLoadCase) name() string {
	if c.every == 0 {
		return c.mode + " closed"
	}
	return fmt.Sprintf("%s every %s", c.mode, c.every)
}

type teamUser struct{ token, key string }

// newTeamUser registers a verified user with the admin's token and returns the user's
// access token and a new API key.
func newTeamUser(b testing.TB, r realR2R, admin, email string) teamUser {
	ctx := context.Background()
	password := "Load-pw-" + fmt.Sprint(time.Now().UnixNano())
	raw, _ := json.Marshal(map[string]any{"email": email, "password": password, "is_verified": true})
	req, _ := http.NewRequest(http.MethodPost, r.URL+"/v3/users", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("register %s: %v %v", email, err, resp)
	}
	resp.Body.Close()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		b.Fatal(err)
	}
	pair, err := c.Login(ctx, email, password)
	if err != nil {
		b.Fatal(err)
	}
	uc := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	me, err := uc.Me(ctx)
	if err != nil {
		b.Fatal(err)
	}
	key, err := uc.CreateAPIKey(ctx, me.ID, "load", "")
	if err != nil {
		b.Fatal(err)
	}
	return teamUser{token: pair.AccessToken.Token, key: key.APIKey}
}

// invokeSearch calls r2r_search through the REST gateway; false when it failed.
func invokeSearch(ctx context.Context, base, cred, query string) bool {
	raw, _ := json.Marshal(map[string]any{"tool": "r2r_search", "arguments": map[string]any{"query": query}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp/invoke", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var out struct {
		Error any `json:"error"`
	}
	return json.NewDecoder(resp.Body).Decode(&out) == nil && resp.StatusCode == http.StatusOK && out.Error == nil
}

func waitHealthy(b *testing.B, base string) {
	for range 100 {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatal("serve --http did not come up")
}
