package proxytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/sse"
)

func postResponses(t *testing.T, u *ResponsesUpstream, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(u.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type responsesEvent struct {
	name string
	data map[string]any
}

func readResponsesEvents(t *testing.T, r io.Reader) ([]responsesEvent, error) {
	t.Helper()
	rd := sse.NewReader(r, 0)
	var out []responsesEvent
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %s: %v", ev.Name, err)
		}
		out = append(out, responsesEvent{ev.Name, d})
	}
}

func scriptedTurn() *ResponsesResponse {
	return &ResponsesResponse{
		ID: "resp_turn1",
		Items: []ResponsesItem{
			ResponsesReasoning("Check the files.", "gAAAAenc"),
			ResponsesText("Listing the files now."),
			ResponsesFunctionCall("call_1", "shell", `{"command":["ls"]}`),
		},
		Usage:     ResponsesUsage{Input: 100, Cached: 64, Output: 20, Reasoning: 8},
		ChunkSize: 6,
	}
}

// The stream is the API's documented sequence: created, in_progress, then
// per item added … done with its part/summary/arguments events, then
// completed; every event's name equals data.type and sequence_number counts
// from 0.
func TestResponsesUpstreamStreamsTheAPISequence(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	u.Enqueue(ResponsesReply{Response: scriptedTurn()})
	resp := postResponses(t, u, `{"model":"gpt-5","input":"hi","stream":true,"include":["reasoning.encrypted_content"]}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q", ct)
	}
	events, err := readResponsesEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text, args, summary strings.Builder
	for i, ev := range events {
		if ev.data["type"] != ev.name || ev.data["sequence_number"] != float64(i) {
			t.Errorf("event %d: name %s, type %v, sequence_number %v", i, ev.name, ev.data["type"], ev.data["sequence_number"])
		}
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch ev.name {
		case "response.output_text.delta":
			text.WriteString(ev.data["delta"].(string))
		case "response.function_call_arguments.delta":
			args.WriteString(ev.data["delta"].(string))
		case "response.reasoning_summary_text.delta":
			summary.WriteString(ev.data["delta"].(string))
		}
	}
	want := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done",
		"response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("event sequence:\n%v\nwant\n%v", names, want)
	}
	if text.String() != "Listing the files now." || args.String() != `{"command":["ls"]}` || summary.String() != "Check the files." {
		t.Errorf("deltas add up to %q, %q, %q", text.String(), args.String(), summary.String())
	}
	final := events[len(events)-1].data["response"].(map[string]any)
	out := final["output"].([]any)
	if final["status"] != "completed" || len(out) != 3 || out[0].(map[string]any)["encrypted_content"] != "gAAAAenc" {
		t.Errorf("final response = %v", final)
	}
	usage := final["usage"].(map[string]any)
	if usage["input_tokens"] != float64(100) || usage["input_tokens_details"].(map[string]any)["cached_tokens"] != float64(64) ||
		usage["output_tokens_details"].(map[string]any)["reasoning_tokens"] != float64(8) || usage["total_tokens"] != float64(120) {
		t.Errorf("usage = %v", usage)
	}
}

// Non-stream: the response object; encrypted reasoning only when include
// asks for it, as the API does; the model echoes the request's.
func TestResponsesUpstreamAnswersAResponseObject(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	u.Enqueue(ResponsesReply{Response: scriptedTurn()}, ResponsesReply{Response: scriptedTurn()})
	for _, tt := range []struct {
		body          string
		wantEncrypted bool
	}{
		{`{"model":"gpt-5","input":"hi"}`, false},
		{`{"model":"gpt-5","input":"hi","include":["reasoning.encrypted_content"]}`, true},
	} {
		resp := postResponses(t, u, tt.body)
		var got struct {
			ID, Object, Status, Model string
			Output                    []map[string]any
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.ID != "resp_turn1" || got.Object != "response" || got.Status != "completed" || got.Model != "gpt-5" || len(got.Output) != 3 {
			t.Errorf("response = %+v", got)
		}
		if _, has := got.Output[0]["encrypted_content"]; has != tt.wantEncrypted {
			t.Errorf("%s: encrypted_content present = %v; want %v", tt.body, has, tt.wantEncrypted)
		}
		if got.Output[2]["call_id"] != "call_1" || got.Output[2]["arguments"] != `{"command":["ls"]}` {
			t.Errorf("function_call item = %v", got.Output[2])
		}
	}
	if n := len(u.Requests()); n != 2 {
		t.Errorf("recorded %d requests; want 2", n)
	}
}

func TestResponsesUpstreamIncomplete(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	u.SetDefault(ResponsesReply{Response: &ResponsesResponse{Items: []ResponsesItem{ResponsesText("Once upon")}, Incomplete: true}})
	events, err := readResponsesEvents(t, postResponses(t, u, `{"model":"gpt-5","input":"story","stream":true}`).Body)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	r := last.data["response"].(map[string]any)
	if last.name != "response.incomplete" || r["status"] != "incomplete" || r["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
		t.Errorf("last event = %s %v", last.name, r)
	}
}

// Errors have OpenAI's shape and status, scripted or for bad requests.
func TestResponsesUpstreamErrors(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	u.Enqueue(ResponsesErrorReply(429, "rate_limit_exceeded", "Rate limit reached for gpt-5"), ResponsesReply{Status: 503})
	tests := []struct {
		method, path, body string
		status             int
		typ, code, param   string
	}{
		{"POST", "/v1/responses", `{"model":"gpt-5","input":"x"}`, 429, "rate_limit_error", "rate_limit_exceeded", ""},
		{"POST", "/v1/responses", `{"model":"gpt-5","input":"x"}`, 503, "server_error", "", ""},
		{"POST", "/v1/responses", `{"input":"x"}`, 400, "invalid_request_error", "missing_required_parameter", "model"},
		{"POST", "/v1/responses", `{"model":`, 400, "invalid_request_error", "", ""},
		{"POST", "/v1/responses", `{"model":"gpt-5","input":"x","max_output_tokens":1}`, 400, "invalid_request_error", "integer_below_min_value", "max_output_tokens"},
		{"GET", "/v1/responses", ``, 404, "invalid_request_error", "", ""},
		{"POST", "/v1/chat/completions", `{}`, 404, "invalid_request_error", "", ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, u.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error struct {
				Message     string
				Type        string
				Param, Code *string
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tt.status || got.Error.Type != tt.typ || got.Error.Message == "" ||
			deref(got.Error.Code) != tt.code || deref(got.Error.Param) != tt.param {
			t.Errorf("%s %s %s = %d %+v (%v); want %d %s code %q param %q", tt.method, tt.path, tt.body, resp.StatusCode, got.Error, err, tt.status, tt.typ, tt.code, tt.param)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// A mid-stream failure: ErrorAfter sends the error event and response.failed;
// FailAfter drops the connection before any terminal event.
func TestResponsesUpstreamFailsMidStream(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	u.Enqueue(ResponsesReply{Response: scriptedTurn(), ErrorAfter: 4}, ResponsesReply{Response: scriptedTurn(), FailAfter: 4})

	events, err := readResponsesEvents(t, postResponses(t, u, `{"model":"gpt-5","input":"x","stream":true}`).Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 6 || events[4].name != "error" || events[4].data["sequence_number"] != float64(4) || events[4].data["code"] != "server_error" ||
		events[5].name != "response.failed" || events[5].data["response"].(map[string]any)["status"] != "failed" {
		t.Errorf("events = %v", events)
	}

	events, err = readResponsesEvents(t, postResponses(t, u, `{"model":"gpt-5","input":"x","stream":true}`).Body)
	if err == nil || len(events) != 4 {
		t.Errorf("dropped stream: %d events, err %v; want 4 and an unexpected EOF", len(events), err)
	}
}

func TestResponsesUpstreamRecordsBodies(t *testing.T) {
	u := NewResponsesUpstream()
	defer u.Close()
	body := `{"model":"gpt-5","input":"remember me"}`
	postResponses(t, u, body)
	reqs := u.Requests()
	if len(reqs) != 1 || !bytes.Equal(reqs[0].Body, []byte(body)) || reqs[0].Path != "/v1/responses" {
		t.Errorf("requests = %+v", reqs)
	}
}
