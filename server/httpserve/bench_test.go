package httpserve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkSearchHit is the server side of one cache-hit r2r_search over MCP (stateless
// Streamable HTTP): key lookup, JSON-RPC, validation, cache, result; no network. Its ns/op
// is the CPU a call costs, so one core serves about 1e9/ns_op calls per second.
func BenchmarkSearchHit(b *testing.B) {
	tm := newTeam(b)
	rep := newReplica(b, tm, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"payout queue worker"}}}`
	do := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+tm.Alice.Key)
		rec := httptest.NewRecorder()
		rep.Handler.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tm.Alice.Secret) {
		b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if rec := do(); rec.Code != http.StatusOK {
				b.Errorf("status %d", rec.Code)
			}
		}
	})
}
