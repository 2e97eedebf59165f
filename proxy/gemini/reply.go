package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
)

// ReplyOptions carries what a reply or stream translation needs from outside.
type ReplyOptions struct {
	// Model is the model to report when the reply names none (Gemini's
	// modelVersion, Messages' model).
	Model string
	// SSE, for StreamFromAnthropic: frame chunks as SSE data lines (the
	// client asked alt=sse) instead of the JSON-array stream.
	SSE bool
	// IncludeThoughts, for ReplyFromAnthropic and StreamFromAnthropic: the
	// Gemini client asked thinkingConfig.includeThoughts, so thinking comes
	// back as thought parts; otherwise it is left out, as Gemini does.
	IncludeThoughts bool
	// OnSignature, for ReplyToAnthropic and StreamToAnthropic, reports every
	// thoughtSignature of the reply with the key RequestFromAnthropic will
	// ask for it by (a tool_use id, or TextSignatureKey of a text block).
	// nil = not reported.
	OnSignature func(key, signature string)
}

// filtered reports whether a finish or block reason means a filter stopped
// the reply.
func filtered(reason string) bool {
	switch reason {
	case FinishSafety, FinishRecitation, FinishBlocklist, FinishProhibitedContent, FinishSPII, FinishImageSafety, FinishLanguage:
		return true
	}
	return false
}

// BlockedError is the error of a reply Gemini's filters blocked: the prompt
// (promptFeedback.blockReason) or the whole candidate (a safety finish
// reason with no content). A client gets it as a 400, not as an empty reply.
func BlockedError(r *Response) *Error {
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" && len(r.Candidates) == 0 {
		msg := fmt.Sprintf("Gemini blocked the prompt (%s)", r.PromptFeedback.BlockReason)
		if r.PromptFeedback.BlockReasonMessage != "" {
			msg += ": " + r.PromptFeedback.BlockReasonMessage
		}
		return &Error{Status: http.StatusBadRequest, Param: "promptFeedback.blockReason", Message: msg}
	}
	if len(r.Candidates) > 0 {
		c := r.Candidates[0]
		if filtered(c.FinishReason) && (c.Content == nil || len(c.Content.Parts) == 0) {
			msg := fmt.Sprintf("Gemini blocked the reply (finishReason %s)", c.FinishReason)
			if c.FinishMessage != "" {
				msg += ": " + c.FinishMessage
			}
			return &Error{Status: http.StatusBadRequest, Param: "candidates[0].finishReason", Message: msg}
		}
	}
	return nil
}

// stopReason maps a finish reason to Messages' stop_reason.
func stopReason(finish string, toolUse bool) string {
	switch {
	case finish == FinishMaxTokens:
		return "max_tokens"
	case filtered(finish):
		return "refusal"
	case toolUse:
		return "tool_use"
	}
	return "end_turn"
}

// finishReason maps a stop_reason back.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return FinishMaxTokens
	case "refusal":
		return FinishSafety
	}
	return FinishStop
}

// usageToAnthropic maps usageMetadata: Gemini's prompt count includes cached
// tokens and its candidates count excludes thoughts; Messages' input_tokens
// excludes cache reads and output_tokens includes thinking.
func usageToAnthropic(u *UsageMetadata) aUsage {
	if u == nil {
		return aUsage{}
	}
	return aUsage{
		InputTokens:          max(u.PromptTokenCount+u.ToolUsePromptTokenCount-u.CachedContentTokenCount, 0),
		CacheReadInputTokens: u.CachedContentTokenCount,
		OutputTokens:         u.CandidatesTokenCount + u.ThoughtsTokenCount,
	}
}

func usageFromAnthropic(u aUsage) *UsageMetadata {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return &UsageMetadata{
		PromptTokenCount:        prompt,
		CandidatesTokenCount:    u.OutputTokens,
		TotalTokenCount:         prompt + u.OutputTokens,
		CachedContentTokenCount: u.CacheReadInputTokens,
	}
}

// replyCallID names a reply's function call that came without an id, unique
// per response (the signature cache keys on it across conversations).
func replyCallID(responseID string, n int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d", responseID, n)
	return fmt.Sprintf("toolu_g%016x", h.Sum64())
}

func randomID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "gen"
	}
	return hex.EncodeToString(b[:])
}

// ReplyToAnthropic translates a generateContent reply into a Messages reply.
// A reply blocked by safety filters is a *Error (see BlockedError).
func ReplyToAnthropic(body []byte, opts ReplyOptions) ([]byte, error) {
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Message: fmt.Sprintf("upstream reply is not a GenerateContentResponse: %v", err)}
	}
	if e := BlockedError(&r); e != nil {
		return nil, e
	}
	respID := r.ResponseID
	if respID == "" {
		respID = randomID()
	}
	model := r.ModelVersion
	if model == "" {
		model = opts.Model
	}
	out := aReply{ID: "msg_" + respID, Type: "message", Role: "assistant", Model: model, Content: []aBlock{}, Usage: usageToAnthropic(r.UsageMetadata)}
	finish := ""
	toolUse := false
	var pendingSig string
	lastText := -1
	textSigs := map[int]string{} // text block → its signature
	report := func(key, sig string) {
		if opts.OnSignature != nil && sig != "" {
			opts.OnSignature(key, sig)
		}
	}
	if len(r.Candidates) > 0 {
		c := r.Candidates[0]
		finish = c.FinishReason
		var parts []Part
		if c.Content != nil {
			parts = c.Content.Parts
		}
		calls := 0
		for _, p := range parts {
			sig := p.ThoughtSignature
			switch {
			case p.FunctionCall != nil:
				id := p.FunctionCall.ID
				if id == "" {
					id = replyCallID(respID, calls)
				}
				calls++
				args := p.FunctionCall.Args
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				out.Content = append(out.Content, aBlock{Type: "tool_use", ID: id, Name: p.FunctionCall.Name, Input: args})
				toolUse = true
				if sig == "" {
					sig, pendingSig = pendingSig, ""
				}
				report(id, sig)
				continue
			case p.Thought:
				n := len(out.Content) - 1
				if n >= 0 && out.Content[n].Type == "thinking" {
					*out.Content[n].Thinking += p.Text
				} else if p.Text != "" {
					t, noSignature := p.Text, ""
					out.Content = append(out.Content, aBlock{Type: "thinking", Thinking: &t, Signature: &noSignature})
				}
			case p.Text != "":
				n := len(out.Content) - 1
				if n >= 0 && n == lastText {
					out.Content[n].Text += p.Text
				} else {
					lastText = len(out.Content)
					out.Content = append(out.Content, aBlock{Type: "text", Text: p.Text})
				}
			}
			if sig != "" {
				pendingSig = sig // belongs to the text it ends (or the next call)
			}
			if pendingSig != "" && lastText >= 0 && !p.Thought {
				textSigs[lastText], pendingSig = pendingSig, ""
			}
		}
		if pendingSig != "" && lastText >= 0 {
			textSigs[lastText] = pendingSig
		}
		// Keyed by each block's whole text, once it is complete.
		for i, sig := range textSigs {
			report(TextSignatureKey(out.Content[i].Text), sig)
		}
	}
	stop := stopReason(finish, toolUse)
	out.StopReason = &stop
	return json.Marshal(out)
}

// ReplyFromAnthropic translates a Messages reply into a generateContent
// reply. Thinking becomes thought parts only when opts.IncludeThoughts, and
// never carries its (Anthropic) signature.
func ReplyFromAnthropic(body []byte, opts ReplyOptions) ([]byte, error) {
	var a aReply
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Message: fmt.Sprintf("upstream reply is not a Messages reply: %v", err)}
	}
	parts := make([]Part, 0, len(a.Content))
	for _, b := range a.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				parts = append(parts, Part{Text: b.Text})
			}
		case "thinking":
			if opts.IncludeThoughts && b.Thinking != nil && *b.Thinking != "" {
				parts = append(parts, Part{Text: *b.Thinking, Thought: true})
			}
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			parts = append(parts, Part{FunctionCall: &FunctionCall{ID: b.ID, Name: b.Name, Args: args}})
		}
	}
	stop := ""
	if a.StopReason != nil {
		stop = *a.StopReason
	}
	model := a.Model
	if model == "" {
		model = opts.Model
	}
	out := Response{
		Candidates:    []Candidate{{Content: &Content{Role: "model", Parts: parts}, FinishReason: finishReason(stop)}},
		UsageMetadata: usageFromAnthropic(a.Usage),
		ModelVersion:  model,
		ResponseID:    strings.TrimPrefix(a.ID, "msg_"),
	}
	return json.Marshal(out)
}
