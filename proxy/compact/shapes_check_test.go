package compact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/proxy/sigcache"
)

// The compaction engine works on the Messages shape; a client of another
// protocol is translated into it, compacted, and translated back for an
// upstream of its own protocol. These tests (an external package, so they
// may import the protocol packages compact itself must not) run that round
// trip for OpenAI Chat, OpenAI Responses and Gemini conversations and check
// what the upstream of each protocol would refuse.

// clientShape is one client protocol as the proxy plugs it in: the
// translation into Messages (proxy/protocol.go and protocol_chat.go,
// toMessages), and back for an upstream of the same protocol
// (proxy/upstream.go and protocol_chat.go, fromMessages).
type clientShape struct {
	name string
	// toMessages translates the client's body into a Messages request.
	toMessages func(client []byte) ([]byte, error)
	// fromMessages translates the compacted Messages request for the
	// upstream; client is the client's body (Gemini takes back from it what
	// Messages cannot carry) and sigs the signature cache.
	fromMessages func(messages, client []byte, sigs *sigcache.Cache) ([]byte, error)
	// conversation reads a body of this protocol: its tool rounds, what its
	// upstream would refuse, and its opaque payloads.
	conversation func(body []byte) conversation
	// canonical is a body's canonical JSON, for comparing two requests by
	// what the upstream reads. nil = canonicalJSON.
	canonical func(body []byte) string
}

// canonicalOf is body's canonical form in s.
func (s clientShape) canonicalOf(body []byte) string {
	if s.canonical != nil {
		return s.canonical(body)
	}
	return canonicalJSON(body)
}

// geminiTestModel is the model a Gemini client names in the URL path.
const geminiTestModel = "gemini-2.5-pro"

func clientShapes() []clientShape {
	return []clientShape{
		{
			name: "chat",
			toMessages: func(client []byte) ([]byte, error) {
				return openai.ChatRequestToAnthropic(client, openai.ChatRequestOptions{ForChat: true})
			},
			fromMessages: func(messages, _ []byte, _ *sigcache.Cache) ([]byte, error) {
				return openai.ChatRequestFromAnthropic(messages, openai.ChatRequestOptions{})
			},
			conversation: chatConversation,
		},
		{
			name: "responses",
			toMessages: func(client []byte) ([]byte, error) {
				return openai.ResponsesRequestToAnthropic(client, openai.ResponsesRequestOptions{ForResponses: true})
			},
			fromMessages: func(messages, _ []byte, _ *sigcache.Cache) ([]byte, error) {
				return openai.ResponsesRequestFromAnthropic(messages, openai.ResponsesRequestOptions{})
			},
			conversation: responsesConversation,
		},
		{
			name: "gemini",
			toMessages: func(client []byte) ([]byte, error) {
				return gemini.RequestToAnthropic(client, gemini.RequestOptions{Model: geminiTestModel})
			},
			fromMessages: func(messages, client []byte, sigs *sigcache.Cache) ([]byte, error) {
				return gemini.RequestFromAnthropic(messages, gemini.RequestOptions{
					Original:  client,
					Signature: func(key string) (string, bool) { return sigs.RecoverForTool(key, gemini.Family) },
				})
			},
			conversation: geminiConversation,
			canonical:    geminiCanonical,
		},
	}
}

// compactClient runs one client request as the proxy does when compaction
// rewrites it (proxy/compaction.go newCompactor and compactRequest,
// proxy/forward.go upstreamBody): into Messages, through a pipeline with a
// signature cache and both repairs on, and back into the client's protocol.
// The translation back always runs, even when nothing changed (the proxy then
// forwards the client's bytes), so that running a result through again —
// the idempotence check of the goldens and fuzz targets — tests the
// translations as well as the layers.
func compactClient(s clientShape, o compact.Options, client []byte) ([]byte, compact.Result, error) {
	messages, err := s.toMessages(client)
	if err != nil {
		return nil, compact.Result{}, fmt.Errorf("translate %s into Messages: %w", s.name, err)
	}
	sigs := sigcache.New(sigcache.Options{})
	o.Signatures = sigs
	o.Repair = compact.RepairOptions{Recover: true, CrossModel: true}
	model := anthropic.Unquote(anthropic.MemberValue(messages, "model"))
	res, err := compact.NewPipeline(o).Run(context.Background(), compact.Input{
		Body: messages, Session: "shapes", NoThinking: !compact.SupportsThinking(model),
	})
	if err != nil {
		return nil, res, fmt.Errorf("compact: %w", err)
	}
	out, err := s.fromMessages(res.Body, client, sigs)
	if err != nil {
		return nil, res, fmt.Errorf("translate Messages into %s: %w", s.name, err)
	}
	return out, res, nil
}

// shapeCall is one tool call as the upstream sees it.
type shapeCall struct {
	ID, Name string
	Args     string // canonical JSON
	// Signature is Gemini's thoughtSignature on the call's part ("" for the
	// other protocols).
	Signature string
}

// shapeRound is a tool round: an assistant turn's calls and their results.
type shapeRound struct {
	Calls   []shapeCall
	Results map[string]string // call id → result text (canonical JSON when not text)
	// Reasoning is the opaque reasoning the round's turn carries (Responses'
	// encrypted_content), which must reach the upstream byte for byte.
	Reasoning []string
}

// conversation is what the checks read from a body of one protocol.
type conversation struct {
	Rounds []shapeRound
	// Problems lists what the protocol's upstream would refuse.
	Problems []string
	// Opaque maps where a payload sits (a reasoning item's id, a Gemini
	// call id or model text) to the payload no step may alter: an encrypted
	// reasoning or a thought signature ("" where the place has none).
	Opaque map[string]string
}

func (c *conversation) problem(format string, args ...any) {
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}

// decodeJSON decodes b keeping numbers as written.
func decodeJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// canonicalJSON re-encodes raw JSON with sorted keys and no insignificant
// space; invalid JSON comes back as it is, marked.
func canonicalJSON(raw []byte) string {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "invalid JSON: " + string(raw)
	}
	return string(b)
}

// contentText is a content as text: a JSON string's value, else canonical JSON.
func contentText(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 {
		return ""
	}
	return canonicalJSON(raw)
}

// chatToolText is a tool message's content as text: a string, or its text
// parts joined by newlines (toward Chat a result's images move to a user
// message after the tool messages, which carry text only: see
// proxy/openai/chat_request_from.go toolResult).
func chatToolText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return contentText(raw)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// chatMessage is the part of a Chat Completions message the checks read
// (openai-node ChatCompletionMessageParam, as proxy/openai reads it).
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ReasoningContent *string `json:"reasoning_content"`
}

// chatConversation reads a Chat Completions request. The API refuses a tool
// message that does not follow an assistant message with that tool call, and
// an assistant message with tool_calls not followed by tool messages answering
// each ("An assistant message with 'tool_calls' must be followed by tool
// messages responding to each 'tool_call_id'").
func chatConversation(body []byte) conversation {
	c := conversation{Opaque: map[string]string{}}
	var req struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
	}
	if err := decodeJSON(body, &req); err != nil {
		c.problem("not a Chat request: %v", err)
		return c
	}
	if req.Model == "" {
		c.problem("no model")
	}
	firstTurn := true
	for i := 0; i < len(req.Messages); i++ {
		m := req.Messages[i]
		switch m.Role {
		case "system", "developer":
			continue
		case "user", "assistant":
			if firstTurn && m.Role != "user" {
				c.problem("message %d: the conversation opens with %s", i, m.Role)
			}
			firstTurn = false
		case "tool":
			c.problem("message %d: tool message %q answers no tool call of the message before it", i, m.ToolCallID)
			continue
		default:
			c.problem("message %d: role %q", i, m.Role)
			continue
		}
		empty := len(m.Content) == 0 || string(m.Content) == "null" || string(m.Content) == `""` || string(m.Content) == "[]"
		if empty && len(m.ToolCalls) == 0 && (m.ReasoningContent == nil || *m.ReasoningContent == "") {
			c.problem("message %d: empty %s message", i, m.Role)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		rd := shapeRound{Results: map[string]string{}}
		asked := map[string]bool{}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Function.Name == "" || tc.Type != "function" {
				c.problem("message %d: tool call without id, name or type function", i)
			}
			if asked[tc.ID] {
				c.problem("message %d: tool call %s twice", i, tc.ID)
			}
			asked[tc.ID] = true
			rd.Calls = append(rd.Calls, shapeCall{ID: tc.ID, Name: tc.Function.Name, Args: canonicalJSON([]byte(tc.Function.Arguments))})
		}
		j := i + 1
		for ; j < len(req.Messages) && req.Messages[j].Role == "tool"; j++ {
			id := req.Messages[j].ToolCallID
			if !asked[id] {
				c.problem("message %d: tool message %q answers no call of message %d", j, id, i)
			}
			if _, dup := rd.Results[id]; dup {
				c.problem("message %d: tool call %s answered twice", j, id)
			}
			rd.Results[id] = chatToolText(req.Messages[j].Content)
		}
		for _, call := range rd.Calls {
			if _, ok := rd.Results[call.ID]; !ok {
				c.problem("message %d: tool call %s not answered by the tool messages after it", i, call.ID)
			}
		}
		c.Rounds = append(c.Rounds, rd)
		i = j - 1
	}
	if firstTurn {
		c.problem("no user or assistant message")
	}
	return c
}

// responsesOutputText is a function_call_output's output as text: a
// string, or its input_text parts joined by newlines. Its images are left
// out: the compressor may replace one (not in the last message) with a text
// note, which compressedFrom recognises.
func responsesOutputText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return contentText(raw)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "input_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// responsesItem is the part of a Responses input item the checks read
// (openai-node ResponseInputItem: EasyInputMessage, ResponseFunctionToolCall,
// FunctionCallOutput, ResponseReasoningItem, as proxy/openai reads them).
type responsesItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	ID               string          `json:"id"`
	EncryptedContent *string         `json:"encrypted_content"`
}

// responsesConversation reads a Responses request. The API refuses a
// function_call_output whose call is not in the input ("No tool call found
// for function call output with call_id"), a function_call without its
// output ("No tool output found for function call"), and a reasoning item
// without the item that followed it when it was issued ("Item 'rs_…' of type
// 'reasoning' was provided without its required following item"). The three
// messages are verified in the API's 400s quoted in issue threads
// (continuedev/continue#10092, cloudflare/agents#477, openai-node#1567).
func responsesConversation(body []byte) conversation {
	c := conversation{Opaque: map[string]string{}}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := decodeJSON(body, &req); err != nil {
		c.problem("not a Responses request: %v", err)
		return c
	}
	if req.Model == "" {
		c.problem("no model")
	}
	var items []responsesItem
	if len(req.Input) > 0 && req.Input[0] == '"' {
		return c // a plain string input: one user message
	}
	if err := decodeJSON(req.Input, &items); err != nil {
		c.problem("input is not a list of items: %v", err)
		return c
	}
	calls := map[string]int{} // call id → round index
	answered := map[string]bool{}
	var reasoning []string // reasoning since the last other item
	open := -1             // the round still taking calls
	for i, it := range items {
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		if typ != "reasoning" && len(reasoning) > 0 && typ != "function_call" && !(typ == "message" && it.Role == "assistant") {
			c.problem("item %d: reasoning without its following item (an assistant message or a function call); %s comes next", i, typ)
		}
		switch typ {
		case "message":
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				c.problem("item %d: role %q", i, it.Role)
			}
			if s := string(it.Content); s == "" || s == "null" || s == `""` || s == "[]" {
				c.problem("item %d: empty message", i)
			}
			open, reasoning = -1, nil
		case "reasoning":
			if it.EncryptedContent == nil {
				c.problem("item %d: reasoning %s without encrypted_content (the request is stateless)", i, it.ID)
			} else {
				c.Opaque["reasoning "+it.ID] = *it.EncryptedContent
				reasoning = append(reasoning, *it.EncryptedContent)
			}
			open = -1
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				c.problem("item %d: function_call without call_id or name", i)
			}
			if _, dup := calls[it.CallID]; dup {
				c.problem("item %d: call_id %s twice", i, it.CallID)
			}
			if open < 0 {
				c.Rounds = append(c.Rounds, shapeRound{Results: map[string]string{}, Reasoning: reasoning})
				open = len(c.Rounds) - 1
			}
			reasoning = nil
			calls[it.CallID] = open
			rd := &c.Rounds[open]
			rd.Calls = append(rd.Calls, shapeCall{ID: it.CallID, Name: it.Name, Args: canonicalJSON([]byte(it.Arguments))})
		case "function_call_output":
			r, ok := calls[it.CallID]
			switch {
			case !ok:
				c.problem("item %d: output for call_id %s, which no earlier function_call has", i, it.CallID)
			case answered[it.CallID]:
				c.problem("item %d: call_id %s answered twice", i, it.CallID)
			default:
				c.Rounds[r].Results[it.CallID] = responsesOutputText(it.Output)
			}
			answered[it.CallID] = true
			open = -1
		default:
			c.problem("item %d: type %q", i, typ)
		}
	}
	if len(reasoning) > 0 {
		c.problem("the input ends with reasoning and no item after it")
	}
	for _, rd := range c.Rounds {
		for _, call := range rd.Calls {
			if !answered[call.ID] {
				c.problem("function_call %s has no output", call.ID)
			}
		}
	}
	return c
}

// geminiPart is the part of a Gemini Part the checks read (types.go Part).
type geminiPart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiConversation reads a generateContent request. Gemini refuses roles
// other than user and model, an empty turn, and (with thinking on) a
// function call without the thought signature it was issued with, which must
// come back on the very part it came on, the first call of parallel calls
// (verified in ai.google.dev/gemini-api/docs/thought-signatures); the
// proxy's translation relies on a model turn's calls being answered in the
// user turn right after it. A call without an id (Gemini CLI sends none) is
// named as proxy/gemini names it: the ids are read back from the Messages
// translation, call for call.
func geminiConversation(body []byte) conversation {
	c := conversation{Opaque: map[string]string{}}
	var req struct {
		Contents []struct {
			Role  string       `json:"role"`
			Parts []geminiPart `json:"parts"`
		} `json:"contents"`
	}
	if err := decodeJSON(body, &req); err != nil {
		c.problem("not a Gemini request: %v", err)
		return c
	}
	callIDs, resultIDs := geminiIDs(body)
	var nCalls, nResults int
	nextID := func(ids []string, n *int, own string) string {
		if own != "" {
			*n++
			return own
		}
		if *n < len(ids) {
			*n++
			return ids[*n-1]
		}
		return ""
	}
	var pending *shapeRound // the calls of the model turn just before
	prevRole := ""
	for ci, ct := range req.Contents {
		role := ct.Role
		switch role {
		case "user", "model":
		case "":
			role = "user"
		default:
			c.problem("content %d: role %q", ci, ct.Role)
		}
		if ci == 0 && role != "user" {
			c.problem("content 0: the conversation opens with %s", role)
		}
		if role == prevRole {
			c.problem("content %d: two %s turns in a row", ci, role)
		}
		prevRole = role
		if len(ct.Parts) == 0 {
			c.problem("content %d: no parts", ci)
		}
		var rd *shapeRound
		var answered map[string]bool
		var text strings.Builder
		textSig := ""
		for _, p := range ct.Parts {
			switch {
			case p.FunctionCall != nil:
				id := nextID(callIDs, &nCalls, p.FunctionCall.ID)
				if role != "model" {
					c.problem("content %d: functionCall %s in a %s turn", ci, p.FunctionCall.Name, role)
				}
				if rd == nil {
					rd = &shapeRound{Results: map[string]string{}}
				}
				args := p.FunctionCall.Args
				if len(args) == 0 {
					args = []byte("{}")
				}
				rd.Calls = append(rd.Calls, shapeCall{ID: id, Name: p.FunctionCall.Name, Args: canonicalJSON(args), Signature: p.ThoughtSignature})
				c.Opaque["call "+id] = p.ThoughtSignature
			case p.FunctionResponse != nil:
				id := nextID(resultIDs, &nResults, p.FunctionResponse.ID)
				if pending == nil || answered[id] {
					c.problem("content %d: functionResponse %s answers no call of the model turn before it", ci, id)
					continue
				}
				known := false
				for _, call := range pending.Calls {
					known = known || call.ID == id
				}
				if !known {
					c.problem("content %d: functionResponse %s answers no call of the model turn before it", ci, id)
				}
				if answered == nil {
					answered = map[string]bool{}
				}
				answered[id] = true
				pending.Results[id] = geminiResult(p.FunctionResponse.Response)
			case p.Thought:
			case p.Text != nil:
				text.WriteString(*p.Text)
				if p.ThoughtSignature != "" {
					textSig = p.ThoughtSignature
				}
			}
		}
		if role == "model" && text.Len() > 0 && rd == nil {
			c.Opaque["text "+text.String()] = textSig
		}
		if pending != nil {
			for _, call := range pending.Calls {
				if !answered[call.ID] {
					c.problem("content %d: call %s of the model turn before is not answered", ci, call.ID)
				}
			}
			c.Rounds = append(c.Rounds, *pending)
		}
		pending = rd
	}
	if pending != nil {
		c.problem("the last model turn's calls are not answered")
		c.Rounds = append(c.Rounds, *pending)
	}
	if nCalls != len(callIDs) && len(callIDs) > 0 {
		c.problem("%d function calls, %d tool_use blocks in the Messages translation", nCalls, len(callIDs))
	}
	return c
}

// geminiIDs lists the ids the Messages translation gives a Gemini request's
// function calls and responses, in order (none when it does not translate).
func geminiIDs(body []byte) (calls, results []string) {
	m, err := gemini.RequestToAnthropic(body, gemini.RequestOptions{Model: geminiTestModel})
	if err != nil {
		return nil, nil
	}
	r, err := anthropic.ParseRequest(m)
	if err != nil {
		return nil, nil
	}
	for _, msg := range r.Messages {
		for _, b := range msg.Blocks {
			switch b.Type {
			case "tool_use":
				calls = append(calls, b.ID())
			case "tool_result":
				results = append(results, b.ToolUseID())
			}
		}
	}
	return calls, results
}

// geminiResult is a functionResponse's response as text: its output when
// that is all it holds (proxy/gemini's form for a text result), else the
// canonical JSON.
func geminiResult(raw json.RawMessage) string {
	var out struct {
		Output *string `json:"output"`
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) == nil && len(members) == 1 && json.Unmarshal(raw, &out) == nil && out.Output != nil {
		return *out.Output
	}
	return canonicalJSON(raw)
}

// compressedFrom reports whether out is in as the tool-result compressor
// leaves it: shortened with a note saying so, or with an image's note where
// the image was (a Chat tool message holds only its text, so there the note
// is appended to the text).
func compressedFrom(in, out string) bool {
	if _, ok := foldTarget(out); ok {
		return true // folded into a later copy: foldProblems checks that copy
	}
	out = imageNote.ReplaceAllString(out, "")
	if out == in {
		return true
	}
	if len(out) >= len(in) {
		return false
	}
	for _, note := range []string{"...[truncated ", "by Longhaul", "[base64 omitted: "} {
		if strings.Contains(out, note) {
			return true
		}
	}
	return false
}

// imageNote is the compressor's stand-in for a removed image
// (compact/toolresult.go imageReplacement), with the newline a join puts
// before it.
var imageNote = regexp.MustCompile(`\n?\[image removed by Longhaul to save context: [^\]]*\]`)

// foldNote is the dedupe step's note for a result identical to a later one
// (compact/dedupe.go foldNote); its group is the id of the later copy.
var foldNote = regexp.MustCompile(`^\[same content as the result of tool call (\S+?)(?: \([^)]*\))?, below\]$`)

// foldTarget is the id a folded result's note names; a Gemini error result holds
// the note as {"error": note}.
func foldTarget(result string) (string, bool) {
	var wrapped map[string]string
	if json.Unmarshal([]byte(result), &wrapped) == nil && len(wrapped) == 1 {
		if note, ok := wrapped["error"]; ok {
			result = note
		}
	}
	m := foldNote.FindStringSubmatch(result)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// foldProblems checks each result of out's rounds (the newest of in, paired as
// keptRoundProblems pairs them) that the dedupe step folded: its note names another
// result of the same or a later round that holds what it held (in the input, or as the
// compressor left it in out).
func foldProblems(in, out []shapeRound) []string {
	off := len(in) - len(out)
	if off < 0 {
		return nil
	}
	var probs []string
	for i, o := range out {
		for id, got := range o.Results {
			target, folded := foldTarget(got)
			want, ok := in[off+i].Results[id]
			if _, wasNote := foldTarget(want); !folded || !ok || wasNote {
				continue
			}
			found := false
			for k := i; k < len(out) && !found; k++ {
				inText, inOK := in[off+k].Results[target]
				outText, outOK := out[k].Results[target]
				found = target != id && (inOK && inText == want || outOK && outText != got && compressedFrom(want, outText))
			}
			if !found {
				probs = append(probs, fmt.Sprintf("round %d: result %s folded into %s, which is not a later copy of %.80q", i, id, target, want))
			}
		}
	}
	return probs
}

// keptRoundProblems checks that out's tool rounds are the newest rounds of
// in, as they were: the same calls with the same arguments, ids and
// signatures, the same reasoning, and the same results (or results the
// compressor shortened).
func keptRoundProblems(in, out []shapeRound) []string {
	if len(out) > len(in) {
		return []string{fmt.Sprintf("%d tool rounds out of %d", len(out), len(in))}
	}
	var probs []string
	off := len(in) - len(out)
	for i, o := range out {
		w := in[off+i]
		calls := append([]shapeCall(nil), o.Calls...)
		for j := range calls {
			// Gemini's documented placeholder for a call that came unsigned.
			if j < len(w.Calls) && w.Calls[j].Signature == "" && calls[j].Signature == gemini.SkipSignatureValidator {
				calls[j].Signature = ""
			}
		}
		if fmt.Sprint(calls) != fmt.Sprint(w.Calls) {
			probs = append(probs, fmt.Sprintf("kept round %d: calls %v; want %v", i, o.Calls, w.Calls))
		}
		if fmt.Sprint(o.Reasoning) != fmt.Sprint(w.Reasoning) {
			probs = append(probs, fmt.Sprintf("kept round %d: reasoning %q; want %q", i, o.Reasoning, w.Reasoning))
		}
		if len(o.Results) != len(w.Results) {
			probs = append(probs, fmt.Sprintf("kept round %d: %d results; want %d", i, len(o.Results), len(w.Results)))
		}
		for id, want := range w.Results {
			if got, ok := o.Results[id]; !ok || got != want && !compressedFrom(want, got) {
				probs = append(probs, fmt.Sprintf("kept round %d: result %s = %.80q; want %.80q", i, id, got, want))
			}
		}
	}
	return probs
}

// opaqueProblems checks that every opaque payload in out is the input's, at
// the same place, and that every place of the input still in out keeps its
// payload. The one payload the translation may add is Gemini's documented
// SkipSignatureValidator, on a call whose signature was never there.
func opaqueProblems(in, out map[string]string) []string {
	var probs []string
	for k, got := range out {
		want, ok := in[k]
		switch {
		case !ok && got != "":
			probs = append(probs, fmt.Sprintf("%.60s: payload %.60q is not the input's", k, got))
		case ok && got != want && !(want == "" && got == gemini.SkipSignatureValidator):
			probs = append(probs, fmt.Sprintf("%.60s: payload %.60q; the input had %.60q", k, got, want))
		}
	}
	return probs
}

// geminiCanonical is canonicalJSON with each run of plain text parts of a
// content joined into one part: Gemini reads a content's text parts as one
// text (proxy/gemini joins them into one text block on the way in, and
// writes one part per text block on the way out), so the parts' split
// carries nothing. The run's signature is its last one, as proxy/gemini
// keeps it.
func geminiCanonical(body []byte) string {
	var req map[string]any
	if err := decodeJSON(body, &req); err != nil {
		return canonicalJSON(body)
	}
	plain := func(p map[string]any) bool {
		if _, ok := p["text"].(string); !ok {
			return false
		}
		for k := range p {
			if k != "text" && k != "thoughtSignature" {
				return false
			}
		}
		return true
	}
	contents, _ := req["contents"].([]any)
	for _, c := range contents {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		parts, _ := cm["parts"].([]any)
		var merged []any
		for _, p := range parts {
			pm, ok := p.(map[string]any)
			if ok && plain(pm) && len(merged) > 0 {
				if prev, ok := merged[len(merged)-1].(map[string]any); ok && plain(prev) {
					joined := map[string]any{"text": prev["text"].(string) + pm["text"].(string)}
					for _, q := range []map[string]any{prev, pm} {
						if sig, ok := q["thoughtSignature"].(string); ok && sig != "" {
							joined["thoughtSignature"] = sig
						}
					}
					merged[len(merged)-1] = joined
					continue
				}
			}
			merged = append(merged, p)
		}
		cm["parts"] = merged
	}
	b, err := json.Marshal(req)
	if err != nil {
		return canonicalJSON(body)
	}
	return string(b)
}
