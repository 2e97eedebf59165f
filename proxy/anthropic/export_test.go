package anthropic

import "io"

// What the external tests (package anthropic_test, which may import
// proxytest, which imports this package) reach of the internal ones.
var (
	CheckPeek = checkPeek
	Fields    = fields
)

// SplitReader returns b in chunks that end at the (increasing) offsets cuts.
func SplitReader(b []byte, cuts []int) io.Reader { return &splitReader{b: b, cuts: cuts} }
