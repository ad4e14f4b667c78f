// Command load measures serve --http on the loopback: N users, each with an R2R API key and
// a document of their own, call r2r_search over MCP (stateless Streamable HTTP, one
// tools/call per POST) with the same query again and again, so every call after the first
// is a cache hit. It reports calls/s and latency percentiles, and checks every answer holds
// the caller's own document and nobody else's.
//
//	go run ./testdata/load -r2r http://127.0.0.1:17272 -target http://127.0.0.1:18000 \
//	    -users 50 -concurrency 50 -duration 10s
//
// It refuses any address that is not 127.0.0.1: it is a load generator.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

type user struct {
	email, key, secret string
}

func main() {
	r2rURL := flag.String("r2r", "http://127.0.0.1:17272", "R2R emulator started with --auth (its superuser "+r2rtest.AdminEmail+" creates the users)")
	target := flag.String("target", "http://127.0.0.1:18000", "serve --http (or the proxy in front of replicas)")
	users := flag.Int("users", 50, "users, each with an API key and a document")
	conc := flag.Int("concurrency", 50, "calls in flight")
	dur := flag.Duration("duration", 10*time.Second, "measuring time (at most 2m)")
	rate := flag.Float64("rate", 0, "calls per second to offer (0 = as fast as -concurrency allows)")
	warm := flag.Int("warm", 1, "warm-up calls per user before measuring (behind a round-robin proxy, one per replica builds each replica's state for the user)")
	prefix := flag.String("prefix", "load", "user name prefix (a second run against the same R2R needs another)")
	flag.Parse()
	for _, u := range []string{*r2rURL, *target} {
		if p, err := url.Parse(u); err != nil || p.Hostname() != "127.0.0.1" {
			fail("only http://127.0.0.1:PORT addresses are allowed, got %q", u)
		}
	}
	if *dur > 2*time.Minute || *users < 1 || *users > 1000 || *conc < 1 || *conc > 1000 || *warm < 1 || *warm > 10 {
		fail("bounds: -duration ≤ 2m, 1 ≤ -users ≤ 1000, 1 ≤ -concurrency ≤ 1000, 1 ≤ -warm ≤ 10")
	}
	ctx := context.Background()
	us := setup(ctx, *r2rURL, *prefix, *users)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc * 2, MaxConnsPerHost: *conc * 2}}
	for _, u := range us { // warm: the first calls of each user fill the caches
		for range *warm {
			if err := call(ctx, hc, *target, u); err != nil {
				fail("warm-up call of %s: %v", u.email, err)
			}
		}
	}

	var calls, failures atomic.Int64
	lat := make([][]time.Duration, *conc)
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	var tokens chan struct{}
	if *rate > 0 {
		// Open load: calls are offered at -rate; a call waits for a free worker.
		tokens = make(chan struct{}, *conc)
		go func() {
			defer close(tokens)
			every := time.Duration(float64(time.Second) / *rate)
			next := time.Now()
			for next.Before(deadline) {
				time.Sleep(time.Until(next))
				tokens <- struct{}{}
				next = next.Add(every)
			}
		}()
	}
	for w := range *conc {
		wg.Go(func() {
			for i := w; time.Now().Before(deadline); i += *conc {
				if tokens != nil {
					if _, ok := <-tokens; !ok {
						return
					}
				}
				u := us[i%len(us)]
				t0 := time.Now()
				err := call(ctx, hc, *target, u)
				lat[w] = append(lat[w], time.Since(t0))
				calls.Add(1)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	fmt.Printf("target %s: %d users, up to %d in flight, offered rate %v/s (0 = unbounded), %s\n", *target, len(us), *conc, *rate, elapsed.Round(time.Millisecond))
	fmt.Printf("calls %d, failed %d, %.0f calls/s, p50 %s, p90 %s, p99 %s, max %s\n", calls.Load(), failures.Load(),
		float64(calls.Load())/elapsed.Seconds(), pct(0.50), pct(0.90), pct(0.99), all[len(all)-1])
	if e := firstErr.Load(); e != nil {
		fmt.Printf("first failure: %s\n", e)
		os.Exit(1)
	}
}

// setup creates the users, their keys and one document each, whose text holds a word only
// that user has.
func setup(ctx context.Context, base, prefix string, n int) []user {
	anon, err := r2r.New(r2r.Options{BaseURL: base})
	check(err)
	su, err := anon.Login(ctx, r2rtest.AdminEmail, r2rtest.AdminPassword)
	check(err)
	admin := anon
	out := make([]user, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			email := fmt.Sprintf("%s%d@load.example.com", prefix, i)
			pw := "pw-" + email
			body, _ := json.Marshal(map[string]any{"email": email, "password": pw})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v3/users", bytes.NewReader(body))
			check(err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+su.AccessToken.Token)
			resp, err := http.DefaultClient.Do(req)
			check(err)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				fail("creating %s: status %d", email, resp.StatusCode)
			}
			pair, err := admin.Login(ctx, email, pw)
			check(err)
			tc := admin.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
			me, err := tc.Me(ctx)
			check(err)
			key, err := tc.CreateAPIKey(ctx, me.ID, "load", "")
			check(err)
			secret := fmt.Sprintf("%sword-%d-x", prefix, i)
			_, err = admin.WithCredentials(r2r.APIKey(key.APIKey)).CreateDocument(ctx, r2r.DocumentCreate{
				FileName: "payout.md", File: []byte("# Payout queue\n\nThe payout queue worker is " + secret + ".\n")})
			check(err)
			out[i] = user{email: email, key: key.APIKey, secret: secret}
		})
	}
	wg.Wait()
	return out
}

// call sends one tools/call of r2r_search as u and checks the answer.
func call(ctx context.Context, hc *http.Client, target string, u user) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"payout queue worker"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"/mcp", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+u.key)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, out)
	}
	s := string(out)
	switch {
	case strings.Contains(s, `"isError":true`):
		return fmt.Errorf("error result: %.300s", s)
	case !strings.Contains(s, u.secret):
		return fmt.Errorf("%s's answer lacks their document: %.300s", u.email, s)
	case strings.Count(s, "word") != strings.Count(s, u.secret):
		return errors.New(u.email + " was served another user's document")
	}
	return nil
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
	os.Exit(2)
}
