package compact

import (
	"context"
	"slices"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// The reference request: 800 KB, ~150 messages, Claude Code shaped.
func benchBody() []byte { return proxytest.ClaudeCodeRequest(800<<10, true) }

// benchP50 runs op b.N times and reports the median duration as p50-ms next
// to Go's mean, since the targets (each step ≤ 2 ms p50, the whole pipeline
// ≤ 3 ms) are medians: a GC pause in one iteration should not decide them.
func benchP50(b *testing.B, body []byte, op func()) {
	b.Helper()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		op()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e6, "p50-ms")
}

func parse(b *testing.B, body []byte) *anthropic.Request {
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkParse(b *testing.B) {
	body := benchBody()
	benchP50(b, body, func() { parse(b, body) })
}

// Each step's benchmark includes the parse, as the pipeline pays it once.

func BenchmarkEstimate(b *testing.B) {
	body := benchBody()
	e := Estimator{}
	benchP50(b, body, func() { e.Estimate(parse(b, body)) })
}

func BenchmarkCompressor(b *testing.B) {
	body := benchBody()
	c := NewCompressor(CompressorOptions{})
	benchP50(b, body, func() { c.Apply(parse(b, body)) })
}

func BenchmarkLayer1(b *testing.B) {
	body := benchBody()
	l := NewLayer1(5, 0)
	benchP50(b, body, func() {
		r := parse(b, body)
		if l.Apply(r, "", nil) == 0 {
			b.Fatal("Layer 1 removed nothing")
		}
		r.Encode()
	})
}

func BenchmarkLayer2(b *testing.B) {
	body := benchBody()
	benchP50(b, body, func() {
		r := parse(b, body)
		if ElideThinking(r, 4) == 0 {
			b.Fatal("Layer 2 elided nothing")
		}
		r.Encode()
	})
}

// BenchmarkPipelineNoOp is the whole pipeline on a request below every
// threshold (the proxy's screen usually spares it even this).
func BenchmarkPipelineNoOp(b *testing.B) {
	body := benchBody()
	p := NewPipeline(Options{Limits: NewLimits(nil, 10_000_000)})
	benchP50(b, body, func() {
		res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
		if err != nil || res.Changed {
			b.Fatalf("Run: changed %v, %v", res.Changed, err)
		}
	})
}

// BenchmarkPipelineL1L2 is the whole pipeline with Layers 1 and 2 firing
// (the window is set so Layer 3 is not needed).
func BenchmarkPipelineL1L2(b *testing.B) {
	body := benchBody()
	p := NewPipeline(Options{Limits: NewLimits(nil, 300_000), Thresholds: Thresholds{L1: 0.05, L2: 0.05, L3: 1}})
	benchP50(b, body, func() {
		res, err := p.Run(context.Background(), Input{Body: body})
		if err != nil || len(res.Stats) < 2 {
			b.Fatalf("Run: steps %+v, %v", res.Stats, err)
		}
	})
}
