package proxytest

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestWindowRefusesAPromptTooLong(t *testing.T) {
	body := session{rounds: 4}.body()
	n, err := CountTokens([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		window int
		stream bool
		want   int // status
	}{
		{"a prompt over the window is refused", n - 1, false, 400},
		{"a stream is refused before it starts", n - 1, true, 400},
		{"a prompt of exactly the window passes", n, true, 200},
		{"no window, no refusal", 0, false, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := NewUpstream()
			defer u.Close()
			u.SetSimulation(Simulation{Window: tt.window})
			queued := TextMessage("m", "the queued reply")
			u.Enqueue(Reply{Message: queued})
			b := body
			if tt.stream {
				b = strings.Replace(b, `"stream":false`, `"stream":true`, 1)
			}
			resp := post(t, u, "/v1/messages", b)
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d %s; want %d", resp.StatusCode, raw, tt.want)
			}
			if rec := u.LastRequest(); tt.window > 0 && rec.Tokens != n {
				t.Errorf("recorded count %d; want %d", rec.Tokens, n)
			}
			if tt.want == 200 {
				return
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			wantMsg := "prompt is too long: " + itoa(n) + " tokens > " + itoa(tt.window) + " maximum"
			if e.Type != "error" || e.Error.Type != "invalid_request_error" || e.Error.Message != wantMsg ||
				e.RequestID != resp.Header.Get("request-id") || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("refusal %s (%s); want invalid_request_error %q", raw, resp.Header.Get("Content-Type"), wantMsg)
			}
			// The refusal consumed no scripted reply: a retry that fits gets the queued one.
			u.SetSimulation(Simulation{Window: n})
			var got Message
			json.NewDecoder(post(t, u, "/v1/messages", body).Body).Decode(&got)
			if len(got.Content) != 1 || got.Content[0].Text != "the queued reply" {
				t.Errorf("retry got %+v; want the queued reply", got.Content)
			}
		})
	}
}

func TestChatWindowRefusesContextLengthExceeded(t *testing.T) {
	body := `{"model":"gpt-test","stream":true,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"` +
		strings.Repeat("word ", 300) + `"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`
	n, err := CountChatTokens([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if want := requestTokens + 2*messageTokens + 2 + 300 + toolTokens + textTokens(`{"name":"read","parameters":{"type":"object"}}`); n != want {
		t.Errorf("CountChatTokens = %d; want %d", n, want)
	}
	u := NewChatUpstream()
	defer u.Close()
	u.SetWindow(n - 1)
	resp := postChat(t, u, "/v1/chat/completions", body)
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	want := "This model's maximum context length is " + itoa(n-1) + " tokens. However, your messages resulted in " + itoa(n) +
		" tokens. Please reduce the length of the messages."
	if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Message != want ||
		e.Error.Param == nil || *e.Error.Param != "messages" || e.Error.Code == nil || *e.Error.Code != "context_length_exceeded" {
		t.Errorf("refusal %d %+v; want 400 context_length_exceeded %q", resp.StatusCode, e, want)
	}
	if got := u.Requests(); len(got) != 1 || got[0].Tokens != n || u.Rejected() != 0 {
		t.Errorf("recorded %d requests (count %d), rejected %d; want 1 with %d, none rejected", len(got), got[0].Tokens, u.Rejected(), n)
	}
	u.SetWindow(n)
	if resp := postChat(t, u, "/v1/chat/completions", body); resp.StatusCode != 200 {
		t.Errorf("at the window: status %d; want 200", resp.StatusCode)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
