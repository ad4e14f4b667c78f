package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// With --no-analytics neither the server nor a user's copy over HTTP records anything,
// even when serve --http hands it a Redis recorder, and nothing is written; otherwise
// the server records to its directory and the copies to the recorder they are given.
func TestAnalyticsOff(t *testing.T) {
	for _, off := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "analytics")
		opts := DefaultOptions()
		opts.NoAnalytics = off
		s, err := New(Config{R2RURL: "http://127.0.0.1:1", WorkDir: t.TempDir(), ConfigDir: t.TempDir(), AnalyticsDir: dir, Options: opts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		team := analytics.NewRecorder(&analytics.FileStore{Dir: filepath.Join(dir, "team")}, nil)
		u, err := s.ForCredentials(r2r.APIKey("key"), UserOptions{Analytics: team})
		if err != nil {
			t.Fatal(err)
		}
		if off != (s.Deps.Analytics == nil) || (off && u.Deps.Analytics != nil) || (!off && u.Deps.Analytics != team) {
			t.Errorf("off=%v: server recorder %v, user recorder %v", off, s.Deps.Analytics, u.Deps.Analytics)
		}
		s.Deps.Analytics.Record("p", analytics.Event{Kind: analytics.KindSearch, Query: "q"})
		s.Close()
		team.Close(context.Background())
		if _, err := os.Stat(filepath.Join(dir)); off != (err != nil) {
			t.Errorf("off=%v: analytics directory: %v", off, err)
		}
	}
}
