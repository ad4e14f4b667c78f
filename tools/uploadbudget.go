package tools

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sync/semaphore"
)

// defaultUploadBudget bounds the memory concurrent ingests hold for the files they upload
// (64 MiB): each holds a file's bytes and the request body built from them.
const defaultUploadBudget = 64 << 20

// uploadBudget is shared by every ingest of the process.
var uploadBudget = newByteBudget(defaultUploadBudget)

// byteBudget is a byte budget whose reservations wait for room (in arrival order) until
// their context ends. Each caller reserves once, all it needs, so callers never hold part
// of the budget while waiting for more.
type byteBudget struct {
	sem  *semaphore.Weighted
	size int64
}

func newByteBudget(n int64) *byteBudget {
	return &byteBudget{sem: semaphore.NewWeighted(n), size: n}
}

// reserve waits for n bytes (at most the whole budget) and returns the function that
// gives them back; it may be called more than once.
func (b *byteBudget) reserve(ctx context.Context, n int64) (func(), error) {
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { b.sem.Release(n) }), nil
}

// uploadReservation is what an ingest of p (as the caller gave it; relative paths start
// at the first root) reserves: twice the file's size, at most twice the largest size R2R
// accepts for its type. The size is only an estimate: the file is checked and read later,
// never beyond the per-type limit.
func uploadReservation(p string, roots []string) int64 {
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(filepath.ToSlash(p))), ".")
	limit := uploadLimit(ext)
	if !filepath.IsAbs(p) && len(roots) > 0 {
		p = filepath.Join(roots[0], p)
	}
	size := limit
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		size = min(fi.Size(), limit)
	}
	return 2*size + 64<<10
}

// uploadBusyResult answers an ingest that found no room in the upload budget before its
// deadline.
func uploadBusyResult() *mcp.CallToolResult {
	secs := 1.0
	return errorResult(ErrorInfo{Type: "busy", Code: CodeRateLimited, Retryable: true, RetryAfter: &secs,
		Message: "Not ingested: other ingests in flight fill r2r-mcp's memory budget for uploads, and none finished before this call's deadline. Retry in 1 s, or ingest fewer files at once."})
}
