package store

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// ErrUnknownSetting is returned (wrapped, with the key and a suggestion) for a key that names
// no setting.
var ErrUnknownSetting = errors.New("unknown setting")

// settingField is one stored unit of Settings: a scalar leaf, or a whole map or list. Keys come
// from the json tags, so adding a field to Settings is all it takes to make it a setting.
type settingField struct {
	key   string
	index []int // for reflect.Value.FieldByIndex from Settings
	typ   reflect.Type
}

func settingFields() []settingField {
	var out []settingField
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+name+".", idx)
				continue
			}
			out = append(out, settingField{key: prefix + name, index: idx, typ: f.Type})
		}
	}
	walk(reflect.TypeFor[Settings](), "", nil)
	slices.SortFunc(out, func(a, b settingField) int { return strings.Compare(a.key, b.key) })
	return out
}

// SettingKeys lists every setting key in sorted order. Maps and lists are one key each
// ("proxy.context_limits"); map entries can also be addressed as "proxy.context_limits.<name>".
func SettingKeys() []string {
	var keys []string
	for _, f := range settingFields() {
		keys = append(keys, f.key)
	}
	return keys
}

// lookupSetting resolves a dotted key to its field and, for "map.entry" keys, the entry name.
// Entry names may themselves contain dots ("claude-3.5-*"), hence prefix matching.
func lookupSetting(key string) (settingField, string, error) {
	fields := settingFields()
	for _, f := range fields {
		if f.key == key {
			return f, "", nil
		}
		if entry, ok := strings.CutPrefix(key, f.key+"."); ok && entry != "" && f.typ.Kind() == reflect.Map {
			return f, entry, nil
		}
	}
	return settingField{}, "", unknownSetting(key, fields)
}

func unknownSetting(key string, fields []settingField) error {
	best, bestDist := "", 4 // suggest only near misses
	for _, f := range fields {
		if d := editDistance(key, f.key); d < bestDist {
			best, bestDist = f.key, d
		}
		// A bare leaf name ("port") is a common slip too.
		if strings.HasSuffix(f.key, "."+key) && best == "" {
			best = f.key
		}
	}
	if best != "" {
		return fmt.Errorf("%w %q (did you mean %q?)", ErrUnknownSetting, key, best)
	}
	return fmt.Errorf("%w %q", ErrUnknownSetting, key)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// value returns the addressable field f inside s.
func (f settingField) value(s *Settings) reflect.Value {
	return reflect.ValueOf(s).Elem().FieldByIndex(f.index)
}

// parseSettingValue reads a value typed by a user: strings as-is, durations as "90s", anything
// else (and strings in quotes) as JSON.
func parseSettingValue(key string, typ reflect.Type, raw string) (reflect.Value, error) {
	v := reflect.New(typ)
	text := strings.TrimSpace(raw)
	quoted := strings.HasPrefix(text, `"`)
	var err error
	switch tu, isText := v.Interface().(encoding.TextUnmarshaler); {
	case typ.Kind() == reflect.String && !quoted:
		v.Elem().SetString(raw)
	case isText && !quoted:
		err = tu.UnmarshalText([]byte(text))
	default:
		err = decodeJSON([]byte(text), v.Interface())
	}
	if err != nil {
		return reflect.Value{}, &ValidationError{Field: key, Message: fmt.Sprintf("cannot read %q as %s", raw, describeType(typ))}
	}
	return emptyIfNil(v.Elem()), nil
}

// decodeStored reads a value from the settings table, where it is always JSON.
func decodeStored(typ reflect.Type, value string) (reflect.Value, error) {
	v := reflect.New(typ)
	if err := decodeJSON([]byte(value), v.Interface()); err != nil {
		return reflect.Value{}, err
	}
	return emptyIfNil(v.Elem()), nil
}

func emptyIfNil(v reflect.Value) reflect.Value {
	switch {
	case v.Kind() == reflect.Map && v.IsNil():
		return reflect.MakeMap(v.Type())
	case v.Kind() == reflect.Slice && v.IsNil():
		return reflect.MakeSlice(v.Type(), 0, 0)
	}
	return v
}

// decodeJSON is json.Unmarshal that rejects unknown fields (a typo in a model_map entry) and
// trailing data.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the value")
	}
	return nil
}

func describeType(t reflect.Type) string {
	if t == reflect.TypeFor[Duration]() {
		return "a duration such as 90s or 10m"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Map:
		if t.Elem().Kind() == reflect.Struct {
			return `a JSON object such as {"claude-opus-4*": {"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25}}`
		}
		return `a JSON object such as {"claude-*": 200000}`
	case reflect.Struct:
		return `a JSON object such as {"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25}`
	case reflect.Slice:
		return `a JSON list such as [{"pattern": "claude-*", "model": "claude-sonnet-4-5"}]`
	}
	return "a " + t.String()
}

// formatSettingValue is the inverse of parseSettingValue: strings bare, durations as text,
// everything else as JSON.
func formatSettingValue(v reflect.Value) (string, error) {
	if v.Kind() == reflect.String {
		return v.String(), nil
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		return string(b), err
	}
	b, err := json.Marshal(v.Interface())
	return string(b), err
}

// isWebOrigin reports whether o is an origin as a browser sends it in Origin: http or https,
// a host, an optional port, nothing else (proxy.allowed_origins; the proxy checks the same).
func isWebOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery && u.Opaque == ""
}
