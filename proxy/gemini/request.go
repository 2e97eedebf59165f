package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
)

// RequestOptions carries what a request translation needs from outside.
type RequestOptions struct {
	// Model is the model named in the Gemini URL path
	// (/v1beta/models/{model}:generateContent). RequestToAnthropic writes it
	// into the Messages request; "" falls back to the body's own model field
	// (countTokens' generateContentRequest carries one).
	Model string
	// Stream sets "stream": true in the Messages request (the client called
	// streamGenerateContent).
	Stream bool
	// DefaultMaxTokens is the Messages max_tokens when generationConfig has no
	// maxOutputTokens (Messages requires one). 0 = 8192.
	DefaultMaxTokens int
	// Original is, for RequestFromAnthropic, the Gemini request the client
	// sent before it was translated (and compacted) as Messages: what the
	// Messages shape cannot carry (safetySettings, cachedContent, built-in
	// tools, the exact function declarations, the thought signatures on its
	// parts) is taken back from it. nil when the client spoke another
	// protocol.
	Original []byte
	// Signature, for RequestFromAnthropic, restores a thought signature the
	// Anthropic-shaped conversation could not carry, by the key it was
	// reported under (the signature cache's tool map under Family). nil = no
	// lookup.
	Signature func(key string) (string, bool)
	// OnSignature, for RequestToAnthropic, reports every thoughtSignature the
	// client sent, with its key, so the core can keep it. nil = not reported.
	OnSignature func(key, signature string)
}

// TextSignatureKey is the key under which the thought signature of a model
// turn's text is kept: a digest of the text, since text has no id of its own.
func TextSignatureKey(text string) string {
	h := sha256.Sum256([]byte(text))
	return "gtext_" + hex.EncodeToString(h[:12])
}

// idSeed makes generated call ids differ between conversations: a digest of
// the first turn's first text.
func idSeed(contents []Content) uint64 {
	h := fnv.New64a()
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.Text != "" {
				h.Write([]byte(p.Text))
				return h.Sum64()
			}
		}
	}
	return h.Sum64()
}

// generatedCallID names a function call that came without an id: the same
// history always gives the same ids (prompt caching and the signature cache
// both key on them), and two conversations almost never share one.
func generatedCallID(seed uint64, content, part int, name string, args []byte) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%d|%s|", seed, content, part, name)
	h.Write(args)
	return fmt.Sprintf("toolu_g%016x", h.Sum64())
}

// callIDs walks contents and gives every functionCall and functionResponse
// the id it pairs by: its own id, else a generated one for a call, and for a
// response the oldest unanswered call of the same name (else the oldest
// unanswered call) of the latest model turn. A response with nothing to pair
// with gets "" (the caller reports it).
func callIDs(contents []Content) [][]string {
	seed := idSeed(contents)
	ids := make([][]string, len(contents))
	var pending []struct{ id, name string }
	for ci, c := range contents {
		ids[ci] = make([]string, len(c.Parts))
		newTurn := true
		for pi, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				if newTurn {
					pending, newTurn = pending[:0], false
				}
				id := p.FunctionCall.ID
				if id == "" {
					id = generatedCallID(seed, ci, pi, p.FunctionCall.Name, p.FunctionCall.Args)
				}
				ids[ci][pi] = id
				pending = append(pending, struct{ id, name string }{id, p.FunctionCall.Name})
			case p.FunctionResponse != nil:
				match := -1
				for k, q := range pending {
					if (p.FunctionResponse.ID != "" && q.id == p.FunctionResponse.ID) ||
						(p.FunctionResponse.ID == "" && q.name == p.FunctionResponse.Name) {
						match = k
						break
					}
				}
				if match < 0 && p.FunctionResponse.ID == "" && len(pending) > 0 {
					match = 0
				}
				switch {
				case match >= 0:
					ids[ci][pi] = pending[match].id
					pending = append(pending[:match], pending[match+1:]...)
				case p.FunctionResponse.ID != "":
					ids[ci][pi] = p.FunctionResponse.ID
				}
			}
		}
	}
	return ids
}

// RequestToAnthropic translates a Gemini generateContent request into a
// Messages request. Thought parts are dropped (no other model can use them,
// and Gemini needs only their signatures, which are reported through
// opts.OnSignature); googleSearch becomes Messages' web search tool;
// safetySettings, cachedContent and the other built-in tools have no
// Messages counterpart and are left out (RequestFromAnthropic restores them
// from opts.Original).
func RequestToAnthropic(body []byte, opts RequestOptions) ([]byte, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "request body is not a valid GenerateContentRequest: %v", err)
	}
	model := opts.Model
	if model == "" {
		model = strings.TrimPrefix(req.Model, "models/")
	}
	if model == "" {
		return nil, badRequest("model", "no model: name it in the URL path (/v1beta/models/{model}:generateContent)")
	}
	out := aRequest{Model: model, Stream: opts.Stream}

	if req.SystemInstruction != nil {
		var sys []aBlock
		for _, p := range req.SystemInstruction.Parts {
			if p.Text != "" && !p.Thought {
				sys = append(sys, aBlock{Type: "text", Text: p.Text})
			}
		}
		if len(sys) > 0 {
			raw, err := json.Marshal(sys)
			if err != nil {
				return nil, err
			}
			out.System = raw
		}
	}

	ids := callIDs(req.Contents)
	names := map[string]string{}
	out.Messages = make([]aMessage, 0, len(req.Contents))
	for ci, c := range req.Contents {
		role := "user"
		switch c.Role {
		case "model":
			role = "assistant"
		case "", "user", "function", "tool":
		default:
			return nil, badRequest(fmt.Sprintf("contents[%d].role", ci), "role %q is not one of user, model", c.Role)
		}
		blocks := make([]aBlock, 0, len(c.Parts))
		lastText := -1
		for pi, p := range c.Parts {
			param := fmt.Sprintf("contents[%d].parts[%d]", ci, pi)
			switch {
			case p.FunctionCall != nil:
				if p.FunctionCall.Name == "" {
					return nil, badRequest(param+".functionCall.name", "a function call needs a name")
				}
				args := p.FunctionCall.Args
				if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				} else if !isObject(args) {
					return nil, badRequest(param+".functionCall.args", "args must be a JSON object")
				}
				id := ids[ci][pi]
				names[id] = p.FunctionCall.Name
				blocks = append(blocks, aBlock{Type: "tool_use", ID: id, Name: p.FunctionCall.Name, Input: args})
				if p.ThoughtSignature != "" && opts.OnSignature != nil {
					opts.OnSignature(id, p.ThoughtSignature)
				}
			case p.FunctionResponse != nil:
				id := ids[ci][pi]
				if id == "" {
					return nil, badRequest(param+".functionResponse", "functionResponse %q answers no functionCall of the previous model turn", p.FunctionResponse.Name)
				}
				blk, err := toolResult(id, p.FunctionResponse.Response)
				if err != nil {
					return nil, badRequest(param+".functionResponse.response", "%v", err)
				}
				blocks = append(blocks, blk)
			case p.InlineData != nil:
				blk, err := mediaBlock(p.InlineData.MimeType, &aSource{Type: "base64", MediaType: p.InlineData.MimeType, Data: p.InlineData.Data})
				if err != nil {
					return nil, badRequest(param+".inlineData.mimeType", "%v", err)
				}
				blocks = append(blocks, blk)
			case p.FileData != nil:
				blk, err := mediaBlock(p.FileData.MimeType, &aSource{Type: "url", URL: p.FileData.FileURI})
				if err != nil {
					return nil, badRequest(param+".fileData.mimeType", "%v", err)
				}
				blocks = append(blocks, blk)
			case p.Thought:
				// A thought summary: only its signature matters to Gemini.
				if p.ThoughtSignature != "" && opts.OnSignature != nil && role == "assistant" {
					opts.OnSignature(TextSignatureKey(p.Text), p.ThoughtSignature)
				}
			case len(p.ExecutableCode) > 0 || len(p.CodeExecutionResult) > 0:
				raw := p.ExecutableCode
				if len(raw) == 0 {
					raw = p.CodeExecutionResult
				}
				blocks = append(blocks, aBlock{Type: "text", Text: string(raw)})
			case p.Text != "":
				if lastText == len(blocks)-1 && lastText >= 0 {
					blocks[lastText].Text += p.Text // Gemini splits text freely; Messages wants it whole
				} else {
					lastText = len(blocks)
					blocks = append(blocks, aBlock{Type: "text", Text: p.Text})
				}
			}
			if p.ThoughtSignature != "" && p.FunctionCall == nil && !p.Thought && role == "assistant" && opts.OnSignature != nil && lastText >= 0 {
				opts.OnSignature(TextSignatureKey(blocks[lastText].Text), p.ThoughtSignature)
			}
		}
		if len(blocks) == 0 {
			continue // Messages rejects empty turns; Gemini CLI drops them too
		}
		raw, err := json.Marshal(blocks)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, aMessage{Role: role, Content: raw})
	}
	if len(out.Messages) == 0 {
		return nil, badRequest("contents", "contents has no turn with anything to send")
	}

	for ti, t := range req.Tools {
		for di, d := range t.FunctionDeclarations {
			schema, err := schemaToJSONSchema(d)
			if err != nil {
				return nil, badRequest(fmt.Sprintf("tools[%d].functionDeclarations[%d].parameters", ti, di), "%v", err)
			}
			out.Tools = append(out.Tools, aTool{Name: d.Name, Description: d.Description, InputSchema: schema})
		}
		if len(t.GoogleSearch) > 0 { // Messages' own server-side search
			out.Tools = append(out.Tools, aTool{Type: "web_search_20250305", Name: "web_search"})
		}
	}
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil && len(out.Tools) > 0 {
		fc := tc.FunctionCallingConfig
		switch strings.ToUpper(fc.Mode) {
		case "ANY":
			if len(fc.AllowedFunctionNames) == 1 {
				out.ToolChoice = &aToolChoice{Type: "tool", Name: fc.AllowedFunctionNames[0]}
			} else {
				out.ToolChoice = &aToolChoice{Type: "any"}
			}
		case "NONE":
			out.ToolChoice = &aToolChoice{Type: "none"}
		case "AUTO", "VALIDATED":
			out.ToolChoice = &aToolChoice{Type: "auto"}
		}
	}

	out.MaxTokens = opts.DefaultMaxTokens
	if out.MaxTokens <= 0 {
		out.MaxTokens = 8192
	}
	if g := req.GenerationConfig; g != nil {
		if g.CandidateCount != nil && *g.CandidateCount > 1 {
			return nil, badRequest("generationConfig.candidateCount", "only one candidate can be generated through this upstream")
		}
		if g.MaxOutputTokens != nil && *g.MaxOutputTokens > 0 {
			out.MaxTokens = *g.MaxOutputTokens
		}
		if g.Temperature != nil {
			t := min(*g.Temperature, 1) // Gemini allows 0–2, Messages 0–1
			out.Temperature = &t
		}
		out.TopP = g.TopP
		if g.TopK != nil {
			k := int(*g.TopK)
			out.TopK = &k
		}
		out.StopSequences = g.StopSequences
		if tc := g.ThinkingConfig; tc != nil {
			switch {
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget > 0:
				budget := max(*tc.ThinkingBudget, 1024) // the Messages minimum
				out.Thinking = &aThinking{Type: "enabled", BudgetTokens: budget}
				if out.MaxTokens <= budget {
					out.MaxTokens = budget + 4096 // Messages requires max_tokens > budget
				}
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget < 0, tc.ThinkingBudget == nil && (tc.ThinkingLevel != "" || tc.IncludeThoughts):
				out.Thinking = &aThinking{Type: "adaptive"}
			}
		}
		schema := g.ResponseJSONSchema
		if len(schema) == 0 && len(g.ResponseSchema) > 0 {
			s, err := openAPIToJSONSchema(g.ResponseSchema, true)
			if err != nil {
				return nil, badRequest("generationConfig.responseSchema", "%v", err)
			}
			schema = s
		}
		if len(schema) > 0 {
			out.OutputConfig = &aOutputConfig{Format: &aFormat{Type: "json_schema", Schema: schema}}
		}
	}
	return json.Marshal(out)
}

func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// mediaBlock maps an image or PDF to its Messages block; other media (audio,
// video) have no Messages counterpart.
func mediaBlock(mime string, src *aSource) (aBlock, error) {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return aBlock{Type: "image", Source: src}, nil
	case mime == "application/pdf":
		return aBlock{Type: "document", Source: src}, nil
	case mime == "text/plain" && src.Type == "base64":
		return aBlock{Type: "document", Source: src}, nil
	}
	return aBlock{}, fmt.Errorf("media type %q cannot be sent to this model (images and PDF only)", mime)
}

// toolResult maps a functionResponse.response to a tool_result: the SDKs'
// {"output": "…"} becomes its text, {"error": "…"} an error result, any other
// object its JSON text (functionResponseFromResult reverses each case).
func toolResult(id string, resp json.RawMessage) (aBlock, error) {
	blk := aBlock{Type: "tool_result", ToolUseID: id}
	if len(bytes.TrimSpace(resp)) == 0 || string(resp) == "null" {
		blk.Content = json.RawMessage(`""`)
		return blk, nil
	}
	if !isObject(resp) {
		return blk, fmt.Errorf("response must be a JSON object")
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(resp, &one); err != nil {
		return blk, err
	}
	if len(one) == 1 {
		for k, v := range one {
			if (k == "output" || k == "error") && len(v) > 0 && v[0] == '"' {
				blk.Content = v
				blk.IsError = k == "error"
				return blk, nil
			}
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, resp); err != nil {
		return blk, err
	}
	text, err := json.Marshal(compact.String())
	if err != nil {
		return blk, err
	}
	blk.Content = text
	return blk, nil
}
