package leaks

// keywordSet finds every occurrence of every rule's keywords in one pass, in any case (ASCII:
// a keyword spelled with a non-ASCII letter that folds to its own, such as the Kelvin sign for
// k, is not found; gitleaks lower-cases its text the same way for its keywords). A bit set of
// the keywords' first two bytes, lower-cased, lets almost every position of a text pass with
// one test; a table from such a pair to its keywords does the rest.
type keywordSet struct {
	words []string // distinct keywords, lower case
	rules [][]int  // the rules of each word (indexes into Rules.rules)
	pairs [1 << 16 / 64]uint64
	// slot maps a pair to 1 + its index in byPair (0: none). A flat table (128 KiB) rather
	// than a map: the common pairs ("ke", "to", "ey") are looked up tens of thousands of times
	// in a large body.
	slot   []uint16
	byPair [][]int // word indexes by pair
}

func newKeywordSet(rules []*rule) keywordSet {
	ks := keywordSet{slot: make([]uint16, 1<<16)}
	index := map[string]int{}
	for ri, r := range rules {
		for _, k := range r.keywords {
			w, ok := index[k]
			if !ok {
				w = len(ks.words)
				index[k] = w
				ks.words = append(ks.words, k)
				ks.rules = append(ks.rules, nil)
			}
			ks.rules[w] = append(ks.rules[w], ri)
		}
	}
	for w, k := range ks.words {
		seconds := []byte{0}
		if len(k) > 1 {
			seconds = []byte{k[1]}
		} else { // a one-byte keyword: any byte may follow, or none
			for c := 0; c < 256; c++ {
				seconds = append(seconds, byte(c))
			}
		}
		for _, x := range cases(k[0]) {
			for _, s := range seconds {
				for _, y := range cases(s) {
					ks.addPair(uint16(x)|uint16(y)<<8, w)
				}
			}
		}
	}
	return ks
}

func (ks *keywordSet) addPair(p uint16, word int) {
	ks.pairs[p/64] |= 1 << (p % 64)
	if ks.slot[p] == 0 {
		ks.byPair = append(ks.byPair, nil)
		ks.slot[p] = uint16(len(ks.byPair))
	}
	list := &ks.byPair[ks.slot[p]-1]
	for _, w := range *list {
		if w == word {
			return
		}
	}
	*list = append(*list, word)
}

// cases lists c and, for a lower-case ASCII letter, its upper case.
func cases(c byte) []byte {
	if 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// hits returns, for each rule (by index), the occurrences of its keywords in b, in order.
func (ks *keywordSet) hits(b []byte, rules int) [][]hit {
	out := make([][]hit, rules)
	n := len(b)
	for i := 0; i < n; i++ {
		var second byte
		if i+1 < n {
			second = b[i+1]
		}
		p := uint16(b[i]) | uint16(second)<<8
		if ks.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range ks.byPair[ks.slot[p]-1] {
			k := ks.words[w]
			if len(k) > n-i || !hasFoldPrefix(b[i:], k) {
				continue
			}
			for _, ri := range ks.rules[w] {
				out[ri] = append(out[ri], hit{pos: i, word: w})
			}
		}
	}
	return out
}

// hasFoldPrefix reports whether b starts with lower in any ASCII case.
func hasFoldPrefix(b []byte, lower string) bool {
	for i := 0; i < len(lower); i++ {
		if lowerByte(b[i]) != lower[i] {
			return false
		}
	}
	return true
}
