package e2ereal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
//	go test -run '^$' -bench RealTeamLoad -benchtime 1x -count 2 ./server/e2ereal/
func BenchmarkRealTeamLoad(b *testing.B) {
	const users, loadFor, probes = 20, 12 * time.Second, 6
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
	probe := func(label string) time.Duration {
		var ds []time.Duration
		for i := range probes {
			body["query"] = fmt.Sprintf("payout queue backlog probe %s %d %s", label, i, sfx)
			start := time.Now()
			post(b, r.URL+"/v3/retrieval/search", admin, body)
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, mode := range []string{"access tokens", "API keys"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				idle := probe("idle")
				stop := make(chan struct{})
				var calls, failed atomic.Int64
				var lw sync.WaitGroup
				for i, u := range team {
					cred := u.token
					if mode == "API keys" {
						cred = u.key
					}
					lw.Go(func() {
						for n := 0; ; n++ {
							select {
							case <-stop:
								return
							default:
							}
							if !invokeSearch(ctx, "http://"+addr, cred, fmt.Sprintf("payout queue backlog %d %d %s %s", i, n, mode, sfx)) {
								failed.Add(1)
							}
							calls.Add(1)
						}
					})
				}
				time.Sleep(2 * time.Second) // let the load build up
				during := probe("load")
				time.Sleep(max(0, loadFor-2*time.Second-time.Duration(probes)*during))
				close(stop)
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

type teamUser struct{ token, key string }

// newTeamUser registers a verified user with the admin's token and returns the user's
// access token and a new API key.
func newTeamUser(b *testing.B, r realR2R, admin, email string) teamUser {
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
