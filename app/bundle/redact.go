package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"longhaul/store"
	"longhaul/store/leaks"
)

// SecretSettings are the setting keys whose values are secrets (store/secrets.go's
// clientKeySetting; TestSecretSettingsAreListed fails when a new key looks like one and is not
// here). settings.json says whether each is set, never its value.
var SecretSettings = []string{"proxy.client_key"}

// removedSecret is what settings.json holds in place of a secret that is set.
const removedSecret = "(set; removed from this bundle)"

// withoutSecrets is settings as JSON with each secret setting replaced by whether it is set.
func withoutSecrets(s store.Settings) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		return map[string]any{} // Settings is plain data; this does not happen
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]any{}
	}
	for _, key := range SecretSettings {
		parts := strings.Split(key, ".")
		node := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := node[p].(map[string]any)
			if !ok {
				node = nil
				break
			}
			node = next
		}
		leaf := parts[len(parts)-1]
		if node == nil {
			continue
		}
		if v, ok := node[leaf]; ok && v != "" && v != nil {
			node[leaf] = removedSecret
		}
	}
	return m
}

// redactor masks the secrets it was given, in every form store.Redactor masks them in (as is,
// URL-escaped, JSON-escaped, base64 at each alignment), then key-shaped strings and what its
// rules find (store.RedactWith).
// It repeats what the store does because the store's redactor, which knows the same secrets, is
// not exported; the store already redacted the bodies when it wrote them, so this pass is
// defence in depth and the only one for settings, and for secrets added after the exchange.
type redactor struct {
	forms [][]byte // longest first, so a secret's encoded form is masked before a part of it
	rules *leaks.Rules
}

// minKnownSecret is store.Redactor's: shorter values would mask ordinary text.
const minKnownSecret = 8

// maskedKnown replaces a known secret: it shows nothing of it, unlike a pattern's mask.
var maskedKnown = []byte("…[redacted]")

func newRedactor(secrets []string, rules *leaks.Rules) *redactor {
	r := &redactor{rules: rules}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < minKnownSecret {
			continue
		}
		for _, f := range secretForms(s) {
			if len(f) >= minKnownSecret && !seen[f] {
				seen[f] = true
				r.forms = append(r.forms, []byte(f))
			}
		}
	}
	// Longest first: a shorter form can be a part of a longer one.
	for i := 1; i < len(r.forms); i++ {
		for j := i; j > 0 && len(r.forms[j]) > len(r.forms[j-1]); j-- {
			r.forms[j], r.forms[j-1] = r.forms[j-1], r.forms[j]
		}
	}
	return r
}

// secretForms lists how s may appear in a file: as is, escaped for a URL or a JSON string, and
// base64 (standard and URL alphabets) at each of the three alignments it can have inside a
// longer encoded string, without the characters that depend on neighbouring bytes.
func secretForms(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	if j, err := json.Marshal(s); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for shift := range 3 {
			full := enc.EncodeToString(append(make([]byte, shift), s...))
			start := (shift*8 + 5) / 6      // first character made of the secret's bits only
			end := (shift + len(s)) * 8 / 6 // later ones mix in what follows
			forms = append(forms, full[start:end])
		}
	}
	return forms
}

func (r *redactor) redact(b []byte) []byte {
	for _, f := range r.forms {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, maskedKnown)
		}
	}
	return store.RedactWith(r.rules, b)
}

func (r *redactor) redactString(s string) string { return string(r.redact([]byte(s))) }
