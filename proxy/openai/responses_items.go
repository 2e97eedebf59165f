package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// Input items of a Responses request (messages, function calls and outputs, reasoning) as
// Messages turns and blocks.

// item translates one input item, appending to the turns; system and
// developer messages are returned as raw strings for the system prompt
// (Messages has no system turns).
func (t *responsesTurns) item(f *responsesFields, index int, forResponses bool) (system [][]byte, err error) {
	param := "input[" + strconv.Itoa(index) + "]"
	typ := responsesName(f.Type)
	if len(typ) == 0 && f.Role != nil {
		typ = []byte("message")
	}
	switch string(typ) {
	case "message":
		var role string
		switch r := responsesName(f.Role); string(r) {
		case "system", "developer":
			return responsesSystemTexts(f.Content, param)
		case "user":
			role = "user"
		case "assistant":
			role = "assistant"
		default:
			return nil, responsesBadRequest(param+".role", "Invalid value: '%s'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", r)
		}
		if isJSONString(f.Content) {
			t.addString(role, f.Content)
			return nil, nil
		}
		err := responsesEachElement(f.Content, func(j int, p *responsesElem) error {
			block, err := responsesPartToAnthropic(&p.f, param, ".content", j)
			if block != nil {
				t.add(role, block)
			}
			return err
		})
		if err != nil { // the parameter's name is built only for the error
			return nil, responsesPartsError(err, param+".content")
		}
		return nil, nil
	case "function_call":
		if !isJSONString(f.CallID) || !isJSONString(f.Name) {
			return nil, responsesBadRequest(param, "A function_call item needs 'call_id' and 'name'.")
		}
		args, err := responsesArguments(f.Arguments, param)
		if err != nil {
			return nil, err
		}
		if id := responsesName(f.CallID); !t.calls[string(id)] {
			t.calls[string(id)] = true
			t.order = append(t.order, string(id))
		}
		var b bytes.Buffer
		b.Grow(len(f.CallID) + len(f.Name) + len(args) + 48)
		b.WriteString(`{"type":"tool_use","id":`)
		b.Write(f.CallID)
		b.WriteString(`,"name":`)
		b.Write(f.Name)
		b.WriteString(`,"input":`)
		b.Write(args)
		b.WriteByte('}')
		t.add("assistant", responsesBlock{b.Bytes()})
		return nil, nil
	case "function_call_output":
		id := responsesName(f.CallID)
		if !t.calls[string(id)] {
			return nil, responsesBadRequest(param+".call_id", "No tool call found for function call output with call_id %s.", id)
		}
		t.answered[string(id)] = true
		head := make([]byte, 0, len(f.CallID)+48)
		head = append(head, `{"type":"tool_result","tool_use_id":`...)
		head = append(head, f.CallID...)
		head = append(head, `,"content":`...)
		block := responsesBlock{head}
		switch {
		case isJSONString(f.Output):
			block = append(block, f.Output)
		case len(f.Output) > 0 && f.Output[0] == '[':
			open := []byte("[")
			err := responsesEachElement(f.Output, func(j int, p *responsesElem) error {
				part, err := responsesPartToAnthropic(&p.f, param, ".output", j)
				if part != nil {
					block = append(block, open)
					block = append(block, part...)
					open = []byte(",")
				}
				return err
			})
			if err := responsesPartsError(err, param+".output"); err != nil {
				return nil, err
			}
			if len(open) == 1 && open[0] == '[' {
				block = append(block, open)
			}
			block = append(block, []byte("]"))
		default:
			return nil, responsesBadRequest(param+".output", "Invalid 'output': expected a string or an array of content parts.")
		}
		block = append(block, responsesClosingBrace)
		t.add("user", block)
		return nil, nil
	case "reasoning":
		enc := anthropic.Unquote(f.EncryptedContent)
		var b bytes.Buffer
		switch {
		case strings.HasPrefix(enc, responsesAnthropicRedactedPrefix):
			b.WriteString(`{"type":"redacted_thinking","data":`)
			b.Write(anthropic.Quote(strings.TrimPrefix(enc, responsesAnthropicRedactedPrefix)))
			b.WriteByte('}')
		case strings.HasPrefix(enc, responsesAnthropicThinkingPrefix):
			b.WriteString(`{"type":"thinking","thinking":`)
			b.Write(anthropic.Quote(responsesSummaryText(f.Summary)))
			b.WriteString(`,"signature":`)
			b.Write(anthropic.Quote(strings.TrimPrefix(enc, responsesAnthropicThinkingPrefix)))
			b.WriteByte('}')
		case forResponses && enc != "":
			// OpenAI's encrypted_content rides along only when the request
			// goes back to a Responses upstream; an unsigned thinking block
			// would be refused by Messages, so otherwise the item is dropped.
			b.WriteString(`{"type":"thinking","thinking":`)
			b.Write(anthropic.Quote(responsesSummaryText(f.Summary)))
			b.WriteString(`,"signature":`)
			b.Write(anthropic.Quote(responsesReasoningSignature(anthropic.Unquote(f.ID), enc)))
			b.WriteByte('}')
		default:
			return nil, nil
		}
		t.add("assistant", responsesBlock{b.Bytes()})
		return nil, nil
	case "item_reference":
		return nil, responsesBadRequest(param, "Item references need items stored by OpenAI; send the items themselves (or use previous_response_id).")
	}
	return nil, responsesBadRequest(param+".type", "Input items of type '%s' are not supported by this upstream.", typ)
}

// responsesSummaryText joins a reasoning item's summary texts.
func responsesSummaryText(summary []byte) string {
	parts, err := responsesElements(summary)
	if err != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if f := p.f; isJSONString(f.Text) {
			texts = append(texts, anthropic.Unquote(f.Text))
		}
	}
	return strings.Join(texts, "\n\n")
}

func responsesSystemTexts(content []byte, param string) ([][]byte, error) {
	if isJSONString(content) {
		if isEmptyJSONString(content) {
			return nil, nil
		}
		return [][]byte{content}, nil
	}
	parts, err := responsesElements(content)
	if err != nil {
		return nil, responsesBadRequest(param+".content", "Invalid 'content': expected a string or an array of content parts.")
	}
	var out [][]byte
	for j, p := range parts {
		f := p.f
		if string(responsesName(f.Type)) != "input_text" || !isJSONString(f.Text) {
			return nil, responsesBadRequest(param+".content["+strconv.Itoa(j)+"]", "System and developer messages may only hold input_text parts.")
		}
		if !isEmptyJSONString(f.Text) {
			out = append(out, f.Text)
		}
	}
	return out, nil
}

// responsesArguments turns a function_call's arguments (a JSON string holding
// a JSON object) into a tool_use input; item names the item in errors.
func responsesArguments(raw []byte, item string) ([]byte, error) {
	if isJSONNull(raw) {
		return []byte("{}"), nil
	}
	if !isJSONString(raw) {
		return nil, responsesBadRequest(item+".arguments", "Invalid 'arguments': expected a string of JSON.")
	}
	s := strings.TrimSpace(anthropic.Unquote(raw))
	if s == "" {
		return []byte("{}"), nil
	}
	if s[0] != '{' || !json.Valid([]byte(s)) {
		return nil, responsesBadRequest(item+".arguments", "Invalid 'arguments': expected a JSON object, as the function's parameters describe.")
	}
	return compactJSON([]byte(s)), nil
}

// responsesPartToAnthropic translates a content part; nil for an empty text
// (Messages refuses empty text blocks).
func responsesPartToAnthropic(f *responsesFields, item, field string, index int) (responsesBlock, error) {
	param := responsesParam{item, field, index}
	var b bytes.Buffer
	switch typ := responsesName(f.Type); string(typ) {
	case "input_text", "output_text", "refusal":
		txt := f.Text
		if string(typ) == "refusal" {
			txt = f.Refusal
		}
		if !isJSONString(txt) {
			return nil, responsesBadRequest(param.String()+".text", "Missing required parameter: 'text'.")
		}
		if isEmptyJSONString(txt) {
			return nil, nil
		}
		return responsesTextBlock(txt), nil
	case "input_image":
		if !isJSONString(f.ImageURL) {
			return nil, responsesBadRequest(param.String()+".image_url", "Only images given by 'image_url' (an https URL or a base64 data URL) can be sent to this upstream; file_id needs OpenAI's file storage.")
		}
		u := anthropic.Unquote(f.ImageURL)
		b.WriteString(`{"type":"image","source":`)
		if mt, data, ok := splitDataURL(u); ok {
			b.WriteString(`{"type":"base64","media_type":`)
			b.Write(anthropic.Quote(mt))
			b.WriteString(`,"data":`)
			b.Write(anthropic.Quote(data))
			b.WriteByte('}')
		} else if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
			b.WriteString(`{"type":"url","url":`)
			b.Write(f.ImageURL)
			b.WriteByte('}')
		} else {
			return nil, responsesBadRequest(param.String()+".image_url", "Invalid 'image_url': expected an http(s) URL or a base64 data URL.")
		}
		b.WriteByte('}')
		return responsesBlock{b.Bytes()}, nil
	case "input_file":
		b.WriteString(`{"type":"document","source":`)
		switch {
		case isJSONString(f.FileData):
			mt, data, ok := splitDataURL(anthropic.Unquote(f.FileData))
			if !ok || mt != "application/pdf" {
				return nil, responsesBadRequest(param.String()+".file_data", "Only PDF files given as a base64 data URL (data:application/pdf;base64,…) can be sent to this upstream.")
			}
			b.WriteString(`{"type":"base64","media_type":"application/pdf","data":`)
			b.Write(anthropic.Quote(data))
			b.WriteByte('}')
		case isJSONString(f.FileURL):
			b.WriteString(`{"type":"url","url":`)
			b.Write(f.FileURL)
			b.WriteByte('}')
		default:
			return nil, responsesBadRequest(param.String()+".file_id", "Only files given by 'file_data' or 'file_url' can be sent to this upstream; file_id needs OpenAI's file storage.")
		}
		if isJSONString(f.Filename) {
			b.WriteString(`,"title":`)
			b.Write(f.Filename)
		}
		b.WriteByte('}')
		return responsesBlock{b.Bytes()}, nil
	default:
		return nil, responsesBadRequest(param.String()+".type", "Content parts of type '%s' are not supported by this upstream.", typ)
	}
}
