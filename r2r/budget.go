package r2r

import (
	"errors"
	"io"

	"golang.org/x/sync/semaphore"
)

// DefaultBodyBudget is how many bytes of R2R response bodies all calls of the process
// together may be reading at once (64 MiB): one answer of the largest size
// (DefaultMaxResponseBytes), or many smaller ones.
const DefaultBodyBudget = 64<<20 + 1

// BodyBudget is a byte budget shared by concurrent reads of response bodies, so that the
// per-body cap does not multiply with the number of calls in flight. A read takes budget
// as its buffer grows and never waits for it: when the budget is spent, the read fails at
// once (ErrBodyBudget), so readers holding part of the budget cannot wait on each other.
// Safe for concurrent use.
type BodyBudget struct {
	sem  *semaphore.Weighted
	size int64
}

// NewBodyBudget returns a budget of n bytes (n < 1 counts as 1).
func NewBodyBudget(n int64) *BodyBudget {
	n = max(n, 1)
	return &BodyBudget{sem: semaphore.NewWeighted(n), size: n}
}

// Size is the budget in bytes.
func (b *BodyBudget) Size() int64 { return b.size }

// defaultBodyBudget is shared by every Client without Options.BodyBudget.
var defaultBodyBudget = NewBodyBudget(DefaultBodyBudget)

// ErrBodyBudget: a response could not be read because the answers being read at the
// same moment already hold the whole body budget. It wraps ErrResponseTooLarge.
var ErrBodyBudget = &budgetError{}

type budgetError struct{}

func (*budgetError) Error() string { return "r2r: responses being read exceed the memory budget" }

// Is makes errors.Is(err, ErrResponseTooLarge) true.
func (*budgetError) Is(target error) bool { return target == ErrResponseTooLarge }

// errBodyTooLarge: the body is longer than the per-response cap.
var errBodyTooLarge = errors.New("response body too large")

// minBodyBuffer is the first buffer of a body of unknown length.
const minBodyBuffer = 32 << 10

// read reads r to its end into one buffer of at most limit bytes, taking the buffer's
// size from the budget as it grows and giving it back before returning. length is the
// announced Content-Length (-1 = unknown); a body announced or found longer than limit
// fails with errBodyTooLarge, one the budget cannot hold with ErrBodyBudget.
func (b *BodyBudget) read(r io.Reader, length, limit int64) ([]byte, error) {
	if length > limit {
		return nil, errBodyTooLarge
	}
	var held int64
	defer func() { b.sem.Release(held) }()
	grow := func(buf []byte, to int64) ([]byte, error) {
		if !b.sem.TryAcquire(to - int64(cap(buf))) {
			return nil, ErrBodyBudget
		}
		held += to - int64(cap(buf))
		nb := make([]byte, len(buf), to)
		copy(nb, buf)
		return nb, nil
	}
	first := int64(minBodyBuffer)
	if length >= 0 {
		first = length + 1 // +1 to see the end without growing
	}
	buf, err := grow(nil, min(first, limit+1))
	if err != nil {
		return nil, err
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, errBodyTooLarge
			}
			if buf, err = grow(buf, min(2*int64(cap(buf)), limit+1)); err != nil {
				return nil, err
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return nil, errBodyTooLarge
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
