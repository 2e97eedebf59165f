package modelname

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"claude-*", "claude-x", true},
		{"claude-*", "claud", false},
		{"*-haiku-*", "claude-3-5-haiku-1", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"a.b", "aXb", false},
		{"*", "", true},
		{"ab*ba", "aba", false},
		{"*claude*", "anthropic/claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %t; want %t", tt.pattern, tt.name, got, tt.want)
		}
	}
	if Literal("claude-3-5-haiku*") <= Literal("claude-*") {
		t.Error("a longer literal prefix must be more specific")
	}
}
