package kbsync

import (
	"context"
	"fmt"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// BenchmarkSync1000NewFiles measures a first sync of 1,000 small files against the
// in-process emulator with the default concurrency (plan and run; each iteration starts
// from an empty collection).
func BenchmarkSync1000NewFiles(b *testing.B) {
	for range b.N {
		b.StopTimer()
		f := newFixture(b, r2rtest.Options{})
		for i := range 1000 {
			f.write(fmt.Sprintf("docs/d%02d/f%04d.md", i/100, i), fmt.Sprintf("# Note %d\n\nFact %d.", i, i))
		}
		s := f.syncer(false)
		b.StartTimer()
		plan, err := s.Plan(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		sum := s.Run(context.Background(), plan, nil)
		b.StopTimer()
		if len(sum.Uploaded) != 1000 || !sum.OK() {
			b.Fatalf("summary %+v", sum)
		}
		b.StartTimer()
	}
}
