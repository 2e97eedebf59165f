package proxytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// ResponsesUpstream is a scripted OpenAI Responses API on 127.0.0.1: POST
// /v1/responses, stream and not, with the event sequence, item shapes and
// error bodies of the real API (checked against the API reference and
// openai-node's src/resources/responses types). Anything else is a 404 in
// OpenAI's error shape. It needs no testing.T, so benchmarks can use it.
type ResponsesUpstream struct {
	URL string

	srv *httptest.Server

	mu    sync.Mutex
	queue []ResponsesReply
	def   ResponsesReply
	recs  []Received // the last maxRecords requests
}

// ResponsesReply scripts one answer to POST /v1/responses: Body as-is when
// set (application/json, Status or 200); else Response (SSE when the request
// has "stream": true, else the response object); else, for Status >= 400, an
// OpenAI error for that status.
type ResponsesReply struct {
	Status   int
	Header   http.Header
	Body     []byte
	Response *ResponsesResponse
	// EventGap waits between SSE events.
	EventGap time.Duration
	// FailAfter drops the connection after N events (the client sees an
	// unexpected EOF, never response.completed).
	FailAfter int
	// ErrorAfter sends, after N events, an "error" event and
	// response.failed, as the API does when generation fails mid-stream.
	ErrorAfter int
}

// ResponsesResponse is a scripted response: its output items and usage.
type ResponsesResponse struct {
	ID    string // "" = a generated resp_… id
	Model string // "" = the request's model
	Items []ResponsesItem
	// Incomplete ends the response with status "incomplete" and
	// incomplete_details.reason "max_output_tokens".
	Incomplete bool
	Usage      ResponsesUsage
	// ChunkSize is the size of each delta; 0 = about four per item.
	ChunkSize int
}

// ResponsesUsage is the usage a response reports. Input counts cached tokens
// too, as OpenAI's input_tokens does.
type ResponsesUsage struct {
	Input, Cached, Output, Reasoning int
}

// ResponsesItem is one output item: a message with text, a function call, or
// a reasoning item (summary text and encrypted content; the content is sent
// only when the request's include asks for "reasoning.encrypted_content").
type ResponsesItem struct {
	Type               string // "message", "function_call", "reasoning"
	Text               string
	CallID, Name, Args string
	Summary, Encrypted string
}

// ResponsesText is a message item with one output_text part.
func ResponsesText(text string) ResponsesItem { return ResponsesItem{Type: "message", Text: text} }

// ResponsesFunctionCall is a function_call item; args is its JSON arguments.
func ResponsesFunctionCall(callID, name, args string) ResponsesItem {
	return ResponsesItem{Type: "function_call", CallID: callID, Name: name, Args: args}
}

// ResponsesReasoning is a reasoning item with one summary part.
func ResponsesReasoning(summary, encryptedContent string) ResponsesItem {
	return ResponsesItem{Type: "reasoning", Summary: summary, Encrypted: encryptedContent}
}

// ResponsesErrorReply is an OpenAI error reply: {"error":{"message","type","param","code"}}.
func ResponsesErrorReply(status int, code, message string) ResponsesReply {
	return ResponsesReply{Status: status, Body: responsesErrorBody(status, code, "", message)}
}

// NewResponsesUpstream starts an upstream whose default reply is a short text.
func NewResponsesUpstream() *ResponsesUpstream {
	u := &ResponsesUpstream{def: ResponsesReply{Response: &ResponsesResponse{
		Items: []ResponsesItem{ResponsesText("Hello from proxytest.")},
		Usage: ResponsesUsage{Input: 12, Output: 5},
	}}}
	u.srv = httptest.NewUnstartedServer(u)
	u.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.srv.Start()
	u.URL = u.srv.URL
	return u
}

// Close drops open connections and shuts the server down.
func (u *ResponsesUpstream) Close() {
	u.srv.CloseClientConnections()
	u.srv.Close()
}

// Enqueue appends replies served in FIFO order; when none is queued the
// default reply is served.
func (u *ResponsesUpstream) Enqueue(replies ...ResponsesReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queue = append(u.queue, replies...)
}

// SetDefault sets the reply served when the queue is empty.
func (u *ResponsesUpstream) SetDefault(r ResponsesReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.def = r
}

// Requests returns the received requests, oldest first.
func (u *ResponsesUpstream) Requests() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Received(nil), u.recs...)
}

func (u *ResponsesUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	if len(u.recs) == maxRecords {
		u.recs = u.recs[1:]
	}
	u.recs = append(u.recs, Received{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	u.mu.Unlock()

	w.Header().Set("X-Request-Id", nextRequestID())
	if r.URL.Path != "/v1/responses" || r.Method != http.MethodPost {
		writeResponsesError(w, http.StatusNotFound, "", "", "Invalid URL ("+r.Method+" "+r.URL.Path+")")
		return
	}
	var req struct {
		Model           *string         `json:"model"`
		Input           json.RawMessage `json:"input"`
		Stream          bool            `json:"stream"`
		Include         []string        `json:"include"`
		MaxOutputTokens *int            `json:"max_output_tokens"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeResponsesError(w, http.StatusBadRequest, "", "", "We could not parse the JSON body of your request.")
		return
	}
	if req.Model == nil {
		writeResponsesError(w, http.StatusBadRequest, "missing_required_parameter", "model", "Missing required parameter: 'model'.")
		return
	}
	if m := req.MaxOutputTokens; m != nil && *m < 16 {
		writeResponsesError(w, http.StatusBadRequest, "integer_below_min_value", "max_output_tokens",
			"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got "+strconv.Itoa(*m)+" instead.")
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
	case rep.Response == nil:
		status := rep.Status
		if status < 400 {
			status = http.StatusInternalServerError
		}
		writeResponsesError(w, status, "", "", http.StatusText(status))
	default:
		encrypted := false
		for _, inc := range req.Include {
			encrypted = encrypted || inc == "reasoning.encrypted_content"
		}
		rendered := rep.Response.render(*req.Model, encrypted)
		if !req.Stream {
			h.Set("Content-Type", "application/json")
			w.Write(rendered.json)
			return
		}
		u.writeStream(w, r.Context(), rep, rendered)
	}
}

func (u *ResponsesUpstream) next() ResponsesReply {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 {
		return u.def
	}
	rep := u.queue[0]
	u.queue = u.queue[1:]
	return rep
}

func (u *ResponsesUpstream) writeStream(w http.ResponseWriter, ctx context.Context, rep ResponsesReply, rendered responsesRendered) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for i, ev := range rendered.events {
		if i > 0 && rep.EventGap > 0 {
			t := time.NewTimer(rep.EventGap)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		n := i + 1
		if n == rep.ErrorAfter {
			w.Write(rendered.failure(n))
			if fl != nil {
				fl.Flush()
			}
			return
		}
		if n == rep.FailAfter {
			panic(http.ErrAbortHandler) // no chunked terminator: a dropped connection
		}
	}
}

func responsesErrorBody(status int, code, param, message string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	var c, p *string
	if code != "" {
		c = &code
	}
	if param != "" {
		p = &param
	}
	return marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": p, "code": c}})
}

func writeResponsesError(w http.ResponseWriter, status int, code, param, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(responsesErrorBody(status, code, param, message))
}

// responsesRendered is a response as the API sends it.
type responsesRendered struct {
	json    []byte
	events  [][]byte
	failure func(seq int) []byte // the error event and response.failed, numbered from seq
}

// responsesWireItem is an output item as the API writes it.
type responsesWireItem = map[string]any

func (r *ResponsesResponse) render(model string, encrypted bool) responsesRendered {
	id := r.ID
	if id == "" {
		id = "resp_" + pad(reqSeq.Add(1))
	}
	if r.Model != "" {
		model = r.Model
	}
	status := "completed"
	var incomplete any
	if r.Incomplete {
		status, incomplete = "incomplete", map[string]any{"reason": "max_output_tokens"}
	}
	created := time.Now().Unix()
	object := func(status string, output []responsesWireItem, usage any, incomplete, failure any) map[string]any {
		if output == nil {
			output = []responsesWireItem{}
		}
		return map[string]any{
			"id": id, "object": "response", "created_at": created, "status": status,
			"error": failure, "incomplete_details": incomplete, "instructions": nil, "max_output_tokens": nil,
			"model": model, "output": output, "parallel_tool_calls": true, "previous_response_id": nil,
			"reasoning": map[string]any{"effort": nil, "summary": nil}, "store": true, "temperature": 1.0,
			"text": map[string]any{"format": map[string]any{"type": "text"}}, "tool_choice": "auto", "tools": []any{},
			"top_p": 1.0, "truncation": "disabled", "usage": usage, "metadata": map[string]any{},
		}
	}
	usage := map[string]any{
		"input_tokens":          r.Usage.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": r.Usage.Cached},
		"output_tokens":         r.Usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": r.Usage.Reasoning},
		"total_tokens":          r.Usage.Input + r.Usage.Output,
	}

	var events [][]byte
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		events = append(events, frame(typ, marshal(fields)))
	}
	emit("response.created", map[string]any{"response": object("in_progress", nil, nil, nil, nil)})
	emit("response.in_progress", map[string]any{"response": object("in_progress", nil, nil, nil, nil)})

	var output []responsesWireItem
	for oi, it := range r.Items {
		itemID := ""
		var done responsesWireItem
		switch it.Type {
		case "message":
			itemID = "msg_" + id[len("resp_"):] + strconv.Itoa(oi)
			part := func(text string) map[string]any {
				return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
			}
			emit("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			emit("response.content_part.added", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "part": part("")})
			for _, c := range chunks(it.Text, r.ChunkSize) {
				emit("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			emit("response.output_text.done", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "text": it.Text, "logprobs": []any{}})
			emit("response.content_part.done", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "part": part(it.Text)})
			itemStatus := "completed"
			if r.Incomplete {
				itemStatus = "incomplete"
			}
			done = responsesWireItem{"id": itemID, "type": "message", "status": itemStatus, "role": "assistant", "content": []any{part(it.Text)}}
		case "function_call":
			itemID = "fc_" + id[len("resp_"):] + strconv.Itoa(oi)
			emit("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"id": itemID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": it.CallID, "name": it.Name}})
			for _, c := range chunks(it.Args, r.ChunkSize) {
				emit("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": oi, "delta": c})
			}
			emit("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": oi, "name": it.Name, "arguments": it.Args})
			done = responsesWireItem{"id": itemID, "type": "function_call", "status": "completed", "arguments": it.Args, "call_id": it.CallID, "name": it.Name}
		case "reasoning":
			itemID = "rs_" + id[len("resp_"):] + strconv.Itoa(oi)
			emit("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"id": itemID, "type": "reasoning", "summary": []any{}}})
			summary := []any{}
			if it.Summary != "" {
				sp := func(text string) map[string]any { return map[string]any{"type": "summary_text", "text": text} }
				emit("response.reasoning_summary_part.added", map[string]any{"item_id": itemID, "output_index": oi, "summary_index": 0, "part": sp("")})
				for _, c := range chunks(it.Summary, r.ChunkSize) {
					emit("response.reasoning_summary_text.delta", map[string]any{"item_id": itemID, "output_index": oi, "summary_index": 0, "delta": c})
				}
				emit("response.reasoning_summary_text.done", map[string]any{"item_id": itemID, "output_index": oi, "summary_index": 0, "text": it.Summary})
				emit("response.reasoning_summary_part.done", map[string]any{"item_id": itemID, "output_index": oi, "summary_index": 0, "part": sp(it.Summary)})
				summary = append(summary, sp(it.Summary))
			}
			done = responsesWireItem{"id": itemID, "type": "reasoning", "summary": summary}
			if encrypted && it.Encrypted != "" {
				done["encrypted_content"] = it.Encrypted
			}
		default:
			panic("proxytest: unknown Responses item type " + strconv.Quote(it.Type))
		}
		emit("response.output_item.done", map[string]any{"output_index": oi, "item": done})
		output = append(output, done)
	}
	final := object(status, output, usage, incomplete, nil)
	end := "response.completed"
	if r.Incomplete {
		end = "response.incomplete"
	}
	emit(end, map[string]any{"response": final})

	failure := func(seq int) []byte {
		msg := "The server had an error processing your request."
		var b bytes.Buffer
		b.Write(frame("error", marshal(map[string]any{"type": "error", "sequence_number": seq, "code": "server_error", "message": msg, "param": nil})))
		b.Write(frame("response.failed", marshal(map[string]any{"type": "response.failed", "sequence_number": seq + 1,
			"response": object("failed", nil, nil, nil, map[string]any{"code": "server_error", "message": msg})})))
		return b.Bytes()
	}
	return responsesRendered{json: marshal(final), events: events, failure: failure}
}
