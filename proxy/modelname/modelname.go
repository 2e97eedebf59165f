// Package modelname matches model names against the patterns users write in
// settings (model map, allow-lists, context limits), so every table in
// Longhaul reads "claude-3-5-haiku*" the same way.
package modelname

import "strings"

// Match reports whether name matches pattern, where '*' stands for any run
// of characters and nothing else is special: model names contain dots, and
// '/' (as in "anthropic/claude-x") is an ordinary character, unlike in
// path.Match.
func Match(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name = name[i+len(part):]
	}
	return strings.HasSuffix(name, last) && len(name) >= len(last)
}

// Literal is how many characters of pattern are not wildcards: the more, the
// more specific the pattern.
func Literal(pattern string) int {
	return len(pattern) - strings.Count(pattern, "*")
}
