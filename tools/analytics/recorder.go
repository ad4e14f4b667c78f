package analytics

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Store keeps events under a key (a project, or a team's collection). Append is called
// from the Recorder's goroutine only, with a batch of one key's events.
type Store interface {
	Append(key string, events []Event) error
	Read(key string) ([]Event, error)
}

// QueueSize bounds the events waiting to be written: when the store falls behind, more
// are dropped (and counted), never waited for.
const QueueSize = 1024

// batchSize bounds the events written at once.
const batchSize = 64

type item struct {
	key   string
	e     Event
	flush chan struct{} // non-nil: a Flush waiting for the events before it
}

// Recorder hands events to a Store from one goroutine, so a tool call pays for a channel
// send only: the secret scan, the encoding and the write happen after the call has been
// answered. A nil *Recorder records nothing. Safe for concurrent use.
type Recorder struct {
	store   Store
	logger  *slog.Logger
	ch      chan item
	dropped atomic.Int64
	once    sync.Once
	done    chan struct{}
	closed  atomic.Bool
}

// NewRecorder starts a recorder writing to store. Close stops it.
func NewRecorder(store Store, logger *slog.Logger) *Recorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{store: store, logger: logger, ch: make(chan item, QueueSize), done: make(chan struct{})}
	go r.run()
	return r
}

// Record queues e under key without waiting; a full queue drops it.
func (r *Recorder) Record(key string, e Event) {
	if r == nil || key == "" || r.closed.Load() {
		return
	}
	select {
	case r.ch <- item{key: key, e: e}:
	default:
		r.dropped.Add(1)
	}
}

// Dropped is how many events a full queue dropped.
func (r *Recorder) Dropped() int64 {
	if r == nil {
		return 0
	}
	return r.dropped.Load()
}

// Store is where r writes (nil for a nil r).
func (r *Recorder) Store() Store {
	if r == nil {
		return nil
	}
	return r.store
}

// Flush waits until the events recorded before it are written, or ctx ends.
func (r *Recorder) Flush(ctx context.Context) {
	if r == nil || r.closed.Load() {
		return
	}
	f := make(chan struct{})
	select {
	case r.ch <- item{flush: f}:
	case <-ctx.Done():
		return
	}
	select {
	case <-f:
	case <-ctx.Done():
	}
}

// Close writes what is queued and stops the recorder; ctx bounds the wait.
func (r *Recorder) Close(ctx context.Context) {
	if r == nil {
		return
	}
	r.Flush(ctx)
	r.once.Do(func() {
		r.closed.Store(true)
		close(r.done)
	})
}

func (r *Recorder) run() {
	batch := make([]item, 0, batchSize)
	for {
		select {
		case <-r.done:
			return
		case it := <-r.ch:
			batch = append(batch[:0], it)
		more:
			for len(batch) < batchSize {
				select {
				case it := <-r.ch:
					batch = append(batch, it)
				default:
					break more
				}
			}
			r.write(batch)
		}
	}
}

// write stores a batch key by key, in order, then releases the flushes in it.
func (r *Recorder) write(batch []item) {
	byKey := map[string][]Event{}
	var keys []string
	for _, it := range batch {
		if it.flush != nil {
			continue
		}
		if _, ok := byKey[it.key]; !ok {
			keys = append(keys, it.key)
		}
		byKey[it.key] = append(byKey[it.key], clean(it.e))
	}
	for _, k := range keys {
		if err := r.store.Append(k, byKey[k]); err != nil {
			r.logger.Debug("analytics not kept", "events", len(byKey[k]), "err", err)
		}
	}
	for _, it := range batch {
		if it.flush != nil {
			close(it.flush)
		}
	}
}
