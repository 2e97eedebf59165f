package proxy

import (
	"fmt"
	"io"
	"math"
	"sync"
	"testing"
)

// ---------------------------------------------------------------------------
// Results collector and summary (test code only).

type benchCollector struct {
	mu sync.Mutex
	m  map[string]map[string]float64 // benchmark name -> unit -> value (last run wins)
}

var benchResults = &benchCollector{m: map[string]map[string]float64{}}

// report is b.ReportMetric that also feeds the summary table.
func report(b *testing.B, v float64, unit string) {
	b.ReportMetric(v, unit)
	benchResults.set(b.Name(), unit, v)
}

func (c *benchCollector) set(name, unit string, v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[name] == nil {
		c.m[name] = map[string]float64{}
	}
	c.m[name][unit] = v
}

func (c *benchCollector) get(name, unit string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[name][unit]; ok {
		return v
	}
	return math.NaN()
}

func verdict(ok bool, vals ...float64) string {
	for _, v := range vals {
		if math.IsNaN(v) {
			return "n/a"
		}
	}
	if ok {
		return "MET"
	}
	return "MISSED"
}

func (c *benchCollector) printSummary(w io.Writer) {
	c.mu.Lock()
	empty := len(c.m) == 0
	c.mu.Unlock()
	if empty {
		return
	}
	us := func(ns float64) string {
		if math.IsNaN(ns) {
			return "n/a"
		}
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	ratio := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f×", v)
	}
	num := func(v float64, format string) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf(format, v)
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }

	p("\n===================== Longhaul proxy benchmark summary =====================\n")
	for _, sc := range []struct {
		label, bench string
		target       float64
	}{
		{"(a) Small ~1 KB non-stream", "BenchmarkSmall", 1.1},
		{"(b) Claude Code 800 KB non-stream", "BenchmarkClaudeCode800KB", 1.5},
	} {
		d := c.get(sc.bench+"/direct", "ns/op")
		bare := c.get(sc.bench+"/bare", "ns/op")
		lh := c.get(sc.bench+"/longhaul", "ns/op")
		addBare, addLH := bare-d, lh-d
		r := addLH / addBare
		p("%s\n", sc.label)
		p("  %-26s %14s %14s %14s\n", "", "direct", "bare", "longhaul")
		p("  %-26s %14s %14s %14s\n", "time/op", us(d), us(bare), us(lh))
		p("  %-26s %14s %14s %14s\n", "added over direct", "-", us(addBare), us(addLH))
		p("  added-latency ratio longhaul/bare: %s (target ≤ %.1f×) %s\n", ratio(r), sc.target, verdict(r <= sc.target, r))
		p("  total-time ratio longhaul/bare:    %s (for reference)\n", ratio(lh/bare))
	}

	p("(c) Stream spacing: ManyEvents(100), 10 ms gaps\n")
	p("  %-26s %14s %14s %14s\n", "", "direct", "bare", "longhaul")
	for _, m := range []struct{ unit, format string }{{"ttfb-µs", "%.0f µs"}, {"max-gap-dev-ms", "%.2f ms"}, {"held-events", "%.0f"}} {
		p("  %-26s %14s %14s %14s\n", m.unit,
			num(c.get("BenchmarkStreamSpacing/direct", m.unit), m.format),
			num(c.get("BenchmarkStreamSpacing/bare", m.unit), m.format),
			num(c.get("BenchmarkStreamSpacing/longhaul", m.unit), m.format))
	}
	dTTFB := c.get("BenchmarkStreamSpacing/longhaul", "ttfb-µs") - c.get("BenchmarkStreamSpacing/direct", "ttfb-µs")
	held := c.get("BenchmarkStreamSpacing/longhaul", "held-events")
	p("  ttfb longhaul − direct: %s (target ≤ 1000 µs) %s\n", num(dTTFB, "%.0f µs"), verdict(dTTFB <= 1000, dTTFB))
	p("  held-events longhaul:   %s (target 0) %s\n", num(held, "%.0f"), verdict(held == 0, held))

	p("(d) Concurrency (proxy in a child process)\n")
	p("  %-26s %14s %14s\n", "", "bare", "longhaul")
	for _, m := range []struct{ bench, unit, format string }{
		{"small-c32", "req/s", "%.0f"},
		{"stream64x800KB", "peak-rss-MB", "%.1f MB"},
		{"stream64x800KB", "idle-rss-MB", "%.1f MB"},
		{"stream64x800KB", "overlap", "%.0f"},
	} {
		p("  %-26s %14s %14s\n", m.bench+" "+m.unit,
			num(c.get("BenchmarkConcurrency/bare/"+m.bench, m.unit), m.format),
			num(c.get("BenchmarkConcurrency/longhaul/"+m.bench, m.unit), m.format))
	}
	rss := c.get("BenchmarkConcurrency/longhaul/stream64x800KB", "peak-rss-MB")
	tput := c.get("BenchmarkConcurrency/longhaul/small-c32", "req/s") / c.get("BenchmarkConcurrency/bare/small-c32", "req/s")
	p("  peak RSS longhaul:                %s (target ≤ 120 MB) %s\n", num(rss, "%.1f MB"), verdict(rss <= 120, rss))
	p("  throughput ratio longhaul/bare:   %s (target ≥ 0.90×) %s\n", ratio(tput), verdict(tput >= 0.9, tput))
	p("============================================================================\n")
}
