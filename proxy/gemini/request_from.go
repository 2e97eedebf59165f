package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"longhaul/proxy/anthropic"
)

// RequestFromAnthropic translates a Messages request into a Gemini
// generateContent request (the model goes in the URL path, not the body).
// Thinking blocks are dropped: an Anthropic signature must never reach
// Gemini, and Gemini does not read thought text back. Thought signatures
// come back from opts.Original and opts.Signature; the first function call of
// a model turn whose signature is lost for good gets SkipSignatureValidator,
// so the API does not refuse the whole request.
func RequestFromAnthropic(body []byte, opts RequestOptions) ([]byte, error) {
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil, badRequest("", "request body is not a valid Messages request: %v", err)
	}
	var req aRequest // the small members; messages stay in r
	if err := decodeMembers(r.Members(), &req); err != nil {
		return nil, badRequest("", "request body is not a valid Messages request: %v", err)
	}
	var orig *Request // the client's original request, without its contents
	origSigs := map[string]string{}
	origResponses := map[string]*rawCall{} // the client's function responses, by call id
	if len(opts.Original) > 0 {
		orig = &Request{}
		contents, _, small, err := readGemini(opts.Original)
		if err == nil {
			err = json.Unmarshal(small, orig)
		}
		if err != nil {
			return nil, badRequest("", "original request is not a valid GenerateContentRequest: %v", err)
		}
		collectSignatures(contents, origSigs, origResponses)
	}
	signature := func(key string) string {
		if s, ok := origSigs[key]; ok {
			return s
		}
		if opts.Signature != nil {
			if s, ok := opts.Signature(key); ok {
				return s
			}
		}
		return ""
	}

	out := make([]byte, 0, len(body)+len(body)/8)
	out = append(out, `{"contents":[`...)
	toolNames := map[string][]byte{}
	contents := 0
	lastRole := ""
	var texts [][]byte
	for mi, m := range r.Messages {
		var role string
		switch m.Role {
		case "user", "system": // system: a mid-conversation system message (a Claude Code beta)
			role = "user"
		case "assistant":
			role = "model"
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", mi), "role %q is not one of user, assistant", m.Role)
		}
		if !m.HasContent() || (m.IsString && (len(m.RawText()) == 0 || m.RawText()[0] != '"')) {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", mi), "content must be a string or blocks")
		}
		// Consecutive messages of one role (a dropped thinking-only turn, a
		// mid-conversation system message) become one content: Gemini wants
		// the roles to alternate.
		merge := contents > 0 && role == lastRole
		mark := len(out)
		parts := 0
		if merge {
			out = out[:len(out)-2] // reopen the previous content's parts
			mark, parts = len(out), 1
		} else {
			if contents > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"role":"`...)
			out = append(out, role...)
			out = append(out, `","parts":[`...)
		}
		added := parts
		part := func() {
			if parts > 0 {
				out = append(out, ',')
			}
			parts++
		}
		firstCall := true
		lastTextAt := -1 // where the last text part's closing brace goes
		var lastText []byte
		if m.IsString {
			if raw := m.RawText(); len(raw) > 2 {
				part()
				out = append(out, `{"text":`...)
				out = append(out, raw...)
				lastTextAt, lastText = len(out), raw
				out = append(out, '}')
			}
		}
		for bi, b := range m.Blocks {
			param := func(field string) string { return fmt.Sprintf("messages[%d].content[%d]%s", mi, bi, field) }
			switch b.Type {
			case "text":
				if raw := b.RawText(); len(raw) > 2 {
					part()
					out = append(out, `{"text":`...)
					out = append(out, raw...)
					lastTextAt, lastText = len(out), raw
					out = append(out, '}')
				}
			case "image", "document":
				part()
				out, err = appendMedia(out, b.Type, b.Source())
				if err != nil {
					return nil, badRequest(param(".source"), "%v", err)
				}
			case "tool_use":
				if role != "model" {
					return nil, badRequest(param(""), "tool_use blocks belong in assistant messages")
				}
				id := b.ID()
				toolNames[id] = b.RawName()
				args := b.Input()
				if len(args) == 0 || string(args) == "null" {
					args = []byte("{}")
				}
				part()
				out = append(out, `{"functionCall":{"id":`...)
				out = append(out, anthropic.Quote(id)...)
				out = append(out, `,"name":`...)
				out = append(out, orEmptyString(b.RawName())...)
				out = append(out, `,"args":`...)
				out = append(out, args...)
				out = append(out, '}')
				sig := signature(id)
				if sig == "" && firstCall {
					sig = SkipSignatureValidator
				}
				if sig != "" {
					out = append(out, `,"thoughtSignature":`...)
					out = append(out, anthropic.Quote(sig)...)
				}
				out = append(out, '}')
				firstCall = false
			case "tool_result":
				id := b.ToolUseID()
				name := toolNames[id]
				if name == nil {
					return nil, badRequest(param(".tool_use_id"), "tool_result %q answers no earlier tool_use", id)
				}
				part()
				var media [][]byte
				out, media, err = appendFunctionResponse(out, id, name, b, texts[:0], origResponses[id])
				if err != nil {
					return nil, badRequest(param(".content"), "%v", err)
				}
				for _, p := range media {
					part()
					out = append(out, p...)
				}
			case "thinking", "redacted_thinking":
				// Purified: an Anthropic signature never goes to Gemini.
			}
		}
		if role == "model" && lastTextAt >= 0 && firstCall {
			if sig := signature(TextSignatureKey(anthropic.Unquote(lastText))); sig != "" {
				tail := append([]byte(nil), out[lastTextAt:]...)
				out = append(append(append(out[:lastTextAt], `,"thoughtSignature":`...), anthropic.Quote(sig)...), tail...)
			}
		}
		switch {
		case parts == added && merge:
			out = append(out[:mark], `]}`...) // nothing to add
			continue
		case parts == 0:
			out = out[:mark] // Gemini refuses a turn without parts
			continue
		}
		out = append(out, `]}`...)
		if !merge {
			contents++
		}
		lastRole = role
	}
	if contents == 0 {
		return nil, badRequest("messages", "messages has nothing to send")
	}
	out = append(out, ']')

	if len(r.System) > 0 && string(r.System) != "null" {
		var sys [][]byte
		switch r.System[0] {
		case '"':
			if len(r.System) > 2 {
				sys = append(sys, r.System)
			}
		case '[':
			blocks, err := anthropic.ParseBlocks(r.System)
			if err != nil {
				return nil, badRequest("system", "system must be a string or text blocks: %v", err)
			}
			for _, b := range blocks {
				if b.Type == "text" && len(b.RawText()) > 2 {
					sys = append(sys, b.RawText())
				}
			}
		default:
			return nil, badRequest("system", "system must be a string or text blocks")
		}
		if len(sys) > 0 {
			out = append(out, `,"systemInstruction":{"parts":[`...)
			for i, t := range sys {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, `{"text":`...)
				out = append(out, t...)
				out = append(out, '}')
			}
			out = append(out, `]}`...)
		}
	}

	var tail requestTail
	var decls []FunctionDeclaration
	var builtins []Tool
	for ti, t := range req.Tools {
		switch {
		case len(t.InputSchema) > 0 || t.Type == "" || t.Type == "custom":
			params, err := RewriteSchema(t.InputSchema)
			if err != nil {
				return nil, badRequest(fmt.Sprintf("tools[%d].input_schema", ti), "%v", err)
			}
			decls = append(decls, FunctionDeclaration{Name: t.Name, Description: t.Description, Parameters: params})
		case strings.HasPrefix(t.Type, "web_search"):
			builtins = append(builtins, Tool{GoogleSearch: json.RawMessage("{}")})
		}
	}
	if orig != nil { // the client's exact declarations and built-in tools
		exact := map[string]FunctionDeclaration{}
		builtins = builtins[:0]
		for _, t := range orig.Tools {
			for _, d := range t.FunctionDeclarations {
				exact[d.Name] = d
			}
			if t.FunctionDeclarations == nil {
				builtins = append(builtins, t)
			}
		}
		for i, d := range decls {
			if e, ok := exact[d.Name]; ok {
				decls[i] = e
			}
		}
	}
	if len(decls) > 0 {
		tail.Tools = append(tail.Tools, Tool{FunctionDeclarations: decls})
	}
	tail.Tools = append(tail.Tools, builtins...)

	if tc := req.ToolChoice; tc != nil && len(decls) > 0 {
		fc := &FunctionCallingConfig{}
		switch tc.Type {
		case "any":
			fc.Mode = "ANY"
		case "tool":
			fc.Mode, fc.AllowedFunctionNames = "ANY", []string{tc.Name}
		case "none":
			fc.Mode = "NONE"
		default:
			fc.Mode = "AUTO"
		}
		tail.ToolConfig = &ToolConfig{FunctionCallingConfig: fc}
	}

	g := &GenerationConfig{StopSequences: req.StopSequences, Temperature: req.Temperature, TopP: req.TopP}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		g.MaxOutputTokens = &n
	}
	if req.TopK != nil {
		k := float64(*req.TopK)
		g.TopK = &k
	}
	if th := req.Thinking; th != nil {
		switch th.Type {
		case "enabled":
			b := th.BudgetTokens
			g.ThinkingConfig = &ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
		case "adaptive":
			b := -1
			g.ThinkingConfig = &ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
		}
	}
	if oc := req.OutputConfig; oc != nil && oc.Format != nil && oc.Format.Type == "json_schema" {
		g.ResponseMimeType = "application/json"
		if len(oc.Format.Schema) > 0 {
			s, err := RewriteSchema(oc.Format.Schema)
			if err != nil {
				return nil, badRequest("output_config.format.schema", "%v", err)
			}
			g.ResponseSchema = s
		}
	}
	if orig != nil {
		tail.SafetySettings = orig.SafetySettings
		tail.CachedContent = orig.CachedContent
		tail.extra = orig.Extra
		if og := orig.GenerationConfig; og != nil {
			keepOriginal(g, og)
		}
		if orig.ToolConfig != nil && tail.ToolConfig != nil {
			tail.ToolConfig = orig.ToolConfig // VALIDATED and allowed names survive
		}
	}
	if gb, err := json.Marshal(g); err != nil || string(gb) != "{}" {
		tail.GenerationConfig = g
	}
	rest, err := json.Marshal(tail)
	if err == nil {
		rest, err = appendMembers(rest, tail.extra)
	}
	if err != nil {
		return nil, err
	}
	if len(rest) > 2 {
		out = append(out, ',')
		return append(out, rest[1:]...), nil
	}
	return append(out, '}'), nil
}

// requestTail is the small end of a generateContent request.
type requestTail struct {
	Tools            []Tool                     `json:"tools,omitempty"`
	ToolConfig       *ToolConfig                `json:"toolConfig,omitempty"`
	SafetySettings   json.RawMessage            `json:"safetySettings,omitempty"`
	GenerationConfig *GenerationConfig          `json:"generationConfig,omitempty"`
	CachedContent    string                     `json:"cachedContent,omitempty"`
	extra            map[string]json.RawMessage // the original's undeclared members
}

// decodeMembers decodes raw top-level members as one object.
func decodeMembers(ms []anthropic.Member, v any) error {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for _, m := range ms {
		if string(m.Key) == "system" { // read raw, by the caller
			continue
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('"')
		buf.Write(m.Key)
		buf.WriteString(`":`)
		buf.Write(m.Value)
	}
	buf.WriteByte('}')
	return json.Unmarshal(buf.Bytes(), v)
}

func orEmptyString(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte(`""`)
	}
	return raw
}

// keepOriginal restores the Gemini-only generation settings of the client's
// own request, and its exact forms of the ones Messages changed on the way
// (temperature above 1, thinking levels, a Gemini response schema).
func keepOriginal(g, og *GenerationConfig) {
	g.Seed, g.CandidateCount, g.Extra = og.Seed, og.CandidateCount, og.Extra
	g.PresencePenalty, g.FrequencyPenalty = og.PresencePenalty, og.FrequencyPenalty
	if og.Temperature != nil {
		g.Temperature = og.Temperature
	}
	if og.MaxOutputTokens == nil {
		g.MaxOutputTokens = nil // the default Messages needed, not the client's
	}
	if og.ThinkingConfig != nil || g.ThinkingConfig != nil {
		g.ThinkingConfig = og.ThinkingConfig
	}
	if og.ResponseMimeType != "" {
		g.ResponseMimeType, g.ResponseSchema, g.ResponseJSONSchema = og.ResponseMimeType, og.ResponseSchema, og.ResponseJSONSchema
	}
}

// collectSignatures maps every signature in a Gemini history to the key
// RequestToAnthropic reported it under.
func collectSignatures(contents []rawContent, sigs map[string]string, responses map[string]*rawCall) {
	ids := callIDs(contents)
	for ci, c := range contents {
		var texts [][]byte
		textSig := ""
		endText := func() {
			if textSig != "" && len(texts) > 0 {
				sigs[TextSignatureKey(decodeJoined(texts))] = textSig
			}
			texts, textSig = texts[:0], ""
		}
		for pi, p := range c.parts {
			switch {
			case p.call != nil:
				endText()
				if p.signature != "" {
					sigs[ids[ci][pi]] = p.signature
				}
			case p.response != nil:
				endText()
				responses[ids[ci][pi]] = p.response
			case p.media != nil, p.code != nil:
				endText()
			case p.thought:
			case p.text != nil:
				if len(p.text) > 2 {
					texts = append(texts, p.text)
				}
				if p.signature != "" && len(texts) > 0 {
					textSig = p.signature
				}
			}
		}
		endText()
	}
}

// appendMedia writes an image or document block's source as a part: inline
// data or a file reference.
func appendMedia(out []byte, blockType string, source []byte) ([]byte, error) {
	if len(source) == 0 || source[0] != '{' {
		return out, fmt.Errorf("%s block has no source", blockType)
	}
	var typ, mime, data, url, text []byte
	if err := anthropic.EachMember(source, func(k, v []byte) error {
		switch string(k) {
		case "type":
			typ = v
		case "media_type":
			mime = v
		case "data":
			data, text = v, v
		case "url":
			url = v
		}
		return nil
	}); err != nil {
		return out, err
	}
	switch anthropic.Unquote(typ) {
	case "base64":
		out = append(out, `{"inlineData":{"mimeType":`...)
		out = append(out, orEmptyString(mime)...)
		out = append(out, `,"data":`...)
		out = append(out, orEmptyString(data)...)
		return append(out, `}}`...), nil
	case "url":
		if mime == nil && blockType == "document" {
			mime = []byte(`"application/pdf"`)
		}
		out = append(out, `{"fileData":{`...)
		if mime != nil {
			out = append(out, `"mimeType":`...)
			out = append(out, mime...)
			out = append(out, ',')
		}
		out = append(out, `"fileUri":`...)
		out = append(out, orEmptyString(url)...)
		return append(out, `}}`...), nil
	case "text":
		out = append(out, `{"text":`...)
		out = append(out, orEmptyString(text)...)
		return append(out, '}'), nil
	}
	return out, fmt.Errorf("source type %s cannot be sent to Gemini", typ)
}

// appendFunctionResponse reverses appendToolResult: text that is a JSON
// object is the response itself, other text becomes {"output": …}
// ({"error": …} for an error result); images in the result follow as parts
// of their own (returned, to be written after it).
func appendFunctionResponse(out []byte, id string, name []byte, b anthropic.Block, texts [][]byte, orig *rawCall) ([]byte, [][]byte, error) {
	content := b.Content()
	isError := string(anthropic.MemberValue(outside(b.Raw(), content), "is_error")) == "true"
	if orig != nil && len(orig.data) > 0 && sameResult(content, isError, orig) {
		// The client's own response, unchanged by compaction: sent back as it came. Its
		// Messages text cannot say whether it was text or an object (a file of JSON read as
		// text would come back as the object).
		out = append(out, `{"functionResponse":{"id":`...)
		out = append(out, anthropic.Quote(id)...)
		out = append(out, `,"name":`...)
		out = append(out, name...)
		out = append(out, `,"response":`...)
		out = append(out, orig.data...)
		return append(out, `}}`...), nil, nil
	}
	var media [][]byte
	var text []byte // raw JSON string
	switch {
	case len(content) == 0 || string(content) == "null":
		text = []byte(`""`)
	case content[0] == '"':
		text = content
	case content[0] == '[':
		inner, err := anthropic.ParseBlocks(content)
		if err != nil {
			return out, nil, fmt.Errorf("tool_result content must be a string or blocks: %v", err)
		}
		for _, ib := range inner {
			switch ib.Type {
			case "text":
				if raw := ib.RawText(); len(raw) >= 2 {
					texts = append(texts, raw)
				}
			case "image", "document":
				p, err := appendMedia(nil, ib.Type, ib.Source())
				if err != nil {
					return out, nil, err
				}
				media = append(media, p)
			}
		}
		text = joinRaw(nil, texts, `\n`)
	default:
		return out, nil, fmt.Errorf("tool_result content must be a string or blocks")
	}
	out = append(out, `{"functionResponse":{"id":`...)
	out = append(out, anthropic.Quote(id)...)
	out = append(out, `,"name":`...)
	out = append(out, name...)
	out = append(out, `,"response":`...)
	switch {
	case !isError && len(text) > 2 && text[1] == '{' && isJSONObjectText(text):
		out = append(out, anthropic.Unquote(text)...)
	case isError:
		out = append(out, `{"error":`...)
		out = append(out, text...)
		out = append(out, '}')
	default:
		out = append(out, `{"output":`...)
		out = append(out, text...)
		out = append(out, '}')
	}
	return append(out, `}}`...), media, nil
}

// isJSONObjectText reports whether a raw JSON string holds a JSON object.
func isJSONObjectText(raw []byte) bool {
	s := anthropic.Unquote(raw)
	return json.Valid([]byte(s)) && isRawObject([]byte(s))
}

// outside returns obj without the span of one of its member values (a
// sub-slice of obj), as an object of the other members: a tool_result's
// content can be most of a request, and is_error is looked up around it.
// obj itself when part is not inside it.
func outside(obj, part []byte) []byte {
	if len(part) == 0 {
		return obj
	}
	// Sub-slices share obj's array, so their capacities give the offset.
	start := cap(obj) - cap(part)
	end := start + len(part)
	if start < 0 || end > len(obj) || &obj[start] != &part[0] {
		return obj
	}
	out := make([]byte, 0, len(obj)-len(part)+4)
	out = append(out, obj[:start]...)
	out = append(out, "null"...)
	return append(out, obj[end:]...)
}

// sameResult reports whether a tool_result's content is what RequestToAnthropic made of the
// client's response orig (appendToolResult): then nothing rewrote it on the way.
func sameResult(content []byte, isError bool, orig *rawCall) bool {
	if orig.single != nil {
		return isError == orig.isError && bytes.Equal(content, orig.single)
	}
	return !isError && bytes.Equal(content, anthropic.Quote(string(bytes.TrimSpace(orig.data))))
}
