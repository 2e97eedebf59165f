package openai

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// Request translation between Chat Completions and Anthropic Messages.
// Wire formats checked against openai-node's src/resources/chat/completions
// (ChatCompletionCreateParamsBase, ChatCompletionMessageParam and its five
// roles, ChatCompletionContentPart, ChatCompletionMessageFunctionToolCall,
// ChatCompletionFunctionTool, ChatCompletionToolChoiceOption,
// ChatCompletionStreamOptions), shared.ts (ResponseFormatJSONSchema,
// ReasoningEffort) and the docs corpus (chunk delta.tool_calls[].index,
// stream_options.include_usage: a last chunk with choices [] and the usage,
// every earlier chunk "usage": null). Field by field (Chat ⇄ Messages):
//
//	model                       ⇄ model
//	system and developer        ⇄ system (a string, or text blocks when
//	  messages                       several; Messages has no system turns)
//	user content string/parts   ⇄ user turn: text ⇄ text, image_url ⇄ image
//	                                 (data URL ⇄ base64, http(s) ⇄ url),
//	                                 file (PDF data URL) → document,
//	                                 document → text note; input_audio → 400
//	assistant content + refusal ⇄ text blocks (joined into one string toward Chat)
//	assistant tool_calls        ⇄ tool_use blocks (id; function.arguments, a
//	  (parallel)                     JSON string ⇄ input object, compact)
//	tool messages               ⇄ tool_result blocks, all in ONE user turn
//	                                 (consecutive tool messages merge, a user
//	                                 message right after joins them), paired by
//	                                 tool_call_id; image parts kept toward
//	                                 Messages; toward Chat a result's images go
//	                                 in a user message after the tool messages
//	                                 (tool messages carry text only);
//	                                 is_error is dropped (no counterpart)
//	assistant reasoning_content → thinking only when it can be restored:
//	  (DeepSeek) / thinking_blocks   Claude's signed thinking rides to a Chat
//	  (LiteLLM's field)              client in thinking_blocks under a marked
//	                                 signature and comes back from it; a Chat
//	                                 upstream's reasoning_content rides as
//	                                 thinking with a marked signature
//	                                 (ChatIsReasoningSignature) and goes back
//	                                 only to a Chat upstream; unmarked → dropped
//	tools (function)            ⇄ tools (parameters ⇄ input_schema, kept an
//	                                 object schema); custom tools → 400
//	tool_choice auto/none/required/{function} ⇄ {auto}/{none}/{any}/{tool}
//	parallel_tool_calls false   ⇄ tool_choice.disable_parallel_tool_use
//	max_completion_tokens,      ⇄ max_tokens (default opts.MaxTokens or
//	  else max_tokens                ChatDefaultMaxTokens); toward Chat
//	                                 max_completion_tokens, or max_tokens with
//	                                 opts.LegacyMaxTokens
//	reasoning_effort            ⇄ thinking budget (low 2048, medium 8192, high
//	                                 24576, xhigh 32768; minimal/none → off;
//	                                 dropped when a tool is forced)
//	response_format json_schema ⇄ output_config.format json_schema
//	response_format json_object → a note at the end of the system prompt
//	temperature, top_p          ⇄ temperature, top_p (dropped with thinking on)
//	stop (string or list)       ⇄ stop_sequences (at most 4 toward Chat, its limit)
//	metadata.user_id, else      ⇄ metadata.user_id (the proxy's session key)
//	  prompt_cache_key,              → user toward Chat, when at most 64
//	  safety_identifier, user        characters (OpenAI's limit)
//	stream                      ⇄ stream; toward Chat also stream_options
//	                                 {"include_usage":true} (usage is needed);
//	                                 a Chat client's include_usage is read by
//	                                 ChatIncludeUsage for the reply side
//	n other than 1, functions, function messages → 400 naming the field
//	logprobs, top_logprobs, seed, penalties, logit_bias, service_tier, store,
//	prediction, modalities, audio, web_search_options, top_k: dropped.
//
// Replies (chat_reply.go) and streams (chat_stream_*.go):
//
//	choices[0].message.content  ⇄ text block (texts joined toward Chat)
//	message.refusal             → text block
//	message.reasoning_content   ⇄ thinking (marked, see above); toward Chat
//	                                 every thinking text, Claude's signed
//	                                 blocks also in thinking_blocks
//	message.tool_calls          ⇄ tool_use blocks (arguments ⇄ input)
//	finish_reason stop/length/  ⇄ stop_reason end_turn/max_tokens/tool_use/
//	  tool_calls/content_filter      refusal (tool calls decide on "stop")
//	usage prompt_tokens minus   ⇄ input_tokens; cached_tokens (DeepSeek:
//	  cached, completion_tokens      prompt_cache_hit_tokens) ⇄
//	                                 cache_read_input_tokens; completion ⇄
//	                                 output_tokens; toward Chat prompt_tokens
//	                                 = input + cache read + cache creation
//	id chatcmpl-X               ⇄ msg_X; created from opts.Now
//	chunks: delta.role first, delta.content ⇄ text_delta,
//	  delta.reasoning_content ⇄ thinking_delta, delta.tool_calls[i] (first
//	  with id, name, arguments "") ⇄ tool_use start + input_json_delta,
//	  finish_reason chunk, usage chunk (choices []) when include_usage,
//	  data: [DONE] ⇄ message_delta + message_stop; {"error":{…}} ⇄ error event

// ChatDefaultMaxTokens is the max_tokens of a Messages request translated
// from a Chat request that sets no token limit.
const ChatDefaultMaxTokens = ResponsesDefaultMaxTokens

// ChatRequestError is a request a Chat Completions translation refuses; the
// same type as the Responses one (both render OpenAI's error shape with
// JSON, and Anthropic's with AnthropicJSON).
type ChatRequestError = ResponsesRequestError

// ChatRequestOptions is what a Chat request translation needs from outside.
// The zero value is usable.
type ChatRequestOptions struct {
	// ForChat says the Messages-shape request will be translated back to
	// Chat (a Chat upstream, after compaction) instead of going to
	// Anthropic: reasoning_content then rides as thinking with a marked
	// signature, max_tokens is written only when the client set a limit,
	// and the Messages-only rules (no thinking with a forced tool, no
	// temperature with thinking) are not applied.
	ForChat bool
	// MaxTokens is max_tokens when the request sets no limit. 0 =
	// ChatDefaultMaxTokens.
	MaxTokens int
	// LegacyMaxTokens writes max_tokens instead of max_completion_tokens
	// toward Chat, for compatible servers that know only the older name.
	LegacyMaxTokens bool
	// OnDropped is called with the type of each Messages block a Chat
	// upstream cannot take (thinking, redacted_thinking, server tool
	// blocks). nil: they are dropped silently.
	OnDropped func(blockType string)
}

// ChatIsReasoningSignature reports whether a thinking signature marks a
// Chat upstream's reasoning_content carried through the Messages shape
// (family "openai"): it must never reach Anthropic.
func ChatIsReasoningSignature(signature string) bool {
	return strings.HasPrefix(signature, chatReasoningSignature)
}

// chatJSONObjectNote asks for what response_format json_object guarantees on
// OpenAI: Messages has no JSON mode, so the system prompt says it.
const chatJSONObjectNote = "Respond with a single valid JSON object and nothing else: no prose, no code fences."

// ChatIncludeUsage reports whether a Chat request asks for the usage chunk
// at the end of its stream (stream_options.include_usage): the Messages
// request does not carry it, and the reply side needs it.
func ChatIncludeUsage(body []byte) bool {
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	so := anthropic.MemberValue(body, "stream_options")
	if len(so) == 0 || so[0] != '{' {
		return false
	}
	return string(anthropic.MemberValue(so, "include_usage")) == "true"
}

// ChatRequestToAnthropic translates a Chat Completions request into a
// Messages request. Errors are *ChatRequestError.
func ChatRequestToAnthropic(body []byte, opts ChatRequestOptions) ([]byte, error) {
	var (
		model, messages, tools, toolChoice, parallel, maxTokensRaw     []byte
		maxCompletion, temperature, topP, stop, responseFormat, effort []byte
		stream, metadata, user, promptCacheKey, safetyIdentifier, n    []byte
		functions                                                      []byte
	)
	if len(body) == 0 || body[0] != '{' {
		return nil, responsesBadRequest("", "The request body must be a JSON object.")
	}
	if err := responsesCheckStrings(body); err != nil {
		return nil, responsesSyntaxError(err)
	}
	err := anthropic.EachMember(body, func(k, v []byte) error {
		switch string(k) {
		case "model":
			model = v
		case "messages":
			messages = v
		case "tools":
			tools = v
		case "tool_choice":
			toolChoice = v
		case "parallel_tool_calls":
			parallel = v
		case "max_tokens":
			maxTokensRaw = v
		case "max_completion_tokens":
			maxCompletion = v
		case "temperature":
			temperature = v
		case "top_p":
			topP = v
		case "stop":
			stop = v
		case "response_format":
			responseFormat = v
		case "reasoning_effort":
			effort = v
		case "stream":
			stream = v
		case "metadata":
			metadata = v
		case "user":
			user = v
		case "prompt_cache_key":
			promptCacheKey = v
		case "safety_identifier":
			safetyIdentifier = v
		case "n":
			n = v
		case "functions":
			functions = v
		}
		return nil
	})
	if err != nil {
		return nil, responsesSyntaxError(err)
	}
	if !isJSONString(model) {
		return nil, responsesBadRequest("model", "Missing required parameter: 'model'.")
	}
	if !isJSONNull(n) && string(n) != "1" {
		return nil, &ChatRequestError{Status: http.StatusBadRequest, Code: "unsupported_value", Param: "n",
			Message: "Only one choice (n = 1) can be generated by this upstream."}
	}
	if !isJSONNull(functions) {
		return nil, responsesBadRequest("functions", "The deprecated 'functions' parameter is not supported; send the functions as 'tools'.")
	}
	if isJSONNull(messages) {
		return nil, responsesBadRequest("messages", "Missing required parameter: 'messages'.")
	}

	turns := responsesTurns{calls: map[string]bool{}, answered: map[string]bool{}}
	var system [][]byte // raw JSON strings
	err = chatEachElement(messages, func(i int, _ []byte, m *chatFields) error {
		sys, err := turns.chatMessage(m, i, opts.ForChat)
		system = append(system, sys...)
		return err
	})
	var re *ChatRequestError
	if errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		return nil, responsesBadRequest("messages", "Invalid 'messages': expected an array of message objects (%v).", err)
	}
	var unanswered []string
	for _, id := range turns.order {
		if !turns.answered[id] {
			unanswered = append(unanswered, id)
		}
	}
	if len(unanswered) > 0 {
		return nil, responsesBadRequest("messages", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(unanswered, ", "))
	}
	if len(turns.turns) == 0 && !opts.ForChat {
		return nil, responsesBadRequest("messages", "At least one user or assistant message is required.")
	}

	var out bytes.Buffer
	out.Grow(len(body) + len(body)/8 + 1024)
	w := newResponsesWriter(&out)
	w.raw("model", model)

	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = ChatDefaultMaxTokens
	}
	limitSet := false
	for _, lim := range []struct {
		name string
		raw  []byte
	}{{"max_tokens", maxTokensRaw}, {"max_completion_tokens", maxCompletion}} {
		if isJSONNull(lim.raw) {
			continue
		}
		v, err := strconv.Atoi(string(lim.raw))
		if err != nil || v < 1 {
			return nil, responsesBadRequest(lim.name, "Invalid '%s': expected a positive integer.", lim.name)
		}
		maxTokens, limitSet = v, true // max_completion_tokens, read last, wins
	}
	if limitSet || !opts.ForChat {
		w.int("max_tokens", maxTokens)
	}

	formatFields := chatFields{}
	if !isJSONNull(responseFormat) {
		if formatFields, err = parseChatFields(responseFormat); err != nil {
			return nil, responsesBadRequest("response_format", "Invalid 'response_format': expected an object.")
		}
		switch typ := anthropic.Unquote(formatFields.Type); typ {
		case "text", "json_schema":
		case "json_object":
			system = append(system, anthropic.Quote(chatJSONObjectNote))
		default:
			return nil, responsesBadRequest("response_format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_schema' and 'json_object'.", typ)
		}
	}
	if len(system) > 0 {
		w.key("system")
		if len(system) == 1 {
			out.Write(system[0])
		} else {
			out.WriteByte('[')
			for i, s := range system {
				if i > 0 {
					out.WriteByte(',')
				}
				responsesTextBlock(s).writeTo(&out)
			}
			out.WriteByte(']')
		}
	}

	w.key("messages")
	out.WriteByte('[')
	for i, t := range turns.turns {
		if i > 0 {
			out.WriteByte(',')
		}
		writeResponsesTurn(&out, t)
	}
	out.WriteByte(']')

	hasTools := false
	if !isJSONNull(tools) {
		n, err := chatToolsToAnthropic(&w, tools)
		if err != nil {
			return nil, err
		}
		hasTools = n > 0
	}
	forced, err := chatToolChoiceToAnthropic(&w, toolChoice, parallel, hasTools)
	if err != nil {
		return nil, err
	}

	thinking := false
	if !isJSONNull(effort) {
		if !isJSONString(effort) {
			return nil, responsesBadRequest("reasoning_effort", "Invalid type for 'reasoning_effort': expected a string.")
		}
		e := anthropic.Unquote(effort)
		budget, ok := responsesBudgetForEffort(e)
		switch {
		case !ok && e != "none" && e != "minimal" && e != "":
			return nil, responsesBadRequest("reasoning_effort", "Invalid value: '%s'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high' and 'xhigh'.", e)
		case ok && (!forced || opts.ForChat):
			// Messages refuses thinking with a forced tool call; the
			// explicit tool_choice wins.
			budget = min(budget, maxTokens-1024)
			if budget >= 1024 {
				w.key("thinking")
				out.WriteString(`{"type":"enabled","budget_tokens":`)
				out.WriteString(strconv.Itoa(budget))
				out.WriteByte('}')
				thinking = true
			}
		}
	}
	if anthropic.Unquote(formatFields.Type) == "json_schema" {
		schema := []byte(nil)
		if js := anthropic.MemberValue(responseFormat, "json_schema"); len(js) > 0 && js[0] == '{' {
			schema = anthropic.MemberValue(js, "schema")
		}
		if len(schema) == 0 || schema[0] != '{' {
			return nil, responsesBadRequest("response_format.json_schema.schema", "Missing required parameter: 'response_format.json_schema.schema'.")
		}
		w.key("output_config")
		out.WriteString(`{"format":{"type":"json_schema","schema":`)
		out.Write(schema)
		out.WriteString("}}")
	}
	// Messages refuses a temperature other than 1 (and a low top_p) with
	// thinking on.
	if !thinking || opts.ForChat {
		if !isJSONNull(temperature) {
			w.raw("temperature", temperature)
		}
		if !isJSONNull(topP) {
			w.raw("top_p", topP)
		}
	}
	if !isJSONNull(stop) {
		if err := chatStopToAnthropic(&w, stop); err != nil {
			return nil, err
		}
	}
	// Messages' metadata has one key, user_id, which is also what the proxy
	// keys sessions on.
	userID := []byte(nil)
	if len(metadata) > 0 && metadata[0] == '{' {
		if v := anthropic.MemberValue(metadata, "user_id"); isJSONString(v) {
			userID = v
		}
	}
	for _, v := range [][]byte{promptCacheKey, safetyIdentifier, user} {
		if userID == nil && isJSONString(v) && !isEmptyJSONString(v) {
			userID = v
		}
	}
	if userID != nil {
		w.key("metadata")
		out.WriteString(`{"user_id":`)
		out.Write(userID)
		out.WriteByte('}')
	}
	if string(stream) == "true" {
		w.raw("stream", stream)
	}
	w.end()
	return out.Bytes(), nil
}

// chatMessage translates one message, appending to the turns; system and
// developer messages are returned as raw strings for the system prompt.
func (t *responsesTurns) chatMessage(m *chatFields, index int, forChat bool) (system [][]byte, err error) {
	param := "messages[" + strconv.Itoa(index) + "]"
	switch r := responsesName(m.Role); string(r) {
	case "system", "developer":
		return chatSystemTexts(m.Content, param)
	case "user":
		return nil, t.chatContent("user", m.Content, param, false)
	case "assistant":
		return nil, t.chatAssistant(m, param, forChat)
	case "tool":
		return nil, t.chatToolResult(m, param)
	case "function":
		return nil, responsesBadRequest(param+".role", "Messages of the deprecated role 'function' are not supported; use tool_calls and 'tool' messages.")
	default:
		return nil, responsesBadRequest(param+".role", "Invalid value: '%s'. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.", r)
	}
}

func chatSystemTexts(content []byte, param string) ([][]byte, error) {
	if isJSONString(content) {
		if isEmptyJSONString(content) {
			return nil, nil
		}
		return [][]byte{content}, nil
	}
	var out [][]byte
	err := chatEachElement(content, func(j int, _ []byte, p *chatFields) error {
		if string(responsesName(p.Type)) != "text" || !isJSONString(p.Text) {
			return responsesBadRequest(param+".content["+strconv.Itoa(j)+"]", "System and developer messages may only hold text parts.")
		}
		if !isEmptyJSONString(p.Text) {
			out = append(out, p.Text)
		}
		return nil
	})
	return out, chatPartsError(err, param+".content")
}

// chatContent adds a user or assistant content (a string or parts).
func (t *responsesTurns) chatContent(role string, content []byte, param string, assistant bool) error {
	switch {
	case assistant && isEmptyJSONString(content):
		return nil // "" beside tool calls; an empty turn would be refused
	case isJSONString(content):
		t.addString(role, content)
		return nil
	case isJSONNull(content):
		if assistant {
			return nil
		}
		return responsesBadRequest(param+".content", "Missing required parameter: '%s.content'.", param)
	}
	err := chatEachElement(content, func(j int, _ []byte, p *chatFields) error {
		block, err := chatPartToAnthropic(p, param+".content", j, assistant)
		if block != nil {
			t.add(role, block)
		}
		return err
	})
	return chatPartsError(err, param+".content")
}

func (t *responsesTurns) chatAssistant(m *chatFields, param string, forChat bool) error {
	// Thinking first: Messages wants it at the start of the turn.
	if err := t.chatReasoning(m, param, forChat); err != nil {
		return err
	}
	if err := t.chatContent("assistant", m.Content, param, true); err != nil {
		return err
	}
	if isJSONString(m.Refusal) && !isEmptyJSONString(m.Refusal) {
		t.add("assistant", responsesTextBlock(m.Refusal))
	}
	if !isJSONNull(m.FunctionCall) {
		return responsesBadRequest(param+".function_call", "The deprecated 'function_call' is not supported; use 'tool_calls'.")
	}
	if isJSONNull(m.ToolCalls) {
		return nil
	}
	err := chatEachElement(m.ToolCalls, func(j int, _ []byte, c *chatFields) error {
		cp := param + ".tool_calls[" + strconv.Itoa(j) + "]"
		if typ := responsesName(c.Type); len(typ) > 0 && string(typ) != "function" {
			return responsesBadRequest(cp+".type", "Tool calls of type '%s' are not supported by this upstream; only function calls are.", typ)
		}
		fn, err := parseChatFields(c.Function)
		if err != nil || !isJSONString(c.ID) || !isJSONString(fn.Name) {
			return responsesBadRequest(cp, "A tool call needs 'id' and 'function.name'.")
		}
		args, err := responsesArguments(fn.Arguments, cp+".function")
		if err != nil {
			return err
		}
		if id := string(responsesName(c.ID)); !t.calls[id] {
			t.calls[id] = true
			t.order = append(t.order, id)
		}
		var b bytes.Buffer
		b.Grow(len(c.ID) + len(fn.Name) + len(args) + 48)
		b.WriteString(`{"type":"tool_use","id":`)
		b.Write(c.ID)
		b.WriteString(`,"name":`)
		b.Write(fn.Name)
		b.WriteString(`,"input":`)
		b.Write(args)
		b.WriteByte('}')
		t.add("assistant", responsesBlock{b.Bytes()})
		return nil
	})
	return chatPartsError(err, param+".tool_calls")
}

// chatReasoning restores the thinking of an assistant message: Claude's own
// thinking from thinking_blocks whose signatures carry our mark (toward
// Anthropic), or reasoning_content as marked thinking (ForChat). Anything
// else is dropped: an unsigned or foreign thinking block would be refused.
func (t *responsesTurns) chatReasoning(m *chatFields, param string, forChat bool) error {
	if forChat {
		if isJSONString(m.ReasoningContent) && !isEmptyJSONString(m.ReasoningContent) {
			var b bytes.Buffer
			b.WriteString(`{"type":"thinking","thinking":`)
			b.Write(m.ReasoningContent)
			b.WriteString(`,"signature":"` + chatReasoningSignature + `"}`)
			t.add("assistant", responsesBlock{b.Bytes()})
		}
		return nil
	}
	if isJSONNull(m.ThinkingBlocks) {
		return nil
	}
	err := chatEachElement(m.ThinkingBlocks, func(_ int, _ []byte, tb *chatFields) error {
		var b bytes.Buffer
		switch string(responsesName(tb.Type)) {
		case "thinking":
			sig, ok := strings.CutPrefix(anthropic.Unquote(tb.Signature), responsesAnthropicThinkingPrefix)
			if !ok || !isJSONString(tb.Thinking) {
				return nil
			}
			b.WriteString(`{"type":"thinking","thinking":`)
			b.Write(tb.Thinking)
			b.WriteString(`,"signature":`)
			b.Write(anthropic.Quote(sig))
			b.WriteByte('}')
		case "redacted_thinking":
			data, ok := strings.CutPrefix(anthropic.Unquote(tb.Data), responsesAnthropicRedactedPrefix)
			if !ok {
				return nil
			}
			b.WriteString(`{"type":"redacted_thinking","data":`)
			b.Write(anthropic.Quote(data))
			b.WriteByte('}')
		default:
			return nil
		}
		t.add("assistant", responsesBlock{b.Bytes()})
		return nil
	})
	return chatPartsError(err, param+".thinking_blocks")
}

// chatToolResult adds a tool message as a tool_result block of the user
// turn that follows the assistant's tool calls.
func (t *responsesTurns) chatToolResult(m *chatFields, param string) error {
	id := responsesName(m.ToolCallID)
	if !isJSONString(m.ToolCallID) {
		return responsesBadRequest(param+".tool_call_id", "Missing required parameter: '%s.tool_call_id'.", param)
	}
	if !t.calls[string(id)] {
		return responsesBadRequest(param+".tool_call_id", "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'; no tool call has the id %s.", id)
	}
	t.answered[string(id)] = true
	head := make([]byte, 0, len(m.ToolCallID)+48)
	head = append(head, `{"type":"tool_result","tool_use_id":`...)
	head = append(head, m.ToolCallID...)
	head = append(head, `,"content":`...)
	block := responsesBlock{head}
	switch {
	case isJSONString(m.Content):
		block = append(block, m.Content)
	case isJSONNull(m.Content):
		block = append(block, []byte(`""`))
	default:
		open := []byte("[")
		err := chatEachElement(m.Content, func(j int, _ []byte, p *chatFields) error {
			part, err := chatPartToAnthropic(p, param+".content", j, false)
			if part != nil {
				block = append(block, open)
				block = append(block, part...)
				open = []byte(",")
			}
			return err
		})
		if err := chatPartsError(err, param+".content"); err != nil {
			return err
		}
		if open[0] == '[' {
			block = append(block, open)
		}
		block = append(block, []byte("]"))
	}
	block = append(block, responsesClosingBrace)
	t.add("user", block)
	return nil
}
