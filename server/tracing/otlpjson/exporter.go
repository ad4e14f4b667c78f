package otlpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// maxResponse bounds how much of a collector's answer is read.
const maxResponse = 64 << 10

// Exporter sends spans to one OTLP/HTTP traces endpoint; it is an sdktrace.SpanExporter,
// meant to sit behind the SDK's batch span processor. An export that fails is reported
// to the caller and not retried.
type Exporter struct {
	endpoint string
	headers  http.Header
	client   *http.Client

	mu     sync.Mutex
	closed bool
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New returns an exporter that POSTs to endpoint (the full URL, usually ending in
// /v1/traces) with headers added to every request, through client.
func New(endpoint string, headers http.Header, client *http.Client) *Exporter {
	return &Exporter{endpoint: endpoint, headers: headers.Clone(), client: client}
}

// ErrShutdown is returned by ExportSpans after Shutdown.
var ErrShutdown = errors.New("otlpjson: exporter is shut down")

// ExportSpans sends spans in one request. An error names the endpoint's HTTP status and the
// start of its answer, never the headers sent.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	body, err := Marshal(spans)
	if err != nil {
		return fmt.Errorf("otlpjson: encoding %d spans: %w", len(spans), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlpjson: %w", err)
	}
	for k, vs := range e.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlpjson: sending %d spans: %w", len(spans), err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlpjson: %d spans refused: HTTP %d %s", len(spans), resp.StatusCode, excerpt(answer))
	}
	// A collector that keeps some spans answers 200 with a partial success (an empty body
	// or an empty object means all were kept).
	var partial struct {
		PartialSuccess struct {
			RejectedSpans json.Number `json:"rejectedSpans"`
			ErrorMessage  string      `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if json.Unmarshal(answer, &partial) == nil {
		if n := partial.PartialSuccess.RejectedSpans.String(); n != "" && n != "0" {
			return fmt.Errorf("otlpjson: collector rejected %s of %d spans: %s", n, len(spans), excerpt([]byte(partial.PartialSuccess.ErrorMessage)))
		}
	}
	return nil
}

// Shutdown makes later exports fail; it has nothing to flush (the span processor does).
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return ctx.Err()
}

// excerpt is the start of a collector's answer on one line, for an error message.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
