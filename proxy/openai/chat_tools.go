package openai

import (
	"bytes"
	"errors"
	"strconv"

	"longhaul/proxy/anthropic"
)

// Tools, tool_choice and stop sequences of a Chat request, as Messages writes them.

// chatToolsToAnthropic writes function tools; custom (free-form) tools have
// no Messages counterpart and are refused by name.
func chatToolsToAnthropic(w *responsesWriter, tools []byte) (int, error) {
	var defs [][]byte
	err := chatEachElement(tools, func(i int, _ []byte, f *chatFields) error {
		tp := "tools[" + strconv.Itoa(i) + "]"
		if typ := anthropic.Unquote(f.Type); typ != "function" {
			return responsesBadRequest(tp+".type", "Tools of type '%s' are not supported by this upstream; only function tools are.", typ)
		}
		fn, err := parseChatFields(f.Function)
		if err != nil {
			return responsesBadRequest(tp+".function", "Missing required parameter: '%s.function'.", tp)
		}
		if !isJSONString(fn.Name) {
			return responsesBadRequest(tp+".function.name", "Missing required parameter: '%s.function.name'.", tp)
		}
		var b bytes.Buffer
		b.WriteString(`{"name":`)
		b.Write(fn.Name)
		if isJSONString(fn.Description) {
			b.WriteString(`,"description":`)
			b.Write(fn.Description)
		}
		b.WriteString(`,"input_schema":`)
		b.Write(responsesObjectSchema(fn.Parameters))
		b.WriteByte('}')
		defs = append(defs, b.Bytes())
		return nil
	})
	if err := chatPartsError(err, "tools"); err != nil {
		return 0, err
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

// chatToolChoiceToAnthropic writes tool_choice and reports whether it forces
// a tool call.
func chatToolChoiceToAnthropic(w *responsesWriter, choice, parallel []byte, hasTools bool) (forced bool, err error) {
	kind, err := openAIToolChoiceMode(choice)
	var name []byte
	if err == nil && kind == nil {
		f, err := parseChatFields(choice)
		if err != nil {
			return false, responsesBadRequest("tool_choice", "Invalid 'tool_choice'.")
		}
		switch typ := anthropic.Unquote(f.Type); typ {
		case "function":
			fn, err := parseChatFields(f.Function)
			if err != nil || !isJSONString(fn.Name) {
				return false, responsesBadRequest("tool_choice.function.name", "Missing required parameter: 'tool_choice.function.name'.")
			}
			kind, name = []byte("tool"), fn.Name
		case "allowed_tools":
			kind = []byte("auto")
			if at := anthropic.MemberValue(choice, "allowed_tools"); len(at) > 0 && at[0] == '{' &&
				anthropic.Unquote(anthropic.MemberValue(at, "mode")) == "required" {
				kind = []byte("any")
			}
		default:
			return false, responsesBadRequest("tool_choice.type", "tool_choice of type '%s' is not supported by this upstream.", typ)
		}
	}
	if err != nil {
		return false, err
	}
	return writeToolChoice(w, choice, kind, name, string(parallel) == "false", hasTools), nil
}

// chatStopToAnthropic writes stop (a string or a list of strings) as
// stop_sequences.
func chatStopToAnthropic(w *responsesWriter, stop []byte) error {
	var seqs [][]byte
	switch {
	case isJSONString(stop):
		seqs = append(seqs, stop)
	case stop[0] == '[':
		err := anthropic.EachElement(stop, func(v []byte) error {
			if !isJSONString(v) {
				return errors.New("not a string")
			}
			seqs = append(seqs, v)
			return nil
		})
		if err != nil {
			return responsesBadRequest("stop", "Invalid 'stop': expected a string or an array of strings.")
		}
	default:
		return responsesBadRequest("stop", "Invalid 'stop': expected a string or an array of strings.")
	}
	if len(seqs) == 0 {
		return nil
	}
	w.key("stop_sequences")
	w.buf.WriteByte('[')
	for i, s := range seqs {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.buf.Write(s)
	}
	w.buf.WriteByte(']')
	return nil
}
