package openai

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Limits of the Chat API: stop sequences, characters of user.
const (
	chatMaxStop = 4
	chatMaxUser = 64
)

// ChatRequestFromAnthropic translates a Messages request into a Chat
// Completions request, for OpenAI and the servers that speak its Chat API
// (DeepSeek, Ollama, vLLM…). Errors are *ChatRequestError; AnthropicJSON
// renders them for a Messages client.
func ChatRequestFromAnthropic(body []byte, opts ChatRequestOptions) ([]byte, error) {
	if err := responsesCheckStrings(body); err != nil {
		return nil, responsesSyntaxError(err)
	}
	req, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil, responsesSyntaxError(err)
	}
	var maxTokens, toolChoice, temperature, topP, metadata, stream, outputConfig, stopSequences []byte
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
		case "stop_sequences":
			stopSequences = m.Value
		}
	}
	if req.Model == "" {
		return nil, responsesBadRequest("model", "model: Field required")
	}

	var out bytes.Buffer
	out.Grow(len(body) + len(body)/8 + 256)
	w := newResponsesWriter(&out)
	w.str("model", req.Model)

	w.key("messages")
	out.WriteByte('[')
	c := chatMessageWriter{out: &out, dropped: opts.OnDropped}
	if err := c.system(req.System); err != nil {
		return nil, err
	}
	for i, m := range req.Messages {
		if err := c.message(m, "messages."+strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	out.WriteByte(']')

	hasTools := false
	if !isJSONNull(req.Tools) {
		n, err := chatToolsFromAnthropic(&w, req.Tools)
		if err != nil {
			return nil, err
		}
		hasTools = n > 0
	}
	if len(toolChoice) > 0 && toolChoice[0] == '{' && hasTools {
		f, err := parseChatFields(toolChoice)
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
			out.WriteString(`{"type":"function","function":{"name":`)
			out.Write(f.Name)
			out.WriteString("}}")
		}
		if string(anthropic.MemberValue(toolChoice, "disable_parallel_tool_use")) == "true" {
			w.raw("parallel_tool_calls", []byte("false"))
		}
	}
	// A request that came from a Chat client without a limit (ForChat) has
	// no max_tokens, and so has this one.
	if !isJSONNull(maxTokens) {
		if opts.LegacyMaxTokens {
			w.raw("max_tokens", maxTokens)
		} else {
			w.raw("max_completion_tokens", maxTokens)
		}
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
		w.str("reasoning_effort", effort)
	}
	if len(outputConfig) > 0 && outputConfig[0] == '{' {
		if format := anthropic.MemberValue(outputConfig, "format"); len(format) > 0 && format[0] == '{' &&
			anthropic.Unquote(anthropic.MemberValue(format, "type")) == "json_schema" {
			w.key("response_format")
			out.WriteString(`{"type":"json_schema","json_schema":{"name":"output","schema":`)
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
	if len(stopSequences) > 0 && stopSequences[0] == '[' {
		var seqs [][]byte
		if anthropic.EachElement(stopSequences, func(v []byte) error {
			if isJSONString(v) && len(seqs) < chatMaxStop {
				seqs = append(seqs, v)
			}
			return nil
		}) == nil && len(seqs) > 0 {
			w.key("stop")
			out.WriteByte('[')
			out.Write(bytes.Join(seqs, []byte(",")))
			out.WriteByte(']')
		}
	}
	// OpenAI refuses a user longer than 64 characters; Claude Code's user_id
	// is longer, and only the proxy needs it.
	if len(metadata) > 0 && metadata[0] == '{' {
		if uid := anthropic.MemberValue(metadata, "user_id"); isJSONString(uid) && utf8.RuneCountInString(anthropic.Unquote(uid)) <= chatMaxUser {
			w.raw("user", uid)
		}
	}
	if string(stream) == "true" {
		w.raw("stream", stream)
		// The usage of a streamed reply comes only in a last chunk the
		// client must ask for.
		w.raw("stream_options", []byte(`{"include_usage":true}`))
	}
	w.end()
	return out.Bytes(), nil
}

// chatMessageWriter writes Chat messages into an array being built.
type chatMessageWriter struct {
	out     *bytes.Buffer
	n       int
	dropped func(blockType string)
}

func (c *chatMessageWriter) next() *bytes.Buffer {
	if c.n > 0 {
		c.out.WriteByte(',')
	}
	c.n++
	return c.out
}

func (c *chatMessageWriter) drop(blockType string) {
	if c.dropped != nil {
		c.dropped(blockType)
	}
}

// system writes the system prompt as the first message: one string, text
// blocks joined by blank lines.
func (c *chatMessageWriter) system(system []byte) error {
	if isJSONNull(system) {
		return nil
	}
	var content []byte
	switch {
	case isJSONString(system):
		content = system
	case system[0] == '[':
		blocks, err := anthropic.ParseBlocks(system)
		if err != nil {
			return responsesBadRequest("system", "system: expected a string or text blocks")
		}
		texts := make([][]byte, 0, len(blocks))
		for _, b := range blocks {
			if b.Type != "text" || !isJSONString(b.RawText()) {
				return responsesBadRequest("system", "system: expected a string or text blocks")
			}
			texts = append(texts, b.RawText())
		}
		switch len(texts) {
		case 0:
			return nil
		case 1:
			content = texts[0]
		default:
			joined := make([]string, len(texts))
			for i, t := range texts {
				joined[i] = anthropic.Unquote(t)
			}
			content = anthropic.Quote(strings.Join(joined, "\n\n"))
		}
	default:
		return responsesBadRequest("system", "system: expected a string or text blocks")
	}
	b := c.next()
	b.WriteString(`{"role":"system","content":`)
	b.Write(content)
	b.WriteByte('}')
	return nil
}

func (c *chatMessageWriter) message(m anthropic.Message, param string) error {
	if m.Role != "user" && m.Role != "assistant" {
		return responsesBadRequest(param+".role", "%s.role: Input should be 'user' or 'assistant'", param)
	}
	if m.IsString {
		b := c.next()
		b.WriteString(`{"role":"`)
		b.WriteString(m.Role)
		b.WriteString(`","content":`)
		b.Write(m.RawText())
		b.WriteByte('}')
		return nil
	}
	if m.Role == "assistant" {
		return c.assistant(m)
	}
	return c.user(m, param)
}

// user writes a user turn: its tool results first, as tool messages (the
// Chat API wants them right after the assistant's tool calls), then the
// rest of the turn, with any images the results held, as one user message.
func (c *chatMessageWriter) user(m anthropic.Message, param string) error {
	var parts [][]byte
	for j, blk := range m.Blocks {
		bp := param + ".content." + strconv.Itoa(j)
		switch blk.Type {
		case "tool_result":
			images, err := c.toolResult(blk, bp)
			if err != nil {
				return err
			}
			parts = append(parts, images...)
		case "text":
			parts = append(parts, chatTextPart(blk.RawText()))
		case "image":
			p, err := chatImagePart(blk, bp)
			if err != nil {
				return err
			}
			parts = append(parts, p)
		case "document":
			parts = append(parts, chatTextPart(chatDocumentNote(blk)))
		default:
			c.drop(blk.Type)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	b := c.next()
	b.WriteString(`{"role":"user","content":[`)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteString("]}")
	return nil
}

// toolResult writes a tool_result as a tool message with the result's text,
// and returns its images as parts for the user message after it (a tool
// message carries text only). is_error has no Chat counterpart; the text
// says what went wrong.
func (c *chatMessageWriter) toolResult(blk anthropic.Block, param string) (images [][]byte, err error) {
	content := blk.Content()
	var text []byte
	switch {
	case isJSONNull(content):
		text = []byte(`""`)
	case isJSONString(content):
		text = content
	default:
		blocks, _, err := blk.ContentBlocks()
		if err != nil {
			return nil, responsesBadRequest(param+".content", "%s.content: expected a string or content blocks", param)
		}
		var texts [][]byte
		for k, cb := range blocks {
			switch cb.Type {
			case "text":
				texts = append(texts, cb.RawText())
			case "image":
				p, err := chatImagePart(cb, param+".content."+strconv.Itoa(k))
				if err != nil {
					return nil, err
				}
				images = append(images, p)
			case "document":
				texts = append(texts, chatDocumentNote(cb))
			default:
				c.drop(cb.Type)
			}
		}
		switch {
		case len(texts) == 1:
			text = texts[0]
		case len(texts) > 1:
			// Text parts stay parts (a tool message may carry an array of text parts:
			// openai-node's ChatCompletionToolMessageParam): joined into one string they
			// would no longer be what the compressor budgeted, and compacting the result
			// again would cut it again.
			parts := []byte{'['}
			for i, t := range texts {
				if i > 0 {
					parts = append(parts, ',')
				}
				parts = append(parts, `{"type":"text","text":`...)
				parts = append(parts, t...)
				parts = append(parts, '}')
			}
			text = append(parts, ']')
		case len(images) > 0:
			text = anthropic.Quote("The result is the image in the next message.")
		default:
			text = []byte(`""`)
		}
	}
	b := c.next()
	b.WriteString(`{"role":"tool","tool_call_id":`)
	b.Write(anthropic.Quote(blk.ToolUseID()))
	b.WriteString(`,"content":`)
	b.Write(text)
	b.WriteByte('}')
	return images, nil
}

// assistant writes an assistant turn: its texts as one content string, its
// tool_use blocks as tool_calls. Thinking that a Chat upstream issued goes
// back as reasoning_content; Claude's (signed) thinking never goes to
// OpenAI, and neither do Anthropic's server tool blocks.
func (c *chatMessageWriter) assistant(m anthropic.Message) error {
	var texts, reasoning [][]byte
	var calls [][]byte
	for _, blk := range m.Blocks {
		switch blk.Type {
		case "text":
			if !isEmptyJSONString(blk.RawText()) {
				texts = append(texts, blk.RawText())
			}
		case "thinking":
			if !ChatIsReasoningSignature(blk.Signature()) {
				c.drop(blk.Type)
				continue
			}
			if t := blk.RawThinking(); isJSONString(t) && !isEmptyJSONString(t) {
				reasoning = append(reasoning, t)
			}
		case "tool_use":
			args := blk.Input()
			if isJSONNull(args) {
				args = []byte("{}")
			}
			var b bytes.Buffer
			b.WriteString(`{"id":`)
			b.Write(anthropic.Quote(blk.ID()))
			b.WriteString(`,"type":"function","function":{"name":`)
			b.Write(anthropic.Quote(blk.Name()))
			b.WriteString(`,"arguments":`)
			b.Write(anthropic.Quote(string(compactJSON(args))))
			b.WriteString("}}")
			calls = append(calls, b.Bytes())
		default:
			c.drop(blk.Type)
		}
	}
	if len(texts) == 0 && len(calls) == 0 && len(reasoning) == 0 {
		return nil
	}
	b := c.next()
	b.WriteString(`{"role":"assistant","content":`)
	if len(texts) == 0 {
		b.WriteString("null")
	} else {
		b.Write(chatJoinRaw(texts, ""))
	}
	if len(reasoning) > 0 {
		b.WriteString(`,"reasoning_content":`)
		b.Write(chatJoinRaw(reasoning, ""))
	}
	if len(calls) > 0 {
		b.WriteString(`,"tool_calls":[`)
		b.Write(bytes.Join(calls, []byte(",")))
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return nil
}

// chatJoinRaw joins raw JSON strings with sep into one raw JSON string; one
// string is returned as it came (a long text is not decoded for nothing).
func chatJoinRaw(raws [][]byte, sep string) []byte {
	if len(raws) == 1 {
		return raws[0]
	}
	parts := make([]string, len(raws))
	for i, r := range raws {
		parts[i] = anthropic.Unquote(r)
	}
	return anthropic.Quote(strings.Join(parts, sep))
}

func chatTextPart(rawText []byte) []byte {
	b := make([]byte, 0, len(rawText)+24)
	b = append(b, `{"type":"text","text":`...)
	b = append(b, rawText...)
	return append(b, '}')
}

// chatImagePart turns an image block into an image_url part: base64 data
// into a data URL (built from the raw bytes: the data is never decoded), a
// URL as it is.
func chatImagePart(blk anthropic.Block, param string) ([]byte, error) {
	src, err := parseChatFields(blk.Source())
	if err != nil {
		return nil, responsesBadRequest(param+".source", "%s.source: Field required", param)
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"image_url","image_url":{"url":`)
	switch kind := anthropic.Unquote(src.Type); kind {
	case "base64":
		mt := responsesName(src.MediaType)
		if !isJSONString(src.Data) || len(mt) == 0 {
			return nil, responsesBadRequest(param+".source", "%s.source: media_type and data are required", param)
		}
		prefix := anthropic.Quote("data:" + string(mt) + ";base64,")
		b.Write(prefix[:len(prefix)-1])
		b.Write(src.Data[1 : len(src.Data)-1])
		b.WriteByte('"')
	case "url":
		if !isJSONString(src.URL) {
			return nil, responsesBadRequest(param+".source.url", "%s.source.url: Field required", param)
		}
		b.Write(src.URL)
	default:
		return nil, responsesBadRequest(param+".source.type", "image sources of type '%s' cannot be sent to a Chat Completions upstream", kind)
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

// chatDocumentNote stands in for a document, which Chat servers other than
// OpenAI's cannot read: a text document's text, else a note saying what was
// left out (so the model does not answer as if it had read it).
func chatDocumentNote(blk anthropic.Block) []byte {
	src, _ := parseChatFields(blk.Source()) // a malformed source gives the note
	if anthropic.Unquote(src.Type) == "text" && isJSONString(src.Data) {
		return src.Data
	}
	title := anthropic.Unquote(anthropic.MemberValue(blk.Raw(), "title"))
	if title == "" {
		title = "untitled"
	}
	return anthropic.Quote("[A document (" + title + ") was attached here; this model cannot read documents.]")
}

// chatToolsFromAnthropic writes client tools as function tools; Anthropic's
// server and computer-use tools run only on Anthropic.
func chatToolsFromAnthropic(w *responsesWriter, tools []byte) (int, error) {
	var server []string
	var defs [][]byte
	err := chatEachElement(tools, func(i int, raw []byte, f *chatFields) error {
		if typ := anthropic.Unquote(f.Type); typ != "" && typ != "custom" {
			server = append(server, typ)
			return nil
		}
		if !isJSONString(f.Name) {
			return responsesBadRequest("tools."+strconv.Itoa(i)+".name", "tools.%d.name: Field required", i)
		}
		var b bytes.Buffer
		b.WriteString(`{"type":"function","function":{"name":`)
		b.Write(f.Name)
		if isJSONString(f.Description) {
			b.WriteString(`,"description":`)
			b.Write(f.Description)
		}
		b.WriteString(`,"parameters":`)
		b.Write(responsesObjectSchema(anthropic.MemberValue(raw, "input_schema")))
		b.WriteString("}}")
		defs = append(defs, b.Bytes())
		return nil
	})
	var re *ChatRequestError
	if errors.As(err, &re) {
		return 0, re
	}
	if err != nil {
		return 0, responsesBadRequest("tools", "tools: Input should be a valid list")
	}
	if len(server) > 0 {
		return 0, responsesBadRequest("tools", "Anthropic's built-in tools cannot be served by an OpenAI upstream: %s.", strings.Join(server, ", "))
	}
	if len(defs) == 0 {
		return 0, nil
	}
	w.key("tools")
	w.buf.WriteByte('[')
	w.buf.Write(bytes.Join(defs, []byte(",")))
	w.buf.WriteByte(']')
	return len(defs), nil
}
