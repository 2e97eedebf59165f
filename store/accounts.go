package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Account kinds: the protocol an account's upstream speaks. They are the proxy's pool kinds
// (proxy/pool/account.go), spelled again here because store and proxy never import each other.
const (
	KindAnthropic       = "anthropic"        // Messages API at BaseURL + /v1/messages
	KindOpenAI          = "openai"           // Chat Completions at BaseURL + /chat/completions
	KindOpenAIResponses = "openai-responses" // Responses API at BaseURL + /responses
	KindGemini          = "gemini"           // generativelanguage API at BaseURL + /v1beta/models/…
)

// Kinds lists every account kind, in the order a UI offers them.
func Kinds() []string {
	return []string{KindAnthropic, KindOpenAI, KindOpenAIResponses, KindGemini}
}

// DefaultBaseURL is the official endpoint of a kind, used when an account names none; "" for
// an unknown kind. For the OpenAI kinds it is what the OpenAI SDKs take as base URL (with
// /v1): Longhaul appends /chat/completions or /responses to it.
func DefaultBaseURL(kind string) string {
	switch kind {
	case KindAnthropic, "":
		return "https://api.anthropic.com"
	case KindOpenAI, KindOpenAIResponses:
		return "https://api.openai.com/v1"
	case KindGemini:
		return "https://generativelanguage.googleapis.com"
	}
	return ""
}

// endpointSuffixes are the paths Longhaul appends to a kind's base URL. A base URL that
// already ends with one (pasted from an API reference) would have it twice.
var endpointSuffixes = map[string][]string{
	KindAnthropic:       {"/v1/messages"},
	KindOpenAI:          {"/chat/completions"},
	KindOpenAIResponses: {"/responses"},
	KindGemini:          {"/v1beta/models", "/v1beta"},
}

// Account is an upstream credential. Secret is tagged json:"-" so that an Account marshalled
// into a log, an event or the UI never carries it; show MaskedSecret instead.
type Account struct {
	ID      int64  `json:"id"`
	Label   string `json:"label"`
	Kind    string `json:"kind"`
	BaseURL string `json:"base_url"`
	Secret  string `json:"-"`
	// SecretStorage says where the secret is kept: SecretsInKeychain or SecretsInDatabase.
	SecretStorage  string    `json:"secret_storage"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason"`
	Models         []string  `json:"models"` // empty: all models
	Priority       int       `json:"priority"`
	Weight         int       `json:"weight"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// MaskedSecret is MaskSecret of the account's secret.
func (a Account) MaskedSecret() string { return MaskSecret(a.Secret) }

// normalize fills defaults and checks a to be stored. Messages never quote the secret or the
// URL (which may carry credentials).
func (a *Account) normalize(requireSecret bool) error {
	a.Label = strings.TrimSpace(a.Label)
	a.BaseURL = strings.TrimRight(strings.TrimSpace(a.BaseURL), "/")
	a.Secret = strings.TrimSpace(a.Secret) // pasted keys often end in a newline
	a.Kind = strings.ToLower(strings.TrimSpace(a.Kind))
	if a.Kind == "" {
		a.Kind = KindAnthropic
	}
	if a.BaseURL == "" {
		a.BaseURL = DefaultBaseURL(a.Kind)
	}
	if a.Weight == 0 {
		a.Weight = 1
	}
	if a.Models == nil {
		a.Models = []string{}
	}
	if a.Enabled {
		a.DisabledReason = ""
	}
	if DefaultBaseURL(a.Kind) == "" {
		return &ValidationError{Field: "kind", Message: "must be one of " + strings.Join(Kinds(), ", ")}
	}
	u, err := url.Parse(a.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ValidationError{Field: "base_url", Message: "must be an http or https URL with a host"}
	}
	for _, suffix := range endpointSuffixes[a.Kind] {
		if strings.HasSuffix(strings.ToLower(u.Path), suffix) {
			return &ValidationError{Field: "base_url", Message: "must not end with " + suffix +
				" (Longhaul appends the endpoint path), e.g. " + DefaultBaseURL(a.Kind)}
		}
	}
	if requireSecret && a.Secret == "" {
		return &ValidationError{Field: "secret", Message: "must not be empty"}
	}
	if err := rejectRef("secret", a.Secret); err != nil {
		return err
	}
	if a.Weight < 0 {
		return &ValidationError{Field: "weight", Message: "must not be negative"}
	}
	for _, m := range a.Models {
		if strings.TrimSpace(m) == "" {
			return &ValidationError{Field: "models", Message: "model names must not be empty"}
		}
	}
	return nil
}

// AddAccount validates and stores a new account and returns it with its ID and times.
// Empty Kind means anthropic and zero Weight means 1; Enabled is taken as given.
func (st *Store) AddAccount(ctx context.Context, a Account) (Account, error) {
	if err := a.normalize(true); err != nil {
		return Account{}, fmt.Errorf("add account: %w", err)
	}
	models, err := json.Marshal(a.Models)
	if err != nil {
		return Account{}, fmt.Errorf("add account: %w", err)
	}
	now := st.Now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	// The keychain entry is written first: a crash before the row commits leaves an unused
	// entry, never a row whose secret is nowhere.
	column, err := st.putSecret("account", a.Secret)
	if err != nil {
		return Account{}, fmt.Errorf("add account: %w", err)
	}
	err = st.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO accounts
			(label, kind, base_url, secret, enabled, disabled_reason, models, priority, weight, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.Label, a.Kind, a.BaseURL, column, a.Enabled, a.DisabledReason, string(models),
			a.Priority, a.Weight, formatTime(now), formatTime(now))
		if err != nil {
			return err
		}
		a.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		st.dropSecret(column)
		return Account{}, fmt.Errorf("add account: %w", err)
	}
	a.SecretStorage = st.SecretStorage()
	st.redactor.addKnown(a.Secret)
	return a, nil
}

const accountColumns = `id, label, kind, base_url, secret, enabled, disabled_reason, models, priority, weight, created_at, updated_at`

// Accounts returns all accounts, highest priority first, then oldest first.
func (st *Store) Accounts(ctx context.Context) ([]Account, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY priority DESC, id ASC`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	accounts := []Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		accounts = append(accounts, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	known := make([]string, 0, len(accounts))
	for i := range accounts {
		st.resolveAccount(&accounts[i])
		known = append(known, accounts[i].Secret)
	}
	// Every reload of the accounts (the app's, after any change, by any process) refreshes
	// the secrets that redaction masks by value.
	st.redactor.setKnown(knownAccounts, known)
	return accounts, nil
}

// Account returns the account with the given id, or an error wrapping ErrNotFound.
func (st *Store) Account(ctx context.Context, id int64) (Account, error) {
	a, err := scanAccount(st.db.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("get account %d: %w", id, err)
	}
	st.resolveAccount(&a)
	return a, nil
}

// UpdateAccount stores every field of a except ID and CreatedAt. An empty Secret keeps the stored
// one, so an edit form never needs to hold the secret.
//
// A stored secret is bound to the origin (scheme://host:port) of the base URL it was stored
// with: changing the origin with an empty Secret is refused with a *ValidationError on
// "secret", so that nobody can redirect a stored key to a server of their choosing.
func (st *Store) UpdateAccount(ctx context.Context, a Account) error {
	if err := a.normalize(false); err != nil {
		return fmt.Errorf("update account %d: %w", a.ID, err)
	}
	models, err := json.Marshal(a.Models)
	if err != nil {
		return fmt.Errorf("update account %d: %w", a.ID, err)
	}
	column, err := st.putSecret("account", a.Secret)
	if err != nil {
		return fmt.Errorf("update account %d: %w", a.ID, err)
	}
	var old string
	err = st.inTx(ctx, func(tx *sql.Tx) error {
		var oldURL string
		err := tx.QueryRowContext(ctx, `SELECT base_url, secret FROM accounts WHERE id = ?`, a.ID).Scan(&oldURL, &old)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if a.Secret == "" && !SameOrigin(oldURL, a.BaseURL) {
			return &ValidationError{Field: "secret", Message: ErrSecretOriginChanged.Error()}
		}
		res, err := tx.ExecContext(ctx, `UPDATE accounts SET label = ?, kind = ?, base_url = ?,
			secret = CASE WHEN ? = '' THEN secret ELSE ? END, enabled = ?, disabled_reason = ?,
			models = ?, priority = ?, weight = ?, updated_at = ? WHERE id = ?`,
			a.Label, a.Kind, a.BaseURL, column, column, a.Enabled, a.DisabledReason,
			string(models), a.Priority, a.Weight, st.now(), a.ID)
		return requireRow(res, err)
	})
	if err != nil {
		st.dropSecret(column)
		return fmt.Errorf("update account %d: %w", a.ID, err)
	}
	if a.Secret != "" {
		st.dropSecret(old)
		st.redactor.addKnown(a.Secret)
	}
	return nil
}

// ErrSecretOriginChanged is the message of the refusal to send a stored secret to another
// origin than the one it was stored for.
var ErrSecretOriginChanged = errors.New("the base URL's origin changed: enter the key again to use it there")

// SameOrigin reports whether two base URLs share scheme, host and port (a default port
// written out or not), the unit a stored secret is bound to. Unparsable URLs are never the
// same origin.
func SameOrigin(a, b string) bool {
	oa, okA := origin(a)
	ob, okB := origin(b)
	return okA && okB && oa == ob
}

func origin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return "", false
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port, true
}

// SetAccountEnabled enables or disables an account; reason says why it was disabled (shown in
// the UI) and is cleared on enable.
func (st *Store) SetAccountEnabled(ctx context.Context, id int64, enabled bool, reason string) error {
	if enabled {
		reason = ""
	}
	err := st.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE accounts SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
			enabled, reason, st.now(), id)
		return requireRow(res, err)
	})
	if err != nil {
		return fmt.Errorf("set account %d enabled: %w", id, err)
	}
	return nil
}

// DeleteAccount removes an account, or returns an error wrapping ErrNotFound.
func (st *Store) DeleteAccount(ctx context.Context, id int64) error {
	var old string
	err := st.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT secret FROM accounts WHERE id = ?`, id).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM accounts WHERE id = ?`, id)
		return requireRow(res, err)
	})
	if err != nil {
		return fmt.Errorf("delete account %d: %w", id, err)
	}
	st.dropSecret(old)
	return nil
}

// requireRow turns "the statement touched no row" into ErrNotFound.
func requireRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func scanAccount(row interface{ Scan(...any) error }) (Account, error) {
	var a Account
	var models, created, updated string
	err := row.Scan(&a.ID, &a.Label, &a.Kind, &a.BaseURL, &a.Secret, &a.Enabled, &a.DisabledReason,
		&models, &a.Priority, &a.Weight, &created, &updated)
	if err != nil {
		return Account{}, err
	}
	if err := json.Unmarshal([]byte(models), &a.Models); err != nil {
		return Account{}, fmt.Errorf("account %d: models: %w", a.ID, err)
	}
	if a.Models == nil {
		a.Models = []string{}
	}
	if a.CreatedAt, err = time.Parse(time.RFC3339Nano, created); err != nil {
		return Account{}, fmt.Errorf("account %d: created_at: %w", a.ID, err)
	}
	if a.UpdatedAt, err = time.Parse(time.RFC3339Nano, updated); err != nil {
		return Account{}, fmt.Errorf("account %d: updated_at: %w", a.ID, err)
	}
	return a, nil
}

// resolveAccount replaces a keychain reference in a.Secret with the secret. An unreadable
// entry leaves the secret empty (the account then fails upstream with a clear 401 and is
// disabled) and is logged, rather than keeping every other account from loading.
func (st *Store) resolveAccount(a *Account) {
	secret, storage, err := st.resolveSecret(a.Secret)
	a.Secret, a.SecretStorage = secret, storage
	if err != nil {
		st.logger().Warn("store: cannot read an account's secret from the keychain", "account", a.ID, "err", err)
	}
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
