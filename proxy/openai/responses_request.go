package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// Request translation between the Responses API and Anthropic Messages.
// Wire formats checked against openai-node's src/resources/responses
// (ResponseCreateParams, ResponseInputItem, FunctionTool, ResponseReasoningItem)
// and the Messages API reference. Field by field (Responses ⇄ Messages):
//
//	model                     ⇄ model
//	instructions, system and  ⇄ system (a string, or text blocks when several;
//	  developer messages           Messages has no system turns)
//	input string              ⇄ one user message with string content
//	message items             ⇄ user/assistant turns; consecutive items of one
//	                             role merge into one turn; input_text and
//	                             output_text ⇄ text, refusal → text,
//	                             input_image (https or data URL) ⇄ image,
//	                             input_file (PDF data URL or file_url) ⇄ document
//	function_call             ⇄ tool_use (call_id = id; arguments string ⇄ input object)
//	function_call_output      ⇄ tool_result (output string or parts ⇄ content);
//	                             is_error is dropped (no counterpart)
//	reasoning                 → thinking only when it can be restored: OpenAI's
//	                             encrypted_content rides in a marked signature
//	                             (ForResponses), Claude's own signature or
//	                             redacted data rides back in encrypted_content;
//	                             a signature never reaches the other family
//	tools (function)          ⇄ tools (parameters ⇄ input_schema, kept an object
//	                             schema; strict false toward OpenAI)
//	built-in tools            → 400 naming them (both directions)
//	tool_choice auto/required/none/{function} ⇄ {auto}/{any}/{none}/{tool}
//	parallel_tool_calls false ⇄ tool_choice.disable_parallel_tool_use
//	max_output_tokens         ⇄ max_tokens (default ResponsesDefaultMaxTokens)
//	reasoning.effort          ⇄ thinking budget (low 2048, medium 8192, high
//	                             24576; minimal/none → off; dropped when a tool
//	                             is forced, as Messages requires)
//	text.format json_schema   ⇄ output_config.format json_schema
//	temperature, top_p        ⇄ temperature, top_p (dropped with thinking on)
//	metadata.user_id, else    ⇄ metadata.user_id (the proxy's session key)
//	  prompt_cache_key/user
//	stream                    ⇄ stream
//	store, include, truncation, service_tier, stop_sequences, top_k: dropped;
//	toward OpenAI store is false and encrypted reasoning is included, so each
//	request carries the whole conversation.
//	previous_response_id      → the stored conversation (ResponsesStore) first

// ResponsesDefaultMaxTokens is the max_tokens of a Messages request translated
// from a Responses request without max_output_tokens (Messages requires one;
// every current Claude model accepts this many).
const ResponsesDefaultMaxTokens = 32000

// ResponsesConversation is what a stored response remembers: the whole
// conversation up to and including its output, as Messages-shape messages.
type ResponsesConversation struct {
	Messages []json.RawMessage
}

// ResponsesRequestOptions is what a Responses request translation needs from
// outside. The zero value is usable.
type ResponsesRequestOptions struct {
	// Previous looks up the conversation a previous_response_id names (a
	// ResponsesStore bound to the caller's session). nil: every
	// previous_response_id is unknown (400 previous_response_not_found).
	Previous func(id string) (ResponsesConversation, bool)
	// ForResponses says the Messages-shape request will be translated back
	// to Responses (a Responses upstream, after compaction) instead of going
	// to Anthropic. Reasoning items with encrypted_content then ride through
	// as thinking blocks with a marked signature, and the Messages-only rules
	// (no thinking with a forced tool, no temperature with thinking) are not
	// applied. Toward Anthropic (false) OpenAI reasoning is dropped, never sent.
	ForResponses bool
	// MaxTokens is max_tokens when the request has no max_output_tokens
	// (none is written when ForResponses). 0 = ResponsesDefaultMaxTokens.
	MaxTokens int
}

// responsesTurn is one Messages message being built.
type responsesTurn struct {
	role   string
	str    []byte           // raw string content, when the item had a string content and nothing merged into it
	blocks []responsesBlock // blocks otherwise
}

type responsesTurns struct {
	turns    []responsesTurn
	calls    map[string]bool // call ids of function_call items seen so far
	order    []string        // the same ids in the order they came
	answered map[string]bool // call ids with a function_call_output
}

// responsesBlock is a content block as the segments of its JSON, written one
// after the other: a long text is referenced where it lies in the client's
// body, never copied into a block of its own.
type responsesBlock [][]byte

var (
	responsesTextPrefix   = []byte(`{"type":"text","text":`)
	responsesClosingBrace = []byte(`}`)
)

func (t *responsesTurns) add(role string, block responsesBlock) {
	if n := len(t.turns); n > 0 && t.turns[n-1].role == role {
		last := &t.turns[n-1]
		if last.str != nil {
			if !isEmptyJSONString(last.str) {
				last.blocks = append(last.blocks, responsesTextBlock(last.str))
			}
			last.str = nil
		}
		last.blocks = append(last.blocks, block)
		return
	}
	t.turns = append(t.turns, responsesTurn{role: role, blocks: []responsesBlock{block}})
}

func (t *responsesTurns) addString(role string, raw []byte) {
	if n := len(t.turns); n > 0 && t.turns[n-1].role == role {
		if !isEmptyJSONString(raw) {
			t.add(role, responsesTextBlock(raw))
		}
		return
	}
	t.turns = append(t.turns, responsesTurn{role: role, str: raw})
}

func responsesTextBlock(rawText []byte) responsesBlock {
	return responsesBlock{responsesTextPrefix, rawText, responsesClosingBrace}
}

func (b responsesBlock) writeTo(out *bytes.Buffer) {
	for _, seg := range b {
		out.Write(seg)
	}
}

// ResponsesRequestToAnthropic translates a Responses request into a Messages
// request. Errors are *ResponsesRequestError.
//
// The body is read in one pass: the input items are translated as the walk
// over the top-level members reaches them, straight into the output. A
// request that needs another order (previous_response_id, whose stored calls
// the outputs may answer; a repeated input; any refusal, whose precedence
// must not depend on member order) is translated again from the members.
func ResponsesRequestToAnthropic(body []byte, opts ResponsesRequestOptions) ([]byte, error) {
	if len(body) == 0 || body[0] != '{' {
		return nil, responsesBadRequest("", "The request body must be a JSON object.")
	}
	if err := responsesCheckStrings(body); err != nil {
		return nil, responsesSyntaxError(err)
	}
	var (
		r         responsesRequest
		msgs      *responsesMessages
		itemSys   [][]byte // raw JSON strings of system and developer items
		itemsErr  error
		translate = true // the items seen so far can stand
	)
	_, err := anthropic.WalkObject(body, 0, func(k []byte, vi int) (int, error) {
		key := k[1 : len(k)-1]
		if string(key) != "input" || vi >= len(body) || body[vi] != '[' || !translate || msgs != nil {
			ve, err := anthropic.SkipValue(body, vi)
			if err != nil {
				return 0, err
			}
			if string(key) == "input" && msgs != nil {
				translate = false // a repeated input: the last one counts
			}
			r.set(key, body[vi:ve])
			return ve, nil
		}
		msgs = newResponsesMessages(responsesHeadRoom(body, &r), len(body)+len(body)/8+1024)
		items := newResponsesArray(body[vi:])
		for items.next() {
			if itemsErr = msgs.item(&items.e.f, items.n, opts.ForResponses, &itemSys); itemsErr != nil {
				break
			}
		}
		if itemsErr == nil && items.err == nil {
			r.set(key, body[vi:vi+items.i])
			return vi + items.i, nil
		}
		translate = false
		ve, err := anthropic.SkipValue(body, vi)
		if err != nil {
			return 0, err
		}
		r.set(key, body[vi:ve])
		return ve, nil
	})
	if err != nil {
		return nil, responsesSyntaxError(err)
	}
	if !isJSONString(r.model) {
		return nil, responsesBadRequest("model", "Missing required parameter: 'model'.")
	}

	var prior []json.RawMessage
	if !isJSONNull(r.previous) {
		id := anthropic.Unquote(r.previous)
		var conv ResponsesConversation
		ok := false
		if opts.Previous != nil && id != "" {
			conv, ok = opts.Previous(id)
		}
		if !ok {
			return nil, &ResponsesRequestError{Status: http.StatusBadRequest, Code: "previous_response_not_found", Param: "previous_response_id",
				Message: "Previous response with id '" + id + "' not found."}
		}
		prior = conv.Messages
		if !opts.ForResponses {
			prior = responsesDropReasoning(prior)
		}
		translate = false
	}

	var system [][]byte // raw JSON strings
	if isJSONString(r.instructions) {
		if !isEmptyJSONString(r.instructions) {
			system = append(system, r.instructions)
		}
	} else if !isJSONNull(r.instructions) {
		return nil, responsesBadRequest("instructions", "Invalid type for 'instructions': expected a string.")
	}

	input := r.input
	switch {
	case len(input) > 0 && input[0] == '[' && translate && msgs != nil:
		system = append(system, itemSys...) // translated during the walk
	case isJSONString(input) || len(input) > 0 && input[0] == '[' || isJSONNull(input) && prior != nil:
		size := len(body) + len(body)/8 + 1024
		for _, m := range prior {
			size += len(m)
		}
		msgs = newResponsesMessages(responsesHeadRoom(body, &r), size)
		for _, m := range prior {
			responsesNoteCalls(m, &msgs.calls)
			msgs.message(m)
		}
		if isJSONString(input) {
			msgs.addString("user", input)
			break
		}
		if isJSONNull(input) {
			break
		}
		items := newResponsesArray(input)
		for items.next() {
			if err := msgs.item(&items.e.f, items.n, opts.ForResponses, &system); err != nil {
				return nil, err
			}
		}
		if items.err != nil {
			return nil, responsesSyntaxError(items.err)
		}
	case isJSONNull(input):
		return nil, responsesBadRequest("input", "Missing required parameter: 'input'.")
	default:
		return nil, responsesBadRequest("input", "Invalid type for 'input': expected a string or an array of input items.")
	}
	if id := msgs.calls.unanswered(); id != nil {
		return nil, responsesBadRequest("input", "No tool output found for function call %s.", id)
	}

	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = ResponsesDefaultMaxTokens
	}
	if !isJSONNull(r.maxOut) {
		n, err := strconv.Atoi(string(r.maxOut))
		if err != nil || n < 1 {
			return nil, responsesBadRequest("max_output_tokens", "Invalid 'max_output_tokens': expected a positive integer.")
		}
		maxTokens = n
	}

	// The members ahead of messages: model, max_tokens, system.
	head := make([]byte, 0, 64+len(r.model)+responsesSystemSize(system))
	head = append(head, `{"model":`...)
	head = append(head, r.model...)
	// Messages requires max_tokens; a request bound back to Responses keeps
	// the client's choice to leave it to the model.
	if !isJSONNull(r.maxOut) || !opts.ForResponses {
		head = append(head, `,"max_tokens":`...)
		head = strconv.AppendInt(head, int64(maxTokens), 10)
	}
	if len(system) > 0 {
		head = append(head, `,"system":`...)
		head = appendResponsesSystem(head, system)
	}
	head = append(head, `,"messages":`...)
	out := bytes.NewBuffer(msgs.finish(head))
	w := responsesWriter{buf: out}

	hasTools := false
	if !isJSONNull(r.tools) {
		n, err := responsesToolsToAnthropic(&w, r.tools)
		if err != nil {
			return nil, err
		}
		hasTools = n > 0
	}
	forced, err := responsesToolChoiceToAnthropic(&w, r.toolChoice, r.parallel, hasTools)
	if err != nil {
		return nil, err
	}

	thinking := false
	if !isJSONNull(r.reasoning) {
		rf, err := parseResponsesFields(r.reasoning)
		if err != nil {
			return nil, responsesBadRequest("reasoning", "Invalid 'reasoning': expected an object.")
		}
		// Messages refuses thinking with a forced tool call; the explicit
		// tool_choice wins.
		if budget, ok := responsesBudgetForEffort(anthropic.Unquote(rf.Effort)); ok && (!forced || opts.ForResponses) {
			if budget > maxTokens-1024 {
				budget = maxTokens - 1024
			}
			if budget >= 1024 {
				w.key("thinking")
				out.WriteString(`{"type":"enabled","budget_tokens":`)
				out.WriteString(strconv.Itoa(budget))
				out.WriteByte('}')
				thinking = true
			}
		}
	}
	if !isJSONNull(r.text) {
		if err := responsesTextFormatToAnthropic(&w, r.text); err != nil {
			return nil, err
		}
	}
	// Messages refuses a temperature other than 1 (and a low top_p) with
	// thinking on; Responses reasoning models ignore them.
	if !thinking || opts.ForResponses {
		if !isJSONNull(r.temperature) {
			w.raw("temperature", r.temperature)
		}
		if !isJSONNull(r.topP) {
			w.raw("top_p", r.topP)
		}
	}
	// Messages' metadata has one key, user_id (anything else is refused); it
	// is also what the proxy keys sessions on, so Codex's prompt_cache_key
	// (one per conversation) is the best stand-in.
	userID := []byte(nil)
	if len(r.metadata) > 0 && r.metadata[0] == '{' {
		if v := anthropic.MemberValue(r.metadata, "user_id"); isJSONString(v) {
			userID = v
		}
	}
	for _, v := range [...][]byte{r.promptCacheKey, r.safetyIdentifier, r.user} {
		if userID == nil && isJSONString(v) {
			userID = v
		}
	}
	if userID != nil {
		w.key("metadata")
		out.WriteString(`{"user_id":`)
		out.Write(userID)
		out.WriteByte('}')
	}
	if string(r.stream) == "true" {
		w.raw("stream", r.stream)
	}
	w.end()
	return out.Bytes(), nil
}

// responsesRequest holds the raw top-level members of a Responses request
// that the translation reads (the last of a repeated key, as decoders keep).
type responsesRequest struct {
	model, input, instructions, tools, toolChoice, parallel  []byte
	maxOut, reasoning, text, temperature, topP, metadata     []byte
	stream, previous, promptCacheKey, user, safetyIdentifier []byte
}

func (r *responsesRequest) set(k, v []byte) {
	switch string(k) {
	case "model":
		r.model = v
	case "input":
		r.input = v
	case "instructions":
		r.instructions = v
	case "tools":
		r.tools = v
	case "tool_choice":
		r.toolChoice = v
	case "parallel_tool_calls":
		r.parallel = v
	case "max_output_tokens":
		r.maxOut = v
	case "reasoning":
		r.reasoning = v
	case "text":
		r.text = v
	case "temperature":
		r.temperature = v
	case "top_p":
		r.topP = v
	case "metadata":
		r.metadata = v
	case "stream":
		r.stream = v
	case "previous_response_id":
		r.previous = v
	case "prompt_cache_key":
		r.promptCacheKey = v
	case "user":
		r.user = v
	case "safety_identifier":
		r.safetyIdentifier = v
	}
}

// responsesHeadRoom is the room to keep ahead of the messages: model,
// max_tokens and the system prompt, with the instructions seen so far and a
// share of the body for system and developer items (more moves the messages
// once, in finish).
func responsesHeadRoom(body []byte, r *responsesRequest) int {
	return 256 + len(r.model) + len(r.instructions) + len(body)/64
}

func responsesSystemSize(system [][]byte) int {
	n := 2
	for _, s := range system {
		n += len(s) + len(`{"type":"text","text":},`)
	}
	return n
}

// appendResponsesSystem appends the system prompt: the one string, or text
// blocks when several.
func appendResponsesSystem(out []byte, system [][]byte) []byte {
	if len(system) == 1 {
		return append(out, system[0]...)
	}
	out = append(out, '[')
	for i, s := range system {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendResponsesTextBlock(out, s)
	}
	return append(out, ']')
}

// responsesNoteCalls records the tool_use and tool_result ids of a stored message.
func responsesNoteCalls(raw []byte, c *responsesCalls) {
	m, err := anthropic.ParseMessage(raw)
	if err != nil {
		return
	}
	for _, b := range m.Blocks {
		switch b.Type {
		case "tool_use":
			c.add([]byte(b.ID()))
		case "tool_result":
			c.answerStored([]byte(b.ToolUseID()))
		}
	}
}

func writeResponsesTurn(out *bytes.Buffer, t responsesTurn) {
	out.WriteString(`{"role":"`)
	out.WriteString(t.role)
	out.WriteString(`","content":`)
	if t.str != nil {
		out.Write(t.str)
		out.WriteByte('}')
		return
	}
	blocks := t.blocks
	rank := func(a, b responsesBlock) int { return responsesBlockRank(a) - responsesBlockRank(b) }
	if t.role == "user" && !slices.IsSortedFunc(blocks, rank) {
		// Messages wants a turn's tool_result blocks before anything else.
		blocks = slices.Clone(blocks)
		slices.SortStableFunc(blocks, rank)
	}
	out.WriteByte('[')
	for i, b := range blocks {
		if i > 0 {
			out.WriteByte(',')
		}
		b.writeTo(out)
	}
	out.WriteString("]}")
}

func responsesBlockRank(block responsesBlock) int {
	if len(block) > 0 && bytes.HasPrefix(block[0], []byte(`{"type":"tool_result"`)) {
		return 0
	}
	return 1
}

// responsesDropReasoning removes carried OpenAI reasoning from stored
// messages bound for Anthropic (a session may have moved between upstream
// kinds); a message left empty is dropped with it.
func responsesDropReasoning(msgs []json.RawMessage) []json.RawMessage {
	marker := []byte(responsesReasoningPrefix)
	var out []json.RawMessage
	for i, raw := range msgs {
		if !bytes.Contains(raw, marker) {
			if out != nil {
				out = append(out, raw)
			}
			continue
		}
		if out == nil {
			out = append(make([]json.RawMessage, 0, len(msgs)), msgs[:i]...)
		}
		m, err := anthropic.ParseMessage(raw)
		if err != nil {
			out = append(out, raw)
			continue
		}
		kept := m.Blocks[:0:0]
		for _, b := range m.Blocks {
			if b.Type == "thinking" && ResponsesIsReasoningSignature(b.Signature()) {
				continue
			}
			kept = append(kept, b)
		}
		if len(kept) == 0 {
			continue
		}
		m.SetBlocks(kept)
		out = append(out, m.Raw())
	}
	if out == nil {
		return msgs
	}
	return out
}

// responsesParam names a content part for an error ("input[3].content[0]"),
// built only when an error needs it.
type responsesParam struct {
	item, field string
	index       int
}

func (p responsesParam) String() string { return p.item + p.field + "[" + strconv.Itoa(p.index) + "]" }

// responsesPartsError turns a malformed parts array into a 400 naming it;
// a refusal of one part passes through.
func responsesPartsError(err error, param string) error {
	if err == nil {
		return nil
	}
	var re *ResponsesRequestError
	if errors.As(err, &re) {
		return re
	}
	return responsesBadRequest(param, "Invalid '%s': expected a string or an array of content parts.", param[strings.LastIndexByte(param, '.')+1:])
}
