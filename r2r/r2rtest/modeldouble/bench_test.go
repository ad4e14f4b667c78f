package modeldouble

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkEmbed embeds one R2R-sized chunk (about 1 KB of text).
func BenchmarkEmbed(b *testing.B) {
	chunk := strings.Repeat(payoutText+" "+ledgerText+" ", 6)[:1024]
	for _, dim := range []int{512, 1536} {
		b.Run(fmt.Sprint(dim), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Embed(chunk, dim)
			}
		})
	}
}

// BenchmarkAnswerFromContext answers over a context of ten 1 KB search results.
func BenchmarkAnswerFromContext(b *testing.B) {
	var pairs []string
	for i := range 10 {
		pairs = append(pairs, fmt.Sprintf("%07x", i+0x1a2b3c4), strings.Repeat(payoutText+" "+ledgerText+" ", 6)[:1024])
	}
	ctx := r2rContext(pairs...)
	b.ReportAllocs()
	for b.Loop() {
		answerFromContext("What happens when the payout queue backs up?", ctx)
	}
}
