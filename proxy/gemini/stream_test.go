package gemini_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/gemini"
)

type recorder struct{ events []namedEvent }

func (r *recorder) emit(name string, data []byte) error {
	r.events = append(r.events, namedEvent{name, append([]byte(nil), data...)})
	return nil
}

func (r *recorder) names() string {
	var n []string
	for _, e := range r.events {
		n = append(n, e.Event)
	}
	return strings.Join(n, ",")
}

// Each chunk's events come out during that chunk's Event call: nothing
// waits for the next chunk.
func TestStreamToAnthropicEmitsPerChunk(t *testing.T) {
	tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{Model: "gemini-2.5-pro"})
	var r recorder
	steps := []struct {
		chunk string
		want  string // event names the chunk adds
	}{
		{`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"x"}`, "message_start,content_block_start,content_block_delta"},
		{`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]}}]}`, "content_block_delta"},
		{`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`, "content_block_stop,content_block_start,content_block_delta,content_block_stop"},
		{`{"candidates":[{"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"totalTokenCount":12}}`, ""},
	}
	for i, s := range steps {
		before := len(r.events)
		if err := tr.Event("", []byte(s.chunk), r.emit); err != nil {
			t.Fatal(err)
		}
		added := (&recorder{events: r.events[before:]}).names()
		if added != s.want {
			t.Errorf("chunk %d emitted %q; want %q", i, added, s.want)
		}
	}
	if err := tr.End(r.emit); err != nil {
		t.Fatal(err)
	}
	last := r.events[len(r.events)-2]
	var md struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		}
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal(last.Data, &md); err != nil || last.Event != "message_delta" {
		t.Fatalf("second-last event %s %s; want message_delta", last.Event, last.Data)
	}
	if md.Delta.StopReason != "max_tokens" || md.Usage.OutputTokens != 3 {
		t.Errorf("message_delta = %s; want stop_reason max_tokens and 3 output tokens", last.Data)
	}
}

func TestStreamToAnthropicFailures(t *testing.T) {
	t.Run("nothing came", func(t *testing.T) {
		var r recorder
		if err := gemini.NewStreamToAnthropic(gemini.ReplyOptions{}).End(r.emit); !errors.Is(err, gemini.ErrStreamEndedEarly) {
			t.Errorf("End of an empty stream = %v; want ErrStreamEndedEarly", err)
		}
	})
	t.Run("broke off mid-stream", func(t *testing.T) {
		var r recorder
		tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{})
		tr.Event("", []byte(`{"candidates":[{"content":{"parts":[{"text":"par"}]}}]}`), r.emit)
		if err := tr.End(r.emit); err != nil {
			t.Fatal(err)
		}
		if got := r.names(); got != "message_start,content_block_start,content_block_delta,content_block_stop,error" {
			t.Errorf("events = %s; want the open block closed, then an error event", got)
		}
	})
	t.Run("error chunk", func(t *testing.T) {
		var r recorder
		tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{})
		tr.Event("", []byte(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`), r.emit)
		tr.Event("", []byte(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`), r.emit)
		tr.End(r.emit)
		last := r.events[len(r.events)-1]
		if last.Event != "error" || !strings.Contains(string(last.Data), "overloaded_error") {
			t.Errorf("last event %s %s; want an overloaded_error event", last.Event, last.Data)
		}
	})
	t.Run("prompt blocked", func(t *testing.T) {
		var r recorder
		err := gemini.NewStreamToAnthropic(gemini.ReplyOptions{}).Event("", []byte(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}`), r.emit)
		var e *gemini.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "PROHIBITED_CONTENT") || len(r.events) != 0 {
			t.Errorf("blocked prompt: err %v, %d events; want a 400 *Error before any event", err, len(r.events))
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		var r recorder
		var e *gemini.Error
		if err := gemini.NewStreamToAnthropic(gemini.ReplyOptions{}).Event("", []byte(`{`), r.emit); !errors.As(err, &e) || e.Status != http.StatusBadGateway {
			t.Errorf("malformed chunk: %v; want a 502 *Error", err)
		}
	})
}

func TestReplyToAnthropicFinishReasons(t *testing.T) {
	for finish, want := range map[string]string{"STOP": "end_turn", "MAX_TOKENS": "max_tokens", "SAFETY": "refusal", "RECITATION": "refusal", "MALFORMED_FUNCTION_CALL": "end_turn", "": "end_turn"} {
		body := `{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"` + finish + `"}],"responseId":"r"}`
		out, err := gemini.ReplyToAnthropic([]byte(body), gemini.ReplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			StopReason string `json:"stop_reason"`
		}
		json.Unmarshal(out, &r)
		if r.StopReason != want {
			t.Errorf("finishReason %q → stop_reason %q; want %q", finish, r.StopReason, want)
		}
	}
	for name, body := range map[string]string{
		"prompt blocked":    `{"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"unsafe"}}`,
		"candidate blocked": `{"candidates":[{"finishReason":"SAFETY"}]}`,
	} {
		_, err := gemini.ReplyToAnthropic([]byte(body), gemini.ReplyOptions{})
		var e *gemini.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "blocked") {
			t.Errorf("%s: %v; want a 400 *Error saying it was blocked", name, err)
		}
	}
}

func TestStreamFromAnthropicEnds(t *testing.T) {
	collect := func(sseForm bool, events [][2]string) string {
		tr := gemini.NewStreamFromAnthropic(gemini.ReplyOptions{SSE: sseForm})
		var out strings.Builder
		write := func(f []byte) error { out.Write(f); return nil }
		for _, e := range events {
			if err := tr.Event(e[0], []byte(e[1]), write); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.End(write); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := collect(false, nil); got != `[{"error":{"code":502,"message":"the upstream stream ended before it finished","status":"UNAVAILABLE"}}]` {
		t.Errorf("empty array stream = %s", got)
	}
	broken := collect(false, [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":1}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`},
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	})
	var chunks []map[string]any
	if err := json.Unmarshal([]byte(broken), &chunks); err != nil {
		t.Fatalf("array stream after an error is not valid JSON: %v\n%s", err, broken)
	}
	if len(chunks) != 2 || chunks[1]["error"] == nil {
		t.Errorf("chunks = %s; want the text, then Google's error object", broken)
	}
	if e := chunks[1]["error"].(map[string]any); e["status"] != "UNAVAILABLE" || e["message"] != "Overloaded" {
		t.Errorf("error chunk = %v; want UNAVAILABLE Overloaded", e)
	}
	sse := collect(true, [][2]string{{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`}, {"message_stop", `{"type":"message_stop"}`}})
	if !strings.HasPrefix(sse, "data: {") || strings.Count(sse, "\r\n\r\n") != 2 || strings.HasSuffix(sse, "]") {
		t.Errorf("SSE stream = %q; want two data events and no array brackets", sse)
	}
}

// ArrayReader hands out each element as soon as it is complete, before the
// rest of the array has been written.
func TestArrayReaderIsIncremental(t *testing.T) {
	pr, pw := io.Pipe()
	rd := gemini.NewArrayReader(pr)
	type result struct {
		raw []byte
		err error
	}
	got := make(chan result)
	go func() {
		for {
			raw, err := rd.Next()
			got <- result{raw, err}
			if err != nil {
				return
			}
		}
	}()
	pw.Write([]byte(`[{"responseId":"a"}`))
	if r := <-got; r.err != nil || string(r.raw) != `{"responseId":"a"}` {
		t.Fatalf("first element = %s, %v", r.raw, r.err)
	}
	pw.Write([]byte(",\r\n{\"responseId\":\"b\"}\n"))
	if r := <-got; r.err != nil || string(r.raw) != `{"responseId":"b"}` {
		t.Fatalf("second element = %s, %v", r.raw, r.err)
	}
	pw.Write([]byte(`]`))
	pw.Close()
	if r := <-got; r.err != io.EOF {
		t.Fatalf("after the closing bracket: %v; want io.EOF", r.err)
	}

	broken := gemini.NewArrayReader(strings.NewReader(`[{"a":1},{"b":`))
	broken.Next()
	if _, err := broken.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("broken array: %v; want io.ErrUnexpectedEOF", err)
	}
	if _, err := gemini.NewArrayReader(strings.NewReader(`{"error":{}}`)).Next(); err == nil {
		t.Errorf("an object instead of an array: no error")
	}
}

func TestCountTokensAndModels(t *testing.T) {
	out, err := gemini.CountTokensToAnthropic([]byte(`{"contents":[{"role":"user","parts":[{"text":"count me"}]}]}`), gemini.RequestOptions{Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"model":"gemini-2.5-flash"`) || !strings.Contains(string(out), "count me") {
		t.Errorf("CountTokensToAnthropic = %s", out)
	}
	out, err = gemini.CountTokensToAnthropic([]byte(`{"generateContentRequest":{"model":"models/gemini-2.5-pro","contents":[{"parts":[{"text":"x"}]}]}}`), gemini.RequestOptions{})
	if err != nil || !strings.Contains(string(out), `"model":"gemini-2.5-pro"`) {
		t.Errorf("CountTokensToAnthropic(generateContentRequest) = %s, %v", out, err)
	}
	reply, err := gemini.CountTokensReply([]byte(`{"input_tokens":321}`))
	if err != nil || string(reply) != `{"totalTokens":321}` {
		t.Errorf("CountTokensReply = %s, %v", reply, err)
	}
	if _, err := gemini.CountTokensReply([]byte(`{}`)); err == nil {
		t.Errorf("CountTokensReply({}) = nil error")
	}

	list := gemini.ModelsJSON([]gemini.Model{gemini.NewModel("gemini-2.5-pro", 1048576, 65536), gemini.NewModel("models/claude-x", 200000, 64000)})
	ids, err := gemini.ModelIDs(list)
	if err != nil || strings.Join(ids, ",") != "gemini-2.5-pro,claude-x" {
		t.Errorf("ModelIDs(ModelsJSON) = %v, %v", ids, err)
	}
	if string(gemini.ModelsJSON(nil)) != `{"models":[]}` {
		t.Errorf("ModelsJSON(nil) = %s", gemini.ModelsJSON(nil))
	}
	for tail, want := range map[string][2]string{
		"gemini-2.5-pro:streamGenerateContent": {"gemini-2.5-pro", "streamGenerateContent"},
		"models/x:countTokens":                 {"x", "countTokens"},
	} {
		m, meth, ok := gemini.ParseModelPath(tail)
		if !ok || m != want[0] || meth != want[1] {
			t.Errorf("ParseModelPath(%q) = %q, %q, %v", tail, m, meth, ok)
		}
	}
	for _, bad := range []string{"gemini-2.5-pro", ":generateContent", "x:"} {
		if _, _, ok := gemini.ParseModelPath(bad); ok {
			t.Errorf("ParseModelPath(%q) ok; want not", bad)
		}
	}
}

// Each Messages event that carries content becomes its Gemini frame during
// its own Event call.
func TestStreamFromAnthropicWritesPerEvent(t *testing.T) {
	for _, sseForm := range []bool{true, false} {
		tr := gemini.NewStreamFromAnthropic(gemini.ReplyOptions{SSE: sseForm})
		frames := 0
		write := func([]byte) error { frames++; return nil }
		steps := []struct {
			name, data string
			frames     int // frames written so far
		}{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"c","usage":{"input_tokens":3}}}`, 0},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, 0},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`, 1},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}`, 2},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`, 2},
			{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`, 2},
			{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\":"}}`, 2},
			{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}`, 2},
			{"content_block_stop", `{"type":"content_block_stop","index":1}`, 3},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4}}`, 3},
			{"message_stop", `{"type":"message_stop"}`, 4},
		}
		for i, s := range steps {
			if err := tr.Event(s.name, []byte(s.data), write); err != nil {
				t.Fatal(err)
			}
			if frames != s.frames {
				t.Errorf("sse=%v: after event %d (%s) %d frames; want %d", sseForm, i, s.name, frames, s.frames)
			}
		}
	}
}
