package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The settings table holds one row per key the user has set. Effective settings are
// DefaultSettings() with the rows laid over it, so defaults of untouched keys can change in a
// later version. Maps and lists are stored whole under their own key.

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Settings returns the effective settings. Stored rows that are unreadable, name no setting, or
// make the settings invalid are skipped (that key keeps its default) and logged as warnings
// naming the key: a bad row must never keep the app from starting.
func (st *Store) Settings(ctx context.Context) (Settings, error) {
	s, err := st.loadSettings(ctx, st.db)
	if err != nil {
		return Settings{}, fmt.Errorf("load settings: %w", err)
	}
	return s, nil
}

// GetSetting returns the effective value of key formatted for people: strings bare, durations
// like "10m0s", everything else as JSON. A missing map entry is ErrNotFound.
func (st *Store) GetSetting(ctx context.Context, key string) (string, error) {
	f, entry, err := lookupSetting(key)
	if err != nil {
		return "", err
	}
	s, err := st.loadSettings(ctx, st.db)
	if err != nil {
		return "", fmt.Errorf("get setting %s: %w", key, err)
	}
	v := f.value(&s)
	if entry != "" {
		if v = v.MapIndex(reflect.ValueOf(entry)); !v.IsValid() {
			return "", fmt.Errorf("get setting %s: %w", key, ErrNotFound)
		}
	}
	return formatSettingValue(v)
}

// SetSetting parses value for key — strings as-is, durations like "90s", bools and numbers as
// written, maps and lists (and quoted strings) as JSON — validates the resulting settings and
// stores the key. An invalid result is returned as a *ValidationError and nothing is written.
// Setting a map entry stores the whole map.
func (st *Store) SetSetting(ctx context.Context, key, value string) (Settings, error) {
	f, entry, err := lookupSetting(key)
	if err != nil {
		return Settings{}, err
	}
	v, err := f.parse(key, entry, value)
	if err != nil {
		return Settings{}, err
	}
	return st.editSettings(ctx, "set setting "+key, func(s *Settings) { f.set(s, entry, v) },
		func(tx *sql.Tx, s *Settings) error { return st.putSetting(ctx, tx, f, s) })
}

// parse reads value as the setting's type, or as its map's element type for an entry.
func (f settingField) parse(key, entry, value string) (reflect.Value, error) {
	typ := f.typ
	if entry != "" {
		typ = typ.Elem()
	}
	return parseSettingValue(key, typ, value)
}

// set puts v into s: the whole value, or one entry of the map.
func (f settingField) set(s *Settings, entry string, v reflect.Value) {
	if entry != "" {
		f.value(s).SetMapIndex(reflect.ValueOf(entry), v)
		return
	}
	f.value(s).Set(v)
}

// SaveSettings validates s and stores the keys whose value differs from the current effective
// one, so saving a whole form from the UI does not pin the defaults of untouched keys.
func (st *Store) SaveSettings(ctx context.Context, s Settings) error {
	s.normalize()
	if err := s.Validate(); err != nil {
		return fmt.Errorf("save settings: %w", err)
	}
	err := st.settingsTx(ctx, func(tx *sql.Tx) error {
		cur, err := st.loadSettings(ctx, tx)
		if err != nil {
			return err
		}
		for _, f := range settingFields() {
			if reflect.DeepEqual(f.value(&cur).Interface(), f.value(&s).Interface()) {
				continue
			}
			if err := st.putSetting(ctx, tx, f, &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save settings: %w", err)
	}
	return nil
}

// ResetSetting returns key to its default by deleting its row. For a map entry, the entry gets
// its default value back (or is removed if the default map has no such entry), and the map row
// goes away once the whole map equals the default again.
func (st *Store) ResetSetting(ctx context.Context, key string) error {
	f, entry, err := lookupSetting(key)
	if err != nil {
		return err
	}
	err = st.settingsTx(ctx, func(tx *sql.Tx) error {
		if entry == "" {
			return st.deleteSetting(ctx, tx, f.key)
		}
		s, err := st.loadSettings(ctx, tx)
		if err != nil {
			return err
		}
		def := DefaultSettings()
		m, k := f.value(&s), reflect.ValueOf(entry)
		m.SetMapIndex(k, f.value(&def).MapIndex(k)) // a zero Value deletes the entry
		if reflect.DeepEqual(m.Interface(), f.value(&def).Interface()) {
			return st.deleteSetting(ctx, tx, f.key)
		}
		if err := s.Validate(); err != nil {
			return err
		}
		return st.putSetting(ctx, tx, f, &s)
	})
	if err != nil {
		return fmt.Errorf("reset setting %s: %w", key, err)
	}
	return nil
}

func (st *Store) putSetting(ctx context.Context, tx *sql.Tx, f settingField, s *Settings) error {
	v := f.value(s).Interface()
	if f.key == clientKeySetting {
		// The client key goes to the keychain (when there is one); the row keeps the reference.
		if err := rejectRef(clientKeySetting, s.Proxy.ClientKey); err != nil {
			return err
		}
		if err := checkClientKeyLength(s.Proxy.ClientKey); err != nil {
			return err
		}
		column, err := st.putSecret("client-key", s.Proxy.ClientKey)
		if err != nil {
			return err
		}
		v = column
		st.redactor.addKnown(s.Proxy.ClientKey)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		f.key, string(b), st.now())
	return err
}

func (st *Store) deleteSetting(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key)
	return err
}

func (st *Store) loadSettings(ctx context.Context, q queryer) (Settings, error) {
	// Newest first, so that when rows conflict the most recent one is the one set aside.
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM settings ORDER BY updated_at DESC, key`)
	if err != nil {
		return Settings{}, err
	}
	defer rows.Close()
	var stored [][2]string
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return Settings{}, err
		}
		stored = append(stored, [2]string{key, value})
	}
	if err := rows.Err(); err != nil {
		return Settings{}, err
	}
	s, problems := overlaySettings(stored)
	for _, p := range problems {
		st.logger().Warn("store: ignoring stored setting", "key", p.key, "err", p.err)
	}
	st.resolveClientKey(&s)
	return s, nil
}

// resolveClientKey replaces a keychain reference in the client key with the key. An
// unreadable entry fails closed: the key becomes a random value nobody knows, so the proxy
// refuses every client until the key is set again, rather than accepting anyone.
func (st *Store) resolveClientKey(s *Settings) {
	key, _, err := st.resolveSecret(s.Proxy.ClientKey)
	if err != nil {
		st.logger().Error("store: cannot read proxy.client_key from the keychain; clients are refused until it is set again", "err", err)
		key = "unreadable-" + randomHex(32)
	}
	s.Proxy.ClientKey = key
	st.redactor.setKnown(knownClientKey, []string{key})
	if checkClientKeyLength(key) != nil {
		// Kept in force: dropping it would open the proxy to every local process.
		st.logger().Warn("store: proxy.client_key is shorter than " + strconv.Itoa(MinClientKeyLength) + " characters; set a new one (longhaul settings set proxy.client_key --generate)")
	}
}

// settingsTx is inTx for a settings change. The client key's keychain entry follows the row:
// a replaced entry is deleted once the change committed, and one written by a change that did
// not commit is deleted again.
func (st *Store) settingsTx(ctx context.Context, fn func(*sql.Tx) error) error {
	var before, after string
	err := st.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if before, err = rawClientKey(ctx, tx); err != nil {
			return err
		}
		fnErr := fn(tx)
		after, err = rawClientKey(ctx, tx)
		return errors.Join(fnErr, err)
	})
	switch {
	case before == after:
	case err == nil:
		st.dropSecret(before)
	default:
		st.dropSecret(after)
	}
	return err
}

// rawClientKey is the client key's row as stored: the key, a keychain reference, or "".
func rawClientKey(ctx context.Context, tx *sql.Tx) (string, error) {
	var value, key string
	err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, clientKeySetting).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if json.Unmarshal([]byte(value), &key) != nil {
		return "", nil // unreadable rows are skipped by loadSettings
	}
	return key, nil
}

type settingProblem struct {
	key string
	err error
}

type storedSetting struct {
	field settingField
	value reflect.Value
}

// overlaySettings lays stored rows over the defaults and sets aside the rows that cannot be
// used. Rows are only known to be bad together (L1 stored above a stored L2), so it applies all
// readable rows and, while the result is invalid, drops the row that is to blame.
func overlaySettings(rows [][2]string) (Settings, []settingProblem) {
	byKey := map[string]settingField{}
	for _, f := range settingFields() {
		byKey[f.key] = f
	}
	var good []storedSetting
	var problems []settingProblem
	for _, r := range rows {
		f, ok := byKey[r[0]]
		if !ok {
			problems = append(problems, settingProblem{r[0], ErrUnknownSetting})
			continue
		}
		v, err := decodeStored(f.typ, r[1])
		if err != nil {
			problems = append(problems, settingProblem{r[0], fmt.Errorf("unreadable value: %w", err)})
			continue
		}
		good = append(good, storedSetting{f, v})
	}
	for {
		s := applySettings(good)
		err := s.Validate()
		if err == nil {
			return s, problems
		}
		i := culprit(good, err)
		problems = append(problems, settingProblem{good[i].field.key, err})
		good = slices.Delete(good, i, i+1)
	}
}

func applySettings(stored []storedSetting) Settings {
	s := DefaultSettings()
	for _, ss := range stored {
		ss.field.value(&s).Set(ss.value)
	}
	return s
}

// culprit picks the stored row to drop for err: the first (newest) row whose removal changes the
// error — for L1 stored above a stored L2 the error names L2, yet only dropping L1 helps — else
// the row of the field the error names, else the newest row.
func culprit(stored []storedSetting, err error) int {
	for i := range stored {
		rest := slices.Delete(slices.Clone(stored), i, i+1)
		if e := applySettings(rest).Validate(); e == nil || e.Error() != err.Error() {
			return i
		}
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		for i, ss := range stored {
			if ve.Field == ss.field.key || strings.HasPrefix(ve.Field, ss.field.key+".") {
				return i
			}
		}
	}
	return 0
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE, see dataSourceName) and commits if fn
// returns nil.
func (st *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer st.rollback(tx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// SetSettings sets several keys in one transaction, the way a settings form saves: every value
// is parsed as SetSetting parses it, then the resulting settings are validated as a whole, so
// keys that only make sense together (raising L1 and L2 at once) can be saved together.
//
// When values cannot be read, every such key is reported (errors.Join of *ValidationError, one
// per key, an unknown key included); otherwise the first invalid setting of the result is
// returned as a *ValidationError. Nothing is written unless the whole change is valid.
func (st *Store) SetSettings(ctx context.Context, values map[string]string) (Settings, error) {
	type change struct {
		f     settingField
		entry string
		v     reflect.Value
	}
	keys := sortedKeys(values)
	var changes []change
	var errs []error
	for _, key := range keys {
		f, entry, err := lookupSetting(key)
		if err != nil {
			errs = append(errs, &ValidationError{Field: key, Message: err.Error()})
			continue
		}
		v, err := f.parse(key, entry, values[key])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		changes = append(changes, change{f, entry, v})
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	return st.editSettings(ctx, "set settings", func(s *Settings) {
		for _, c := range changes {
			c.f.set(s, c.entry, c.v)
		}
	}, func(tx *sql.Tx, s *Settings) error {
		var stored []string
		for _, c := range changes {
			if slices.Contains(stored, c.f.key) {
				continue // two entries of one map: the map is stored once
			}
			stored = append(stored, c.f.key)
			if err := st.putSetting(ctx, tx, c.f, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// ResetSettings returns several keys to their defaults in one transaction. Unlike deleting the
// rows one by one, the result is validated first: resetting L2 to its default below a stored L1
// is refused with a *ValidationError and nothing changes. Map entries ("proxy.context_limits.x")
// are reset as ResetSetting does.
func (st *Store) ResetSettings(ctx context.Context, keys []string) (Settings, error) {
	type reset struct {
		f     settingField
		entry string
	}
	var resets []reset
	var errs []error
	for _, key := range keys {
		f, entry, err := lookupSetting(key)
		if err != nil {
			errs = append(errs, &ValidationError{Field: key, Message: err.Error()})
			continue
		}
		resets = append(resets, reset{f, entry})
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	def := DefaultSettings()
	return st.editSettings(ctx, "reset settings", func(s *Settings) {
		for _, r := range resets {
			if r.entry == "" {
				r.f.value(s).Set(r.f.value(&def))
				continue
			}
			k := reflect.ValueOf(r.entry)
			r.f.value(s).SetMapIndex(k, r.f.value(&def).MapIndex(k)) // a zero Value deletes it
		}
	}, func(tx *sql.Tx, s *Settings) error {
		for _, r := range resets {
			var err error
			if reflect.DeepEqual(r.f.value(s).Interface(), r.f.value(&def).Interface()) {
				err = st.deleteSetting(ctx, tx, r.f.key)
			} else {
				err = st.putSetting(ctx, tx, r.f, s)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// editSettings is the frame of a settings transaction: load the effective settings, edit them,
// validate the result as a whole, save what changed. Nothing is written unless the result is
// valid.
func (st *Store) editSettings(ctx context.Context, action string, edit func(*Settings), save func(*sql.Tx, *Settings) error) (Settings, error) {
	var out Settings
	err := st.settingsTx(ctx, func(tx *sql.Tx) error {
		s, err := st.loadSettings(ctx, tx)
		if err != nil {
			return err
		}
		edit(&s)
		if err := s.Validate(); err != nil {
			return err
		}
		if err := save(tx, &s); err != nil {
			return err
		}
		out = s
		return nil
	})
	return settingsResult(out, err, action)
}

// settingsResult is the answer of a settings transaction: a *ValidationError as it is (it
// already names the key), any other failure wrapped with the action.
func settingsResult(s Settings, err error, action string) (Settings, error) {
	if ve := (*ValidationError)(nil); errors.As(err, &ve) {
		return Settings{}, ve
	}
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", action, err)
	}
	return s, nil
}
