// Command r2r-emulator serves the in-memory R2R v3 emulator (package r2rtest) over HTTP, for
// manual testing and SDK compatibility checks:
//
//	go run ./r2r/r2rtest/r2r-emulator --addr 127.0.0.1:7272 [--seed DIR] [--auth]
//	    [--latency 200ms] [--fail-rate 0.3] [--token-ttl 2s] [--ingest-delay 300ms]
//
// It logs one line per request to stderr and exits cleanly on SIGINT/SIGTERM.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := r2rtest.Main(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}
