package compact

import "testing"

// Claude Code sends the context-1m beta on every request: it raises a default window, never
// one the user set.
func TestExplicitLimitWinsOverTheOneMillionBeta(t *testing.T) {
	beta := []string{"context-1m-2025-08-07"}
	tests := []struct {
		name  string
		table map[string]int
		model string
		betas []string
		want  Window
	}{
		{"default table, no beta", DefaultLimitTable(), "claude-sonnet-4-5", nil, Window{ClaudeContextTokens, WindowDefault, "claude-*"}},
		{"default table, beta", DefaultLimitTable(), "claude-sonnet-4-5", beta, Window{OneMillionTokens, WindowBeta, "claude-*"}},
		{"user's smaller window, beta", map[string]int{"claude-*": 150_000}, "claude-sonnet-4-5", beta, Window{150_000, WindowSetting, "claude-*"}},
		{"user's exact model, beta", map[string]int{"claude-*": 200_000, "claude-sonnet-4-5": 64_000}, "claude-sonnet-4-5", beta, Window{64_000, WindowSetting, "claude-sonnet-4-5"}},
		{"unknown model, beta", DefaultLimitTable(), "qwen3-coder", beta, Window{OneMillionTokens, WindowBeta, ""}},
		{"gemini is already 1M", DefaultLimitTable(), "gemini-2.5-pro", beta, Window{GeminiContextTokens, WindowDefault, "gemini-*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewLimits(tt.table, 0).Explain(tt.model, tt.betas)
			if got != tt.want {
				t.Errorf("Explain = %+v; want %+v", got, tt.want)
			}
			if n := NewLimits(tt.table, 0).For(tt.model, tt.betas); n != tt.want.Tokens {
				t.Errorf("For = %d; want %d", n, tt.want.Tokens)
			}
		})
	}
}

// A session whose requests the screen let through unparsed still anchors its estimate: the
// next, longer request costs the previous one's real count plus its new bytes.
func TestSizeAnchorFromAnUnparsedRequest(t *testing.T) {
	c := NewCalibrator(CalibratorOptions{})
	prev := mustParse(t, session(20, ""))
	next := mustParse(t, session(22, ""))
	header := c.HeaderHash(prev.System, prev.Tools)
	const real = 3000 // the upstream's count of prev: about 3.2 bytes a token
	c.SetSizeAnchor("s", header, prev.Size(), real)
	got := c.Count("s", "claude", next)
	perByte := float64(real) / float64(prev.Size())
	want := real + int(float64(next.Size()-prev.Size())*perByte+0.5)
	if !got.Anchored || got.Best != want || got.Calibrated <= got.Best {
		t.Errorf("Count = %+v; want anchored, best %d, calibrated above it (margin on the tail)", got, want)
	}
	// Another session, a shorter request, other tools, or an implausible count: no anchor.
	if got := c.Count("other", "claude", next); got.Anchored {
		t.Errorf("another session anchored: %+v", got)
	}
	if got := c.Count("s", "claude", mustParse(t, session(5, ""))); got.Anchored {
		t.Errorf("a shorter request anchored: %+v", got)
	}
	c.SetSizeAnchor("z", header, prev.Size(), 25)
	if got := c.Count("z", "claude", next); got.Anchored {
		t.Errorf("an anchor of 25 tokens for %d bytes was taken: %+v", prev.Size(), got)
	}
}

// A compaction step's count follows its edit even when the session is anchored by size alone:
// the edited request is not the body it was parsed from, so its size is not the anchored one.
func TestSizeAnchorDoesNotCountACompactedRequestAtItsOldSize(t *testing.T) {
	c := NewCalibrator(CalibratorOptions{})
	prev := mustParse(t, session(20, ""))
	next := mustParse(t, session(22, ""))
	c.SetSizeAnchor("s", c.HeaderHash(prev.System, prev.Tools), prev.Size(), 3000)
	whole := c.Count("s", "claude", next)
	all := len(next.Messages)
	next.Messages = append(next.Messages[:1:1], next.Messages[all-4:]...) // early rounds trimmed, as Layer 1 does
	trimmed := c.Count("s", "claude", next)
	if trimmed.Anchored || trimmed.Calibrated >= whole.Calibrated/2 {
		t.Errorf("Count after trimming %d messages to %d = %+v; want unanchored and far below the whole request's %+v",
			all, len(next.Messages), trimmed, whole)
	}
}
