package proxytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ChatUpstream is a scripted OpenAI Chat Completions API on 127.0.0.1: POST
// /chat/completions and /v1/chat/completions (OpenAI-compatible servers
// serve both), stream and not, with the chunk sequence, object shapes and
// error bodies of the real API (checked against openai-node's
// ChatCompletion, ChatCompletionChunk and CompletionUsage, and the API
// reference). It validates requests as the API does: a bearer token, a model,
// known roles, every assistant tool call answered by a tool message before
// the next user or assistant message, text-only tool messages,
// stream_options only with stream, a user of at most 64 characters. Anything else is a 404 in OpenAI's error
// shape. It needs no testing.T, so benchmarks can use it.
type ChatUpstream struct {
	URL string
	// Key, when set, is the only bearer token accepted (401 invalid_api_key
	// otherwise); any token is accepted when it is empty.
	Key string

	srv *httptest.Server

	mu       sync.Mutex
	queue    []ChatReply
	def      ChatReply
	recs     []Received // the last maxRecords requests
	rejected int
	window   int
}

// SetWindow gives the model a context window of tokens, counted by CountChatTokens: a valid
// request above it is refused with OpenAI's 400 context_length_exceeded (not counted in
// Rejected: it is a well-formed request). 0 = no window.
func (u *ChatUpstream) SetWindow(tokens int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.window = tokens
}

// ContextLengthExceeded is the message of OpenAI's 400 context_length_exceeded (type
// invalid_request_error, param "messages") for a prompt of tokens beyond a window of
// maximum, as the API words it in client reports.
func ContextLengthExceeded(tokens, maximum int) string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", maximum, tokens)
}

// ChatReply scripts one answer: Body as-is when set (application/json,
// Status or 200); else Completion (SSE chunks when the request has "stream":
// true, else the chat.completion object); else, for Status >= 400, an
// OpenAI error for that status.
type ChatReply struct {
	Status     int
	Header     http.Header
	Body       []byte
	Completion *ChatCompletion
	// EventGap waits between SSE chunks.
	EventGap time.Duration
	// FailAfter drops the connection after N chunks (the client sees an
	// unexpected EOF, never a finish_reason or [DONE]).
	FailAfter int
	// ErrorAfter sends, after N chunks, an error chunk {"error":{…}} and
	// ends the stream there, as the API does when generation fails.
	ErrorAfter int
}

// ChatCompletion is a scripted completion: what the assistant says, thinks
// (reasoning_content, DeepSeek style) and calls.
type ChatCompletion struct {
	ID        string // "" = a generated chatcmpl-… id
	Model     string // "" = the request's model
	Content   string
	Reasoning string
	ToolCalls []ChatToolCall
	// Finish is the finish_reason; "" = "tool_calls" with calls, else "stop".
	Finish string
	Usage  ChatUsage
	// ChunkSize is the size of each delta; 0 = about four per text.
	ChunkSize int
}

// ChatToolCall is one function call; Args is its JSON arguments.
type ChatToolCall struct{ ID, Name, Args string }

// ChatUsage is the usage a completion reports. Prompt counts cached tokens
// too, as OpenAI's prompt_tokens does.
type ChatUsage struct{ Prompt, Cached, Completion, Reasoning int }

// ChatText is a completion that says text.
func ChatText(text string) *ChatCompletion {
	return &ChatCompletion{Content: text, Usage: ChatUsage{Prompt: 12, Completion: 5}}
}

// ChatCalls is a completion that calls tools (in parallel when several).
func ChatCalls(calls ...ChatToolCall) *ChatCompletion {
	return &ChatCompletion{ToolCalls: calls, Usage: ChatUsage{Prompt: 20, Completion: 10}}
}

// ChatErrorReply is an OpenAI error reply: {"error":{"message","type","param","code"}}.
func ChatErrorReply(status int, code, message string) ChatReply {
	return ChatReply{Status: status, Body: responsesErrorBody(status, code, "", message)}
}

// ChatRateLimited is a 429 rate_limit_exceeded with retry-after and the
// x-ratelimit-* headers OpenAI sends.
func ChatRateLimited(retryAfterSeconds int) ChatReply {
	r := ChatErrorReply(http.StatusTooManyRequests, "rate_limit_exceeded",
		"Rate limit reached for requests. Please try again in "+strconv.Itoa(retryAfterSeconds)+"s.")
	r.Header = http.Header{
		"Retry-After":                    {strconv.Itoa(retryAfterSeconds)},
		"X-Ratelimit-Limit-Requests":     {"500"},
		"X-Ratelimit-Remaining-Requests": {"0"},
		"X-Ratelimit-Reset-Requests":     {strconv.Itoa(retryAfterSeconds) + "s"},
	}
	return r
}

// NewChatUpstream starts an upstream whose default reply is a short text.
func NewChatUpstream() *ChatUpstream {
	u := &ChatUpstream{def: ChatReply{Completion: ChatText("Hello from proxytest.")}}
	u.srv = httptest.NewUnstartedServer(u)
	u.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.srv.Start()
	u.URL = u.srv.URL
	return u
}

// Close drops open connections and shuts the server down.
func (u *ChatUpstream) Close() {
	u.srv.CloseClientConnections()
	u.srv.Close()
}

// Enqueue appends replies served in FIFO order; when none is queued the
// default reply is served.
func (u *ChatUpstream) Enqueue(replies ...ChatReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queue = append(u.queue, replies...)
}

// SetDefault sets the reply served when the queue is empty.
func (u *ChatUpstream) SetDefault(r ChatReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.def = r
}

// Requests returns the received requests, oldest first.
func (u *ChatUpstream) Requests() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Received(nil), u.recs...)
}

// Rejected is the number of requests refused as invalid (400 or 401): a
// proxy test asserts it stays 0.
func (u *ChatUpstream) Rejected() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rejected
}

func (u *ChatUpstream) next() ChatReply {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 {
		return u.def
	}
	rep := u.queue[0]
	u.queue = u.queue[1:]
	return rep
}

func (u *ChatUpstream) reject(w http.ResponseWriter, status int, code, param, message string) {
	u.mu.Lock()
	u.rejected++
	u.mu.Unlock()
	writeResponsesError(w, status, code, param, message)
}

// chatRequest is what the upstream reads of a request.
type chatRequest struct {
	Model         *string           `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools             []json.RawMessage `json:"tools"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	Stop              json.RawMessage   `json:"stop"`
	User              *string           `json:"user"`
}

type chatRequestMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID *string         `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (u *ChatUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	u.mu.Lock()
	window := u.window
	u.mu.Unlock()
	tokens := 0
	if window > 0 {
		if n, err := CountChatTokens(body); err == nil { // a body it cannot read is refused below
			tokens = n
		}
	}
	u.mu.Lock()
	if len(u.recs) >= maxRecords {
		u.recs = u.recs[1:]
	}
	u.recs = append(u.recs, Received{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Tokens: tokens})
	u.mu.Unlock()

	w.Header().Set("X-Request-Id", nextRequestID())
	if (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/chat/completions") || r.Method != http.MethodPost {
		writeResponsesError(w, http.StatusNotFound, "", "", "Invalid URL ("+r.Method+" "+r.URL.Path+")")
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || strings.TrimSpace(token) == "":
		u.reject(w, http.StatusUnauthorized, "", "", "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
		return
	case u.Key != "" && token != u.Key:
		u.reject(w, http.StatusUnauthorized, "invalid_api_key", "", "Incorrect API key provided.")
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		u.reject(w, http.StatusBadRequest, "", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)")
		return
	}
	if msg, code, param := validateChatRequest(&req); msg != "" {
		u.reject(w, http.StatusBadRequest, code, param, msg)
		return
	}
	if window > 0 && tokens > window {
		writeResponsesError(w, http.StatusBadRequest, "context_length_exceeded", "messages", ContextLengthExceeded(tokens, window))
		return
	}
	rep := u.next()
	h := w.Header()
	copyHeaders(h, rep.Header)
	switch {
	case rep.Body != nil:
		h.Set("Content-Type", "application/json")
		w.WriteHeader(max(rep.Status, http.StatusOK))
		w.Write(rep.Body)
	case rep.Completion == nil:
		status := rep.Status
		if status < 400 {
			status = http.StatusInternalServerError
		}
		writeResponsesError(w, status, "", "", http.StatusText(status))
	case !req.Stream:
		h.Set("Content-Type", "application/json")
		w.Write(rep.Completion.json(*req.Model))
	default:
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		u.writeStream(w, r.Context(), rep, rep.Completion.chunks(*req.Model, includeUsage))
	}
}

// validateChatRequest returns the API's refusal of req ("" when valid).
func validateChatRequest(req *chatRequest) (message, code, param string) {
	if req.Model == nil {
		return "you must provide a model parameter", "", ""
	}
	if len(req.Messages) == 0 {
		return "[] is too short - 'messages'", "empty_array", "messages"
	}
	if req.StreamOptions != nil && !req.Stream {
		return "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "invalid_value", "stream_options"
	}
	if req.ParallelToolCalls != nil && len(req.Tools) == 0 {
		return "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.", "invalid_value", "parallel_tool_calls"
	}
	if req.User != nil && utf8.RuneCountInString(*req.User) > 64 {
		return fmt.Sprintf("Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", utf8.RuneCountInString(*req.User)),
			"string_above_max_length", "user"
	}
	if len(req.Stop) > 0 && req.Stop[0] == '[' {
		var stop []string
		if json.Unmarshal(req.Stop, &stop) != nil || len(stop) > 4 {
			return "Invalid 'stop': expected an array of at most 4 strings.", "invalid_value", "stop"
		}
	}
	var pending []string // tool calls awaiting their tool message
	for i, raw := range req.Messages {
		var m chatRequestMessage
		param := "messages.[" + strconv.Itoa(i) + "]"
		if err := json.Unmarshal(raw, &m); err != nil {
			return "Invalid type for '" + param + "': expected an object.", "invalid_type", param
		}
		switch m.Role {
		case "system", "developer", "user", "assistant", "function":
			if len(pending) > 0 {
				return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " +
					strings.Join(pending, ", "), "", param + ".role"
			}
		case "tool":
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role), "invalid_value", param + ".role"
		}
		switch m.Role {
		case "assistant":
			if len(m.Content) == 0 || string(m.Content) == "null" {
				if len(m.ToolCalls) == 0 {
					return "Invalid value for 'content': expected a string, got null.", "", param + ".content"
				}
			}
			for j, c := range m.ToolCalls {
				cp := param + ".tool_calls.[" + strconv.Itoa(j) + "]"
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
					return "Missing required parameter: '" + cp + ".id', '.type' (function) or '.function.name'.", "missing_required_parameter", cp
				}
				if len(c.Function.Arguments) == 0 || c.Function.Arguments[0] != '"' {
					return "Invalid type for '" + cp + ".function.arguments': expected a string.", "invalid_type", cp + ".function.arguments"
				}
				pending = append(pending, c.ID)
			}
		case "tool":
			if m.ToolCallID == nil {
				return "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.", "missing_required_parameter", param + ".tool_call_id"
			}
			at := -1
			for k, id := range pending {
				if id == *m.ToolCallID {
					at = k
				}
			}
			if at < 0 {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "", param + ".role"
			}
			pending = append(pending[:at], pending[at+1:]...)
			if msg, p := chatTextOnly(m.Content, param+".content"); msg != "" {
				return msg, "invalid_value", p
			}
		default:
			if len(m.Content) == 0 || string(m.Content) == "null" {
				return "Invalid value for 'content': expected a string, got null.", "", param + ".content"
			}
		}
	}
	return "", "", ""
}

// chatTextOnly checks a tool message's content: a string or text parts.
func chatTextOnly(content json.RawMessage, param string) (message, badParam string) {
	if len(content) > 0 && content[0] == '"' {
		return "", ""
	}
	var parts []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return "Invalid type for '" + param + "': expected one of a string or array of objects.", param
	}
	for j, p := range parts {
		if p.Type != "text" {
			return "Invalid value: '" + p.Type + "'. Supported values are: 'text'.", param + ".[" + strconv.Itoa(j) + "].type"
		}
	}
	return "", ""
}

func (u *ChatUpstream) writeStream(w http.ResponseWriter, ctx context.Context, rep ChatReply, chunks [][]byte) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	for i, c := range chunks {
		if i > 0 && rep.EventGap > 0 {
			t := time.NewTimer(rep.EventGap)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		flush()
		n := i + 1
		if n == rep.ErrorAfter {
			w.Write(chatDataFrame(responsesErrorBody(http.StatusInternalServerError, "", "",
				"The server had an error while processing your request. Sorry about that!")))
			flush()
			return
		}
		if n == rep.FailAfter {
			panic(http.ErrAbortHandler) // no chunked terminator: a dropped connection
		}
	}
}

func chatDataFrame(data []byte) []byte {
	b := make([]byte, 0, len(data)+8)
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// chatWireCall is a tool call as the API writes it.
type chatWireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (c *ChatCompletion) id() string {
	if c.ID != "" {
		return c.ID
	}
	return "chatcmpl-ProxyTest" + pad(reqSeq.Add(1))
}

func (c *ChatCompletion) finish() string {
	switch {
	case c.Finish != "":
		return c.Finish
	case len(c.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (c *ChatCompletion) usage() map[string]any {
	return map[string]any{
		"prompt_tokens": c.Usage.Prompt, "completion_tokens": c.Usage.Completion, "total_tokens": c.Usage.Prompt + c.Usage.Completion,
		"prompt_tokens_details":     map[string]any{"cached_tokens": c.Usage.Cached, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": c.Usage.Reasoning, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

func (c *ChatCompletion) model(requested string) string {
	if c.Model != "" {
		return c.Model
	}
	return requested
}

// json is the chat.completion object.
func (c *ChatCompletion) json(model string) []byte {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if c.Content != "" || len(c.ToolCalls) == 0 {
		msg["content"] = c.Content
	}
	if c.Reasoning != "" {
		msg["reasoning_content"] = c.Reasoning
	}
	if len(c.ToolCalls) > 0 {
		calls := make([]chatWireCall, len(c.ToolCalls))
		for i, tc := range c.ToolCalls {
			calls[i].ID, calls[i].Type = tc.ID, "function"
			calls[i].Function.Name, calls[i].Function.Arguments = tc.Name, tc.Args
		}
		msg["tool_calls"] = calls
	}
	return marshal(map[string]any{
		"id": c.id(), "object": "chat.completion", "created": time.Now().Unix(), "model": c.model(model),
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": c.finish()}},
		"usage":              c.usage(),
		"service_tier":       "default",
		"system_fingerprint": "fp_proxytest",
	})
}

// chunks is the stream: a role chunk, reasoning and content deltas, per
// tool call a first chunk with id and name then argument fragments, the
// finish chunk, the usage chunk when asked for, and [DONE].
func (c *ChatCompletion) chunks(model string, includeUsage bool) [][]byte {
	id, created, m := c.id(), time.Now().Unix(), c.model(model)
	var out [][]byte
	chunk := func(delta any, finish any) {
		v := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": m,
			"service_tier": "default", "system_fingerprint": "fp_proxytest",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if includeUsage {
			v["usage"] = nil
		}
		out = append(out, chatDataFrame(marshal(v)))
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	for _, p := range chunks(c.Reasoning, c.ChunkSize) {
		chunk(map[string]any{"reasoning_content": p}, nil)
	}
	for _, p := range chunks(c.Content, c.ChunkSize) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, tc := range c.ToolCalls {
		first := chatWireCall{Index: &i, ID: tc.ID, Type: "function"}
		first.Function.Name = tc.Name
		chunk(map[string]any{"tool_calls": []chatWireCall{first}}, nil)
		for _, p := range chunks(tc.Args, c.ChunkSize) {
			frag := chatWireCall{Index: &i}
			frag.Function.Arguments = p
			chunk(map[string]any{"tool_calls": []chatWireCall{frag}}, nil)
		}
	}
	chunk(map[string]any{}, c.finish())
	if includeUsage {
		out = append(out, chatDataFrame(marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": m,
			"service_tier": "default", "system_fingerprint": "fp_proxytest",
			"choices": []any{}, "usage": c.usage(),
		})))
	}
	return append(out, []byte("data: [DONE]\n\n"))
}
