package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The agent: a stand-in model that makes a tool loop go round without being scripted from
// outside. It walks through the tools a request offers, one call per round, then answers in
// text:
//
//   - the request ends with the user's text      → a call to the first tool;
//   - it ends with the result of tool i's call   → a call to tool i+1, or text after the last;
//   - it offers no tools (or ends otherwise)     → text.
//
// So a client that offers one tool gets a single round trip (call → result → text), and one
// that offers two gets two rounds. It is stateless: everything it needs is in the request, the
// tool's name found through the call the result answers, or else (a Responses request that
// names only previous_response_id and the new function_call_output) through the tool index
// the agent wrote into the call id.
//
// With a script (-agent-calls NAME:N) the agent calls only the tool NAME, N times in a row,
// then answers in text, so a real client's loop (Claude Code running Bash) goes round a known
// number of times.

// agentTool is a tool the request offers: its name and JSON Schema of its arguments.
type agentTool struct {
	Name   string
	Schema json.RawMessage
}

// lastTurn is how a request ends, as far as the agent cares.
type lastTurn struct {
	userText bool   // the user wrote text (no tool result)
	answered string // the name of the tool whose result ends the request, if known
	callID   string // the id of the call that result answers
}

// nextTool is the tool to call next, or nil when the agent answers in text.
func nextTool(tools []agentTool, last lastTurn) (index int, tool *agentTool) {
	if len(tools) == 0 {
		return -1, nil
	}
	if last.userText {
		return 0, &tools[0]
	}
	i := slices.IndexFunc(tools, func(t agentTool) bool { return t.Name == last.answered })
	if i < 0 {
		i = agentIndexOfID(last.callID)
	}
	if i < 0 || i+1 >= len(tools) {
		return -1, nil
	}
	return i + 1, &tools[i+1]
}

// agentScript narrows the agent to one tool called a number of times in a row. The zero value
// is no script: the agent walks every offered tool once.
type agentScript struct {
	Tool  string
	Calls int
}

// parseAgentScript reads -agent-calls: "NAME:N", N ≥ 1; "" is no script.
func parseAgentScript(s string) (agentScript, error) {
	if s == "" {
		return agentScript{}, nil
	}
	name, count, ok := strings.Cut(s, ":")
	n, err := strconv.Atoi(count)
	if !ok || name == "" || err != nil || n < 1 {
		return agentScript{}, fmt.Errorf("parse -agent-calls %q: want NAME:N with N ≥ 1", s)
	}
	return agentScript{Tool: name, Calls: n}, nil
}

// scriptProgress is how many of the script's calls a request's conversation has answered.
// Stateless like the rest of the agent: it counts the results answering the script's tool,
// and also reads the round the agent wrote into each result's call id, because a proxy in
// front may have compacted the early rounds away (Longhaul's Layer 1 drops them) while the
// latest result, and its id, are always sent.
type scriptProgress struct {
	results   int // results answering a call to the script's tool
	lastRound int // the highest round read from a result's call id
}

// result notes one tool result: the name of the tool it answers ("" when unknown) and the id
// of the call it answers ("" when the protocol has none).
func (p *scriptProgress) result(s agentScript, name, callID string) {
	if name == s.Tool && name != "" {
		p.results++
	}
	p.lastRound = max(p.lastRound, agentRoundOfID(callID))
}

func (p scriptProgress) done() int { return max(p.results, p.lastRound) }

// decide is the agent's next move: the tool to call (nil: answer in text), its index among the
// offered tools, and the script round the call is (0 without a script).
func decide(tools []agentTool, last lastTurn, script agentScript, progress scriptProgress) (index, round int, tool *agentTool) {
	if script.Tool == "" {
		index, tool = nextTool(tools, last)
		return index, 0, tool
	}
	i := slices.IndexFunc(tools, func(t agentTool) bool { return t.Name == script.Tool })
	if i < 0 || progress.done() >= script.Calls {
		return -1, 0, nil
	}
	return i, progress.done() + 1, &tools[i]
}

var agentCallSeq atomic.Int64

// agentCallID is a fresh call id carrying the tool's index, and the script round when there is
// one: prefix + "agent<i>_<n>" or prefix + "agent<i>_<n>_round<r>".
func agentCallID(prefix string, index, round int) string {
	id := fmt.Sprintf("%sagent%d_%d", prefix, index, agentCallSeq.Add(1))
	if round > 0 {
		id += "_round" + strconv.Itoa(round)
	}
	return id
}

var agentIDPattern = regexp.MustCompile(`agent(\d+)_\d+(?:_round(\d+))?$`)

// agentIndexOfID reads the tool index back from an id agentCallID made, or -1.
func agentIndexOfID(id string) int {
	m := agentIDPattern.FindStringSubmatch(id)
	if m == nil {
		return -1
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return i
}

// agentRoundOfID reads the script round back from an id agentCallID made, or 0.
func agentRoundOfID(id string) int {
	m := agentIDPattern.FindStringSubmatch(id)
	if m == nil || m[2] == "" {
		return 0
	}
	r, err := strconv.Atoi(m[2])
	if err != nil {
		return 0
	}
	return r
}

// agentArgs are arguments valid for schema: each required property filled with a value of
// its type (the first enum value when there is an enum). Types are compared case-insensitively
// because Gemini's Schema writes them in capitals (STRING, OBJECT).
func agentArgs(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return json.RawMessage("{}")
	}
	args := map[string]any{}
	for _, name := range s.Required {
		var prop struct {
			Type json.RawMessage `json:"type"`
			Enum []any           `json:"enum"`
		}
		if raw, ok := s.Properties[name]; ok {
			json.Unmarshal(raw, &prop) //nolint:errcheck // a malformed property gets a string
		}
		if len(prop.Enum) > 0 {
			args[name] = prop.Enum[0]
			continue
		}
		args[name] = zeroOf(schemaType(prop.Type))
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// schemaType is a schema's "type": the first non-null one when it is a list.
func schemaType(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return strings.ToLower(one)
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, t := range many {
			if t != "null" {
				return strings.ToLower(t)
			}
		}
	}
	return "string"
}

func zeroOf(typ string) any {
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "e2e"
}

// agentText is the agent's final answer: it names what it saw, so a test can tell the answer
// came after the tool results.
func agentText(results int) string {
	if results == 0 {
		return "Hello from the scripted agent."
	}
	return fmt.Sprintf("Done: the scripted agent read %d tool result(s).", results)
}
