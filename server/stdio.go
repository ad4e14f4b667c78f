package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// defaultShutdownGrace bounds how long Run waits, after stdin closes or ctx is cancelled,
// for in-flight calls to notice their cancelled context before returning anyway.
const defaultShutdownGrace = 500 * time.Millisecond

// stdioLimits bound what the stdio transport holds: calls in flight and one message's size.
type stdioLimits struct {
	maxInflight     int
	maxRequestBytes int
}

// protocolWriter serialises writes to the protocol stream. mcp-go writes each JSON-RPC
// message with a single Write call, but server-initiated requests (roots/list) are written
// outside the stdio server's own lock, so without this two messages larger than a pipe's
// atomic write size could interleave.
type protocolWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *protocolWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w.Write(b)
}

// eofReader closes done when the underlying reader first returns an error (EOF included),
// so Run can start its shutdown deadline even if a handler ignores cancellation.
type eofReader struct {
	r    io.Reader
	once sync.Once
	done chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.done) })
	}
	return n, err
}

// serveStdio runs srv over stdin/stdout until stdin reaches EOF or ctx is cancelled. Both
// are a normal end and return nil. In-flight calls see their context cancelled; serveStdio
// waits at most grace for them and then returns regardless, so the process can exit.
//
// The front door reads stdin; the request runner serves requests; mcp-go's stdio server
// reads the rest (notifications, answers to roots/list) and owns the session. answered,
// when set, runs once the first response to a request has been written.
func serveStdio(ctx context.Context, srv *mcpserver.MCPServer, stdin io.Reader, stdout io.Writer, logger *slog.Logger, grace time.Duration, lim stdioLimits, answered func()) error {
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	in := &eofReader{r: stdin, done: make(chan struct{})}
	out := &protocolWriter{w: stdout}

	gate := newInflight(lim.maxInflight)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	requests := newRequestRunner(srv, gate, out, logger, lctx.Done())
	requests.answered = answered

	stdio := mcpserver.NewStdioServer(srv)
	stdio.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	// Requests are served by the request runner; mcp-go's tool-call workers only see a
	// tools/call without a usable id, which the front door passes on for mcp-go to answer,
	// so one worker and a queue of one suffice and start-up does not start a pool.
	mcpserver.WithWorkerPoolSize(1)(stdio)
	mcpserver.WithQueueSize(1)(stdio)
	mcpserver.WithStdioContextFunc(requests.sessionContext)(stdio)

	pr, pw := io.Pipe()
	defer pr.Close()
	front := &frontDoor{maxLine: lim.maxRequestBytes, gate: gate, out: out, calls: requests, log: logger.With("component", "stdin")}
	go front.pump(in, pw)

	errc := make(chan error, 1)
	go func() { errc <- stdio.Listen(lctx, pr, out) }()

	var reason string
	select {
	case err := <-errc:
		return listenResult(err)
	case <-ctx.Done():
		reason = "signal"
	case <-in.done:
		reason = "stdin closed"
	}
	logger.Info("shutting down", "reason", reason)
	cancel()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-errc:
		if !requests.wait(timer.C) {
			logger.Warn("in-flight calls did not stop in time; exiting anyway", "grace", grace)
		}
		return listenResult(err)
	case <-timer.C:
		logger.Warn("in-flight calls did not stop in time; exiting anyway", "grace", grace)
		return nil
	}
}

// listenResult maps Listen's return to Run's: EOF and cancellation are a clean stop.
func listenResult(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
