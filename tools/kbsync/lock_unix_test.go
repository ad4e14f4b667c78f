//go:build unix

package kbsync

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLockRefusesOddLockPaths: a FIFO at the lock path made sync hang in open(2), deaf to
// Ctrl-C; a symlink would lock another file. Both are refused at once with the path named.
func TestLockRefusesOddLockPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink", func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "elsewhere"), p) }},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "k.lock")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				unlock, err := Lock(dir, "k")
				if err == nil {
					unlock()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Fatalf("Lock over a %s: err = %v, want an error naming %s", tc.name, err, path)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Lock over a %s did not return", tc.name)
			}
		})
	}
}
