package r2rtest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that is safe for concurrent use: give it as the log or
// stderr writer of code under test (Options.Logger, a server's stderr) and read it from the
// test while that code still runs. The zero value is ready to use.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written signal
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.written.fire()
	return s.b.Write(p)
}

// Changed returns a channel closed at the next Write (for Await).
func (s *SyncBuffer) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written.wait()
}

// String returns a copy of everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len returns the number of bytes written so far.
func (s *SyncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// Reset discards everything written so far.
func (s *SyncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
