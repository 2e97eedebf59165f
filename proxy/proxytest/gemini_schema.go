package proxytest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"longhaul/proxy/gemini"
)

// ValidateGeminiSchema checks a function declaration's parameters (or a
// responseSchema) the way the Gemini API does, answering with the field path
// of the first violation. What it enforces was checked against the v1beta
// Schema reference and @google/genai's Schema type: only the Schema object's
// own fields (an unknown one such as additionalProperties, $ref or const is
// "Unknown name" → 400); type is a single enum name; enum values are
// strings; format is one the type allows; an OBJECT must have non-empty
// properties ("should be non-empty for OBJECT type"), an ARRAY must have
// items; required names only declared properties; anyOf holds schemas.
func ValidateGeminiSchema(raw json.RawMessage, path string) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	return validateSchemaNode(v, path)
}

var geminiTypes = map[string]bool{"STRING": true, "NUMBER": true, "INTEGER": true, "BOOLEAN": true, "ARRAY": true, "OBJECT": true, "NULL": true}

func validateSchemaNode(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a schema must be an object", path)
	}
	for k := range m {
		if !gemini.IsSchemaKey(k) {
			return fmt.Errorf("%s: Unknown name %q: Cannot find field", path, k)
		}
	}
	typ := ""
	if t, has := m["type"]; has {
		s, ok := t.(string)
		if !ok || !geminiTypes[strings.ToUpper(s)] {
			return fmt.Errorf("%s.type: invalid value %v", path, t)
		}
		typ = strings.ToUpper(s)
	}
	if f, has := m["format"]; has {
		s, _ := f.(string)
		if !gemini.FormatAllowed(typ, s) {
			return fmt.Errorf("%s.format: %q is not supported for type %s", path, s, typ)
		}
	}
	if e, has := m["enum"]; has {
		xs, ok := e.([]any)
		if !ok {
			return fmt.Errorf("%s.enum: must be a list", path)
		}
		for i, x := range xs {
			if _, ok := x.(string); !ok {
				return fmt.Errorf("%s.enum[%d]: enum values must be strings", path, i)
			}
		}
		if typ != "STRING" {
			return fmt.Errorf("%s.enum: only allowed for STRING type", path)
		}
	}
	for _, k := range []string{"title", "description", "pattern"} {
		if x, has := m[k]; has {
			if _, ok := x.(string); !ok {
				return fmt.Errorf("%s.%s: must be a string", path, k)
			}
		}
	}
	if x, has := m["nullable"]; has {
		if _, ok := x.(bool); !ok {
			return fmt.Errorf("%s.nullable: must be a boolean", path)
		}
	}
	for _, k := range []string{"minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength", "minimum", "maximum"} {
		if x, has := m[k]; has {
			switch v := x.(type) {
			case float64:
			case string: // int64 fields also come as decimal strings in proto JSON
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					return fmt.Errorf("%s.%s: must be a number", path, k)
				}
			default:
				return fmt.Errorf("%s.%s: must be a number", path, k)
			}
		}
	}
	props, hasProps := m["properties"].(map[string]any)
	if _, has := m["properties"]; has && !hasProps {
		return fmt.Errorf("%s.properties: must be an object", path)
	}
	if typ == "OBJECT" && len(props) == 0 {
		return fmt.Errorf("%s.properties: should be non-empty for OBJECT type", path)
	}
	for name, p := range props {
		if err := validateSchemaNode(p, path+".properties["+name+"]"); err != nil {
			return err
		}
	}
	if r, has := m["required"]; has {
		xs, ok := r.([]any)
		if !ok {
			return fmt.Errorf("%s.required: must be a list", path)
		}
		for _, x := range xs {
			s, _ := x.(string)
			if props[s] == nil {
				return fmt.Errorf("%s.required: property %q is not defined", path, s)
			}
		}
	}
	if typ == "ARRAY" {
		items, has := m["items"]
		if !has {
			return fmt.Errorf("%s.items: missing field for ARRAY type", path)
		}
		if err := validateSchemaNode(items, path+".items"); err != nil {
			return err
		}
	} else if items, has := m["items"]; has {
		if err := validateSchemaNode(items, path+".items"); err != nil {
			return err
		}
	}
	if a, has := m["anyOf"]; has {
		xs, ok := a.([]any)
		if !ok || len(xs) == 0 {
			return fmt.Errorf("%s.anyOf: must be a non-empty list", path)
		}
		for i, x := range xs {
			if err := validateSchemaNode(x, fmt.Sprintf("%s.anyOf[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// functionNameRE is the declaration name rule of the FunctionDeclaration
// reference: letters, digits, underscores, colons, dots and dashes, at most 64.
var functionNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
