package openai

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// Tools, tool_choice and text.format of a Responses request, toward Messages.

// responsesBuiltinTool reports whether a tool type is one only OpenAI can run
// (anything but a function: web_search, file_search, custom, local_shell…).
func responsesBuiltinTool(typ string) bool { return typ != "function" }

// responsesToolsToAnthropic writes tools; built-in tools (web_search,
// file_search, computer_use_preview…) run only on OpenAI, so they are refused
// by name.
func responsesToolsToAnthropic(w *responsesWriter, tools []byte) (int, error) {
	elems, err := responsesElements(tools)
	if err != nil {
		return 0, responsesBadRequest("tools", "Invalid 'tools': expected an array.")
	}
	var builtin []string
	var defs [][]byte
	for i, e := range elems {
		f := e.f
		typ := anthropic.Unquote(f.Type)
		if responsesBuiltinTool(typ) {
			if !slices.Contains(builtin, typ) {
				builtin = append(builtin, typ)
			}
			continue
		}
		if !isJSONString(f.Name) {
			return 0, responsesBadRequest("tools["+strconv.Itoa(i)+"].name", "Missing required parameter: 'tools[%d].name'.", i)
		}
		var b bytes.Buffer
		b.WriteString(`{"name":`)
		b.Write(f.Name)
		if isJSONString(f.Description) {
			b.WriteString(`,"description":`)
			b.Write(f.Description)
		}
		b.WriteString(`,"input_schema":`)
		b.Write(responsesObjectSchema(f.Parameters))
		b.WriteByte('}')
		defs = append(defs, b.Bytes())
	}
	if len(builtin) > 0 {
		return 0, responsesBadRequest("tools", "Only function tools can be served by an Anthropic upstream; remove these or route the model to an OpenAI account: %s.", strings.Join(builtin, ", "))
	}
	if len(defs) == 0 {
		return 0, nil
	}
	w.key("tools")
	w.buf.WriteByte('[')
	for i, d := range defs {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.buf.Write(d)
	}
	w.buf.WriteByte(']')
	return len(defs), nil
}

// responsesObjectSchema keeps a function's JSON Schema valid for Messages,
// whose input_schema must be an object schema: a missing schema becomes an
// empty object schema and one without a type gets "type":"object".
func responsesObjectSchema(params []byte) []byte {
	if isJSONNull(params) || params[0] != '{' {
		return []byte(`{"type":"object","properties":{}}`)
	}
	if anthropic.MemberValue(params, "type") != nil {
		return params
	}
	rest := bytes.TrimSpace(params[1:])
	if len(rest) > 0 && rest[0] == '}' {
		return []byte(`{"type":"object","properties":{}}`)
	}
	return append([]byte(`{"type":"object",`), rest...)
}

// responsesToolChoiceToAnthropic writes tool_choice and reports whether it
// forces a tool call.
func responsesToolChoiceToAnthropic(w *responsesWriter, choice, parallel []byte, hasTools bool) (forced bool, err error) {
	kind, err := openAIToolChoiceMode(choice)
	var name []byte
	if err == nil && kind == nil {
		f, err := parseResponsesFields(choice)
		if err != nil {
			return false, responsesBadRequest("tool_choice", "Invalid 'tool_choice'.")
		}
		switch typ := anthropic.Unquote(f.Type); typ {
		case "function":
			if !isJSONString(f.Name) {
				return false, responsesBadRequest("tool_choice.name", "Missing required parameter: 'tool_choice.name'.")
			}
			kind, name = []byte("tool"), f.Name
		case "allowed_tools":
			kind = []byte("auto")
		default:
			return false, responsesBadRequest("tool_choice", "tool_choice of type '%s' names a built-in tool that runs only on OpenAI.", typ)
		}
	}
	if err != nil {
		return false, err
	}
	return writeToolChoice(w, choice, kind, name, string(parallel) == "false", hasTools), nil
}

// openAIToolChoiceMode reads the forms of tool_choice Chat and Responses share: absent (auto)
// and the strings auto, required, none, as the Messages kinds auto, any, none. An object
// gives nil, for the caller to read (the two APIs name a function in different places).
func openAIToolChoiceMode(choice []byte) ([]byte, error) {
	switch {
	case isJSONNull(choice):
		return []byte("auto"), nil
	case isJSONString(choice):
		switch anthropic.Unquote(choice) {
		case "auto":
			return []byte("auto"), nil
		case "required":
			return []byte("any"), nil
		case "none":
			return []byte("none"), nil
		}
		return nil, responsesBadRequest("tool_choice", "Invalid value: %s. Supported values are: 'none', 'auto' and 'required'.", choice)
	case choice[0] == '{':
		return nil, nil
	}
	return nil, responsesBadRequest("tool_choice", "Invalid 'tool_choice'.")
}

// writeToolChoice writes Messages' tool_choice of kind (naming a tool when name is set) and
// reports whether it forces a tool call. Without tools, or with the default (auto, parallel
// calls allowed, which both APIs and Messages share), nothing is written.
func writeToolChoice(w *responsesWriter, choice, kind, name []byte, noParallel, hasTools bool) (forced bool) {
	if !hasTools || (isJSONNull(choice) && !noParallel) {
		return false
	}
	w.key("tool_choice")
	w.buf.WriteString(`{"type":"`)
	w.buf.Write(kind)
	w.buf.WriteByte('"')
	if name != nil {
		w.buf.WriteString(`,"name":`)
		w.buf.Write(name)
	}
	if noParallel && string(kind) != "none" {
		w.buf.WriteString(`,"disable_parallel_tool_use":true`)
	}
	w.buf.WriteByte('}')
	return string(kind) == "any" || string(kind) == "tool"
}

// responsesTextFormatToAnthropic maps text.format json_schema to Messages'
// structured output (output_config.format); "text" is the default and
// json_object has no Messages counterpart, so both add nothing.
func responsesTextFormatToAnthropic(w *responsesWriter, text []byte) error {
	tf, err := parseResponsesFields(text)
	if err != nil {
		return responsesBadRequest("text", "Invalid 'text': expected an object.")
	}
	if isJSONNull(tf.Format) {
		return nil
	}
	ff, err := parseResponsesFields(tf.Format)
	if err != nil {
		return responsesBadRequest("text.format", "Invalid 'text.format': expected an object.")
	}
	switch typ := anthropic.Unquote(ff.Type); typ {
	case "text", "json_object":
		return nil
	case "json_schema":
		if isJSONNull(ff.Schema) || ff.Schema[0] != '{' {
			return responsesBadRequest("text.format.schema", "Missing required parameter: 'text.format.schema'.")
		}
		w.key("output_config")
		w.buf.WriteString(`{"format":{"type":"json_schema","schema":`)
		w.buf.Write(ff.Schema)
		w.buf.WriteString("}}")
		return nil
	default:
		return responsesBadRequest("text.format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_schema' and 'json_object'.", typ)
	}
}
