package pool

import "testing"

func TestMapModel(t *testing.T) {
	maps := []ModelMapping{
		{Pattern: "claude-3-5-haiku*", Model: "claude-haiku-4-5"},
		{Pattern: "claude-*", Model: "claude-sonnet-4-5"},
		{Pattern: "claude-3-5-haiku-latest", Model: "claude-haiku-4-5-20251001"},
		{Pattern: "claude-*", Model: "claude-opus-4-1", Account: "work"},
		{Pattern: "gpt-*", Model: "first"},
		{Pattern: "gpt-*", Model: "second"},
	}
	tests := []struct {
		name                 string
		model, account, want string
		mapped               bool
	}{
		{"an exact name beats a pattern", "claude-3-5-haiku-latest", "", "claude-haiku-4-5-20251001", true},
		{"the longer pattern wins", "claude-3-5-haiku-20241022", "", "claude-haiku-4-5", true},
		{"a general pattern", "claude-3-opus", "", "claude-sonnet-4-5", true},
		{"an account's own entry beats a general one", "claude-3-opus", "work", "claude-opus-4-1", true},
		{"a tie goes to the earlier entry", "gpt-4o", "", "first", true},
		{"no match keeps the model", "gemini-2.5-pro", "", "gemini-2.5-pro", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, mapped := MapModel(maps, tt.model, Account{ID: 9, Label: tt.account, Kind: "anthropic"})
			if got != tt.want || mapped != tt.mapped {
				t.Errorf("MapModel(%q, account %q) = %q, %t; want %q, %t", tt.model, tt.account, got, mapped, tt.want, tt.mapped)
			}
		})
	}
}
