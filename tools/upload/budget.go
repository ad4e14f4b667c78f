package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// DefaultBudget bounds the memory concurrent uploads hold for the files they send
// (64 MiB): each holds a file's bytes and the request body built from them.
const DefaultBudget = 64 << 20

// shared is the budget of every Upload of the process that names none.
var shared = NewBudget(DefaultBudget)

// Budget is a byte budget whose reservations wait for room (in arrival order) until their
// context ends. Each caller reserves once, all it needs, so callers never hold part of the
// budget while waiting for more.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget {
	return &Budget{sem: semaphore.NewWeighted(n), size: n}
}

// Reserve waits for n bytes (at most the whole budget) and returns the function that
// gives them back; it may be called more than once.
func (b *Budget) Reserve(ctx context.Context, n int64) (func(), error) {
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { b.sem.Release(n) }), nil
}

// reserve reserves n bytes in b for an upload (see reservation): an error is ErrBusy when b
// had no room before ctx's deadline, or ctx's cancellation.
func reserve(ctx context.Context, b *Budget, n int64) (func(), error) {
	release, err := b.Reserve(ctx, n)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("cancelled before it was sent: %w", err)
		}
		return nil, ErrBusy
	}
	return release, nil
}

// reservation is what an upload of p (as the caller gave it; relative paths start at the
// first root) reserves: what a file of its size holds (see holding), at most the largest
// size R2R accepts for its type. The size is only an estimate: the file is checked and read
// later, never beyond the per-type limit.
func reservation(p string, roots []string) int64 {
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(filepath.ToSlash(p))), ".")
	limit := confine.Limit(ext)
	if !filepath.IsAbs(p) && len(roots) > 0 {
		p = filepath.Join(roots[0], p)
	}
	size := limit
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		size = min(fi.Size(), limit)
	}
	return holding(size)
}

// holding is what an upload of a file of size bytes holds while it is sent: the file's
// bytes and the request body built from them.
func holding(size int64) int64 { return 2*size + 64<<10 }
