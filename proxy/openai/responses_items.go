package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Input items of a Responses request (messages, function calls and outputs, reasoning) as
// Messages turns and blocks.

// responsesItemParam names input item index in errors ("input[3]"); built
// only when an error needs it.
func responsesItemParam(index int) string { return "input[" + strconv.Itoa(index) + "]" }

// item translates one input item, writing its blocks into the messages;
// system and developer messages add raw strings to system (Messages has no
// system turns).
func (t *responsesMessages) item(f *responsesFields, index int, forResponses bool, system *[][]byte) error {
	typ := responsesName(f.Type)
	if len(typ) == 0 && f.Role != nil {
		typ = []byte("message")
	}
	switch string(typ) {
	case "message":
		var role string
		switch r := responsesName(f.Role); string(r) {
		case "system", "developer":
			sys, err := responsesSystemTexts(f.Content, responsesItemParam(index))
			*system = append(*system, sys...)
			return err
		case "user":
			role = "user"
		case "assistant":
			role = "assistant"
		default:
			return responsesBadRequest(responsesItemParam(index)+".role", "Invalid value: '%s'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", r)
		}
		if isJSONString(f.Content) {
			t.addString(role, f.Content)
			return nil
		}
		parts := newResponsesArray(f.Content)
		for parts.next() {
			if text := responsesPartText(&parts.e.f); text != nil {
				t.begin(role, false)
				t.out = appendResponsesTextBlock(t.out, text)
				continue
			}
			block, err := responsesPartToAnthropic(&parts.e.f, responsesItemParam(index), ".content", parts.n)
			if block != nil {
				t.add(role, block)
			}
			if err != nil {
				return responsesPartsError(err, responsesItemParam(index)+".content")
			}
		}
		if parts.err != nil {
			return responsesPartsError(parts.err, responsesItemParam(index)+".content")
		}
		return nil
	case "function_call":
		if !isJSONString(f.CallID) || !isJSONString(f.Name) {
			return responsesBadRequest(responsesItemParam(index), "A function_call item needs 'call_id' and 'name'.")
		}
		t.begin("assistant", false)
		t.out = append(t.out, `{"type":"tool_use","id":`...)
		t.out = append(t.out, f.CallID...)
		t.out = append(t.out, `,"name":`...)
		t.out = append(t.out, f.Name...)
		t.out = append(t.out, `,"input":`...)
		var err error
		t.out, err = appendResponsesArguments(t.out, f.Arguments, func() string { return responsesItemParam(index) })
		if err != nil {
			return err
		}
		t.out = append(t.out, '}')
		t.calls.add(responsesName(f.CallID))
		return nil
	case "function_call_output":
		if id := responsesName(f.CallID); !t.calls.answer(id) {
			return responsesBadRequest(responsesItemParam(index)+".call_id", "No tool call found for function call output with call_id %s.", id)
		}
		t.begin("user", true)
		t.out = append(t.out, `{"type":"tool_result","tool_use_id":`...)
		t.out = append(t.out, f.CallID...)
		t.out = append(t.out, `,"content":`...)
		switch {
		case isJSONString(f.Output):
			t.out = append(t.out, f.Output...)
		case len(f.Output) > 0 && f.Output[0] == '[':
			t.out = append(t.out, '[')
			n := 0
			parts := newResponsesArray(f.Output)
			for parts.next() {
				if text := responsesPartText(&parts.e.f); text != nil {
					if n++; n > 1 {
						t.out = append(t.out, ',')
					}
					t.out = appendResponsesTextBlock(t.out, text)
					continue
				}
				block, err := responsesPartToAnthropic(&parts.e.f, responsesItemParam(index), ".output", parts.n)
				if block != nil {
					if n++; n > 1 {
						t.out = append(t.out, ',')
					}
					for _, seg := range block {
						t.out = append(t.out, seg...)
					}
				}
				if err != nil {
					return responsesPartsError(err, responsesItemParam(index)+".output")
				}
			}
			if parts.err != nil {
				return responsesPartsError(parts.err, responsesItemParam(index)+".output")
			}
			t.out = append(t.out, ']')
		default:
			return responsesBadRequest(responsesItemParam(index)+".output", "Invalid 'output': expected a string or an array of content parts.")
		}
		t.out = append(t.out, '}')
		t.placeToolResult()
		return nil
	case "reasoning":
		if t.reasoning(f, forResponses) {
			return nil
		}
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
			return nil
		}
		t.add("assistant", responsesBlock{b.Bytes()})
		return nil
	case "item_reference":
		return responsesBadRequest(responsesItemParam(index), "Item references need items stored by OpenAI; send the items themselves (or use previous_response_id).")
	}
	return responsesBadRequest(responsesItemParam(index)+".type", "Input items of type '%s' are not supported by this upstream.", typ)
}

// reasoning writes a reasoning item whose encrypted_content (and id) have no
// escapes and valid UTF-8, the usual case, from the raw strings: the marks
// are plain ASCII, so a mark and the rest of a raw string make a valid JSON
// string of the same text that decoding and quoting again would give
// (reasoning above, the general way, then differs only in escapes). False
// for an item it leaves to that way.
func (t *responsesMessages) reasoning(f *responsesFields, forResponses bool) bool {
	enc, id := f.EncryptedContent, f.ID
	if !isJSONString(enc) || bytes.IndexByte(enc, '\\') >= 0 || !utf8.Valid(enc) ||
		isJSONString(id) && !utf8.Valid(id) {
		return false
	}
	inner := enc[1 : len(enc)-1]
	switch {
	case bytes.HasPrefix(inner, []byte(responsesAnthropicRedactedPrefix)):
		t.begin("assistant", false)
		t.out = append(t.out, `{"type":"redacted_thinking","data":"`...)
		t.out = append(t.out, inner[len(responsesAnthropicRedactedPrefix):]...)
		t.out = append(t.out, `"}`...)
	case bytes.HasPrefix(inner, []byte(responsesAnthropicThinkingPrefix)):
		t.begin("assistant", false)
		t.out = append(t.out, `{"type":"thinking","thinking":`...)
		t.out = appendResponsesSummary(t.out, f.Summary)
		t.out = append(t.out, `,"signature":"`...)
		t.out = append(t.out, inner[len(responsesAnthropicThinkingPrefix):]...)
		t.out = append(t.out, `"}`...)
	case forResponses && len(inner) > 0:
		t.begin("assistant", false)
		t.out = append(t.out, `{"type":"thinking","thinking":`...)
		t.out = appendResponsesSummary(t.out, f.Summary)
		t.out = append(t.out, `,"signature":"`+responsesReasoningPrefix...)
		t.out = appendRawInner(t.out, id)
		t.out = append(t.out, ':')
		t.out = append(t.out, inner...)
		t.out = append(t.out, `"}`...)
	}
	return true
}

// appendResponsesSummary appends a reasoning item's summary texts joined by
// blank lines as one JSON string, from the raw strings (responsesSummaryText
// decoded, when a text's UTF-8 is invalid).
func appendResponsesSummary(out, summary []byte) []byte {
	start := len(out)
	out = append(out, '"')
	n := 0
	parts := newResponsesArray(summary)
	for parts.next() {
		text := parts.e.f.Text
		if !isJSONString(text) {
			continue
		}
		if !utf8.Valid(text) {
			return append(out[:start], anthropic.Quote(responsesSummaryText(summary))...)
		}
		if n++; n > 1 {
			out = append(out, `\n\n`...)
		}
		out = append(out, text[1:len(text)-1]...)
	}
	if parts.err != nil { // as responsesSummaryText: no summary at all
		return append(out[:start], `""`...)
	}
	return append(out, '"')
}

// responsesPartText is the raw text of a text, output_text or refusal part
// that has a non-empty one, else nil (responsesPartToAnthropic handles it).
func responsesPartText(f *responsesFields) []byte {
	txt := f.Text
	switch string(responsesName(f.Type)) {
	case "input_text", "output_text":
	case "refusal":
		txt = f.Refusal
	default:
		return nil
	}
	if !isJSONString(txt) || isEmptyJSONString(txt) {
		return nil
	}
	return txt
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
