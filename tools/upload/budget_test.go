package upload

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

func TestBudgetReserve(t *testing.T) {
	b := NewBudget(100)
	r1, err := b.Reserve(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Reserve(ctx, 60); err == nil {
		t.Fatal("a reservation beyond the budget did not wait for room")
	}
	r1()
	r1()                                              // twice is harmless
	big, err := b.Reserve(context.Background(), 1000) // more than the budget: all of it
	if err != nil {
		t.Fatal(err)
	}
	if b.sem.TryAcquire(1) {
		t.Error("an oversized reservation did not take the whole budget")
	}
	big()
	if !b.sem.TryAcquire(100) {
		t.Error("the budget was not given back")
	}
}

func TestUploadReservation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p    string
		want int64
	}{
		{"a.md", 2*1000 + 64<<10},
		{filepath.Join(dir, "a.md"), 2*1000 + 64<<10},
		{"missing.pdf", 2*30e6 + 64<<10},
		{"missing", 2*confine.OtherMaxBytes + 64<<10},
	}
	for _, tt := range tests {
		if got := reservation(tt.p, []string{dir}); got != tt.want {
			t.Errorf("reservation(%s) = %d, want %d", tt.p, got, tt.want)
		}
	}
}
