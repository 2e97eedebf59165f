package gemini

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"longhaul/proxy/anthropic"
)

// Request, Part, GenerationConfig, Response and Candidate keep the members
// they do not declare in Extra, and write them back: a Gemini body decoded and
// encoded again loses nothing (videoMetadata, labels, createTime, fields
// the API adds later).

// knownKeys is the set of JSON names of t's fields.
func knownKeys(t reflect.Type) map[string]bool {
	keys := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// extraMembers returns the members of the object obj that t does not
// declare, nil when there are none.
func extraMembers(obj []byte, t reflect.Type) (map[string]json.RawMessage, error) {
	known := knownKeys(t)
	var extra map[string]json.RawMessage
	err := anthropic.EachMember(obj, func(k, v []byte) error {
		key := anthropic.Unquote(append(append([]byte{'"'}, k...), '"'))
		if !known[key] {
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[key] = append(json.RawMessage(nil), v...)
		}
		return nil
	})
	return extra, err
}

// appendMembers adds extra's members (in key order) to the object b.
func appendMembers(b []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return b, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := append([]byte(nil), b[:len(b)-1]...) // without its closing brace
	for _, k := range keys {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, anthropic.Quote(k)...)
		out = append(out, ':')
		out = append(out, extra[k]...)
	}
	return append(out, '}'), nil
}

func (r *Request) UnmarshalJSON(b []byte) error {
	type plain Request
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	extra, err := extraMembers(b, reflect.TypeFor[plain]())
	r.Extra = extra
	return err
}

func (r Request) MarshalJSON() ([]byte, error) {
	type plain Request
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, r.Extra)
}

func (p *Part) UnmarshalJSON(b []byte) error {
	type plain Part
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	extra, err := extraMembers(b, reflect.TypeFor[plain]())
	p.Extra = extra
	return err
}

func (p Part) MarshalJSON() ([]byte, error) {
	type plain Part
	b, err := json.Marshal(plain(p))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, p.Extra)
}

func (g *GenerationConfig) UnmarshalJSON(b []byte) error {
	type plain GenerationConfig
	if err := json.Unmarshal(b, (*plain)(g)); err != nil {
		return err
	}
	extra, err := extraMembers(b, reflect.TypeFor[plain]())
	g.Extra = extra
	return err
}

func (g GenerationConfig) MarshalJSON() ([]byte, error) {
	type plain GenerationConfig
	b, err := json.Marshal(plain(g))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, g.Extra)
}

func (r *Response) UnmarshalJSON(b []byte) error {
	type plain Response
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	extra, err := extraMembers(b, reflect.TypeFor[plain]())
	r.Extra = extra
	return err
}

func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, r.Extra)
}

func (c *Candidate) UnmarshalJSON(b []byte) error {
	type plain Candidate
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	extra, err := extraMembers(b, reflect.TypeFor[plain]())
	c.Extra = extra
	return err
}

func (c Candidate) MarshalJSON() ([]byte, error) {
	type plain Candidate
	b, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, c.Extra)
}
