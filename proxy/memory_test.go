package proxy

import (
	"encoding/json"
	"net/http"
	"testing"

	"longhaul/proxy/anthropic"
)

// A request of more messages than the Messages API takes is refused by the peek, in the
// client's protocol, before any of it is translated or sent: each protocol counts what becomes
// messages (Chat messages, Responses input items, Gemini contents).
func TestTooManyMessagesRefusedInTheClientsShape(t *testing.T) {
	f := newFixture(t, Config{})
	for p, mp := range manyMessageProtocols {
		t.Run(mp.name, func(t *testing.T) {
			resp := f.post(t, mp.path, string(manyMessagesBody(p, anthropic.MaxMessages+1, 1)), "Content-Type", "application/json")
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d; want 400: %.300s", resp.StatusCode, body)
			}
			var reply struct {
				Type  string `json:"type"`
				Error struct {
					Type, Message, Status string
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &reply); err != nil {
				t.Fatalf("reply %q: %v", body, err)
			}
			wantShape := map[string]bool{
				"messages":  reply.Type == "error" && reply.Error.Type == anthropic.InvalidRequestError,
				"chat":      reply.Error.Type == anthropic.InvalidRequestError,
				"responses": reply.Error.Type == anthropic.InvalidRequestError,
				"gemini":    reply.Error.Status == "INVALID_ARGUMENT",
			}[mp.name]
			if !wantShape || reply.Error.Message == "" {
				t.Errorf("reply %s is not a %s invalid-request error", body, mp.name)
			}
		})
	}
	if n := len(f.up.Requests()); n != 0 {
		t.Errorf("the upstream received %d requests; want none", n)
	}
}
