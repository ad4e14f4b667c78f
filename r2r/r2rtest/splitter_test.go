package r2rtest

import (
	"slices"
	"testing"
)

func TestChunkingSplit(t *testing.T) {
	for _, tc := range []struct {
		name          string
		size, overlap int
		text          string
		want          []string
	}{
		{"empty", 10, 0, "", nil},
		{"blank", 10, 0, "   \n\n  \n", nil},
		{"fits", 100, 50, "one two", []string{"one two"}},
		{"spaces without overlap", 10, 0, "aaaa bbbb cccc", []string{"aaaa bbbb", "cccc"}},
		{"spaces with overlap", 10, 5, "aaaa bbbb cccc", []string{"aaaa bbbb", "bbbb cccc"}},
		{"a word longer than the size is cut into characters", 5, 0, "abcdefghijkl", []string{"abcde", "fghij", "kl"}},
		{"paragraphs before lines", 12, 0, "aaa\nbbb\n\nccc\nddd", []string{"aaa\nbbb", "ccc\nddd"}},
		{"characters, not bytes", 3, 0, "ééééé", []string{"ééé", "éé"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (chunking{size: tc.size, overlap: tc.overlap}).split(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("split(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestChunkingCheck(t *testing.T) {
	if err := (chunking{size: 100, overlap: 512}).check(); err == nil ||
		err.Error() != "Error parsing document: Got a larger chunk overlap (512) than chunk size (100), should be smaller." {
		t.Errorf("check = %v", err)
	}
	if err := (chunking{size: 1024, overlap: 512}).check(); err != nil {
		t.Errorf("check = %v", err)
	}
}
