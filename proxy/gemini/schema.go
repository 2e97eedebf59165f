package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Function declarations' parameters (and responseSchema) take a Schema
// object: a subset of OpenAPI 3.0, not JSON Schema. The fields it accepts
// (v1beta Schema reference, and the Schema interface of @google/genai's
// types.ts): type, format, title, description, nullable, enum, maxItems,
// minItems, properties, required, minProperties, maxProperties, minLength,
// maxLength, pattern, example, anyOf, propertyOrdering, default, items,
// minimum, maximum. type is one enum name (STRING, NUMBER, INTEGER, BOOLEAN,
// ARRAY, OBJECT, NULL), never a list; enum holds strings; format is "enum"
// or "date-time" for strings and int32/int64/float/double for numbers. The
// API answers 400 for any other field ($ref, $defs, additionalProperties,
// const, oneOf, allOf, …), and for an OBJECT without properties or an ARRAY
// without items. RewriteSchema maps a JSON Schema into that subset.

// MaxRefDepth bounds how deep $ref is inlined: a recursive schema is cut
// there (the cut node keeps only its description).
const MaxRefDepth = 8

// IsSchemaKey reports whether key is a field of Gemini's Schema object.
func IsSchemaKey(key string) bool {
	switch key {
	case "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
		"required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
		"anyOf", "propertyOrdering", "default", "items", "minimum", "maximum":
		return true
	}
	return false
}

// FormatAllowed reports whether format is accepted on a schema of typ.
func FormatAllowed(typ, format string) bool {
	switch strings.ToUpper(typ) {
	case "STRING":
		return format == "enum" || format == "date-time"
	case "NUMBER":
		return format == "float" || format == "double"
	case "INTEGER":
		return format == "int32" || format == "int64"
	}
	return false
}

// RewriteSchema rewrites a JSON Schema (an Anthropic tool's input_schema, an
// MCP tool's inputSchema) into the Schema subset above. It returns nil when
// the schema describes an object without properties: a function without
// parameters must then leave parameters out.
func RewriteSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	m, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	rw := rewriter{defs: map[string]any{}}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := m[k].(map[string]any); ok {
			for name, v := range d {
				rw.defs["#/"+k+"/"+name] = v
			}
		}
	}
	out := rw.node(m, 0)
	if out["type"] == nil && out["anyOf"] == nil {
		return nil, nil // an object without properties (or no schema at all): no parameters
	}
	return json.Marshal(out)
}

type rewriter struct {
	defs map[string]any
}

func (rw *rewriter) node(v any, depth int) map[string]any {
	m, ok := v.(map[string]any)
	if !ok { // true, false or junk: anything goes
		return map[string]any{}
	}
	if ref, ok := m["$ref"].(string); ok {
		target, found := rw.defs[ref]
		if !found && ref == "#" {
			found = depth > 0 // the root itself: cut, since it is what we are rewriting
		}
		if !found || depth >= MaxRefDepth {
			out := map[string]any{}
			if d, ok := m["description"].(string); ok {
				out["description"] = d
			}
			return out
		}
		merged := map[string]any{}
		if t, ok := target.(map[string]any); ok {
			for k, v := range t {
				merged[k] = v
			}
		}
		for k, v := range m { // siblings of $ref (description …) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		return rw.node(merged, depth+1)
	}
	if all, ok := m["allOf"].([]any); ok {
		merged := map[string]any{}
		for _, s := range all {
			sub := rw.node(s, depth)
			mergeInto(merged, sub)
		}
		rest := map[string]any{}
		for k, v := range m {
			if k != "allOf" {
				rest[k] = v
			}
		}
		mergeInto(merged, rw.node(rest, depth))
		return merged
	}

	out := map[string]any{}
	nullable := false
	if b, ok := m["nullable"].(bool); ok && b {
		nullable = true
	}
	var types []string
	switch t := m["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	var kept []string
	for _, t := range types {
		if strings.EqualFold(t, "null") {
			nullable = true
			continue
		}
		kept = append(kept, strings.ToUpper(t))
	}

	for _, key := range []string{"title", "description", "pattern", "default", "example"} {
		if v, ok := m[key]; ok {
			out[key] = v
		}
	}
	if _, ok := out["example"]; !ok {
		if ex, ok := m["examples"].([]any); ok && len(ex) > 0 {
			out["example"] = ex[0]
		}
	}
	for _, key := range []string{"minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength", "minimum", "maximum"} {
		if v, ok := m[key].(float64); ok {
			out[key] = v
		}
	}
	if v, ok := m["exclusiveMinimum"].(float64); ok {
		if _, has := out["minimum"]; !has {
			out["minimum"] = v
		}
	}
	if v, ok := m["exclusiveMaximum"].(float64); ok {
		if _, has := out["maximum"]; !has {
			out["maximum"] = v
		}
	}

	// enum and const: strings only.
	var enum []any
	if c, ok := m["const"]; ok {
		enum = []any{c}
	} else if e, ok := m["enum"].([]any); ok {
		enum = e
	}
	if enum != nil {
		var strs []any
		allStrings := true
		for _, e := range enum {
			switch x := e.(type) {
			case nil:
				nullable = true
			case string:
				strs = append(strs, x)
			default:
				allStrings = false
			}
		}
		if allStrings && len(strs) > 0 && (len(kept) == 0 || (len(kept) == 1 && kept[0] == "STRING")) {
			out["enum"] = strs
			kept = []string{"STRING"}
		} else {
			vals, _ := json.Marshal(enum)
			appendDescription(out, "Allowed values: "+string(vals))
		}
	}

	// One of several types (or a union): anyOf.
	var union []any
	for _, k := range []string{"anyOf", "oneOf"} {
		if xs, ok := m[k].([]any); ok {
			union = append(union, xs...)
		}
	}
	if len(kept) > 1 {
		for _, t := range kept {
			sub := map[string]any{}
			for k, v := range m {
				if k != "type" && k != "description" && k != "title" && k != "anyOf" && k != "oneOf" {
					sub[k] = v
				}
			}
			sub["type"] = strings.ToLower(t)
			union = append(union, sub)
		}
		kept = nil
	}
	if len(union) > 0 {
		var alts []any
		for _, s := range union {
			if sm, ok := s.(map[string]any); ok {
				if t, ok := sm["type"].(string); ok && strings.EqualFold(t, "null") && len(sm) == 1 {
					nullable = true
					continue
				}
			}
			alts = append(alts, rw.node(s, depth))
		}
		switch len(alts) {
		case 0:
		case 1:
			for k, v := range alts[0].(map[string]any) {
				if _, has := out[k]; !has || k == "type" {
					out[k] = v
				}
			}
			if t, ok := out["type"].(string); ok {
				kept = []string{t}
			}
		default:
			out["anyOf"] = alts
		}
	}

	typ := ""
	if len(kept) == 1 {
		typ = kept[0]
	}
	if typ == "" && out["anyOf"] == nil {
		if _, ok := m["properties"]; ok {
			typ = "OBJECT"
		} else if _, ok := m["items"]; ok {
			typ = "ARRAY"
		}
	}
	switch typ {
	case "OBJECT":
		props, _ := m["properties"].(map[string]any)
		if len(props) == 0 {
			// A free-form object (a map, additionalProperties only): the API
			// refuses an OBJECT without properties, so leave the type open.
			appendDescription(out, "A JSON object.")
			typ = ""
			break
		}
		outProps := make(map[string]any, len(props))
		for name, p := range props {
			outProps[name] = rw.node(p, depth)
		}
		out["properties"] = outProps
		if req, ok := m["required"].([]any); ok {
			var keep []any
			for _, r := range req {
				if s, ok := r.(string); ok && props[s] != nil {
					keep = append(keep, s)
				}
			}
			if len(keep) > 0 {
				out["required"] = keep
			}
		}
		if ord, ok := m["propertyOrdering"].([]any); ok {
			out["propertyOrdering"] = ord
		}
	case "ARRAY":
		items := m["items"]
		if tuple, ok := items.([]any); ok {
			items = nil
			if len(tuple) > 0 {
				items = tuple[0]
			}
		}
		if items == nil {
			if p, ok := m["prefixItems"].([]any); ok && len(p) > 0 {
				items = p[0]
			}
		}
		out["items"] = rw.node(items, depth)
	}
	if typ != "" {
		out["type"] = typ
		if f, ok := m["format"].(string); ok && FormatAllowed(typ, f) {
			out["format"] = f
		}
	} else {
		delete(out, "type")
	}
	if typ != "STRING" {
		delete(out, "pattern")
	}
	if nullable {
		out["nullable"] = true
	}
	return out
}

func appendDescription(out map[string]any, s string) {
	if d, ok := out["description"].(string); ok && d != "" {
		out["description"] = d + " " + s
		return
	}
	out["description"] = s
}

// mergeInto merges an allOf member into dst: properties and required are
// unions, any other field keeps its first value.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			dp, _ := dst[k].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
			}
			for name, p := range v.(map[string]any) {
				dp[name] = p
			}
			dst[k] = dp
		case "required":
			dr, _ := dst[k].([]any)
			dst[k] = append(dr, v.([]any)...)
		default:
			if _, has := dst[k]; !has {
				dst[k] = v
			}
		}
	}
}

// schemaToJSONSchema gives a function declaration's parameters as the JSON
// Schema a Messages tool's input_schema needs (an object schema, always).
func schemaToJSONSchema(d FunctionDeclaration) (json.RawMessage, error) {
	if len(d.ParametersJSONSchema) > 0 && string(d.ParametersJSONSchema) != "null" {
		return d.ParametersJSONSchema, nil
	}
	if len(d.Parameters) == 0 || string(d.Parameters) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	return openAPIToJSONSchema(d.Parameters, false)
}

// openAPIToJSONSchema maps Gemini's Schema to JSON Schema: lower-case types,
// nullable as a "null" type. Everything else in the subset is JSON Schema
// already. closeObjects adds "additionalProperties": false to every object,
// which Messages' structured outputs require (and which is what a Gemini
// response schema means: only the declared properties).
func openAPIToJSONSchema(raw json.RawMessage, closeObjects bool) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	var in openAPISchema
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("schema is not valid: %v", err)
	}
	return json.Marshal(in.jsonSchema(closeObjects))
}

// openAPISchema is Gemini's Schema object (the fields listed above),
// decoded into types: a request's tool list is read on every request, and a
// typed decode costs a fraction of a generic one.
type openAPISchema struct {
	Type             string                    `json:"type"`
	Format           string                    `json:"format"`
	Title            string                    `json:"title"`
	Description      string                    `json:"description"`
	Nullable         bool                      `json:"nullable"`
	Enum             []string                  `json:"enum"`
	MaxItems         *protoInt                 `json:"maxItems"`
	MinItems         *protoInt                 `json:"minItems"`
	MaxProperties    *protoInt                 `json:"maxProperties"`
	MinProperties    *protoInt                 `json:"minProperties"`
	MaxLength        *protoInt                 `json:"maxLength"`
	MinLength        *protoInt                 `json:"minLength"`
	Minimum          *float64                  `json:"minimum"`
	Maximum          *float64                  `json:"maximum"`
	Pattern          string                    `json:"pattern"`
	Example          json.RawMessage           `json:"example"`
	Default          json.RawMessage           `json:"default"`
	Properties       map[string]*openAPISchema `json:"properties"`
	Required         []string                  `json:"required"`
	Items            *openAPISchema            `json:"items"`
	AnyOf            []*openAPISchema          `json:"anyOf"`
	PropertyOrdering []string                  `json:"propertyOrdering"`
}

// protoInt is an int64 field of a proto message in JSON: a number, or a
// decimal string.
type protoInt int64

func (n *protoInt) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	var v int64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = protoInt(v)
	return nil
}

// jsonSchema is the JSON Schema an openAPISchema means.
type jsonSchema struct {
	Type                 any                    `json:"type,omitempty"` // a name, or [name, "null"]
	Format               string                 `json:"format,omitempty"`
	Title                string                 `json:"title,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Enum                 []string               `json:"enum,omitempty"`
	MaxItems             *protoInt              `json:"maxItems,omitempty"`
	MinItems             *protoInt              `json:"minItems,omitempty"`
	MaxProperties        *protoInt              `json:"maxProperties,omitempty"`
	MinProperties        *protoInt              `json:"minProperties,omitempty"`
	MaxLength            *protoInt              `json:"maxLength,omitempty"`
	MinLength            *protoInt              `json:"minLength,omitempty"`
	Minimum              *float64               `json:"minimum,omitempty"`
	Maximum              *float64               `json:"maximum,omitempty"`
	Pattern              string                 `json:"pattern,omitempty"`
	Example              json.RawMessage        `json:"example,omitempty"`
	Default              json.RawMessage        `json:"default,omitempty"`
	Properties           map[string]*jsonSchema `json:"properties,omitempty"`
	Required             []string               `json:"required,omitempty"`
	Items                *jsonSchema            `json:"items,omitempty"`
	AnyOf                []*jsonSchema          `json:"anyOf,omitempty"`
	AdditionalProperties *bool                  `json:"additionalProperties,omitempty"`
}

// jsonSchema maps the Schema to JSON Schema: lower-case types, nullable as a
// "null" type; propertyOrdering and the "enum" format have no counterpart.
// closeObjects adds "additionalProperties": false to every object, which
// Messages' structured outputs require (and which is what a Gemini response
// schema means: only the declared properties).
func (s *openAPISchema) jsonSchema(closeObjects bool) *jsonSchema {
	if s == nil {
		return nil
	}
	out := &jsonSchema{
		Title: s.Title, Description: s.Description, Enum: s.Enum,
		MaxItems: s.MaxItems, MinItems: s.MinItems, MaxProperties: s.MaxProperties, MinProperties: s.MinProperties,
		MaxLength: s.MaxLength, MinLength: s.MinLength, Minimum: s.Minimum, Maximum: s.Maximum,
		Pattern: s.Pattern, Example: s.Example, Default: s.Default, Required: s.Required,
		Items: s.Items.jsonSchema(closeObjects),
	}
	if s.Format != "enum" {
		out.Format = s.Format
	}
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]*jsonSchema, len(s.Properties))
		for name, p := range s.Properties {
			out.Properties[name] = p.jsonSchema(closeObjects)
		}
	}
	for _, a := range s.AnyOf {
		out.AnyOf = append(out.AnyOf, a.jsonSchema(closeObjects))
	}
	if s.Type != "" {
		t := strings.ToLower(s.Type)
		out.Type = t
		if s.Nullable {
			out.Type = []string{t, "null"}
		}
		if closeObjects && t == "object" {
			closed := false
			out.AdditionalProperties = &closed
		}
	}
	return out
}
