package anthropic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// SessionID names the conversation the peeked request belongs to (body is
// the request): the session in metadata.user_id when the client sends one,
// else a hash of the system prompt and the first user message's text, which
// stay the same for the whole conversation. Empty when there is neither.
// Session affinity keys on it, because upstream prompt caches are per
// account; so do the compaction engine's per-session state and the history.
func (p Peek) SessionID(body []byte) string {
	if id := userSession(p.UserID); id != "" {
		return id
	}
	return conversationID(p.SystemSpan.Of(body), p.FirstMessageSpan.Of(body))
}

// userSession extracts the session from metadata.user_id. Claude Code sends
// either "user_<hash>_account_<uuid>_session_<uuid>" or a JSON object string
// with a session_id field; anything else is used whole.
func userSession(userID string) string {
	if strings.HasPrefix(userID, "{") {
		var v struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(userID), &v) == nil && v.SessionID != "" {
			return v.SessionID
		}
	}
	if _, after, ok := strings.Cut(userID, "_session_"); ok && after != "" {
		return after
	}
	return userID
}

// conversationID identifies a session whose client sends no user id: a hash
// of the system prompt and the first message's text. The ids are kept in
// history and key affinity across restarts, so the hash must not change:
// text blocks are concatenated as they are, decoded by encoding/json.
func conversationID(system, firstMessage []byte) string {
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	var text string
	if json.Unmarshal(firstMessage, &msg) == nil {
		if json.Unmarshal(msg.Content, &text) != nil {
			var blocks []struct{ Type, Text string }
			if json.Unmarshal(msg.Content, &blocks) == nil {
				var b strings.Builder
				for _, bl := range blocks {
					if bl.Type == "text" {
						b.WriteString(bl.Text)
					}
				}
				text = b.String()
			}
		}
	}
	if len(system) == 0 && text == "" {
		return ""
	}
	h := sha256.New()
	h.Write(system)
	h.Write([]byte{0})
	h.Write([]byte(text))
	return "conv-" + hex.EncodeToString(h.Sum(nil)[:12])
}
