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

// maxToolWorkers is mcp-go's largest tool-call worker pool.
const maxToolWorkers = 100

// stdioLimits bound what the stdio transport holds: requests in flight and one message's size.
type stdioLimits struct {
	maxInflight     int
	maxRequestBytes int
}

// stdioConfig is how serveStdio serves: its bounds, and what of the server it needs.
type stdioConfig struct {
	limits stdioLimits
	// grace bounds the wait for in-flight calls at the end; 0 = defaultShutdownGrace.
	grace time.Duration
	// hooks are the MCP server's (nil: none); the in-flight bound's slots are returned there.
	hooks *mcpserver.Hooks
	// filter, when set, wraps what mcp-go writes (cancelledCalls.filter).
	filter func(io.Writer) io.Writer
	// stop, when set, runs when ctx ends, before the calls in flight are cancelled
	// (cancelledCalls.stop).
	stop func()
	// answered, when set, runs once the first message has been written.
	answered func()
}

// protocolWriter serialises writes to the protocol stream: mcp-go writes each message with
// one Write, under its own lock, but the guard's answers and the server's own requests
// (roots/list) are written outside it. answered, when set, runs after the first write.
type protocolWriter struct {
	mu       sync.Mutex
	w        io.Writer
	answered func()
	once     sync.Once
}

func (p *protocolWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	n, err := p.w.Write(b)
	p.mu.Unlock()
	if err == nil && p.answered != nil {
		p.once.Do(p.answered)
	}
	return n, err
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
// mcp-go's stdio server reads, serves and answers every message; the guard in front of its
// input bounds a message's size and the requests in flight, and mcp-go's hooks return the
// slots.
func serveStdio(ctx context.Context, srv *mcpserver.MCPServer, stdin io.Reader, stdout io.Writer, logger *slog.Logger, cfg stdioConfig) error {
	grace, lim := cfg.grace, cfg.limits
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	in := &eofReader{r: stdin, done: make(chan struct{})}
	out := &protocolWriter{w: stdout, answered: cfg.answered}
	gate := newInflight(lim.maxInflight)
	if cfg.hooks != nil {
		gate.hooks(cfg.hooks)
	}
	pr, pw := io.Pipe()
	defer pr.Close()
	g := &guard{maxLine: lim.maxRequestBytes, gate: gate, ids: newIDTable(), asked: newAskedTable(),
		out: out, to: pw, log: logger.With("component", "stdin")}
	gate.resend = g.resend
	go g.pump(in)

	stdio := mcpserver.NewStdioServer(srv)
	stdio.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	// Every admitted tool call gets a worker, and the queue holds every admitted call, so
	// mcp-go never falls back to serving a call on its read loop.
	mcpserver.WithWorkerPoolSize(min(lim.maxInflight, maxToolWorkers))(stdio)
	mcpserver.WithQueueSize(lim.maxInflight + 1)(stdio)

	// The calls' contexts end when serveStdio says, not with ctx: stop runs first.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	errc := make(chan error, 1)
	var mcpOut io.Writer = &mcpOutput{w: out, gate: gate, ids: g.ids, asked: g.asked}
	if cfg.filter != nil {
		mcpOut = cfg.filter(mcpOut)
	}
	go func() { errc <- stdio.Listen(lctx, pr, mcpOut) }()

	var reason string
	select {
	case err := <-errc:
		return listenResult(err)
	case <-ctx.Done():
		reason = "signal"
		if cfg.stop != nil {
			cfg.stop()
		}
		cancel()
	case <-in.done:
		// mcp-go reads the messages before the end of input, then cancels what is in flight.
		reason = "stdin closed"
	}
	logger.Info("shutting down", "reason", reason)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-errc:
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
