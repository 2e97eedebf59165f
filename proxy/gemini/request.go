package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
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
func idSeed(contents []rawContent) uint64 {
	h := fnv.New64a()
	for _, c := range contents {
		for _, p := range c.parts {
			if p.text != nil {
				h.Write(p.text)
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
func callIDs(contents []rawContent) [][]string {
	seed := idSeed(contents)
	ids := make([][]string, len(contents))
	type call struct{ id, name string }
	var pending []call
	for ci, c := range contents {
		ids[ci] = make([]string, len(c.parts))
		newTurn := true
		for pi, p := range c.parts {
			switch {
			case p.call != nil:
				if newTurn {
					pending, newTurn = pending[:0], false
				}
				id := p.call.id
				if id == "" {
					id = generatedCallID(seed, ci, pi, p.call.name, p.call.data)
				}
				ids[ci][pi] = id
				pending = append(pending, call{id, p.call.name})
			case p.response != nil:
				r := p.response
				match := -1
				for k, q := range pending {
					if (r.id != "" && q.id == r.id) || (r.id == "" && q.name == r.name) {
						match = k
						break
					}
				}
				if match < 0 && r.id == "" && len(pending) > 0 {
					match = 0
				}
				switch {
				case match >= 0:
					ids[ci][pi] = pending[match].id
					pending = append(pending[:match], pending[match+1:]...)
				case r.id != "":
					ids[ci][pi] = r.id
				}
			}
		}
	}
	return ids
}

// requestConfig is the small part of a generateContent request, decoded.
type requestConfig struct {
	Tools            []Tool            `json:"tools"`
	ToolConfig       *ToolConfig       `json:"toolConfig"`
	GenerationConfig *GenerationConfig `json:"generationConfig"`
	Model            string            `json:"model"`
}

// RequestToAnthropic translates a Gemini generateContent request into a
// Messages request. Thought parts are dropped (no other model can use them,
// and Gemini needs only their signatures, which are reported through
// opts.OnSignature); googleSearch becomes Messages' web search tool;
// safetySettings, cachedContent and the other built-in tools have no
// Messages counterpart and are left out (RequestFromAnthropic restores them
// from opts.Original).
func RequestToAnthropic(body []byte, opts RequestOptions) ([]byte, error) {
	contents, system, small, err := readGemini(body)
	if err != nil {
		return nil, badRequest("", "request body is not a valid GenerateContentRequest: %v", err)
	}
	var cfg requestConfig
	if err := json.Unmarshal(small, &cfg); err != nil {
		return nil, badRequest("", "request body is not a valid GenerateContentRequest: %v", err)
	}
	model := opts.Model
	if model == "" {
		model = strings.TrimPrefix(cfg.Model, "models/")
	}
	if model == "" {
		return nil, badRequest("model", "no model: name it in the URL path (/v1beta/models/{model}:generateContent)")
	}
	var rest aRequestTail
	rest.Stream = opts.Stream

	out := make([]byte, 0, len(body)+len(body)/8)
	out = append(out, `{"model":`...)
	out = append(out, anthropic.Quote(model)...)

	if len(system) > 0 && string(system) != "null" {
		var texts [][]byte
		var sys []rawContent
		_, err := walkContents(append(append([]byte{'['}, system...), ']'), 0, &sys)
		for _, c := range sys {
			for _, p := range c.parts {
				if len(p.text) > 2 && !p.thought {
					texts = append(texts, p.text)
				}
			}
		}
		if err != nil {
			return nil, badRequest("systemInstruction", "%v", err)
		}
		if len(texts) > 0 {
			out = append(out, `,"system":[`...)
			for i, t := range texts {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, `{"type":"text","text":`...)
				out = append(out, t...)
				out = append(out, '}')
			}
			out = append(out, ']')
		}
	}

	ids := callIDs(contents)
	out = append(out, `,"messages":[`...)
	messages := 0
	var texts [][]byte // the text parts of the open text block
	for ci, c := range contents {
		role := "user"
		switch c.role {
		case "model":
			role = "assistant"
		case "", "user", "function", "tool":
		default:
			return nil, badRequest(fmt.Sprintf("contents[%d].role", ci), "role %q is not one of user, model", c.role)
		}
		mark := len(out)
		if messages > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"role":"`...)
		out = append(out, role...)
		out = append(out, `","content":[`...)
		blocks := 0
		block := func() {
			if blocks > 0 {
				out = append(out, ',')
			}
			blocks++
		}
		textSig := "" // the signature of the open text block
		// flushText writes the open text block (Gemini splits text freely;
		// Messages wants it whole) and reports its signature under the key
		// of its whole text, which is what comes back.
		flushText := func() {
			if len(texts) > 0 {
				block()
				out = append(out, `{"type":"text","text":`...)
				out = joinRaw(out, texts, "")
				out = append(out, '}')
				if textSig != "" && role == "assistant" && opts.OnSignature != nil {
					opts.OnSignature(TextSignatureKey(decodeJoined(texts)), textSig)
				}
			}
			texts, textSig = texts[:0], ""
		}
		texts = texts[:0]
		// Messages wants a user turn's tool_result blocks before anything
		// else in it: a turn that mixes them takes two passes.
		passes, responses := 1, 0
		for _, p := range c.parts {
			if p.response != nil {
				responses++
			}
		}
		if responses > 0 && responses < len(c.parts) {
			passes = 2
		}
		for pass := range passes {
			for pi, p := range c.parts {
				if passes == 2 && (pass == 0) != (p.response != nil) {
					continue
				}
				param := func(field string) string { return fmt.Sprintf("contents[%d].parts[%d]%s", ci, pi, field) }
				if p.text != nil && len(p.text) > 2 && !p.thought && p.call == nil && p.response == nil && p.media == nil {
					texts = append(texts, p.text)
					if p.signature != "" {
						textSig = p.signature
					}
					continue
				}
				switch {
				case p.call != nil:
					flushText()
					if p.call.name == "" {
						return nil, badRequest(param(".functionCall.name"), "a function call needs a name")
					}
					args := p.call.data
					if len(args) == 0 {
						args = []byte("{}")
					} else if !isRawObject(args) {
						return nil, badRequest(param(".functionCall.args"), "args must be a JSON object")
					}
					block()
					out = append(out, `{"type":"tool_use","id":`...)
					out = append(out, anthropic.Quote(ids[ci][pi])...)
					out = append(out, `,"name":`...)
					out = append(out, anthropic.Quote(p.call.name)...)
					out = append(out, `,"input":`...)
					out = append(out, args...)
					out = append(out, '}')
					if p.signature != "" && opts.OnSignature != nil {
						opts.OnSignature(ids[ci][pi], p.signature)
					}
				case p.response != nil:
					flushText()
					id := ids[ci][pi]
					if id == "" {
						return nil, badRequest(param(".functionResponse"), "functionResponse %q answers no functionCall of the previous model turn", p.response.name)
					}
					block()
					out, err = appendToolResult(out, id, p.response)
					if err != nil {
						return nil, badRequest(param(".functionResponse.response"), "%v", err)
					}
				case p.media != nil:
					flushText()
					field := ".inlineData.mimeType"
					if p.media.data == nil {
						field = ".fileData.mimeType"
					}
					kind, err := mediaKind(p.media.mime, p.media.data != nil)
					if err != nil {
						return nil, badRequest(param(field), "%v", err)
					}
					block()
					out = append(out, `{"type":"`...)
					out = append(out, kind...)
					if p.media.data != nil {
						out = append(out, `","source":{"type":"base64","media_type":`...)
						out = append(out, anthropic.Quote(p.media.mime)...)
						out = append(out, `,"data":`...)
						out = append(out, p.media.data...)
					} else {
						out = append(out, `","source":{"type":"url","url":`...)
						out = append(out, anthropic.Quote(p.media.uri)...)
					}
					out = append(out, `}}`...)
				case p.signature != "" && p.text != nil && !p.thought:
					// An empty text part that only carries the signature of the
					// text before it (how a streamed reply ends).
					if len(texts) > 0 {
						textSig = p.signature
					}
				case p.thought:
					// A thought summary: only its signature matters to Gemini.
					if p.signature != "" && opts.OnSignature != nil && role == "assistant" {
						opts.OnSignature(TextSignatureKey(anthropic.Unquote(p.text)), p.signature)
					}
				case p.code != nil:
					flushText()
					block()
					out = append(out, `{"type":"text","text":`...)
					out = append(out, anthropic.Quote(string(p.code))...)
					out = append(out, '}')
				}
			}
		}
		flushText()
		if blocks == 0 {
			out = out[:mark] // Messages rejects empty turns; Gemini CLI drops them too
			continue
		}
		out = append(out, `]}`...)
		messages++
	}
	if messages == 0 {
		return nil, badRequest("contents", "contents has no turn with anything to send")
	}
	out = append(out, ']')

	for ti, t := range cfg.Tools {
		for di, d := range t.FunctionDeclarations {
			schema, err := schemaToJSONSchema(d)
			if err != nil {
				return nil, badRequest(fmt.Sprintf("tools[%d].functionDeclarations[%d].parameters", ti, di), "%v", err)
			}
			rest.Tools = append(rest.Tools, aTool{Name: d.Name, Description: d.Description, InputSchema: schema})
		}
		if len(t.GoogleSearch) > 0 { // Messages' own server-side search
			rest.Tools = append(rest.Tools, aTool{Type: "web_search_20250305", Name: "web_search"})
		}
	}
	if tc := cfg.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil && len(rest.Tools) > 0 {
		fc := tc.FunctionCallingConfig
		switch strings.ToUpper(fc.Mode) {
		case "ANY":
			if len(fc.AllowedFunctionNames) == 1 {
				rest.ToolChoice = &aToolChoice{Type: "tool", Name: fc.AllowedFunctionNames[0]}
			} else {
				rest.ToolChoice = &aToolChoice{Type: "any"}
			}
		case "NONE":
			rest.ToolChoice = &aToolChoice{Type: "none"}
		case "AUTO", "VALIDATED":
			rest.ToolChoice = &aToolChoice{Type: "auto"}
		}
	}

	maxTokens := opts.DefaultMaxTokens
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	if g := cfg.GenerationConfig; g != nil {
		if g.CandidateCount != nil && *g.CandidateCount > 1 {
			return nil, badRequest("generationConfig.candidateCount", "only one candidate can be generated through this upstream")
		}
		if g.MaxOutputTokens != nil && *g.MaxOutputTokens > 0 {
			maxTokens = *g.MaxOutputTokens
		}
		if g.Temperature != nil {
			t := min(*g.Temperature, 1) // Gemini allows 0–2, Messages 0–1
			rest.Temperature = &t
		}
		rest.TopP = g.TopP
		if g.TopK != nil {
			k := int(*g.TopK)
			rest.TopK = &k
		}
		rest.StopSequences = g.StopSequences
		if tc := g.ThinkingConfig; tc != nil {
			switch {
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget > 0:
				budget := max(*tc.ThinkingBudget, 1024) // the Messages minimum
				rest.Thinking = &aThinking{Type: "enabled", BudgetTokens: budget}
				if maxTokens <= budget {
					maxTokens = budget + 4096 // Messages requires max_tokens > budget
				}
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget < 0, tc.ThinkingBudget == nil && (tc.ThinkingLevel != "" || tc.IncludeThoughts):
				rest.Thinking = &aThinking{Type: "adaptive"}
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
			rest.OutputConfig = &aOutputConfig{Format: &aFormat{Type: "json_schema", Schema: schema}}
		}
	}
	out = append(out, `,"max_tokens":`...)
	out = strconv.AppendInt(out, int64(maxTokens), 10)
	tail, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if len(tail) > 2 {
		out = append(out, ',')
		out = append(out, tail[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// decodeJoined decodes raw JSON strings and joins them.
func decodeJoined(parts [][]byte) string {
	if len(parts) == 1 {
		return anthropic.Unquote(parts[0])
	}
	return anthropic.Unquote(joinRaw(nil, parts, ""))
}

// mediaKind names the Messages block of an image or PDF; other media (audio,
// video) have no Messages counterpart.
func mediaKind(mime string, inline bool) (string, error) {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return "image", nil
	case mime == "application/pdf", mime == "text/plain" && inline:
		return "document", nil
	}
	return "", fmt.Errorf("media type %q cannot be sent to this model (images and PDF only)", mime)
}

// appendToolResult writes the tool_result of a functionResponse: the SDKs'
// {"output": "…"} becomes its text, {"error": "…"} an error result, any
// other object its JSON text (appendFunctionResponse reverses each case).
func appendToolResult(out []byte, id string, r *rawCall) ([]byte, error) {
	out = append(out, `{"type":"tool_result","tool_use_id":`...)
	out = append(out, anthropic.Quote(id)...)
	out = append(out, `,"content":`...)
	switch {
	case len(r.data) == 0:
		return append(out, `""}`...), nil
	case !isRawObject(r.data):
		return out, fmt.Errorf("response must be a JSON object")
	case r.single != nil:
		out = append(out, r.single...)
		if r.isError {
			out = append(out, `,"is_error":true`...)
		}
		return append(out, '}'), nil
	}
	out = append(out, anthropic.Quote(string(bytes.TrimSpace(r.data)))...)
	return append(out, '}'), nil
}
