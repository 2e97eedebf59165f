package proxytest

import "bytes"

// streamFlag reports whether the top-level "stream" member of a JSON object
// is true. It skips other members without decoding them: an 800 KB request
// costs a few IndexByte sweeps instead of a full encoding/json pass, which
// would otherwise dominate large-body benchmarks. Malformed input is false.
// As with encoding/json, the last duplicate key wins.
func streamFlag(b []byte) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	result := false
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return result
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return false
		}
		if string(key) == "stream" {
			result = bytes.HasPrefix(b[i:], []byte("true"))
		}
		if i = skipValue(b, i); i < 0 {
			return false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i]=='"', or -1.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		bs := 0 // an odd run of backslashes means the quote is escaped
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index just past the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			k := bytes.IndexAny(b[i:], "\"{}[]")
			if k < 0 {
				return -1
			}
			i += k
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			default:
				depth--
			}
			i++
			if depth == 0 {
				return i
			}
		}
		return -1
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' &&
			b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
			i++
		}
		return i
	}
}
