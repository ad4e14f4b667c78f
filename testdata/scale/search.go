package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// searchConfig is one search measurement.
type searchConfig struct {
	R2R, Bin, Dir   string
	Email, Password string
	N               int
}

// searchResult holds the latencies of both paths, in the order measured.
type searchResult struct {
	MCP, Direct []time.Duration
	Hits        int // chunks the r2r-mcp searches returned, in all
}

func (r searchResult) String() string {
	return fmt.Sprintf("search through r2r-mcp: %s; straight to R2R: %s (%d searches each, interleaved; %d hits through r2r-mcp)",
		pct(r.MCP), pct(r.Direct), len(r.MCP), r.Hits)
}

func pct(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("p50 %d ms, p95 %d ms", at(0.50).Milliseconds(), at(0.95).Milliseconds())
}

// queries derives n distinct queries from the corpus's file names (package and file, e.g.
// "net/http transport"), in a fixed order, so that no r2r-mcp search is a cache hit and
// the same corpus gives the same queries.
func queries(dir string, n int) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		q := strings.NewReplacer("_", " ", ".go", "").Replace(filepath.ToSlash(filepath.Dir(rel)) + " " + d.Name())
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) < n {
		return nil, fmt.Errorf("%d distinct queries in %s, %d wanted", len(out), dir, n)
	}
	stride := len(out) / n
	qs := make([]string, 0, n)
	for i := 0; i < n; i++ {
		qs = append(qs, out[i*stride])
	}
	return qs, nil
}

// runSearch runs N r2r_search calls through `r2r-mcp serve` (stdio, the project of Dir,
// credentials from the environment) interleaved with N identical searches sent straight
// to R2R with a JWT, each query once per path.
func runSearch(ctx context.Context, cfg searchConfig) (searchResult, error) {
	var res searchResult
	qs, err := queries(cfg.Dir, cfg.N)
	if err != nil {
		return res, err
	}
	anon, err := r2r.New(r2r.Options{BaseURL: cfg.R2R, UserAgent: "r2r-mcp/bench-scale"})
	if err != nil {
		return res, err
	}
	pair, err := anon.Login(ctx, cfg.Email, cfg.Password)
	if err != nil {
		return res, fmt.Errorf("login: %w", err)
	}
	direct, err := r2r.New(r2r.Options{BaseURL: cfg.R2R, Credentials: r2r.Bearer(pair.AccessToken.Token), UserAgent: "r2r-mcp/bench-scale"})
	if err != nil {
		return res, err
	}
	mc, err := client.NewStdioMCPClient(cfg.Bin, []string{"R2R_API_URL=" + cfg.R2R,
		"R2R_EMAIL=" + cfg.Email, "R2R_PASSWORD=" + cfg.Password, "R2R_API_KEY="}, "serve", "--project-dir", cfg.Dir)
	if err != nil {
		return res, err
	}
	defer mc.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench-scale", Version: "1"}
	if _, err := mc.Initialize(ctx, init); err != nil {
		return res, fmt.Errorf("initialize: %w", err)
	}
	collID, err := collectionID(ctx, mc)
	if err != nil {
		return res, err
	}
	for _, q := range qs {
		t0 := time.Now()
		n, err := mcpSearch(ctx, mc, q)
		if err != nil {
			return res, err
		}
		res.MCP = append(res.MCP, time.Since(t0))
		res.Hits += n
		t0 = time.Now()
		if _, err := direct.Search(ctx, r2r.SearchRequest{Query: q, SearchMode: r2r.SearchModeAdvanced,
			SearchSettings: r2r.ModeSettings(r2r.SearchModeAdvanced, r2r.ScopedFilters(collID, nil), 10)}); err != nil {
			return res, fmt.Errorf("direct search: %w", err)
		}
		res.Direct = append(res.Direct, time.Since(t0))
	}
	return res, nil
}

// collectionID asks r2r_status for the project's collection.
func collectionID(ctx context.Context, mc *client.Client) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = "r2r_status"
	out, err := mc.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var st struct {
		Project struct {
			CollectionID string `json:"collection_id"`
		} `json:"project"`
	}
	if err := remarshal(out.StructuredContent, &st); err != nil || st.Project.CollectionID == "" {
		return "", fmt.Errorf("r2r_status names no collection (was the directory synced?): %v", err)
	}
	return st.Project.CollectionID, nil
}

// mcpSearch calls r2r_search with its defaults and returns the number of hits.
func mcpSearch(ctx context.Context, mc *client.Client, q string) (int, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = "r2r_search"
	req.Params.Arguments = map[string]any{"query": q}
	out, err := mc.CallTool(ctx, req)
	if err != nil {
		return 0, err
	}
	if out.IsError {
		return 0, errors.New("r2r_search failed: " + textOf(out))
	}
	var sc struct {
		Results []any `json:"results"`
	}
	if err := remarshal(out.StructuredContent, &sc); err != nil {
		return 0, err
	}
	return len(sc.Results), nil
}

func textOf(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
