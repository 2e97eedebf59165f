package anthropic

import "testing"

func TestSessionID(t *testing.T) {
	const conv = `{"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi "},{"type":"image"},{"type":"text","text":"there"}]}]}`
	tests := []struct {
		name, body, want string
	}{
		{"Claude Code user id", `{"metadata":{"user_id":"user_ab_account_cd_session_6d0b8f3e"}}`, "6d0b8f3e"},
		{"JSON user id", `{"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s-1\"}"}}`, "s-1"},
		{"other user id used whole", `{"metadata":{"user_id":"alice"}}`, "alice"},
		{"no user id: hash of system and first message", conv, conversationID([]byte(`"be brief"`), []byte(`{"role":"user","content":[{"type":"text","text":"hi "},{"type":"image"},{"type":"text","text":"there"}]}`))},
		{"nothing to go by", `{"messages":[]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := PeekRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.SessionID([]byte(tt.body)); got != tt.want {
				t.Errorf("SessionID(%s) = %q; want %q", tt.body, got, tt.want)
			}
		})
	}
	// The hash is kept in history and keys affinity across restarts: it
	// must never change. Text blocks are concatenated as they are, so the
	// same text as a string or as blocks is the same conversation.
	const want = "conv-a89cd6e7a9a650aff13ad453"
	for _, first := range []string{`{"role":"user","content":"hi there"}`, `{"role":"user","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}]}`} {
		if got := conversationID([]byte(`"be brief"`), []byte(first)); got != want {
			t.Errorf("conversationID(system, %s) = %q; want %q", first, got, want)
		}
	}
}
