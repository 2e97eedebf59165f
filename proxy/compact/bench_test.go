package compact

import (
	"context"
	"testing"

	"longhaul/proxy/proxytest"
)

// The reference request: 800 KB, ~150 messages, Claude Code shaped.
func benchBody() []byte { return proxytest.ClaudeCodeRequest(800<<10, true) }

func BenchmarkParse(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEstimate(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	e := Estimator{}
	for b.Loop() {
		r, _ := ParseRequest(body)
		e.Estimate(r)
	}
}

func BenchmarkCompressor(b *testing.B) {
	body := benchBody()
	c := NewCompressor(CompressorOptions{})
	b.ReportAllocs()
	for b.Loop() {
		r, _ := ParseRequest(body)
		c.Apply(r)
	}
}

func BenchmarkLayer1(b *testing.B) {
	body := benchBody()
	l := NewLayer1(5, 0)
	b.ReportAllocs()
	for b.Loop() {
		r, _ := ParseRequest(body)
		l.Apply(r, "", nil)
		r.Encode()
	}
}

func BenchmarkLayer2(b *testing.B) {
	body := benchBody()
	b.ReportAllocs()
	for b.Loop() {
		r, _ := ParseRequest(body)
		ElideThinking(r, 4)
		r.Encode()
	}
}

func BenchmarkPipelineNoOp(b *testing.B) {
	body := benchBody()
	p := NewPipeline(Options{Limits: NewLimits(nil, 10_000_000)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Input{Body: body, Session: "s"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipelineL1L2(b *testing.B) {
	body := benchBody()
	p := NewPipeline(Options{Limits: NewLimits(nil, 300_000)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Input{Body: body, Session: "s"}); err != nil {
			b.Fatal(err)
		}
	}
}
