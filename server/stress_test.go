package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"time"
)

// TestStressMixedCallsWhileR2RFlips sends hundreds of mixed requests (tools, resource
// reads, pings) with cancellations, while R2R flips between up and down and the in-flight
// bound turns some away. Every request not cancelled gets exactly one answer, a cancelled
// one at most one, no answer carries a control character, and the server stops on EOF.
// Run it with -race.
func TestStressMixedCallsWhileR2RFlips(t *testing.T) {
	r2r := newFlippingR2R(t)
	cfg := overloadConfig(t, r2r.URL)
	cfg.Options.MaxInflight, cfg.Options.Breaker.Failures, cfg.Options.Breaker.Cooldown = 16, 3, 50*time.Millisecond
	cfg.Options.Tools.CallTimeout, cfg.Options.Tools.SearchTimeout = DefaultOptions().Tools.CallTimeout, DefaultOptions().Tools.SearchTimeout
	c, done := runInProcess(context.Background(), cfg)
	c.send(t, initLine)
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	stop := make(chan struct{})
	var flipper sync.WaitGroup
	flipper.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				r2r.down.Store(!r2r.down.Load())
			}
		}
	})

	answers := map[float64]int{}
	var mu sync.Mutex
	got := make(chan struct{}, 1000)
	go func() {
		for c.out.Scan() {
			raw := c.out.Text()
			var m map[string]any
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				t.Errorf("not JSON: %.200s", raw)
				continue
			}
			if s := badString(m); s != "" {
				t.Errorf("control character in %.200q", s)
			}
			if id, ok := m["id"].(float64); ok {
				mu.Lock()
				answers[id]++
				mu.Unlock()
				got <- struct{}{}
			}
		}
	}()
	calls := []string{
		`"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"runbook %d"}}`,
		`"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}`,
		`"method":"tools/call","params":{"name":"r2r_list_documents","arguments":{"limit":%d}}`,
		`"method":"tools/call","params":{"name":"r2r_status","arguments":{}}`,
		`"method":"tools/call","params":{"name":"r2r_rag_query","arguments":{"query":"how %d"}}`,
		`"method":"resources/read","params":{"uri":"r2r://current-project/context"}`,
		`"method":"ping"`,
	}
	const n = 400
	cancelled := map[float64]bool{}
	for i := range n {
		id := 1000 + i
		call := calls[i%len(calls)]
		if i%len(calls) == 0 || i%len(calls) == 2 || i%len(calls) == 4 {
			call = fmt.Sprintf(call, i%50+1)
		}
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, call))
		if i%5 == 0 {
			cancelled[float64(id)] = true
			c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"stress"}}`, id))
		}
	}
	deadline := time.After(60 * time.Second)
	for complete := false; !complete; {
		select {
		case <-got:
		case <-deadline:
			t.Fatal("not every request was answered")
		}
		mu.Lock()
		complete = true
		for i := range n {
			id := float64(1000 + i)
			if !cancelled[id] && answers[id] == 0 {
				complete = false
				break
			}
		}
		mu.Unlock()
	}
	close(stop)
	flipper.Wait()
	c.in.Close()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, k := range answers {
		if k > 1 {
			t.Errorf("request %v answered %d times", id, k)
		}
	}
}
