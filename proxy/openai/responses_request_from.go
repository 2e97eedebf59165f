package openai

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// responsesMinOutputTokens is the least max_output_tokens the Responses API
// accepts.
const responsesMinOutputTokens = 16

// ResponsesRequestFromAnthropic translates a Messages request into a
// Responses request (for a Responses upstream). The request is stateless
// (store false): the whole conversation is sent each time, and reasoning
// comes back encrypted so it can be replayed. Errors are
// *ResponsesRequestError; AnthropicJSON renders them for a Messages client.
func ResponsesRequestFromAnthropic(body []byte, opts ResponsesRequestOptions) ([]byte, error) {
	if err := responsesCheckStrings(body); err != nil {
		return nil, responsesSyntaxError(err)
	}
	req, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil, responsesSyntaxError(err)
	}
	var maxTokens, toolChoice, temperature, topP, metadata, stream, outputConfig []byte
	for _, m := range req.Members() {
		switch string(m.Key) {
		case "max_tokens":
			maxTokens = m.Value
		case "tool_choice":
			toolChoice = m.Value
		case "temperature":
			temperature = m.Value
		case "top_p":
			topP = m.Value
		case "metadata":
			metadata = m.Value
		case "stream":
			stream = m.Value
		case "output_config":
			outputConfig = m.Value
		}
	}
	if req.Model == "" {
		return nil, responsesBadRequest("model", "model: Field required")
	}

	var out bytes.Buffer
	out.Grow(len(body) + len(body)/8 + 256)
	w := newResponsesWriter(&out)
	w.str("model", req.Model)

	if instructions, ok := responsesInstructions(req.System); ok {
		w.str("instructions", instructions)
	} else if !isJSONNull(req.System) {
		return nil, responsesBadRequest("system", "system: expected a string or text blocks")
	}

	w.key("input")
	out.WriteByte('[')
	n := 0
	item := func() *bytes.Buffer {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		return &out
	}
	var parts []responsesPartRef // reused by every message
	for i, m := range req.Messages {
		if parts, err = responsesMessageToItems(m, i, item, parts[:0]); err != nil {
			return nil, err
		}
	}
	out.WriteByte(']')

	if !isJSONNull(req.Tools) {
		if err := responsesToolsFromAnthropic(&w, req.Tools); err != nil {
			return nil, err
		}
	}
	if len(toolChoice) > 0 && toolChoice[0] == '{' && !isJSONNull(req.Tools) {
		f, err := parseResponsesFields(toolChoice)
		if err != nil {
			return nil, responsesBadRequest("tool_choice", "tool_choice: expected an object")
		}
		switch anthropic.Unquote(f.Type) {
		case "auto":
			w.str("tool_choice", "auto")
		case "any":
			w.str("tool_choice", "required")
		case "none":
			w.str("tool_choice", "none")
		case "tool":
			w.key("tool_choice")
			out.WriteString(`{"type":"function","name":`)
			out.Write(f.Name)
			out.WriteByte('}')
		}
		if string(anthropic.MemberValue(toolChoice, "disable_parallel_tool_use")) == "true" {
			w.raw("parallel_tool_calls", []byte("false"))
		}
	}
	// Messages clients always send max_tokens; a request that came from a
	// Responses client may leave it out (ForResponses), and so does this.
	if !isJSONNull(maxTokens) {
		// The Responses API refuses fewer than 16 output tokens; Messages
		// clients probe with max_tokens 1 (Claude Code's quota check).
		if n, err := strconv.Atoi(string(maxTokens)); err == nil && n < responsesMinOutputTokens {
			maxTokens = []byte(strconv.Itoa(responsesMinOutputTokens))
		}
		w.raw("max_output_tokens", maxTokens)
	}

	effort := ""
	if anthropic.ThinkingEnabled(req.Thinking) {
		effort = "medium" // adaptive thinking: the model decides, as medium does
		if b, err := strconv.Atoi(string(anthropic.MemberValue(req.Thinking, "budget_tokens"))); err == nil {
			effort = responsesEffortForBudget(b)
		}
	}
	if len(outputConfig) > 0 && outputConfig[0] == '{' {
		if e := anthropic.Unquote(anthropic.MemberValue(outputConfig, "effort")); e != "" && effort != "" {
			effort = e
		}
	}
	if effort != "" {
		w.key("reasoning")
		out.WriteString(`{"effort":`)
		out.Write(anthropic.Quote(effort))
		out.WriteString(`,"summary":"auto"}`)
		// Stateless requests replay reasoning only with its encrypted content.
		w.raw("include", []byte(`["reasoning.encrypted_content"]`))
	}
	if len(outputConfig) > 0 && outputConfig[0] == '{' {
		if format := anthropic.MemberValue(outputConfig, "format"); len(format) > 0 && format[0] == '{' &&
			anthropic.Unquote(anthropic.MemberValue(format, "type")) == "json_schema" {
			w.key("text")
			out.WriteString(`{"format":{"type":"json_schema","name":"output","strict":false,"schema":`)
			out.Write(anthropic.MemberValue(format, "schema"))
			out.WriteString("}}")
		}
	}
	if !isJSONNull(temperature) {
		w.raw("temperature", temperature)
	}
	if !isJSONNull(topP) {
		w.raw("top_p", topP)
	}
	if len(metadata) > 0 && metadata[0] == '{' {
		if uid := anthropic.MemberValue(metadata, "user_id"); isJSONString(uid) {
			w.key("metadata")
			out.WriteString(`{"user_id":`)
			out.Write(uid)
			out.WriteByte('}')
		}
	}
	w.raw("store", []byte("false"))
	if string(stream) == "true" {
		w.raw("stream", stream)
	}
	w.end()
	return out.Bytes(), nil
}

// responsesInstructions joins a Messages system prompt (a string or text
// blocks) into instructions.
func responsesInstructions(system []byte) (string, bool) {
	if isJSONNull(system) {
		return "", false
	}
	if isJSONString(system) {
		return anthropic.Unquote(system), true
	}
	blocks, err := anthropic.ParseBlocks(system)
	if err != nil || system[0] != '[' {
		return "", false
	}
	texts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.Type != "text" {
			return "", false
		}
		texts = append(texts, b.Text())
	}
	return strings.Join(texts, "\n\n"), true
}

// responsesMessageParam names message i, or its block j (j >= 0), in errors;
// built only when an error needs it.
func responsesMessageParam(i, j int) string {
	p := "messages." + strconv.Itoa(i)
	if j >= 0 {
		p += ".content." + strconv.Itoa(j)
	}
	return p
}

// responsesPartRef is a content part of a message item waiting to be written:
// a text referenced where it lies in the body, or a part already built.
type responsesPartRef struct {
	typ, extra string // "input_text" or "output_text" and what follows the text
	raw        []byte // the raw text, or the built part when typ is ""
}

// responsesMessageToItems writes message index as Responses input items.
// Text and images of one turn stay in one message item; tool calls, tool
// results and reasoning become items of their own, in order. parts is room
// for the parts of one item, returned for the next message.
func responsesMessageToItems(m anthropic.Message, index int, item func() *bytes.Buffer, parts []responsesPartRef) ([]responsesPartRef, error) {
	role := m.Role
	if role != "user" && role != "assistant" {
		param := responsesMessageParam(index, -1)
		return parts, responsesBadRequest(param+".role", "%s.role: Input should be 'user' or 'assistant'", param)
	}
	if m.IsString {
		b := item()
		b.WriteString(`{"type":"message","role":"`)
		b.WriteString(role)
		b.WriteString(`","content":`)
		b.Write(m.RawText())
		b.WriteByte('}')
		return parts, nil
	}
	flush := func() {
		if len(parts) == 0 {
			return
		}
		b := item()
		b.WriteString(`{"type":"message","role":"`)
		b.WriteString(role)
		b.WriteString(`","content":[`)
		for i, p := range parts {
			if i > 0 {
				b.WriteByte(',')
			}
			if p.typ == "" {
				b.Write(p.raw)
				continue
			}
			writeResponsesPart(b, p.typ, p.raw, p.extra)
		}
		b.WriteString("]}")
		parts = parts[:0]
	}
	for j, blk := range m.Blocks {
		switch blk.Type {
		case "text":
			if role == "assistant" {
				parts = append(parts, responsesPartRef{"output_text", `,"annotations":[]`, blk.RawText()})
			} else {
				parts = append(parts, responsesPartRef{"input_text", "", blk.RawText()})
			}
		case "image", "document":
			if role == "assistant" {
				continue // Responses has no images in assistant messages
			}
			p, err := responsesMediaFromAnthropic(blk, func() string { return responsesMessageParam(index, j) })
			if err != nil {
				return parts, err
			}
			parts = append(parts, responsesPartRef{raw: p})
		case "tool_use":
			flush()
			b := item()
			b.WriteString(`{"type":"function_call","call_id":`)
			b.Write(anthropic.Quote(blk.ID()))
			b.WriteString(`,"name":`)
			writeResponsesQuoted(b, blk.RawName(), blk.Name)
			b.WriteString(`,"arguments":`)
			args := blk.Input()
			if isJSONNull(args) {
				args = []byte("{}")
			}
			b.Write(anthropic.AppendQuote(b.AvailableBuffer(), compactJSON(args)))
			b.WriteByte('}')
		case "tool_result":
			flush()
			if err := responsesToolResultFromAnthropic(blk, func() string { return responsesMessageParam(index, j) }, item()); err != nil {
				return parts, err
			}
		case "thinking":
			// Only a reasoning item this package carried through can go back
			// to OpenAI; an Anthropic signature never crosses families.
			id, enc, ok := responsesCarriedReasoning(blk.RawSignature())
			if !ok {
				continue
			}
			flush()
			b := item()
			b.WriteString(`{"type":"reasoning","id":`)
			b.Write(anthropic.AppendQuote(b.AvailableBuffer(), id))
			b.WriteString(`,"summary":[`)
			if t := blk.RawThinking(); isJSONString(t) && !isEmptyJSONString(t) {
				b.WriteString(`{"type":"summary_text","text":`)
				b.Write(t)
				b.WriteByte('}')
			}
			b.WriteString(`],"encrypted_content":`)
			b.Write(anthropic.AppendQuote(b.AvailableBuffer(), enc))
			b.WriteByte('}')
		default:
			// redacted_thinking, server tool calls and their results are
			// Anthropic's own; a Responses upstream can read none of them.
			continue
		}
	}
	flush()
	return parts, nil
}

// responsesCarriedReasoning splits a thinking signature carrying an OpenAI
// reasoning item (parseResponsesReasoningSignature) into its id and
// encrypted content, from the raw string when it has no escapes (the
// signatures this package writes have none).
func responsesCarriedReasoning(rawSig []byte) (id, encrypted []byte, ok bool) {
	if !isJSONString(rawSig) || bytes.IndexByte(rawSig, '\\') >= 0 {
		i, e, ok := parseResponsesReasoningSignature(anthropic.Unquote(rawSig))
		return []byte(i), []byte(e), ok
	}
	rest, ok := bytes.CutPrefix(rawSig[1:len(rawSig)-1], []byte(responsesReasoningPrefix))
	if !ok {
		return nil, nil, false
	}
	id, encrypted, ok = bytes.Cut(rest, []byte(":"))
	return id, encrypted, ok
}

// writeResponsesQuoted writes a short string member (an id, a name) as
// anthropic.Quote(decoded()) would: the raw string itself when it has no
// escapes and valid UTF-8, as it then reads the same.
func writeResponsesQuoted(b *bytes.Buffer, raw []byte, decoded func() string) {
	if isJSONString(raw) && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		b.Write(raw)
		return
	}
	b.Write(anthropic.Quote(decoded()))
}

func writeResponsesPart(b *bytes.Buffer, typ string, rawText []byte, extra string) {
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteString(`","text":`)
	b.Write(rawText)
	b.WriteString(extra)
	b.WriteByte('}')
}

func responsesPart(typ string, rawText []byte, extra string) []byte {
	b := make([]byte, 0, len(rawText)+len(typ)+len(extra)+24)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","text":`...)
	b = append(b, rawText...)
	b = append(b, extra...)
	return append(b, '}')
}

func responsesMediaFromAnthropic(blk anthropic.Block, paramOf func() string) ([]byte, error) {
	src, err := parseResponsesFields(blk.Source())
	if err != nil {
		param := paramOf()
		return nil, responsesBadRequest(param+".source", "%s.source: Field required", param)
	}
	var b bytes.Buffer
	kind := anthropic.Unquote(src.Type)
	switch {
	case blk.Type == "image" && kind == "base64":
		b.WriteString(`{"type":"input_image","detail":"auto","image_url":`)
		b.Write(anthropic.Quote("data:" + anthropic.Unquote(src.MediaType) + ";base64," + anthropic.Unquote(src.Data)))
	case blk.Type == "image" && kind == "url":
		b.WriteString(`{"type":"input_image","detail":"auto","image_url":`)
		b.Write(src.URL)
	case blk.Type == "document" && kind == "base64":
		b.WriteString(`{"type":"input_file","filename":`)
		title := ""
		if t := anthropic.MemberValue(blk.Raw(), "title"); isJSONString(t) {
			title = anthropic.Unquote(t)
		}
		if title == "" {
			title = "document.pdf"
		}
		b.Write(anthropic.Quote(title))
		b.WriteString(`,"file_data":`)
		b.Write(anthropic.Quote("data:" + anthropic.Unquote(src.MediaType) + ";base64," + anthropic.Unquote(src.Data)))
	case blk.Type == "document" && kind == "url":
		b.WriteString(`{"type":"input_file","file_url":`)
		b.Write(src.URL)
	case blk.Type == "document" && kind == "text":
		return responsesPart("input_text", src.Data, ""), nil
	default:
		param := paramOf()
		return nil, responsesBadRequest(param+".source.type", "%s sources of type '%s' cannot be sent to a Responses upstream", blk.Type, kind)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// responsesToolResultFromAnthropic writes a tool_result as a
// function_call_output. is_error has no Responses counterpart and is dropped
// (the text of the result still says what went wrong).
func responsesToolResultFromAnthropic(blk anthropic.Block, paramOf func() string, b *bytes.Buffer) error {
	b.WriteString(`{"type":"function_call_output","call_id":`)
	b.Write(anthropic.Quote(blk.ToolUseID()))
	b.WriteString(`,"output":`)
	content := blk.Content()
	switch {
	case isJSONNull(content):
		b.WriteString(`""`)
	case isJSONString(content):
		b.Write(content)
	default:
		blocks, _, err := blk.ContentBlocks()
		if err != nil {
			param := paramOf()
			return responsesBadRequest(param+".content", "%s.content: expected a string or content blocks", param)
		}
		b.WriteByte('[')
		n := 0
		for k, c := range blocks {
			var p []byte
			switch c.Type {
			case "text":
				p = responsesPart("input_text", c.RawText(), "")
			case "image", "document":
				p, err = responsesMediaFromAnthropic(c, func() string { return paramOf() + ".content." + strconv.Itoa(k) })
				if err != nil {
					return err
				}
			default:
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(p)
			n++
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return nil
}

// responsesToolsFromAnthropic writes client tools as function tools. strict
// is false because Messages schemas need not meet strict mode's rules (every
// property required, no additional properties), and Responses defaults to
// strict. Anthropic's server and computer-use tools run only on Anthropic.
func responsesToolsFromAnthropic(w *responsesWriter, tools []byte) error {
	elems, err := responsesElements(tools)
	if err != nil {
		return responsesBadRequest("tools", "tools: Input should be a valid list")
	}
	var server []string
	var defs [][]byte
	for i, e := range elems {
		f := e.f
		if typ := anthropic.Unquote(f.Type); typ != "" && typ != "custom" {
			server = append(server, typ)
			continue
		}
		if !isJSONString(f.Name) {
			return responsesBadRequest("tools."+strconv.Itoa(i)+".name", "tools.%d.name: Field required", i)
		}
		var b bytes.Buffer
		b.WriteString(`{"type":"function","name":`)
		b.Write(f.Name)
		if isJSONString(f.Description) {
			b.WriteString(`,"description":`)
			b.Write(f.Description)
		}
		b.WriteString(`,"parameters":`)
		b.Write(responsesObjectSchema(anthropic.MemberValue(e.raw, "input_schema")))
		b.WriteString(`,"strict":false}`)
		defs = append(defs, b.Bytes())
	}
	if len(server) > 0 {
		return responsesBadRequest("tools", "Anthropic's built-in tools cannot be served by an OpenAI upstream: %s.", strings.Join(server, ", "))
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
	return nil
}
