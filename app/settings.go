package app

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"longhaul/store"
)

// Settings reads, saves and resets the settings.
type Settings struct{ bound }

// SettingsView is what the settings page shows: the effective settings, the defaults (for
// "reset" and placeholders), and the values this run overrides from the command line.
type SettingsView struct {
	Settings store.Settings `json:"settings"`
	Defaults store.Settings `json:"defaults"`
	// Overrides maps a key to the value in force for this run only (e.g. "proxy.port" when
	// started with --port): the stored setting is kept and applies on the next start.
	Overrides map[string]string `json:"overrides"`
	// Keys lists every setting key, for the UI's per-field errors and resets.
	Keys []string `json:"keys"`
}

// FieldError says which field is wrong and why; the UI shows Message on that field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors are the validation errors of one change. Error() writes one "field: message" per
// line, which is what the window's bindings carry unless BoundError formats them; the HTTP
// door sends them as JSON with their fields.
type FieldErrors []FieldError

func (e FieldErrors) Error() string {
	lines := make([]string, len(e))
	for i, f := range e {
		lines[i] = f.Field + ": " + f.Message
	}
	return strings.Join(lines, "\n")
}

// asFieldErrors collects the *store.ValidationError values in err (one, or several joined),
// renaming fields through rename when it is not nil. ok is false when err holds none.
func asFieldErrors(err error, rename func(string) string) (FieldErrors, bool) {
	var out FieldErrors
	var walk func(error)
	walk = func(e error) {
		if multi, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range multi.Unwrap() {
				walk(inner)
			}
			return
		}
		var ve *store.ValidationError
		if errors.As(e, &ve) {
			field := ve.Field
			if rename != nil {
				field = rename(field)
			}
			out = append(out, FieldError{Field: field, Message: ve.Message})
		}
	}
	walk(err)
	return out, len(out) > 0
}

// fieldErrorsOr returns err as FieldErrors when it carries validation errors, else err.
func fieldErrorsOr(err error, rename func(string) string) error {
	if fe, ok := asFieldErrors(err, rename); ok {
		return fe
	}
	return err
}

// Get returns every setting, its default and this run's command-line overrides.
func (s *Settings) Get() (SettingsView, error) {
	stored, err := s.app.store.Settings(s.ctx())
	if err != nil {
		return SettingsView{}, err
	}
	return s.app.settingsView(stored), nil
}

func (a *App) settingsView(s store.Settings) SettingsView {
	s.Proxy.ClientKey = store.MaskSecret(s.Proxy.ClientKey) // the view never carries it in clear
	v := SettingsView{Settings: s, Defaults: store.DefaultSettings(), Overrides: map[string]string{}, Keys: store.SettingKeys()}
	if a.overrides.Port != 0 {
		v.Overrides["proxy.port"] = strconv.Itoa(a.overrides.Port)
	}
	return v
}

// Set saves several settings at once (values are JSON: 0.5, true, "90s", {"claude-*":
// 200000}) and applies them right away, a port or bind change included: the proxy rebinds
// and the status event carries the new address. Invalid values come back as FieldErrors
// ("field: message" per line) and nothing is stored.
func (s *Settings) Set(values map[string]any) (SettingsView, error) {
	values, err := s.withoutMaskedClientKey(values)
	if err != nil {
		return SettingsView{}, err
	}
	if len(values) == 0 {
		return s.Get()
	}
	text := make(map[string]string, len(values))
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return SettingsView{}, FieldErrors{{Field: k, Message: "cannot encode the value: " + err.Error()}}
		}
		text[k] = string(b)
	}
	return s.applied(s.app.store.SetSettings(s.ctx(), text))
}

// withoutMaskedClientKey drops a client key that is the masked form of the current one (the
// view sends back what it was given: the key is unchanged), and refuses any other masked
// value, which would otherwise become the key.
func (s *Settings) withoutMaskedClientKey(values map[string]any) (map[string]any, error) {
	const key = "proxy.client_key"
	v, ok := values[key].(string)
	if !ok || !strings.Contains(v, "…") {
		return values, nil
	}
	cur, err := s.app.store.Settings(s.ctx())
	if err != nil {
		return nil, err
	}
	if cur.Proxy.ClientKey == "" || v != store.MaskSecret(cur.Proxy.ClientKey) {
		return nil, FieldErrors{{Field: key, Message: "looks like a masked key (…); enter the whole key, or leave the field unchanged"}}
	}
	rest := make(map[string]any, len(values)-1)
	for k, x := range values {
		if k != key {
			rest[k] = x
		}
	}
	return rest, nil
}

// Reset returns the given keys to their defaults and applies the result.
func (s *Settings) Reset(keys []string) (SettingsView, error) {
	return s.applied(s.app.store.ResetSettings(s.ctx(), keys))
}

// applied pushes the settings a change stored into the proxy and returns their view; a
// change the store refused comes back as FieldErrors.
func (s *Settings) applied(stored store.Settings, err error) (SettingsView, error) {
	if err != nil {
		return SettingsView{}, fieldErrorsOr(err, nil)
	}
	if err := s.app.Reload(s.ctx()); err != nil {
		return SettingsView{}, err
	}
	return s.app.settingsView(stored), nil
}

// BoundError formats an error of a bound method for the window (Wails' ErrorFormatter): the
// same {"message", "fields"} the HTTP door sends for validation errors, the text otherwise.
func BoundError(err error) any {
	var fe FieldErrors
	if errors.As(err, &fe) {
		return map[string]any{"message": fe.Error(), "fields": fe}
	}
	return err.Error()
}
