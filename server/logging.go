package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// ParseLevel maps a --log-level value (debug, info, warn/warning, error; any case) to a
// slog level.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", s)
}

// OpenLogger returns the logger serve uses: text records at level and above, to the file
// at path (created 0600, appended to) or, when path is empty, to stderr. The close function
// is never nil.
func OpenLogger(path, level string, stderr io.Writer) (*slog.Logger, func() error, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	w, closeFn, err := openLog(path, stderr)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), closeFn, nil
}

// openLog returns the writer logs go to: the file at path (created 0600, appended to) or,
// when path is empty, fallback. The returned close function is never nil.
func openLog(path string, fallback io.Writer) (io.Writer, func() error, error) {
	if path == "" {
		if fallback == nil {
			fallback = io.Discard
		}
		return fallback, func() error { return nil }, nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("log file %s is a symbolic link; r2r-mcp does not follow it: give the path of a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
	if isSymlinkLoop(err) {
		return nil, nil, fmt.Errorf("log file %s is a symbolic link; r2r-mcp does not follow it: give the path of a regular file", path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open log file: %w", err)
	}
	// O_CREATE's mode only applies to new files; an existing log file written by
	// someone else keeps its mode, and may hold request details, so tighten it.
	// Only a regular file's mode is changed (never that of a device such as /dev/null).
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("log file %s is readable by others and its mode cannot be changed: %w", path, err)
		}
	}
	return f, f.Close, nil
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// clientLogHandler forwards records logged with a request context (tool handlers log with
// InfoContext(ctx, ...)) to the MCP client as notifications/message, at or above the level
// the client asked for with logging/setLevel. Every record also goes to the next handler
// (stderr or the log file). Records without a client session in their context, and
// mcp-go's own per-request lines, stay local.
type clientLogHandler struct {
	next slog.Handler
	// srv is shared by every handler derived with WithAttrs/WithGroup and set once the
	// MCP server exists (the server's own options need the logger first).
	srv    *atomic.Pointer[mcpserver.MCPServer]
	attrs  []slog.Attr
	groups []string
}

func (h *clientLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l) || (ctx != nil && mcpserver.ClientSessionFromContext(ctx) != nil)
}

func (h *clientLogHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	srv := h.srv.Load()
	if ctx == nil || srv == nil || mcpserver.ClientSessionFromContext(ctx) == nil ||
		r.Message == "mcp.request" || r.Message == "mcp.tool" {
		return err
	}
	data := map[string]any{"message": r.Message}
	add := func(a slog.Attr) {
		if a.Equal(slog.Attr{}) {
			return
		}
		key := a.Key
		if len(h.groups) > 0 {
			key = strings.Join(h.groups, ".") + "." + key
		}
		data[key] = a.Value.Resolve().String()
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool { add(a); return true })
	n := mcp.NewLoggingMessageNotification(mcpLevel(r.Level), "r2r-mcp", data)
	// A full notification channel or a session that has not finished initialize is not
	// worth failing the log call for: the record already reached the local log.
	_ = srv.SendLogMessageToClient(ctx, n)
	return err
}

func (h *clientLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *clientLogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l >= slog.LevelError:
		return mcp.LoggingLevelError
	case l >= slog.LevelWarn:
		return mcp.LoggingLevelWarning
	case l >= slog.LevelInfo:
		return mcp.LoggingLevelInfo
	}
	return mcp.LoggingLevelDebug
}

// quietRequests is the handler of mcp-go's request logger (WithLogger). mcp-go logs two
// info lines for every tool call: "mcp.tool" (tool, duration, outcome) and "mcp.request"
// (method, duration, outcome), and one "mcp.request" for every other request. A request
// that succeeded is logged at debug: its line repeats the tool's, or for initialize the
// "client initialized" line, and writing it cost start-up and every cache hit a formatted
// line on stderr. A request that failed keeps its info line, with the error.
type quietRequests struct{ slog.Handler }

func (h quietRequests) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && r.Message == "mcp.request" && succeeded(r) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietRequests) WithAttrs(as []slog.Attr) slog.Handler {
	return quietRequests{h.Handler.WithAttrs(as)}
}

func (h quietRequests) WithGroup(name string) slog.Handler {
	return quietRequests{h.Handler.WithGroup(name)}
}

// succeeded reports whether an mcp-go request record has outcome "ok".
func succeeded(r slog.Record) bool {
	ok := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			ok = a.Value.String() == "ok"
			return false
		}
		return true
	})
	return ok
}
