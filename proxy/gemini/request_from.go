package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RequestFromAnthropic translates a Messages request into a Gemini
// generateContent request (the model goes in the URL path, not the body).
// Thinking blocks are dropped: an Anthropic signature must never reach
// Gemini, and Gemini does not read thought text back. Thought signatures
// come back from opts.Original and opts.Signature; the first function call of
// a model turn whose signature is lost for good gets SkipSignatureValidator,
// so the API does not refuse the whole request.
func RequestFromAnthropic(body []byte, opts RequestOptions) ([]byte, error) {
	var req aRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "request body is not a valid Messages request: %v", err)
	}
	var orig *Request
	origSigs := map[string]string{}
	if len(opts.Original) > 0 {
		orig = &Request{}
		if err := json.Unmarshal(opts.Original, orig); err != nil {
			return nil, badRequest("", "original request is not a valid GenerateContentRequest: %v", err)
		}
		collectSignatures(orig.Contents, origSigs)
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

	var out Request
	if len(req.System) > 0 {
		sys, err := blocksOf(req.System)
		if err != nil {
			return nil, badRequest("system", "system must be a string or text blocks: %v", err)
		}
		var parts []Part
		for _, b := range sys {
			if b.Type == "text" && b.Text != "" {
				parts = append(parts, Part{Text: b.Text})
			}
		}
		if len(parts) > 0 {
			out.SystemInstruction = &Content{Parts: parts}
		}
	}

	toolNames := map[string]string{}
	out.Contents = make([]Content, 0, len(req.Messages))
	for mi, m := range req.Messages {
		blocks, err := blocksOf(m.Content)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", mi), "content must be a string or blocks: %v", err)
		}
		var c Content
		switch m.Role {
		case "user":
			c.Role = "user"
		case "assistant":
			c.Role = "model"
		case "system": // a mid-conversation system message (a Claude Code beta)
			c.Role = "user"
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", mi), "role %q is not one of user, assistant", m.Role)
		}
		firstCall := true
		lastText := -1
		for bi, b := range blocks {
			param := fmt.Sprintf("messages[%d].content[%d]", mi, bi)
			switch b.Type {
			case "text":
				if b.Text != "" {
					lastText = len(c.Parts)
					c.Parts = append(c.Parts, Part{Text: b.Text})
				}
			case "image", "document":
				p, err := mediaPart(b)
				if err != nil {
					return nil, badRequest(param+".source", "%v", err)
				}
				c.Parts = append(c.Parts, p)
			case "tool_use":
				if c.Role != "model" {
					return nil, badRequest(param, "tool_use blocks belong in assistant messages")
				}
				args := b.Input
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				toolNames[b.ID] = b.Name
				p := Part{FunctionCall: &FunctionCall{ID: b.ID, Name: b.Name, Args: args}}
				p.ThoughtSignature = signature(b.ID)
				if p.ThoughtSignature == "" && firstCall {
					p.ThoughtSignature = SkipSignatureValidator
				}
				firstCall = false
				c.Parts = append(c.Parts, p)
			case "tool_result":
				name := toolNames[b.ToolUseID]
				if name == "" {
					return nil, badRequest(param+".tool_use_id", "tool_result %q answers no earlier tool_use", b.ToolUseID)
				}
				resp, media, err := functionResponseFromResult(b)
				if err != nil {
					return nil, badRequest(param+".content", "%v", err)
				}
				c.Parts = append(c.Parts, Part{FunctionResponse: &FunctionResponse{ID: b.ToolUseID, Name: name, Response: resp}})
				c.Parts = append(c.Parts, media...)
			case "thinking", "redacted_thinking":
				// Purified: an Anthropic signature never goes to Gemini.
			}
		}
		if c.Role == "model" && lastText >= 0 && firstCall {
			if sig := signature(TextSignatureKey(c.Parts[lastText].Text)); sig != "" {
				c.Parts[lastText].ThoughtSignature = sig
			}
		}
		if len(c.Parts) == 0 {
			continue // Gemini refuses a turn without parts
		}
		out.Contents = append(out.Contents, c)
	}
	if len(out.Contents) == 0 {
		return nil, badRequest("messages", "messages has nothing to send")
	}

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
		out.Tools = append(out.Tools, Tool{FunctionDeclarations: decls})
	}
	out.Tools = append(out.Tools, builtins...)

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
		out.ToolConfig = &ToolConfig{FunctionCallingConfig: fc}
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
		out.SafetySettings = orig.SafetySettings
		out.CachedContent = orig.CachedContent
		if og := orig.GenerationConfig; og != nil {
			keepOriginal(g, og)
		}
		if orig.ToolConfig != nil && out.ToolConfig != nil {
			out.ToolConfig = orig.ToolConfig // VALIDATED and allowed names survive
		}
	}
	if g.MaxOutputTokens != nil || g.Temperature != nil || g.TopP != nil || g.TopK != nil || g.StopSequences != nil ||
		g.ThinkingConfig != nil || g.ResponseMimeType != "" || g.ResponseSchema != nil || g.ResponseJSONSchema != nil ||
		g.Seed != nil || g.CandidateCount != nil || g.PresencePenalty != nil || g.FrequencyPenalty != nil {
		out.GenerationConfig = g
	}
	return json.Marshal(out)
}

// keepOriginal restores the Gemini-only generation settings of the client's
// own request, and its exact forms of the ones Messages changed on the way
// (temperature above 1, thinking levels, a Gemini response schema).
func keepOriginal(g, og *GenerationConfig) {
	g.Seed, g.CandidateCount = og.Seed, og.CandidateCount
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
func collectSignatures(contents []Content, sigs map[string]string) {
	ids := callIDs(contents)
	for ci, c := range contents {
		text := ""
		for pi, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				text = ""
				if p.ThoughtSignature != "" {
					sigs[ids[ci][pi]] = p.ThoughtSignature
				}
			case p.Thought:
			case p.Text != "":
				text += p.Text
			}
			if p.ThoughtSignature != "" && p.FunctionCall == nil && !p.Thought && text != "" {
				sigs[TextSignatureKey(text)] = p.ThoughtSignature
			}
		}
	}
}

// mediaPart maps an image or document block to inline data or a file
// reference.
func mediaPart(b aBlock) (Part, error) {
	s := b.Source
	if s == nil {
		return Part{}, fmt.Errorf("%s block has no source", b.Type)
	}
	switch s.Type {
	case "base64":
		return Part{InlineData: &Blob{MimeType: s.MediaType, Data: s.Data}}, nil
	case "url":
		mime := s.MediaType
		if mime == "" && b.Type == "document" {
			mime = "application/pdf"
		}
		return Part{FileData: &FileData{MimeType: mime, FileURI: s.URL}}, nil
	case "text":
		return Part{Text: s.Data}, nil
	}
	return Part{}, fmt.Errorf("source type %q cannot be sent to Gemini", s.Type)
}

// functionResponseFromResult reverses toolResult: a JSON-object text is
// the response itself, other text becomes {"output": …} ({"error": …} for an
// error result); images in the result follow as inline data parts.
func functionResponseFromResult(b aBlock) (json.RawMessage, []Part, error) {
	var text string
	var media []Part
	if len(b.Content) > 0 && b.Content[0] == '"' {
		if err := json.Unmarshal(b.Content, &text); err != nil {
			return nil, nil, err
		}
	} else if len(b.Content) > 0 && string(b.Content) != "null" {
		inner, err := blocksOf(b.Content)
		if err != nil {
			return nil, nil, fmt.Errorf("tool_result content must be a string or blocks: %v", err)
		}
		var texts []string
		for _, ib := range inner {
			switch ib.Type {
			case "text":
				texts = append(texts, ib.Text)
			case "image", "document":
				p, err := mediaPart(ib)
				if err != nil {
					return nil, nil, err
				}
				media = append(media, p)
			}
		}
		text = strings.Join(texts, "\n")
	}
	if !b.IsError && isObject([]byte(text)) && json.Valid([]byte(text)) {
		return json.RawMessage(text), media, nil
	}
	key := "output"
	if b.IsError {
		key = "error"
	}
	raw, err := json.Marshal(map[string]string{key: text})
	return raw, media, err
}
