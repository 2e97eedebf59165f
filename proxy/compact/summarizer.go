package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// SummaryInstructions is the system prompt of the summary call: the sections
// a coding agent needs to continue (those Claude Code's own /compact writes),
// as XML so the fork can carry it verbatim.
const SummaryInstructions = `You compress a coding-agent conversation so the agent can continue without it.
Write only an XML document of this shape, thorough on technical detail:
<conversation_summary>
  <primary_request_and_intent>all explicit requests and intents of the user</primary_request_and_intent>
  <key_technical_concepts>technologies, frameworks, conventions</key_technical_concepts>
  <files_and_code>files read, changed or created, with the important snippets and why they matter</files_and_code>
  <errors_and_fixes>errors met and how they were fixed, including user feedback</errors_and_fixes>
  <problem_solving>problems solved and troubleshooting in progress</problem_solving>
  <all_user_messages>every user message, verbatim or nearly, in order (not tool results)</all_user_messages>
  <pending_tasks>tasks asked for and not done</pending_tasks>
  <current_work>precisely what was being done just before this summary, with file names and code</current_work>
  <latest_thinking_signature>the value given below, copied exactly (empty if none)</latest_thinking_signature>
</conversation_summary>`

// Summarizer defaults.
const (
	DefaultSummaryMaxTokens   = 8192
	DefaultSummaryResultChars = 2000 // characters of each tool result shown to the summary model
	// DefaultSummaryTranscriptBytes bounds the transcript: about 150k tokens of English text,
	// what a 200k-token summary model reads beside the instructions and its reply.
	DefaultSummaryTranscriptBytes = 512 << 10
)

// HTTPSummarizer asks a model over the Anthropic Messages API for the
// summary. The history is rendered as a transcript inside one user message
// rather than replayed as messages: replayed tool_use blocks would need the
// client's tool definitions, and replayed thinking would need signatures
// valid for the summary model.
type HTTPSummarizer struct {
	BaseURL     string // e.g. https://api.anthropic.com (no /v1)
	APIKey      string // sent as x-api-key; "" sends none
	Model       string // a small fast model
	MaxTokens   int    // 0 = DefaultSummaryMaxTokens
	ResultChars int    // 0 = DefaultSummaryResultChars
	// MaxTranscriptBytes bounds the transcript (see transcript); 0 = DefaultSummaryTranscriptBytes.
	MaxTranscriptBytes int
	// Transport sends the call; nil: http.DefaultTransport. Cancel through ctx. A RoundTripper
	// and not an http.Client: it follows no redirect, so the key goes to BaseURL only (a
	// redirect comes back as a SummaryHTTPError with its 3xx status).
	Transport http.RoundTripper
	// Send, if not nil, sends the summary call (a Messages request body) instead of a POST
	// to BaseURL/v1/messages, and returns the reply as Messages (status, headers, body): the
	// proxy sets it for an upstream of another protocol, which it translates for.
	Send func(ctx context.Context, body []byte) (status int, header http.Header, reply []byte, err error)
	// OnUsage, if not nil, is told the tokens a successful summary call used (the summary
	// call is an exchange of its own in the record).
	OnUsage func(SummaryUsage)
}

var _ Summarizer = (*HTTPSummarizer)(nil)

type summaryCall struct {
	Model     string           `json:"model"`
	MaxTokens int              `json:"max_tokens"`
	System    string           `json:"system"`
	Messages  []summaryMessage `json:"messages"`
}

// SummaryUsage is what a summary call's reply says it used.
type SummaryUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type summaryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type summaryReply struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage SummaryUsage           `json:"usage"`
	Error *anthropic.ErrorDetail `json:"error"`
}

// SummaryHTTPError is an upstream's refusal of the summary call, with what
// a caller rotating accounts needs to classify it.
type SummaryHTTPError struct {
	Status  int
	Header  http.Header
	Body    []byte
	Message string
}

func (e *SummaryHTTPError) Error() string {
	return fmt.Sprintf("summary model answered HTTP %d: %s", e.Status, e.Message)
}

// Summarize implements Summarizer.
func (s *HTTPSummarizer) Summarize(ctx context.Context, h History) (string, error) {
	maxTokens := s.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultSummaryMaxTokens
	}
	body, err := json.Marshal(summaryCall{
		Model: s.Model, MaxTokens: maxTokens, System: SummaryInstructions,
		Messages: []summaryMessage{{Role: "user", Content: s.transcript(h)}},
	})
	if err != nil {
		return "", fmt.Errorf("encode summary request: %w", err)
	}
	send := s.Send
	if send == nil {
		send = s.post
	}
	status, header, data, err := send(ctx, body)
	if err != nil {
		return "", err
	}
	var reply summaryReply
	if err := json.Unmarshal(data, &reply); err != nil {
		if status != http.StatusOK {
			return "", &SummaryHTTPError{Status: status, Header: header, Body: data, Message: http.StatusText(status)}
		}
		return "", fmt.Errorf("summary reply (HTTP %d): %w", status, err)
	}
	if status != http.StatusOK {
		msg := http.StatusText(status)
		if reply.Error != nil {
			msg = reply.Error.Type + ": " + reply.Error.Message
		}
		return "", &SummaryHTTPError{Status: status, Header: header, Body: data, Message: msg}
	}
	if s.OnUsage != nil {
		s.OnUsage(reply.Usage)
	}
	var out strings.Builder
	for _, c := range reply.Content {
		if c.Type == "text" {
			out.WriteString(c.Text)
		}
	}
	return out.String(), nil
}

// post sends the summary call to the Anthropic API at BaseURL.
func (s *HTTPSummarizer) post(ctx context.Context, body []byte) (int, http.Header, []byte, error) {
	req, err := anthropic.NewHTTPRequest(ctx, http.MethodPost, s.BaseURL, "/v1/messages", s.APIKey, nil, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("build summary request: %w", err)
	}
	transport := s.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("summary request: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read summary reply: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// transcript renders the history as tagged text for the summary model, in at most
// MaxTranscriptBytes (about): the first message, which states the task, and as many of the
// latest as fit, with a line saying how many between them were left out. A history longer
// than the summary model's window could never be summarised whole, and rendering it whole
// cost several times the request (a 29 MB request of 100k messages rendered a 26 MB transcript,
// then JSON-encoded it again).
func (s *HTTPSummarizer) transcript(h History) string {
	limit := s.ResultChars
	if limit <= 0 {
		limit = DefaultSummaryResultChars
	}
	budget := s.MaxTranscriptBytes
	if budget <= 0 {
		budget = DefaultSummaryTranscriptBytes
	}
	msgs := h.Messages
	// The first message gets up to an eighth of the budget; the latest take the rest, rendered
	// newest first into one buffer until the next would not fit.
	var head boundedText
	if len(msgs) > 0 {
		head.max = budget / 8
		writeMessage(&head, &msgs[0], limit)
	}
	tail := boundedText{max: budget - head.b.Len()}
	starts := make([]int, 0, min(len(msgs), 64))
	from := len(msgs)
	for i := len(msgs) - 1; i >= 1; i-- {
		at := tail.b.Len()
		writeMessage(&tail, &msgs[i], limit)
		if tail.full && len(starts) > 0 { // the newest is kept, cut; an older one that does not fit is left out
			tail.b.Truncate(at)
			break
		}
		starts = append(starts, at)
		from = i
		if tail.full {
			break
		}
	}
	var b strings.Builder
	b.Grow(head.b.Len() + tail.b.Len() + len(h.LatestSignature) + 256)
	b.WriteString("Summarise this conversation between a user and a coding agent.\n\n<transcript>\n")
	b.Write(head.b.Bytes())
	if left := from - 1; left > 0 {
		fmt.Fprintf(&b, "[%d messages here are left out: the transcript is cut to what the summary model can read]\n", left)
	}
	// starts[k] is where the k-th newest message begins; it ends where the next older begins.
	rendered := tail.b.Bytes()
	for k := len(starts) - 1; k >= 0; k-- {
		end := len(rendered)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		b.Write(rendered[starts[k]:end])
	}
	b.WriteString("</transcript>\n\n<latest_thinking_signature_value>")
	b.WriteString(h.LatestSignature)
	b.WriteString("</latest_thinking_signature_value>\n")
	return b.String()
}

// boundedText is a buffer that takes at most max bytes: past them it drops the rest and is
// full, so one huge message cannot make the transcript huge.
type boundedText struct {
	b    bytes.Buffer
	max  int
	full bool
}

func (t *boundedText) WriteString(s string) {
	if n := t.max - t.b.Len(); len(s) > n {
		n = max(n, 0)
		for n > 0 && !utf8.RuneStart(s[n]) { // cut between characters
			n--
		}
		s, t.full = s[:n], true
	}
	t.b.WriteString(s)
}

func (t *boundedText) Write(p []byte) (int, error) {
	t.WriteString(string(p))
	return len(p), nil
}

func writeMessage(b *boundedText, m *anthropic.Message, limit int) {
	fmt.Fprintf(b, "<message role=%q>\n", m.Role)
	if m.IsString {
		b.WriteString(m.Text())
		b.WriteString("\n")
	}
	for _, blk := range m.Blocks {
		if b.full {
			break
		}
		writeBlock(b, blk, limit)
	}
	if b.full {
		b.b.WriteString("…[cut]\n") // past max: the message must still be closed
	}
	b.b.WriteString("</message>\n")
}

func writeBlock(b *boundedText, blk anthropic.Block, limit int) {
	switch blk.Type {
	case "text":
		b.WriteString(blk.Text())
		b.WriteString("\n")
	case "thinking", "redacted_thinking":
		// Reasoning is not part of what must be remembered, and is often elided.
	case "tool_use", "server_tool_use":
		fmt.Fprintf(b, "<tool_use name=%q>%s</tool_use>\n", blk.Name(), clip(string(blk.Input()), limit))
	case "tool_result":
		b.WriteString("<tool_result>")
		inner, isString, err := blk.ContentBlocks()
		switch {
		case isString:
			b.WriteString(clip(anthropic.Unquote(blk.Content()), limit))
		case err == nil:
			for _, ib := range inner {
				if ib.Type == "text" {
					b.WriteString(clip(ib.Text(), limit))
				} else {
					fmt.Fprintf(b, "[%s]", ib.Type)
				}
			}
		}
		b.WriteString("</tool_result>\n")
	default:
		fmt.Fprintf(b, "[%s block]\n", blk.Type)
	}
}

// clip shortens s to n characters, rune-safe, noting what was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c := utf8.RuneCountInString(s)
	if c <= n {
		return s
	}
	return prefixRunes(s, n) + fmt.Sprintf("…[%d more chars]", c-n)
}
