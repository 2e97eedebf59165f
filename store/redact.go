package store

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"net/url"
	"slices"
	"sync"
	"unsafe"

	"longhaul/store/leaks"
)

// Redact replaces key-shaped strings in b with a masked form before anything reaches the
// database: provider keys (sk-…, sk-ant-…, AIza…), bearer tokens, and the values of api-key
// headers or fields. A client may paste a key into a prompt, a tool may print one; history must
// never become the place a key leaks from. The masked form keeps the kind and the last four
// characters ("sk-ant-…wxyz"), enough to tell keys apart, as the accounts view does.
//
// It returns b itself when nothing matched, else a new slice. Redact is idempotent: a masked
// value never matches again.
//
// Markers are found in one pass that looks at every second position only: every marker is at
// least three bytes long, so one of its first two byte pairs starts at an even position, and a
// bit set of those pairs (markerPairs, every case of the case-folded markers) lets almost every
// position pass with one test. Searching for each marker apart stopped at every "a" and "s"
// of the text and made redaction the history writer's largest cost (BenchmarkRedact).
func Redact(b []byte) []byte {
	var out []byte // nil until the first match
	last := 0      // b[last:] not yet copied to out; no secret starts before it
	for i := 1; i < len(b); i += 2 {
		pair := uint16(b[i-1]) | uint16(b[i])<<8
		if markerPairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		// A marker whose first pair is at i-1 or whose second is: it starts at i-1 or i-2.
		for at := max(i-2, last); at < i; at++ {
			start, end, keep, ok := secretFrom(b, at)
			if !ok {
				continue
			}
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(append(out, b[last:start]...), mask(b[start:end], keep)...)
			last = end
			i = end | 1 // the pairs from end on (the loop adds 2: the next one starts at end or end+1)
			i -= 2
			break
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// secretFrom reports whether a marker starts at at with a secret after it, and the span to mask.
func secretFrom(b []byte, at int) (start, end, keep int, ok bool) {
	for _, m := range markers {
		if len(b)-at < len(m.text) {
			continue
		}
		w := b[at : at+len(m.text)]
		if m.foldCase && !bytes.EqualFold(w, []byte(m.text)) || !m.foldCase && string(w) != m.text {
			continue
		}
		return secretAt(b, at, m) // markers never overlap at one position: the first is the one
	}
	return 0, 0, 0, false
}

// markerPairs is the bit set of the byte pairs at offsets 0 and 1 of every marker, in every
// mix of case for the case-folded ones (a constant table, like gear in bodies.go).
var markerPairs = func() (set [1 << 16 / 64]uint64) {
	add := func(x, y byte) {
		p := uint16(x) | uint16(y)<<8
		set[p/64] |= 1 << (p % 64)
	}
	cases := func(c byte, fold bool) []byte {
		if !fold || c < 'a' || c > 'z' {
			return []byte{c}
		}
		return []byte{c, c - 'a' + 'A'}
	}
	for _, m := range markers {
		for off := 0; off < 2; off++ {
			for _, x := range cases(m.text[off], m.foldCase) {
				for _, y := range cases(m.text[off+1], m.foldCase) {
					add(x, y)
				}
			}
		}
	}
	return set
}()

// RedactString is Redact for text fields.
func RedactString(s string) string { return redactString(s, Redact) }

// redactString runs redact, which never writes to its argument and returns it when it masks
// nothing, over the bytes of s in place: a record's text fields are redacted for every
// exchange, and copying each into a []byte first cost more than scanning it.
func redactString(s string, redact func([]byte) []byte) string {
	if s == "" {
		return s
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	r := redact(b)
	if len(r) == len(b) && &r[0] == &b[0] {
		return s
	}
	return string(r)
}

// minSecret is the shortest run of token characters taken for a secret after its marker:
// real keys are far longer, and shorter runs are mostly prose ("sk-learn").
const minSecret = 12

type marker struct {
	text       string
	foldCase   bool // "Bearer", "x-api-key": any case
	keepPrefix bool // the marker is part of the key (sk-, AIza) and stays visible
	separators string
	userinfo   bool // "://": the password of a URL's user:password@ (postgres://app:pw@db)
}

var markers = []marker{
	{text: "sk-", keepPrefix: true},
	{text: "AIza", keepPrefix: true},
	{text: "bearer", foldCase: true, separators: " \t"},
	{text: "api-key", foldCase: true, separators: " \t\"':=\\"},
	{text: "api_key", foldCase: true, separators: " \t\"':=\\"},
	{text: "apikey", foldCase: true, separators: " \t\"':=\\"},
	{text: "://", userinfo: true},
}

// secretAt checks the text after a marker found at i and returns the span to mask.
func secretAt(b []byte, i int, m marker) (start, end, keep int, ok bool) {
	if m.userinfo {
		return urlPassword(b, i)
	}
	if i > 0 && isTokenByte(b[i-1]) && m.keepPrefix {
		return 0, 0, 0, false // "task-…" is not "sk-…"
	}
	j := i + len(m.text)
	if m.keepPrefix {
		k := j
		for k < len(b) && isTokenByte(b[k]) {
			k++
		}
		if k-j < minSecret {
			return 0, 0, 0, false
		}
		// Keep a provider's sub-prefix visible too ("sk-ant-", "sk-proj-"), if short.
		keep = len(m.text)
		if dash := bytes.IndexByte(b[j:k], '-'); dash > 0 && dash <= 8 {
			keep += dash + 1
		}
		return i, k, keep, true
	}
	// bearer / api-key: skip the separators, then the value is the secret.
	k := j
	for k < len(b) && bytes.IndexByte([]byte(m.separators), b[k]) >= 0 {
		k++
	}
	if k == j {
		return 0, 0, 0, false // "bearers", "api-keys": not a key/value
	}
	v := k
	for v < len(b) && isValueByte(b[v]) {
		v++
	}
	if v-k < minSecret {
		return 0, 0, 0, false
	}
	return k, v, 0, true
}

// Bounds of a URL's user and password (urlPassword): longer runs are not userinfo.
const (
	maxURLUser     = 128
	maxURLPassword = 256
)

// urlPassword finds the password of scheme://user:password@host, the "://" at i: gitleaks'
// rules have none for credentials in a URL, and a database URL in a .env file is the commonest
// of them. Only the password is masked; the user and the host stay, to tell URLs apart. The
// bytes a user or password may hold exclude JSON's structural ones, so the cut of
// store/bodies.go's redactNew never falls inside one.
func urlPassword(b []byte, i int) (start, end, keep int, ok bool) {
	if i == 0 || !isTokenByte(b[i-1]) {
		return 0, 0, 0, false
	}
	const notUserinfo = "/@:?#\"' \t\r\n\\{}[],<>"
	j := i + 3
	for j < len(b) && j-i-3 < maxURLUser && bytes.IndexByte([]byte(notUserinfo), b[j]) < 0 {
		j++
	}
	if j >= len(b) || b[j] != ':' { // the user may be empty (redis://:pw@host)
		return 0, 0, 0, false
	}
	start = j + 1
	k := start
	for k < len(b) && k-start < maxURLPassword && b[k] != '@' && bytes.IndexByte([]byte(notUserinfo[1:]), b[k]) < 0 {
		k++
	}
	if k == start || k >= len(b) || b[k] != '@' || bytes.HasPrefix(b[start:k], []byte("…[redacted]")) {
		return 0, 0, 0, false
	}
	return start, k, 0, true
}

// mask turns a secret into its visible prefix, an ellipsis and its last four bytes.
func mask(secret []byte, keep int) []byte {
	out := make([]byte, 0, keep+len("…[redacted]")+4)
	out = append(out, secret[:keep]...)
	out = append(out, "…[redacted]"...)
	if rest := secret[keep:]; len(rest) >= 16 {
		out = append(out, rest[len(rest)-4:]...)
	}
	return out
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// isValueByte also admits the characters of base64 and JWT tokens.
func isValueByte(c byte) bool {
	return isTokenByte(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

// Redactor masks, besides the patterns Redact finds, the exact values of the secrets it knows
// (account keys, the client key) and their base64 and URL-encoded forms: a key of any shape
// is masked once it is configured. The Store owns one and refreshes what it knows whenever it
// reads or writes accounts and settings. A nil *Redactor masks patterns only. It is safe for
// concurrent use.
type Redactor struct {
	leaks  *leaks.Rules // nil: the patterns above only
	mu     sync.RWMutex
	groups map[string][]string // secrets by source; replaced whole when the source is reread
	known  *knownSet           // built from groups; nil when no secret is known
}

// Sources of known secrets.
const (
	knownAccounts  = "accounts"
	knownClientKey = "client_key"
	knownAdded     = "added" // written through this store since; kept until the process ends
)

// NewRedactor returns a Redactor that knows no secret yet and masks, besides the patterns, what
// rules find (gitleaks' rule set, store/leaks); nil rules find nothing.
func NewRedactor(rules *leaks.Rules) *Redactor {
	return &Redactor{leaks: rules, groups: map[string][]string{}}
}

// minKnownSecret is the shortest secret masked by value: shorter ones would mask ordinary text.
const minKnownSecret = 8

func (r *Redactor) setKnown(group string, secrets []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(r.groups[group], secrets) {
		return
	}
	r.groups[group] = slices.Clone(secrets)
	r.known = newKnownSet(r.groups)
}

func (r *Redactor) addKnown(secret string) {
	if r == nil || len(secret) < minKnownSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.groups[knownAdded], secret) {
		return
	}
	r.groups[knownAdded] = append(r.groups[knownAdded], secret)
	r.known = newKnownSet(r.groups)
}

// Redact masks known secrets, key-shaped strings and what the rules find in b. Like the
// function Redact it returns b itself when nothing matched, else a new slice, and is
// idempotent.
func (r *Redactor) Redact(b []byte) []byte { return r.now().redact(b) }

// redaction is what a Redactor masks at one moment: the known secrets then (nil: none) and its
// rules, for a caller that must redact several pieces alike and notice when the known secrets
// change (store/bodies.go).
type redaction struct {
	known *knownSet
	leaks *leaks.Rules
}

func (r *Redactor) now() redaction {
	if r == nil {
		return redaction{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return redaction{known: r.known, leaks: r.leaks}
}

// redact masks known secrets first (their exact values, whatever their shape), then the
// patterns, then what the rules find: each pass sees the masks of the one before, which match
// nothing.
func (red redaction) redact(b []byte) []byte { return red.redactFrom(b, 0) }

// redactFrom is redact for a text whose first from bytes were redacted before and held no
// secret (leaks.Rules.FindFrom); from counts only while the earlier passes mask nothing, since
// a mask would move the bytes after it.
func (red redaction) redactFrom(b []byte, from int) []byte {
	m := Redact(red.known.redact(b))
	if len(m) != len(b) || len(m) > 0 && &m[0] != &b[0] {
		from = 0
	}
	return maskFound(red.leaks, m, from)
}

// RedactWith is Redact, then the secrets rules find (nil rules: none) masked the same way: the
// kind (a token's prefix, "ghp_") and the last four characters stay visible.
func RedactWith(rules *leaks.Rules, b []byte) []byte { return maskFound(rules, Redact(b), 0) }

// maskFound masks what rules find in b (leaks.Rules.FindFrom from).
func maskFound(rules *leaks.Rules, b []byte, from int) []byte {
	if rules == nil {
		return b
	}
	found := rules.FindFrom(b, from)
	if len(found) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, s := range found {
		out = append(append(out, b[last:s.Start]...), mask(b[s.Start:s.End], s.Kind)...)
		last = s.End
	}
	return append(out, b[last:]...)
}

// RedactString is Redact for text fields.
func (r *Redactor) RedactString(s string) string { return redactString(s, r.Redact) }

// knownSet finds many fixed strings in one pass. Every form is at least minKnownSecret (8)
// bytes long, so wherever one occurs, one of its first four 4-byte windows starts at a
// position divisible by 4: the scan looks only at those positions (a quarter of the text),
// each first in a bit set of byte pairs, then in a bit filter of window hashes, and only on a
// hit in the table of windows. A body with no secret costs about one bit test per four bytes
// whatever the number of secrets (BenchmarkRedact).
type knownSet struct {
	pairs    [1 << 16 / 64]uint64     // first two bytes of an indexed window
	filter   [1 << 16 / 64]uint64     // hash of an indexed window
	byWindow map[uint32][]knownWindow // earliest start first, then longest form
	shortest int
}

type knownForm struct {
	text, masked []byte
}

// knownWindow is a form seen through one of its first four windows, at offset into it.
type knownWindow struct {
	form   knownForm
	offset int
}

func newKnownSet(groups map[string][]string) *knownSet {
	ks := &knownSet{byWindow: map[uint32][]knownWindow{}}
	seen := map[string]bool{}
	for _, secrets := range groups {
		for _, s := range secrets {
			if len(s) < minKnownSecret {
				continue
			}
			for _, f := range secretForms(s) {
				if len(f.text) < minKnownSecret || seen[string(f.text)] {
					continue
				}
				seen[string(f.text)] = true
				for off := 0; off < 4; off++ {
					w := binary.LittleEndian.Uint32(f.text[off:])
					h, pair := filterSlot(w), w&0xffff
					ks.filter[h/64] |= 1 << (h % 64)
					ks.pairs[pair/64] |= 1 << (pair % 64)
					ks.byWindow[w] = append(ks.byWindow[w], knownWindow{f, off})
				}
				if ks.shortest == 0 || len(f.text) < ks.shortest {
					ks.shortest = len(f.text)
				}
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	for _, ws := range ks.byWindow {
		slices.SortFunc(ws, func(a, b knownWindow) int {
			if a.offset != b.offset {
				return b.offset - a.offset // a larger offset starts earlier in the text
			}
			return len(b.form.text) - len(a.form.text)
		})
	}
	return ks
}

func filterSlot(w uint32) uint32 { return (w * 2654435761) >> 16 }

func (ks *knownSet) redact(b []byte) []byte {
	if ks == nil || len(b) < ks.shortest {
		return b
	}
	var out []byte
	last := 0 // b[last:] is not yet copied to out; matches never start before it
	for i := 0; i+4 <= len(b); i += 4 {
		if pair := uint32(b[i]) | uint32(b[i+1])<<8; ks.pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		w := binary.LittleEndian.Uint32(b[i:])
		if h := filterSlot(w); ks.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, c := range ks.byWindow[w] {
			start := i - c.offset
			if start < last || !bytes.HasPrefix(b[start:], c.form.text) {
				continue
			}
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(append(out, b[last:start]...), c.form.masked...)
			last = start + len(c.form.text)
			i = (last+3)/4*4 - 4 // continue at the first aligned position at or after last
			break
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// secretForms lists how a secret may appear in text: as is, URL-encoded (query and path), and
// base64 (standard and URL alphabets) at each of the three alignments it can have inside a
// longer encoded string (the characters that also depend on neighbouring bytes are left out).
func secretForms(s string) []knownForm {
	raw := []byte(s)
	forms := []knownForm{{raw, mask(raw, 0)}}
	encoded := []byte("…[redacted]")
	for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		if e != s {
			forms = append(forms, knownForm{[]byte(e), encoded})
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for shift := 0; shift < 3; shift++ {
			full := enc.EncodeToString(append(make([]byte, shift), raw...))
			start := (shift*8 + 5) / 6        // first character made of secret bits only
			end := (shift + len(raw)) * 8 / 6 // characters after it mix in what follows
			if end-start >= minKnownSecret {
				forms = append(forms, knownForm{[]byte(full[start:end]), encoded})
			}
		}
	}
	return forms
}
