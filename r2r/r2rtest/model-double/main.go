// Command model-double serves an OpenAI-compatible embeddings and chat model (package
// modeldouble) for running a real R2R without a model provider:
//
//	go run ./r2r/r2rtest/model-double --addr 127.0.0.1:PORT [--dimensions 1536] [--embeddings-upstream URL] [--quiet]
//
// When it accepts connections it prints its base URL for OpenAI clients
// (http://127.0.0.1:PORT/v1) as one line on stdout; the same routes are also served without
// the /v1 prefix. It logs one line per request to stderr and exits cleanly on SIGINT/SIGTERM.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest/modeldouble"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := modeldouble.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
