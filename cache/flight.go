package cache

import (
	"context"
	"errors"

	"golang.org/x/sync/singleflight"
)

// maxLoadRetries bounds how often a caller re-runs a coalesced call that failed only because
// the context of the caller that ran it was cancelled.
const maxLoadRetries = 3

// Flight runs fn once for concurrent callers of key on g. fn runs with the context of the
// caller that started it, so cancelling that call cancels its work (an HTTP request, say);
// every caller stops waiting as soon as its own ctx ends; and when the call failed only
// because its starter was cancelled, a caller that is still live runs it again rather than
// inherit the cancellation. shared reports that the result came from another caller's run.
func Flight[T any](ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (T, error)) (v T, shared bool, err error) {
	var zero T
	for attempt := 0; ; attempt++ {
		led := false
		ch := g.DoChan(key, func() (any, error) {
			led = true
			return fn(ctx)
		})
		select {
		case <-ctx.Done():
			return zero, false, ctx.Err()
		case r := <-ch:
			// led is safe to read: fn returned before the result was sent.
			if r.Err != nil {
				if !led && attempt < maxLoadRetries && ctx.Err() == nil &&
					(errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)) {
					continue
				}
				return zero, !led, r.Err
			}
			return r.Val.(T), !led, nil
		}
	}
}
