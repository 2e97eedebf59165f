package main

import (
	"fmt"
	"io"
	"time"
)

// A target of the performance issue: a figure of a column, compared with bare's in the same
// round (ratio) or with an absolute bound (MB).
type target struct {
	label string
	// figure is a column's figure in round r; ok false when it has none.
	figure func(f, direct figures) float64
	unit   string
	// ratio compares with bare (≤ or ≥ bound); otherwise the bound is absolute.
	ratio, atLeast bool
	bound          float64
	// once: the figure is read once, after the last round (the idle RSS).
	once bool
}

var targets = []target{
	{"800 KB request, added latency p50", func(f, d figures) float64 { return ms(f.large - d.large) }, "ms", true, false, 1.5, false},
	{"small request, added latency p50", func(f, d figures) float64 { return ms(f.small - d.small) }, "ms", true, false, 1.1, false},
	{"small requests at c32, throughput", func(f, _ figures) float64 { return f.c32 }, "req/s", true, true, 0.9, false},
	{"CPU per 1,000 800 KB requests", func(f, _ figures) float64 { return f.cpuPer1000.Seconds() }, "s", true, false, 1.5, false},
	{"peak RSS, 64 streams × 800 KB", func(f, _ figures) float64 { return f.peakMB }, "MB", false, false, 120, false},
	{"RSS after the load, idle", func(f, _ figures) float64 { return f.idleMB }, "MB", false, false, 60, true},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printTable prints each target's median figure per column and, for the Longhaul columns, the
// median of the per-round ratio to bare (or the absolute figure) against the target.
func printTable(out io.Writer, o options, direct []figures, results map[string][]figures, procs []*process) {
	fmt.Fprintf(out, "\nLonghaul as shipped vs a bare reverse proxy: median of %d rounds (RSS after the load: %v after it)\n", o.rounds, o.idle)
	fmt.Fprintf(out, "%-36s", "")
	for _, p := range procs {
		fmt.Fprintf(out, " %16s", p.name)
	}
	fmt.Fprintf(out, "   target\n")
	for _, t := range targets {
		fmt.Fprintf(out, "%-36s", t.label)
		for _, p := range procs {
			fmt.Fprintf(out, " %16s", fmt.Sprintf("%.2f %s", column(t, results[p.name], direct), t.unit))
		}
		fmt.Fprintf(out, "   %s\n", t.describe())
		for _, p := range procs {
			if p.name == "bare" {
				continue
			}
			v, met := t.judge(results[p.name], results["bare"], direct)
			if t.ratio {
				fmt.Fprintf(out, "%-36s %s/bare %.2f× %s\n", "", p.name, v, metWord(met))
			} else {
				fmt.Fprintf(out, "%-36s %s %.1f MB %s\n", "", p.name, v, metWord(met))
			}
		}
	}
	// Without a target: what each process spends with nothing to do.
	fmt.Fprintf(out, "%-36s", "CPU while idle, after the rounds")
	for _, p := range procs {
		rs := results[p.name]
		fmt.Fprintf(out, " %16s", fmt.Sprintf("%.2f ms/s", rs[len(rs)-1].idleCPU))
	}
	fmt.Fprintf(out, "   (no target)\n")
}

func (t target) describe() string {
	switch {
	case t.ratio && t.atLeast:
		return fmt.Sprintf("≥ %.1f× bare", t.bound)
	case t.ratio:
		return fmt.Sprintf("≤ %.1f× bare", t.bound)
	}
	return fmt.Sprintf("≤ %.0f MB", t.bound)
}

// column is the median of a column's figures over the rounds that have one.
func column(t target, fs, direct []figures) float64 {
	var vs []float64
	for r, f := range fs {
		if t.once && r != len(fs)-1 {
			continue
		}
		vs = append(vs, t.figure(f, direct[r]))
	}
	return medianFloat(vs)
}

// judge returns the figure compared with the target — the median of per-round ratios to bare,
// or the median absolute figure — and whether it meets the target.
func (t target) judge(fs, bare, direct []figures) (float64, bool) {
	if !t.ratio {
		v := column(t, fs, direct)
		return v, v <= t.bound
	}
	var rs []float64
	for r := range fs {
		b := t.figure(bare[r], direct[r])
		if b <= 0 {
			continue
		}
		rs = append(rs, t.figure(fs[r], direct[r])/b)
	}
	v := medianFloat(rs)
	if t.atLeast {
		return v, v >= t.bound
	}
	return v, v <= t.bound
}

func metWord(met bool) string {
	if met {
		return "MET"
	}
	return "MISSED"
}
