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
