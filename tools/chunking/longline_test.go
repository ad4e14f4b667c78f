package chunking

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// longLine is about n bytes on one line: words, and a stretch of multi-byte runes so that
// byte and rune offsets differ.
func longLine(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%50 == 0 {
			b.WriteString("ünïcødé→ ")
		}
		b.WriteString("ledger payout ")
	}
	return b.String()
}

// TestLongLineLinear: cutting a long line costs bytes allocated in proportion to its length
// (the cost of cutting it is linear, not quadratic), and the chunks hold all of its text
// once, in order, each within Target.
func TestLongLineLinear(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
	}{
		{"words", "big.txt", longLine(256 << 10)},
		{"markdown", "big.md", "# Big\n\n" + longLine(256<<10)},
		{"no spaces", "big.txt", strings.Repeat("é", 128<<10)},
		{"many short lines", "big.txt", strings.Repeat("one two three\n", 20<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.file, tc.text) // warm the compiled patterns
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			chunks = Split(tc.file, tc.text)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(40*len(tc.text)) {
				t.Errorf("splitting %d bytes allocated %d bytes (%.0f×): not linear", len(tc.text), alloc, float64(alloc)/float64(len(tc.text)))
			}
			var bodies []string
			for _, c := range chunks {
				if n := utf8.RuneCountInString(c); n > Target {
					t.Fatalf("chunk of %d characters", n)
				}
				_, _, body := Context(c, tc.file)
				bodies = append(bodies, body)
			}
			if got, want := nonSpace(strings.Join(bodies, " ")), nonSpace(tc.text); got != want {
				t.Errorf("the chunks hold %d non-space bytes, want the text's %d in order", len(got), len(want))
			}
		})
	}
}

// nonSpace is s without its white space.
func nonSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// BenchmarkSplitLongLine: the cost of a file that is one long line, by its length; linear
// cost shows as the same ns per byte at each size.
func BenchmarkSplitLongLine(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64KiB", 64 << 10}, {"256KiB", 256 << 10}, {"1MiB", 1 << 20}} {
		text := longLine(size.n)
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for range b.N {
				Split("big.txt", text)
			}
		})
	}
}
