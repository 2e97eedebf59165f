package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

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
		typ := f.typ
		if entry != "" {
			typ = typ.Elem()
		}
		v, err := parseSettingValue(key, typ, values[key])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		changes = append(changes, change{f, entry, v})
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	var out Settings
	err := st.inTx(ctx, func(tx *sql.Tx) error {
		s, err := st.loadSettings(ctx, tx)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if c.entry != "" {
				c.f.value(&s).SetMapIndex(reflect.ValueOf(c.entry), c.v)
			} else {
				c.f.value(&s).Set(c.v)
			}
		}
		if err := s.Validate(); err != nil {
			return err
		}
		var stored []string
		for _, c := range changes {
			if slices.Contains(stored, c.f.key) {
				continue // two entries of one map: the map is stored once
			}
			stored = append(stored, c.f.key)
			if err := st.putSetting(ctx, tx, c.f, &s); err != nil {
				return err
			}
		}
		out = s
		return nil
	})
	return settingsResult(out, err, "set settings")
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
	var out Settings
	err := st.inTx(ctx, func(tx *sql.Tx) error {
		s, err := st.loadSettings(ctx, tx)
		if err != nil {
			return err
		}
		def := DefaultSettings()
		for _, r := range resets {
			if r.entry == "" {
				r.f.value(&s).Set(r.f.value(&def))
				continue
			}
			k := reflect.ValueOf(r.entry)
			r.f.value(&s).SetMapIndex(k, r.f.value(&def).MapIndex(k)) // a zero Value deletes it
		}
		if err := s.Validate(); err != nil {
			return err
		}
		for _, r := range resets {
			if reflect.DeepEqual(r.f.value(&s).Interface(), r.f.value(&def).Interface()) {
				err = st.deleteSetting(ctx, tx, r.f.key)
			} else {
				err = st.putSetting(ctx, tx, r.f, &s)
			}
			if err != nil {
				return err
			}
		}
		out = s
		return nil
	})
	return settingsResult(out, err, "reset settings")
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
