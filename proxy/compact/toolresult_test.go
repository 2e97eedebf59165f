package compact

import "testing"

func TestPrefixRunesKeepsCharactersWhole(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"ascii", "abcdef", 3, "abc"},
		{"cjk is one character each", "日本語です", 2, "日本"},
		{"emoji is one character", "a😀b", 2, "a😀"},
		{"skin tone stays with its emoji", "a👍🏽b", 2, "a"},
		{"skin tone emoji kept whole", "a👍🏽b", 3, "a👍🏽"},
		{"zwj sequence not split", "a👨‍👩‍👧b", 4, "a"},
		{"zwj sequence kept whole", "a👨‍👩‍👧b", 6, "a👨‍👩‍👧"},
		{"flag pair not split", "a🇯🇵🇫🇷", 2, "a"},
		{"whole flags kept", "a🇯🇵🇫🇷", 4, "a🇯🇵"},
		{"combining accent stays with its letter", "ae\u0301", 2, "a"},
		{"variation selector stays", "a❤️b", 2, "a"},
		{"keycap stays", "a1\ufe0f\u20e3", 3, "a"},
		{"nothing", "abc", 0, ""},
		{"longer than s", "ab", 5, "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := prefixRunes(tt.s, tt.n); got != tt.want {
				t.Errorf("prefixRunes(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}

func TestSuffixRunesKeepsCharactersWhole(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 2, "ef"},
		{"a👍🏽", 1, ""},
		{"a👍🏽", 2, "👍🏽"},
		{"🇯🇵🇫🇷", 3, "🇫🇷"},
		{"xe\u0301", 1, ""},
	}
	for _, tt := range tests {
		if got := suffixRunes(tt.s, tt.n); got != tt.want {
			t.Errorf("suffixRunes(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
