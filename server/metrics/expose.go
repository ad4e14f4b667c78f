package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The types below are the few Prometheus metric kinds serve --http needs, written out in the
// Prometheus text exposition format (version 0.0.4). They are here rather than taken from
// client_golang because that library registers its default collectors in package init and
// links protobuf: every stdio serve would pay for both at start-up (about 1.5 ms of CPU and
// 3 MB of RSS, measured), although only the HTTP mode exposes metrics.

// family is one metric name with its help, type and series.
type family interface {
	write(w *bufio.Writer)
}

// vec holds the series of one family by label values.
type vec[T any] struct {
	name, help, kind string
	labels           []string
	mk               func() *T
	mu               sync.RWMutex
	m                map[string]*T
	vals             map[string][]string
}

func newVec[T any](name, help, kind string, labels []string, mk func() *T) *vec[T] {
	return &vec[T]{name: name, help: help, kind: kind, labels: labels, mk: mk, m: map[string]*T{}, vals: map[string][]string{}}
}

// with returns the series of values, creating it on first use.
func (v *vec[T]) with(values ...string) *T {
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	s := v.m[key]
	v.mu.RUnlock()
	if s != nil {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.m[key]; s == nil {
		s = v.mk()
		v.m[key] = s
		v.vals[key] = slices.Clone(values)
	}
	return s
}

// each calls f for every series in a stable order.
func (v *vec[T]) each(f func(labels string, s *T)) {
	v.mu.RLock()
	keys := make([]string, 0, len(v.m))
	for k := range v.m {
		keys = append(keys, k)
	}
	v.mu.RUnlock()
	slices.Sort(keys)
	for _, k := range keys {
		v.mu.RLock()
		s, vals := v.m[k], v.vals[k]
		v.mu.RUnlock()
		f(labelPairs(v.labels, vals), s)
	}
}

func (v *vec[T]) header(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", v.name, escapeHelp(v.help), v.name, v.kind)
}

// counter is a monotonically increasing count.
type counter struct{ n atomic.Uint64 }

func (c *counter) inc() { c.n.Add(1) }

type counterVec struct{ *vec[counter] }

func newCounterVec(name, help string, labels ...string) counterVec {
	return counterVec{newVec(name, help, "counter", labels, func() *counter { return &counter{} })}
}

func (c counterVec) write(w *bufio.Writer) {
	c.header(w)
	c.each(func(l string, s *counter) { fmt.Fprintf(w, "%s%s %d\n", c.name, braces(l), s.n.Load()) })
}

// histogram counts observations in cumulative buckets.
type histogram struct {
	bounds  []float64
	buckets []atomic.Uint64 // non-cumulative; the last is +Inf
	count   atomic.Uint64
	sumBits atomic.Uint64
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.buckets[i].Add(1)
	h.count.Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

type histogramVec struct{ *vec[histogram] }

func newHistogramVec(name, help string, bounds []float64, labels ...string) histogramVec {
	return histogramVec{newVec(name, help, "histogram", labels, func() *histogram {
		return &histogram{bounds: bounds, buckets: make([]atomic.Uint64, len(bounds)+1)}
	})}
}

func (h histogramVec) write(w *bufio.Writer) {
	h.header(w)
	h.each(func(l string, s *histogram) {
		var cum uint64
		for i, b := range s.bounds {
			cum += s.buckets[i].Load()
			fmt.Fprintf(w, "%s_bucket%s %d\n", h.name, braces(join(l, `le="`+formatFloat(b)+`"`)), cum)
		}
		cum += s.buckets[len(s.bounds)].Load()
		fmt.Fprintf(w, "%s_bucket%s %d\n", h.name, braces(join(l, `le="+Inf"`)), cum)
		fmt.Fprintf(w, "%s_sum%s %s\n", h.name, braces(l), formatFloat(math.Float64frombits(s.sumBits.Load())))
		fmt.Fprintf(w, "%s_count%s %d\n", h.name, braces(l), cum)
	})
}

// gaugeFunc is a gauge family whose series are read at each scrape.
type gaugeFunc struct {
	name, help string
	read       func() []sample
}

type sample struct {
	labels string // rendered label pairs, "" = none
	value  float64
}

func (g gaugeFunc) write(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", g.name, escapeHelp(g.help), g.name)
	for _, s := range g.read() {
		fmt.Fprintf(w, "%s%s %s\n", g.name, braces(s.labels), formatFloat(s.value))
	}
}

// writeFamilies writes every family in the text format.
func writeFamilies(out io.Writer, fams []family) error {
	w := bufio.NewWriter(out)
	for _, f := range fams {
		f.write(w)
	}
	return w.Flush()
}

func labelPairs(names, values []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + `="` + escapeLabel(values[i]) + `"`
	}
	return strings.Join(parts, ",")
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

func braces(l string) string {
	if l == "" {
		return ""
	}
	return "{" + l + "}"
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
