package r2rtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Server is an Emulator behind a real HTTP listener on a loopback port.
type Server struct {
	*Emulator
	// URL is the base URL without a trailing slash, e.g. http://127.0.0.1:34567.
	URL string

	srv *httptest.Server
}

// NewServer starts an emulator on a free loopback port; it is closed via t.Cleanup.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	e := New(opts)
	srv := httptest.NewServer(e)
	s := &Server{Emulator: e, URL: srv.URL, srv: srv}
	t.Cleanup(s.Close)
	return s
}

// Close stops the listener and background ingestion. It is safe to call more than once.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.Emulator.Close()
}

// HTTPClient returns an *http.Client for the server.
func (s *Server) HTTPClient() *http.Client { return s.srv.Client() }
