// Package leaks finds secrets in text with gitleaks' detection rules: the rule set gitleaks
// maintains for provider tokens (AWS, GitHub, Slack, …), private keys, JWTs and generic
// key = value assignments of high-entropy strings. It reads the rules from a gitleaks
// configuration (Gitleaks takes the one of the gitleaks module this build depends on, see
// go.mod) and runs them with its own small engine, made for the large JSON bodies of LLM
// requests rather than for files in a repository: each rule runs only around the occurrences
// of its keywords (scan.go), in a window its regular expression bounds (extent.go).
//
// It only finds; store/redact.go decides how a secret is masked.
package leaks

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	gitleaksconfig "github.com/zricethezav/gitleaks/v8/config"
)

// Rules is a compiled rule set. It is safe for concurrent use; a rule's regular expressions
// are compiled the first time one of its keywords occurs in a text, so a process that never
// meets most rules never pays for them (compiling them all takes ~40 ms).
type Rules struct {
	rules    []*rule
	keywords keywordSet
	global   []*allowlist
	reach    int
	skipped  int
}

// Gitleaks returns the default rules of gitleaks, as shipped in the gitleaks module this
// build depends on (its version is in go.mod).
func Gitleaks() (*Rules, error) {
	r, err := Parse(gitleaksconfig.DefaultConfig)
	if err != nil {
		return nil, fmt.Errorf("gitleaks rules: %w", err)
	}
	return r, nil
}

// config is the part of gitleaks' configuration format this engine reads. Decoding rejects
// any other field, so a newer gitleaks that adds a kind of rule this engine does not honour
// fails its tests here instead of being half applied.
type config struct {
	Title       string
	Description string
	MinVersion  string `toml:"minVersion"`
	Allowlist   *allowlistConfig
	Allowlists  []allowlistConfig
	Rules       []ruleConfig
}

type ruleConfig struct {
	ID          string
	Description string
	Regex       string
	Path        string
	SecretGroup int `toml:"secretGroup"`
	Entropy     float64
	Keywords    []string
	Tags        []string
	Allowlists  []allowlistConfig
}

type allowlistConfig struct {
	Description string
	Condition   string
	RegexTarget string `toml:"regexTarget"`
	Regexes     []string
	StopWords   []string `toml:"stopwords"`
	Paths       []string
	Commits     []string
	TargetRules []string `toml:"targetRules"`
}

// Parse compiles a gitleaks configuration (TOML). Rules that only apply to files of some path
// are left out (a body has no path); Skipped counts them.
func Parse(text string) (*Rules, error) {
	var c config
	dec := toml.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	rs := &Rules{}
	globals := c.Allowlists
	if c.Allowlist != nil {
		globals = append(globals, *c.Allowlist)
	}
	targeted := map[string][]*allowlist{}
	for _, ac := range globals {
		a, err := newAllowlist(ac)
		if err != nil {
			return nil, fmt.Errorf("parse rules: global allowlist: %w", err)
		}
		if len(ac.TargetRules) == 0 {
			rs.global = append(rs.global, a)
		}
		for _, id := range ac.TargetRules {
			targeted[id] = append(targeted[id], a)
		}
	}
	for _, rc := range c.Rules {
		if rc.Path != "" || rc.Regex == "" {
			rs.skipped++
			continue
		}
		r, err := newRule(rc)
		if err != nil {
			return nil, fmt.Errorf("parse rules: %s: %w", rc.ID, err)
		}
		r.allow = append(r.allow, targeted[rc.ID]...)
		rs.rules = append(rs.rules, r)
		rs.reach = max(rs.reach, r.reach())
	}
	rs.keywords = newKeywordSet(rs.rules)
	return rs, nil
}

// Count is the number of rules in use.
func (rs *Rules) Count() int { return len(rs.rules) }

// Skipped is the number of rules of the configuration left out: those bound to file paths.
func (rs *Rules) Skipped() int { return rs.skipped }

// Reach bounds how far from a secret the text that decides it lies: whether a secret is found,
// and where, depends only on the bytes within Reach of it. A text whose first n bytes were
// scanned and held no secret can be scanned again from any point Reach before n
// (store/bodies.go's redactNew).
func (rs *Rules) Reach() int { return rs.reach }

// rule is one compiled rule. Its regular expressions are compiled on first use (compile).
type rule struct {
	id          string
	source      string
	secretGroup int
	entropy     float64
	keywords    []string // lower case
	allow       []*allowlist
	ext         extent

	once       sync.Once
	re, lead   *regexp.Regexp
	compileErr error
}

func newRule(rc ruleConfig) (*rule, error) {
	if len(rc.Keywords) == 0 {
		return nil, fmt.Errorf("a rule without keywords would run on every text")
	}
	tree, err := syntax.Parse(rc.Regex, syntax.Perl)
	if err != nil {
		return nil, err
	}
	if rc.SecretGroup > tree.MaxCap() {
		return nil, fmt.Errorf("secretGroup %d of %d groups", rc.SecretGroup, tree.MaxCap())
	}
	r := &rule{id: rc.ID, source: rc.Regex, secretGroup: rc.SecretGroup, entropy: rc.Entropy}
	for _, k := range rc.Keywords {
		if k = strings.ToLower(k); k != "" && !slices.Contains(r.keywords, k) {
			r.keywords = append(r.keywords, k)
		}
	}
	for _, ac := range rc.Allowlists {
		a, err := newAllowlist(ac)
		if err != nil {
			return nil, fmt.Errorf("allowlist: %w", err)
		}
		r.allow = append(r.allow, a)
	}
	r.ext = extentOf(tree, r.keywords)
	return r, nil
}

// compile compiles the rule's expressions once. Parse checked their syntax with the same
// flags regexp uses, so an error here is not expected; it is kept and reported by Find's
// caller through the rule not matching.
func (r *rule) compile() error {
	r.once.Do(func() {
		if r.re, r.compileErr = regexp.Compile(r.source); r.compileErr != nil {
			return
		}
		if r.ext.lead != nil {
			r.lead, r.compileErr = regexp.Compile(`^(?:` + r.ext.lead.String() + `)`)
		}
	})
	return r.compileErr
}

// allowlist is one of gitleaks' allowlists, as far as it applies to a text without a path or
// a commit: an allowlist whose condition is AND and that names paths or commits never allows.
type allowlist struct {
	and       bool
	never     bool   // AND with paths or commits: nothing here can satisfy it
	target    string // "" (the secret), "match" or "line"
	regex     *regexp.Regexp
	stopwords []string // lower case
}

func newAllowlist(ac allowlistConfig) (*allowlist, error) {
	a := &allowlist{}
	switch strings.ToUpper(ac.Condition) {
	case "", "OR", "||":
	case "AND", "&&":
		a.and = true
		a.never = len(ac.Paths) > 0 || len(ac.Commits) > 0
	default:
		return nil, fmt.Errorf("condition %q", ac.Condition)
	}
	switch ac.RegexTarget {
	case "", "secret":
	case "match", "line":
		a.target = ac.RegexTarget
	default:
		return nil, fmt.Errorf("regexTarget %q", ac.RegexTarget)
	}
	if len(ac.Regexes) > 0 {
		// One expression, joined as gitleaks joins them, so that a flag set inside one applies
		// to the next ones as it does there.
		re, err := regexp.Compile(`(?:` + strings.Join(ac.Regexes, "|") + `)`)
		if err != nil {
			return nil, err
		}
		a.regex = re
	}
	for _, w := range ac.StopWords {
		a.stopwords = append(a.stopwords, strings.ToLower(w))
	}
	return a, nil
}

// allows reports whether the allowlist lets a finding through: its secret, the whole match and
// the line around it.
func (a *allowlist) allows(secret, match, line string) bool {
	if a.never {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	byRegex := a.regex != nil && secret != "" && a.regex.MatchString(target)
	byStopword := false
	if len(a.stopwords) > 0 {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				byStopword = true
				break
			}
		}
	}
	if !a.and {
		return byRegex || byStopword
	}
	return (a.regex == nil || byRegex) && (len(a.stopwords) == 0 || byStopword) && (a.regex != nil || len(a.stopwords) > 0)
}

// shannonEntropy is gitleaks' measure: over the runes of s, divided by its length in bytes.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	e, inv := 0.0, 1/float64(len(s))
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}
