package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/proxy/gemini"
	"longhaul/proxy/proxytest"
)

// What the agent reads from each protocol's request, and the reply it scripts. The request
// shapes are the ones proxytest's upstreams already parse (Messages, Responses, Gemini).

// messagesRequest is the part of a Messages request the agent reads.
type messagesRequest struct {
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type messagesBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
}

// messagesAgent scripts the reply to a Messages request, or returns false to leave it to the
// upstream's default reply.
func messagesAgent(body []byte, gap time.Duration, script agentScript) (proxytest.Reply, bool) {
	var req messagesRequest
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return proxytest.Reply{}, false
	}
	var tools []agentTool
	for _, t := range req.Tools {
		if len(t.InputSchema) > 0 { // server tools (web search …) have none
			tools = append(tools, agentTool{Name: t.Name, Schema: t.InputSchema})
		}
	}
	if len(tools) == 0 {
		return proxytest.Reply{}, false
	}
	names := map[string]string{} // tool_use id → tool name
	results := 0
	var progress scriptProgress
	var last lastTurn
	for i, m := range req.Messages {
		blocks := messagesBlocks(m.Content)
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				names[b.ID] = b.Name
			case "tool_result":
				results++
				progress.result(script, names[b.ToolUseID], b.ToolUseID)
			}
		}
		if i < len(req.Messages)-1 || m.Role != "user" {
			continue
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				last = lastTurn{answered: names[b.ToolUseID], callID: b.ToolUseID}
			case "text":
				if last.callID == "" {
					last.userText = true
				}
			}
		}
	}
	usage := proxytest.Usage{InputTokens: max(1, len(body)/4), OutputTokens: 20}
	msg := &proxytest.Message{Model: modelOf(body), Usage: usage}
	if req.Thinking != nil && req.Thinking.Type != "" && req.Thinking.Type != "disabled" {
		msg.Content = append(msg.Content, proxytest.Thinking("The scripted agent decides what to do next.", "EqScriptedAgentSignature"))
	}
	if i, round, tool := decide(tools, last, script, progress); tool != nil {
		msg.Content = append(msg.Content,
			proxytest.Text("Calling "+tool.Name+"."),
			proxytest.ToolUse(agentCallID("toolu_", i, round), tool.Name, agentArgs(tool.Schema)))
	} else {
		msg.Content = append(msg.Content, proxytest.Text(agentText(results)))
	}
	return proxytest.Reply{Message: msg, EventGap: gap}, true
}

// messagesBlocks reads a message's content: a string is one text block.
func messagesBlocks(content json.RawMessage) []messagesBlock {
	var text string
	if json.Unmarshal(content, &text) == nil {
		return []messagesBlock{{Type: "text"}}
	}
	var blocks []messagesBlock
	json.Unmarshal(content, &blocks) //nolint:errcheck // anything else has no blocks
	return blocks
}

// chatRequest is the part of a Chat Completions request the agent reads.
type chatRequest struct {
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// chatAgent scripts the reply to a Chat Completions request (see messagesAgent).
func chatAgent(body []byte, gap time.Duration, script agentScript) (proxytest.ChatReply, bool) {
	var req chatRequest
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return proxytest.ChatReply{}, false
	}
	var tools []agentTool
	for _, t := range req.Tools {
		if t.Type == "function" {
			tools = append(tools, agentTool{Name: t.Function.Name, Schema: t.Function.Parameters})
		}
	}
	if len(tools) == 0 {
		return proxytest.ChatReply{}, false
	}
	names := map[string]string{} // tool call id → function name
	results := 0
	var progress scriptProgress
	var last lastTurn
	for i, m := range req.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			results++
			progress.result(script, names[m.ToolCallID], m.ToolCallID)
		}
		if i < len(req.Messages)-1 {
			continue
		}
		switch m.Role {
		case "tool":
			last = lastTurn{answered: names[m.ToolCallID], callID: m.ToolCallID}
		case "user":
			last.userText = true
		}
	}
	usage := proxytest.ChatUsage{Prompt: max(1, len(body)/4), Completion: 20}
	if i, round, tool := decide(tools, last, script, progress); tool != nil {
		call := proxytest.ChatToolCall{ID: agentCallID("call_", i, round), Name: tool.Name, Args: string(agentArgs(tool.Schema))}
		return proxytest.ChatReply{Completion: &proxytest.ChatCompletion{ToolCalls: []proxytest.ChatToolCall{call}, Usage: usage}, EventGap: gap}, true
	}
	return proxytest.ChatReply{Completion: &proxytest.ChatCompletion{Content: agentText(results), Usage: usage}, EventGap: gap}, true
}

// responsesRequest is the part of a Responses request the agent reads.
type responsesRequest struct {
	Tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
	PreviousResponseID string          `json:"previous_response_id"`
	Input              json.RawMessage `json:"input"`
}

type responsesItem struct {
	Type   string `json:"type"`
	Role   string `json:"role"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
}

// responsesMemory keeps the conversation of each response the agent made, so a request that
// names it in previous_response_id continues it, as the real API (store: true) does. It holds
// only what the agent reads, for the last maxRecords responses.
type responsesMemory struct {
	mu    sync.Mutex
	byID  map[string][]responsesItem
	order []string
}

func (m *responsesMemory) get(id string) []responsesItem {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

func (m *responsesMemory) put(id string, items []responsesItem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string][]responsesItem{}
	}
	if len(m.order) == maxRecords {
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
	m.byID[id] = items
	m.order = append(m.order, id)
}

var agentResponseSeq atomic.Int64

// responsesAgent scripts the reply to a Responses request (see messagesAgent), continuing the
// conversation of previous_response_id from memory.
func responsesAgent(body []byte, gap time.Duration, memory *responsesMemory, script agentScript) (proxytest.ResponsesReply, bool) {
	var req responsesRequest
	if json.Unmarshal(body, &req) != nil {
		return proxytest.ResponsesReply{}, false
	}
	var tools []agentTool
	for _, t := range req.Tools {
		if t.Type == "function" {
			tools = append(tools, agentTool{Name: t.Name, Schema: t.Parameters})
		}
	}
	if len(tools) == 0 {
		return proxytest.ResponsesReply{}, false
	}
	var items []responsesItem
	var text string
	if json.Unmarshal(req.Input, &text) == nil {
		items = []responsesItem{{Type: "message", Role: "user"}}
	} else {
		json.Unmarshal(req.Input, &items) //nolint:errcheck // no items: text
	}
	if req.PreviousResponseID != "" {
		items = append(slices.Clip(memory.get(req.PreviousResponseID)), items...)
	}
	var last lastTurn
	results := 0
	var progress scriptProgress
	names := map[string]string{}
	for i, it := range items {
		switch it.Type {
		case "function_call":
			names[it.CallID] = it.Name
		case "function_call_output":
			results++
			progress.result(script, names[it.CallID], it.CallID)
		}
		if i < len(items)-1 {
			continue
		}
		switch {
		case it.Type == "function_call_output":
			last = lastTurn{answered: names[it.CallID], callID: it.CallID}
		case (it.Type == "message" || it.Type == "") && it.Role == "user":
			last.userText = true
		}
	}
	resp := &proxytest.ResponsesResponse{
		ID:    "resp_agent" + strconv.FormatInt(agentResponseSeq.Add(1), 10),
		Usage: proxytest.ResponsesUsage{Input: max(1, len(body)/4), Output: 20},
	}
	if i, round, tool := decide(tools, last, script, progress); tool != nil {
		call := proxytest.ResponsesFunctionCall(agentCallID("call_", i, round), tool.Name, string(agentArgs(tool.Schema)))
		resp.Items = []proxytest.ResponsesItem{call}
		items = append(items, responsesItem{Type: "function_call", CallID: call.CallID, Name: call.Name})
	} else {
		resp.Items = []proxytest.ResponsesItem{proxytest.ResponsesText(agentText(results))}
		items = append(items, responsesItem{Type: "message", Role: "assistant"})
	}
	memory.put(resp.ID, items)
	return proxytest.ResponsesReply{Response: resp, EventGap: gap}, true
}

// geminiAgent scripts the reply to a generateContent request (see messagesAgent). A
// functionResponse names its function, so the agent needs no ids here.
func geminiAgent(body []byte, script agentScript) (proxytest.GeminiReply, bool) {
	var req gemini.Request
	if json.Unmarshal(body, &req) != nil || len(req.Contents) == 0 {
		return proxytest.GeminiReply{}, false
	}
	var tools []agentTool
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			schema := d.Parameters
			if len(schema) == 0 {
				schema = d.ParametersJSONSchema
			}
			tools = append(tools, agentTool{Name: d.Name, Schema: schema})
		}
	}
	if len(tools) == 0 {
		return proxytest.GeminiReply{}, false
	}
	results := 0
	var progress scriptProgress
	var last lastTurn
	for i, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				results++
				progress.result(script, p.FunctionResponse.Name, "")
				if i == len(req.Contents)-1 {
					last = lastTurn{answered: p.FunctionResponse.Name}
				}
			}
		}
		if i == len(req.Contents)-1 && c.Role != "model" && last.answered == "" {
			last.userText = true
		}
	}
	if _, _, tool := decide(tools, last, script, progress); tool != nil {
		return proxytest.GeminiCalls(proxytest.GeminiCall(tool.Name, agentArgs(tool.Schema))), true
	}
	return proxytest.GeminiText(agentText(results)), true
}

// modelOf is the request's top-level "model", or "" (proxytest then uses its default).
func modelOf(body []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &m) //nolint:errcheck // "" is the answer for anything else
	return strings.TrimSpace(m.Model)
}
