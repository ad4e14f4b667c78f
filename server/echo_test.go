package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestNoLongEcho: arguments far over their bounds (a 1 MB query, a 1 MB unknown argument
// name, a 1 MB file path) are refused without echoing more than 1 KB of them, in the answer
// and in the log.
func TestNoLongEcho(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	logs := &r2rtest.SyncBuffer{}
	cfg := overloadConfig(t, emu.URL)
	cfg.Stderr, cfg.LogLevel = logs, "debug"
	c, done := runInProcess(context.Background(), cfg)
	c.send(t, initLine)
	c.recv(t)
	huge := strings.Repeat("q", 1<<16) // 64 KiB: far past every bound, and cheap under -race
	for i, call := range []string{
		`"r2r_search","arguments":{"query":"` + huge + `"}`,
		`"r2r_search","arguments":{"query":"x","` + huge + `":1}`,
		`"r2r_ingest_document","arguments":{"file_path":"` + huge + `"}`,
		`"r2r_get_document","arguments":{"document_id":"` + huge + `"}`,
		`"r2r_search","arguments":{"query":"x","filters":{"` + huge + `":1}}`,
	} {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s}}`, 10+i, call))
		if raw := c.recvRaw(t); strings.Contains(raw, strings.Repeat("q", 1024)) {
			t.Errorf("call %d: the answer echoes the input: %.300s", i, raw)
		}
	}
	c.in.Close()
	<-done
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, strings.Repeat("q", 1024)) {
			t.Errorf("a log line echoes the input: %.300s", line)
		}
	}
}
