package app

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"longhaul/store"
)

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
// line, which is what the window's bindings carry (they pass only the error text); the HTTP
// door sends them as JSON (writeAPIError).
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

// SettingsView returns the effective settings with defaults and this run's overrides.
func (a *App) SettingsView(ctx context.Context) (SettingsView, error) {
	s, err := a.store.Settings(ctx)
	if err != nil {
		return SettingsView{}, err
	}
	return a.settingsView(s), nil
}

func (a *App) settingsView(s store.Settings) SettingsView {
	v := SettingsView{Settings: s, Defaults: store.DefaultSettings(), Overrides: map[string]string{}, Keys: store.SettingKeys()}
	if a.overrides.Port != 0 {
		v.Overrides["proxy.port"] = strconv.Itoa(a.overrides.Port)
	}
	return v
}

// SetSettings stores several keys at once (values are JSON: 0.5, true, "90s", {"claude-*":
// 200000}) and applies them right away, a port or bind change included: the proxy rebinds
// and the status event carries the new address. Invalid values come back as FieldErrors and
// nothing is stored.
func (a *App) SetSettings(ctx context.Context, values map[string]any) (SettingsView, error) {
	if len(values) == 0 {
		return a.SettingsView(ctx)
	}
	text := make(map[string]string, len(values))
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return SettingsView{}, FieldErrors{{Field: k, Message: "cannot encode the value: " + err.Error()}}
		}
		text[k] = string(b)
	}
	s, err := a.store.SetSettings(ctx, text)
	if err != nil {
		return SettingsView{}, fieldErrorsOr(err, nil)
	}
	if err := a.Reload(ctx); err != nil {
		return SettingsView{}, err
	}
	return a.settingsView(s), nil
}

// ResetSettings returns keys to their defaults and applies the result.
func (a *App) ResetSettings(ctx context.Context, keys []string) (SettingsView, error) {
	s, err := a.store.ResetSettings(ctx, keys)
	if err != nil {
		return SettingsView{}, fieldErrorsOr(err, nil)
	}
	if err := a.Reload(ctx); err != nil {
		return SettingsView{}, err
	}
	return a.settingsView(s), nil
}

// Settings returns every setting, its default and this run's command-line overrides.
func (s *System) Settings() (SettingsView, error) { return s.app.SettingsView(s.ctx()) }

// SetSettings saves several settings at once ({"proxy.port": 8050}); the values are JSON.
// Invalid values are refused, each error naming its field ("field: message" per line).
func (s *System) SetSettings(values map[string]any) (SettingsView, error) {
	return s.app.SetSettings(s.ctx(), values)
}

// ResetSettings returns the given keys to their defaults.
func (s *System) ResetSettings(keys []string) (SettingsView, error) {
	return s.app.ResetSettings(s.ctx(), keys)
}
