package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"longhaul/store/leaks"
)

// Keychain keeps secrets outside the database file, under names the store chooses
// (store/keychain's OS is the operating system's keychain). Delete of a missing name is not an
// error.
type Keychain interface {
	Set(name, secret string) error
	Get(name string) (string, error)
	Delete(name string) error
}

// Where secrets are kept (Store.SecretStorage, Account.SecretStorage).
const (
	SecretsInKeychain = "keychain"
	SecretsInDatabase = "database"
)

// keychainRef prefixes a secret column (or the client key's setting) that holds the name of a
// keychain entry instead of the secret. Secrets that start with it are refused, so a stored
// value is never ambiguous.
const keychainRef = "keychain:"

// clientKeySetting is the one setting that is a secret.
const clientKeySetting = "proxy.client_key"

// Option configures Open.
type Option func(*Store)

// WithLeakRules sets the rules redaction runs besides its patterns and known secrets. Without
// it, Open compiles gitleaks' (leaks.Gitleaks, ~12 ms); a process that opens several stores
// may share one set.
func WithLeakRules(r *leaks.Rules) Option {
	return func(st *Store) { st.leaks = r }
}

// WithKeychain keeps account secrets and the client key in k. Open checks that k answers
// (store, read back, delete a probe); if it does not, secrets stay in the database file (0600)
// and SecretStorage says so. Without this option secrets stay in the database.
func WithKeychain(k Keychain) Option {
	return func(st *Store) { st.keychain = k }
}

// WithLogger sets Store.Logger before Open does anything worth logging (the keychain check).
func WithLogger(l *slog.Logger) Option {
	return func(st *Store) { st.Logger = l }
}

// SecretStorage says where this store keeps secrets: SecretsInKeychain or SecretsInDatabase
// (no keychain given, or none answered when the store was opened).
func (st *Store) SecretStorage() string {
	if st.keychain != nil {
		return SecretsInKeychain
	}
	return SecretsInDatabase
}

// setUpKeychain probes the keychain given to Open and, if it answers, moves plaintext secrets
// into it; otherwise it drops the keychain and says so in the log. Neither keeps the store
// from opening: secrets stay readable wherever they are.
func (st *Store) setUpKeychain(ctx context.Context) {
	if st.keychain == nil {
		return // the caller chose the database (tests, or a build without a keychain)
	}
	if err := probeKeychain(st.keychain); err != nil {
		st.keychain = nil
		st.logger().Warn("store: secrets are kept in the database file (mode 0600): no keychain answered", "err", err)
		return
	}
	if err := st.moveSecretsToKeychain(ctx); err != nil {
		// What moved stays moved; the rest stays readable in the database and the next
		// start tries again.
		st.logger().Warn("store: some secrets are still in the database file; moving them to the keychain will be retried at the next start", "err", err)
	}
}

func probeKeychain(k Keychain) error {
	name, want := newKeychainName("probe"), randomHex(16)
	if err := k.Set(name, want); err != nil {
		return err
	}
	got, err := k.Get(name)
	if err == nil && got != want {
		err = errors.New("the probe read back differs from what was stored")
	}
	return errors.Join(err, k.Delete(name))
}

// newKeychainName returns a fresh entry name: names never repeat (and carry no account id or
// database path), so writing one never overwrites a secret another row or data dir points to.
func newKeychainName(prefix string) string { return prefix + "-" + randomHex(16) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails (it panics instead)
	return hex.EncodeToString(b)
}

// putSecret stores secret in the keychain under a new name and returns the column value that
// points to it; without a keychain the column holds the secret itself.
func (st *Store) putSecret(prefix, secret string) (string, error) {
	if st.keychain == nil || secret == "" {
		return secret, nil
	}
	name := newKeychainName(prefix)
	if err := st.keychain.Set(name, secret); err != nil {
		return "", err
	}
	return keychainRef + name, nil
}

// dropSecret deletes the keychain entry a column value points to, if it points to one. It runs
// after the row that pointed to it is gone (committed), so a failure leaves an orphan entry,
// never a row without its secret; it is logged.
func (st *Store) dropSecret(column string) {
	name, ok := strings.CutPrefix(column, keychainRef)
	if !ok || st.keychain == nil {
		return
	}
	if err := st.keychain.Delete(name); err != nil {
		st.logger().Warn("store: could not delete a keychain entry no longer used", "name", name, "err", err)
	}
}

// resolveSecret turns a column value into the secret and where it is kept.
func (st *Store) resolveSecret(column string) (secret, storage string, err error) {
	name, ok := strings.CutPrefix(column, keychainRef)
	if !ok {
		return column, SecretsInDatabase, nil
	}
	if st.keychain == nil {
		return "", SecretsInKeychain, errors.New("the secret is in the OS keychain, which did not answer when the store was opened")
	}
	s, err := st.keychain.Get(name)
	return s, SecretsInKeychain, err
}

// moveSecretsToKeychain moves plaintext account secrets and the client key into the keychain,
// one at a time and crash-safe: write the keychain entry, read it back and compare, then swap
// the column for the reference only if it still holds that secret (compare-and-swap; an edit
// in between wins and the new entry is deleted). A crash at any point leaves the secret in the
// database, the keychain, or both — never neither — and the next start finishes the move.
//
// The swap runs with secure_delete, and the WAL is checkpointed and truncated afterwards, so the
// old plaintext is overwritten in the file rather than left in a free page or the log.
func (st *Store) moveSecretsToKeychain(ctx context.Context) error {
	conn, err := st.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("move secrets to the keychain: %w", err)
	}
	defer conn.Close() //nolint:errcheck // returned to the pool
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return fmt.Errorf("move secrets to the keychain: %w", err)
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`); err != nil {
			st.logger().Warn("store: secure_delete off", "err", err)
		}
	}()
	type plain struct {
		id     int64
		secret string
	}
	var accounts []plain
	rows, err := conn.QueryContext(ctx, `SELECT id, secret FROM accounts WHERE secret <> '' AND secret NOT LIKE 'keychain:%'`)
	if err != nil {
		return fmt.Errorf("move secrets to the keychain: %w", err)
	}
	for rows.Next() {
		var p plain
		if err := rows.Scan(&p.id, &p.secret); err != nil {
			rows.Close() //nolint:errcheck // the scan error is the one to report
			return fmt.Errorf("move secrets to the keychain: %w", err)
		}
		accounts = append(accounts, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("move secrets to the keychain: %w", err)
	}
	moved := 0
	for _, p := range accounts {
		ref, err := st.copyToKeychain("account", p.secret)
		if err != nil {
			return fmt.Errorf("move the secret of account %d to the keychain: %w", p.id, err)
		}
		res, err := conn.ExecContext(ctx, `UPDATE accounts SET secret = ? WHERE id = ? AND secret = ?`, ref, p.id, p.secret)
		if err := st.keepIfSwapped(ref, res, err); err != nil {
			return fmt.Errorf("move the secret of account %d to the keychain: %w", p.id, err)
		}
		moved++
	}
	var value string
	err = conn.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, clientKeySetting).Scan(&value)
	var key string
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("move the client key to the keychain: %w", err)
	case json.Unmarshal([]byte(value), &key) == nil && key != "" && !strings.HasPrefix(key, keychainRef):
		ref, err := st.copyToKeychain("client-key", key)
		if err != nil {
			return fmt.Errorf("move the client key to the keychain: %w", err)
		}
		refJSON, err := json.Marshal(ref)
		if err != nil {
			return err
		}
		res, err := conn.ExecContext(ctx, `UPDATE settings SET value = ? WHERE key = ? AND value = ?`, string(refJSON), clientKeySetting, value)
		if err := st.keepIfSwapped(ref, res, err); err != nil {
			return fmt.Errorf("move the client key to the keychain: %w", err)
		}
		moved++
	}
	if moved == 0 {
		return nil
	}
	// Best effort: another process reading the file keeps the checkpoint from truncating, and
	// the next start tries again (there is then nothing to move, but an older WAL is gone).
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		st.logger().Warn("store: checkpoint after moving secrets", "err", err)
	}
	st.logger().Info("store: moved secrets from the database into the OS keychain", "count", moved)
	return nil
}

// copyToKeychain writes secret under a new name, reads it back and compares; it returns the
// column value that points to it. On any failure the entry is removed again.
func (st *Store) copyToKeychain(prefix, secret string) (string, error) {
	ref, err := st.putSecret(prefix, secret)
	if err != nil {
		return "", err
	}
	got, _, err := st.resolveSecret(ref)
	if err == nil && got != secret {
		err = errors.New("the keychain returned a different value than was stored")
	}
	if err != nil {
		st.dropSecret(ref)
		return "", err
	}
	return ref, nil
}

// keepIfSwapped checks a compare-and-swap UPDATE: when it failed or found the row changed, the
// keychain entry ref is not pointed to by anything and is deleted.
func (st *Store) keepIfSwapped(ref string, res sql.Result, err error) error {
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			st.dropSecret(ref) // edited meanwhile: the edit wins, next start moves it
			return nil
		}
	}
	if err != nil {
		st.dropSecret(ref)
	}
	return err
}

// rejectRef refuses a secret that would read as a keychain reference.
func rejectRef(field, secret string) error {
	if strings.HasPrefix(secret, keychainRef) {
		return &ValidationError{Field: field, Message: "must not start with " + keychainRef}
	}
	return nil
}

// MinClientKeyLength is the shortest client key accepted: a key is what stands between the
// network (or every local process) and the user's accounts, and short ones are guessed.
const MinClientKeyLength = 16

// checkClientKeyLength refuses a client key shorter than MinClientKeyLength ("" turns the key
// off and is fine).
func checkClientKeyLength(key string) error {
	if key == "" || utf8.RuneCountInString(key) >= MinClientKeyLength {
		return nil
	}
	return &ValidationError{Field: clientKeySetting, Message: fmt.Sprintf(
		"must be at least %d characters (a short key is guessed); make one with: longhaul settings set proxy.client_key --generate", MinClientKeyLength)}
}

// GenerateClientKey returns a new random client key: "lh-" and 32 bytes of crypto/rand in
// base64url (46 characters, 256 bits).
func GenerateClientKey() string {
	var b [32]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return "lh-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// MaskSecret shows enough of a secret to tell keys apart ("sk-…abcd") and never more than
// seven of its characters; short secrets show less, since 7 of 10 characters would give it away.
func MaskSecret(secret string) string {
	r := []rune(secret)
	switch {
	case len(r) == 0:
		return ""
	case len(r) >= 16:
		return string(r[:3]) + "…" + string(r[len(r)-4:])
	case len(r) >= 8:
		return "…" + string(r[len(r)-2:])
	}
	return "…"
}

// RedactExchange is the package's RedactExchange with this store's known secrets masked too,
// for views that show records before they are written (the live monitor).
func (st *Store) RedactExchange(e Exchange) Exchange {
	e.Attempts = append([]Attempt(nil), e.Attempts...)
	redactExchange(&e, st.redactor)
	return e
}
