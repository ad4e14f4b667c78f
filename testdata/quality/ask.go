package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// ask starts `r2r-mcp serve` for the project and measures every question.
func ask(ctx context.Context, c config, proj string, env []string, collection string, qs []Question) ([]Record, error) {
	rc, err := r2r.New(r2r.Options{BaseURL: c.r2rURL})
	if err != nil {
		return nil, err
	}
	if c.email != "" {
		pair, err := rc.Login(ctx, c.email, c.password)
		if err != nil {
			return nil, fmt.Errorf("login to R2R: %w", err)
		}
		rc = rc.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	}
	coll, err := rc.GetCollectionByName(ctx, collection)
	if err != nil {
		return nil, fmt.Errorf("the synced collection %s: %w", collection, err)
	}
	files, err := documentFiles(ctx, rc, coll.ID)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "quality: %s: %d documents in the collection\n", c.label, len(files))

	mc, err := mcpclient.NewStdioMCPClientWithOptions(c.bin, nil,
		[]string{"serve", "--project-dir", proj, "--rate-limit", "0", "--rag-rate-limit", "0", "--log-level", "warn"},
		transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir, cmd.Env = proj, env
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(os.Stderr))
	if err != nil {
		return nil, fmt.Errorf("start r2r-mcp serve: %w", err)
	}
	defer mc.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "r2r-mcp-quality", Version: "1"}
	if _, err := mc.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("initialize r2r-mcp serve: %w", err)
	}
	r := &runner{mcp: mc, r2r: rc, collectionID: coll.ID, files: files, mode: c.mode, limit: c.limit, rag: c.rag}
	recs := make([]Record, 0, len(qs))
	for i, q := range qs {
		rec := r.measure(ctx, q)
		recs = append(recs, rec)
		if (i+1)%10 == 0 || i+1 == len(qs) {
			fmt.Fprintf(os.Stderr, "quality: %s: %d/%d questions\n", c.label, i+1, len(qs))
		}
	}
	return recs, nil
}

// documentFiles maps the collection's document ids to corpus files (the source_path r2r-mcp
// writes, relative to the project root).
func documentFiles(ctx context.Context, rc *r2r.Client, collectionID string) (map[string]string, error) {
	out := map[string]string{}
	for off := 0; ; off += 100 {
		page, err := rc.ListCollectionDocuments(ctx, collectionID, r2r.ListParams{Offset: off, Limit: 100})
		if err != nil {
			return nil, fmt.Errorf("list the collection's documents: %w", err)
		}
		for _, d := range page.Items {
			p, _ := d.Metadata[kbsync.MetaSourcePath].(string)
			if p == "" && d.Title != nil {
				p = *d.Title
			}
			out[d.ID] = path.Clean(p)
		}
		if len(page.Items) < 100 {
			return out, nil
		}
	}
}
