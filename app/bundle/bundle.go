// Package bundle writes and reads repro bundles: one recorded exchange as a zip a user attaches
// to a bug report (the bodies as received and forwarded, the reply, the attempts, the ledger,
// the effective settings, the version and platform), with every secret and key-shaped string
// masked, and reads one back so `longhaul replay` can re-send it.
package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"longhaul/store"
	"longhaul/store/leaks"
)

// FormatVersion is the version of the bundle's layout, in manifest.json. Read refuses a newer
// one; fields added to a file within a version are optional for readers.
const FormatVersion = 1

// Kind is manifest.json's "kind": what the zip is, for a reader that finds it somewhere.
const Kind = "longhaul-repro-bundle"

// Names of the files in a bundle.
const (
	ManifestFile  = "manifest.json"
	ReadmeFile    = "README.txt"
	RequestFile   = "request.json"   // the body as the client sent it
	ForwardedFile = "forwarded.json" // the body as it went upstream; only when it differs
	ReplyJSONFile = "reply.json"     // the reply (a stream's reconstructed message)
	ReplySSEFile  = "reply.sse"      // the reply, when what was kept is the event stream itself
	ReplyTextFile = "reply.txt"      // the reply, when it is neither (a cut body, a plain error)
	AttemptsFile  = "attempts.json"
	LedgerFile    = "ledger.json"
	SettingsFile  = "settings.json"
)

// Meta is what the bundle says about the Longhaul that wrote it.
type Meta struct {
	Version string `json:"version"`
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
}

// Manifest is manifest.json: what the exchange was, and what the bundle holds.
type Manifest struct {
	Format   int    `json:"format"`
	Kind     string `json:"kind"`
	Longhaul Meta   `json:"longhaul"`

	ExchangeID       string `json:"exchangeID"`
	State            string `json:"state"`
	Route            string `json:"route"`
	Method           string `json:"method"`
	Path             string `json:"path"`
	ClientProtocol   string `json:"clientProtocol"`
	UpstreamProtocol string `json:"upstreamProtocol"`
	UserAgent        string `json:"userAgent"`
	Model            string `json:"model"`     // as the client asked
	ModelSent        string `json:"modelSent"` // as the last attempt sent it
	Stream           bool   `json:"stream"`
	AccountName      string `json:"accountName"`

	Status        int    `json:"status"`
	ErrorType     string `json:"errorType,omitempty"`
	ErrorMessage  string `json:"errorMessage,omitempty"`
	StreamOutcome string `json:"streamOutcome,omitempty"`
	StopReason    string `json:"stopReason,omitempty"`

	Start     time.Time     `json:"start"`
	FirstByte time.Time     `json:"firstByte,omitzero"`
	End       time.Time     `json:"end,omitzero"`
	Duration  time.Duration `json:"durationNs"`
	TTFB      time.Duration `json:"ttfbNs"`

	InputTokens      int64    `json:"inputTokens"`
	OutputTokens     int64    `json:"outputTokens"`
	CacheReadTokens  int64    `json:"cacheReadTokens"`
	CacheWriteTokens int64    `json:"cacheWriteTokens"`
	ContextLimit     int      `json:"contextLimit"`
	TokensBefore     int      `json:"tokensBefore"`
	TokensAfter      int      `json:"tokensAfter"`
	Layers           []string `json:"layers"`

	// BodiesTruncated says a body was cut at history.max_body_bytes when it was recorded:
	// request.json may then not be the whole request, and replay refuses it if it is not JSON.
	BodiesTruncated bool `json:"bodiesTruncated"`
	// Files lists the bundle's files, in the order written.
	Files []string `json:"files"`
}

// Ledger is ledger.json: what each step did to the request. Source says where the steps come
// from: "ledger" when the server recorded the edits of its steps (store.CompactionStep.Edits,
// proxy/compact/ledger.go), "compaction" for an exchange recorded before that, whose steps
// carry their totals only (Edits empty).
type Ledger struct {
	Format int          `json:"format"`
	Source string       `json:"source"`
	Steps  []LedgerStep `json:"steps"`
}

// LedgerStep is one step that changed the request.
type LedgerStep struct {
	Step         string        `json:"step"` // "tool-results", "Layer-1", …, "model-map", "translate"
	TokensBefore int           `json:"tokensBefore"`
	TokensAfter  int           `json:"tokensAfter"`
	RawBefore    int           `json:"rawBefore"`
	RawAfter     int           `json:"rawAfter"`
	Items        int           `json:"items"`
	Duration     time.Duration `json:"durationNs"`
	CacheHit     bool          `json:"cacheHit"`
	// Edits are what the step changed: which message or block of the request as received
	// (request.json), what kind of change, the tokens and short previews of each side.
	Edits []store.Edit `json:"edits"`
}

// Sources of a ledger.
const (
	LedgerFromEdits      = "ledger"
	LedgerFromCompaction = "compaction" // recorded before the ledger: steps without edits
)

// readme is README.txt.
const readme = `Longhaul repro bundle
=====================

This zip is one request that went through Longhaul, the local LLM API proxy, made to be
attached to a bug report. Every secret Longhaul knows (the client key, account keys), every
key-shaped string (sk-..., AIza..., Bearer tokens, api-key values, URL passwords) and what
gitleaks' rules find (cloud and service tokens, private keys, JWTs, key = value secrets) was
masked before it was written; look through the files before you share them anyway: a prompt
may hold other private text.

  manifest.json   what the request was: route, protocols, models, status, times, tokens,
                  the Longhaul version and platform
  request.json    the request body as the client sent it
  forwarded.json  the body as Longhaul forwarded it upstream (only when it differs)
  reply.json      the reply (for a stream, the message rebuilt from its events)
  attempts.json   each try against an upstream account
  ledger.json     what each step changed (compaction, model map, translation), message
                  by message, with tokens and short previews
  settings.json   Longhaul's settings at the time of export, secrets removed

A maintainer re-sends the request with

  longhaul replay bundle.zip --base-url http://127.0.0.1:PORT
`

// Write writes the bundle of ex to w: a zip of the files above, each passed through
// redaction. settings are the effective settings; their secrets are left out, and the client
// key is masked wherever it occurs, as are secrets (account keys, any other value known to be
// secret) and what rules find (the store's, store.Store.LeakRules; nil: the patterns only).
// ex should come from store.Store.Exchange (with attempts, steps and bodies).
func Write(w io.Writer, ex store.Exchange, settings store.Settings, meta Meta, secrets []string, rules *leaks.Rules) error {
	red := newRedactor(append([]string{settings.Proxy.ClientKey}, secrets...), rules)
	files, err := bundleFiles(ex, settings, meta, red)
	if err != nil {
		return fmt.Errorf("write bundle of %s: %w", ex.ID, err)
	}
	zw := zip.NewWriter(w)
	for _, f := range files {
		// The exchange's start, not the clock: the same exchange gives the same bytes.
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: ex.Start})
		if err != nil {
			return fmt.Errorf("write bundle of %s: %s: %w", ex.ID, f.name, err)
		}
		if _, err := fw.Write(red.redact(f.data)); err != nil {
			return fmt.Errorf("write bundle of %s: %s: %w", ex.ID, f.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write bundle of %s: %w", ex.ID, err)
	}
	return nil
}

type file struct {
	name string
	data []byte
}

// bundleFiles builds the bundle's files, manifest first. Write redacts each once more as it
// writes it; the text fields are redacted here too, so the manifest's JSON is built from
// masked strings.
func bundleFiles(ex store.Exchange, settings store.Settings, meta Meta, red *redactor) ([]file, error) {
	var files []file
	add := func(name string, data []byte) { files = append(files, file{name, data}) }
	addJSON := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		add(name, append(b, '\n'))
		return nil
	}
	add(ReadmeFile, []byte(readme))
	if b := ex.Bodies; b != nil {
		if b.Request != "" {
			add(RequestFile, []byte(b.Request))
		}
		if b.Forwarded != "" && b.Forwarded != b.Request {
			add(ForwardedFile, []byte(b.Forwarded))
		}
		if b.Reply != "" {
			add(replyName(b.Reply), []byte(b.Reply))
		}
	}
	attempts := make([]store.Attempt, len(ex.Attempts))
	for i, a := range ex.Attempts {
		a.AccountName, a.Error = red.redactString(a.AccountName), red.redactString(a.Error)
		attempts[i] = a
	}
	if err := addJSON(AttemptsFile, attempts); err != nil {
		return nil, err
	}
	if err := addJSON(LedgerFile, ledgerOf(ex, red)); err != nil {
		return nil, err
	}
	if err := addJSON(SettingsFile, withoutSecrets(settings)); err != nil {
		return nil, err
	}
	m := manifestOf(ex, meta, red)
	for _, f := range files {
		m.Files = append(m.Files, f.name)
	}
	m.Files = append([]string{ManifestFile}, m.Files...)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	return append([]file{{ManifestFile, append(b, '\n')}}, files...), nil
}

// ledgerOf is the exchange's recorded ledger, its previews masked (they are the request's
// own text: a pasted key, a tool's output).
func ledgerOf(ex store.Exchange, red *redactor) Ledger {
	ledger := Ledger{Format: FormatVersion, Source: LedgerFromCompaction, Steps: []LedgerStep{}}
	for _, c := range ex.Compaction {
		edits := make([]store.Edit, len(c.Edits))
		for i, e := range c.Edits {
			e.Before, e.After, e.Note = red.redactString(e.Before), red.redactString(e.After), red.redactString(e.Note)
			edits[i] = e
		}
		if len(edits) > 0 {
			ledger.Source = LedgerFromEdits
		}
		ledger.Steps = append(ledger.Steps, LedgerStep{
			Step: c.Layer, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter, RawBefore: c.RawBefore,
			RawAfter: c.RawAfter, Items: c.Items, Duration: c.Duration, CacheHit: c.CacheHit, Edits: edits,
		})
	}
	return ledger
}

func manifestOf(ex store.Exchange, meta Meta, red *redactor) Manifest {
	s := red.redactString
	return Manifest{
		Format: FormatVersion, Kind: Kind,
		Longhaul:   Meta{Version: s(meta.Version), GOOS: s(meta.GOOS), GOARCH: s(meta.GOARCH)},
		ExchangeID: ex.ID, State: ex.State, Route: ex.Route, Method: ex.Method, Path: s(ex.Path),
		ClientProtocol: ex.ClientProtocol, UpstreamProtocol: ex.UpstreamProtocol, UserAgent: s(ex.UserAgent),
		Model: s(ex.Model), ModelSent: s(ex.ModelSent), Stream: ex.Stream, AccountName: s(ex.AccountName),
		Status: ex.Status, ErrorType: s(ex.ErrorType), ErrorMessage: s(ex.ErrorMessage),
		StreamOutcome: ex.StreamOutcome, StopReason: s(ex.StopReason),
		Start: ex.Start, FirstByte: ex.FirstByte, End: ex.End, Duration: ex.Duration, TTFB: ex.TTFB,
		InputTokens: ex.InputTokens, OutputTokens: ex.OutputTokens, CacheReadTokens: ex.CacheReadTokens,
		CacheWriteTokens: ex.CacheWriteTokens, ContextLimit: ex.ContextLimit, TokensBefore: ex.TokensBefore,
		TokensAfter: ex.TokensAfter, Layers: append([]string{}, ex.Layers...), BodiesTruncated: ex.BodiesTruncated,
	}
}

// replyName names the reply's file by what was kept: JSON (a reply, or a stream's rebuilt
// message), an event stream, or other text (a body cut at the capture limit).
func replyName(reply string) string {
	switch {
	case json.Valid([]byte(reply)):
		return ReplyJSONFile
	case bytes.HasPrefix([]byte(reply), []byte("event:")) || bytes.HasPrefix([]byte(reply), []byte("data:")):
		return ReplySSEFile
	}
	return ReplyTextFile
}
