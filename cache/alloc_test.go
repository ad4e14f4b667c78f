package cache

import "testing"

func TestHeapBytes(t *testing.T) {
	tests := []struct{ n, want int }{
		{0, 0}, {1, 8}, {8, 8}, {9, 16}, {36, 48}, {300, 320}, {3500, 4096}, {32768, 32768}, {32769, 40960},
	}
	for _, tt := range tests {
		if got := HeapBytes(tt.n); got != tt.want {
			t.Errorf("HeapBytes(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}
