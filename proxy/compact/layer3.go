package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"longhaul/proxy/anthropic"
)

// Summarizer writes the XML summary of a conversation (Layer 3). It is
// declared here, where it is used; HTTPSummarizer is the implementation that
// calls an Anthropic-protocol model.
type Summarizer interface {
	Summarize(ctx context.Context, h History) (string, error)
}

// History is what a Summarizer summarises.
type History struct {
	System          json.RawMessage // the client's system prompt, for context
	Messages        []anthropic.Message
	LatestSignature string // the last thinking signature in the history, if any
}

// ErrSummaryFailed wraps every Layer-3 failure. The proxy answers it with
// HTTP 400 invalid_request_error and SummaryFailedMessage: forwarding an
// over-limit request would only fail upstream less helpfully.
var ErrSummaryFailed = errors.New("context summary failed")

// SummaryFailedMessage is the client-facing text for ErrSummaryFailed.
const SummaryFailedMessage = "The conversation is too long for the model's context window and Longhaul could not summarise it. " +
	"Run /compact to summarise it in the client, or /clear to start over."

// ContinuationPreamble opens the user message that carries the summary.
const ContinuationPreamble = "Context has been compressed: this session ran out of room, so the earlier conversation " +
	"is replaced by the summary below. Continue the work from where it left off.\n\n"

const acknowledgement = "Understood. I have the summary of the earlier conversation and will continue from where it left off."

// summaryPhrases identify a request that is itself a summary request
// (Claude Code's /compact and auto-compact, and similar clients): Layer 3
// must not fight the client's own compaction.
var summaryPhrases = []string{
	"create a detailed summary of the conversation",
	"summary of the conversation so far",
	"summarize the conversation",
	"summarise the conversation",
	"your task is to create a detailed summary",
}

// IsSummaryRequest reports whether the last user message asks for a summary
// of the conversation. Only its text is read, not tool results.
func IsSummaryRequest(r *anthropic.Request) bool {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := &r.Messages[i]
		if m.Role != "user" {
			continue
		}
		t := strings.ToLower(m.Text())
		for _, p := range summaryPhrases {
			if strings.Contains(t, p) {
				return true
			}
		}
		return false
	}
	return false
}

// LatestSignature returns the signature of the last signed thinking block.
func LatestSignature(msgs []anthropic.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		bs := msgs[i].Blocks
		for j := len(bs) - 1; j >= 0; j-- {
			if bs[j].Type == "thinking" {
				if s := bs[j].Signature(); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// Layer3 replaces the history with a summary fork. Summaries are cached per
// session together with the prefix of the client's history they cover: the
// client resends its full history every time, and while it still starts with
// that prefix the same summary stands in for it (Resume) — one summary call
// per compaction point, not per request, and a forwarded prefix that stays
// byte-identical between compaction points, so prompt caching keeps working.
// When even the fork grows too large, the summary is extended: the old
// summary and what came after it are summarised together (Extend).
//
// Summaries always cover the client's own history, never a version trimmed
// by Layer 1: what Layer 1 dropped is in the summary too.
type Layer3 struct {
	summarizer Summarizer
	seed       maphash.Seed
	cache      *memo[summaryEntry]
}

type summaryEntry struct {
	covers  int    // the client's messages[:covers] are summarised
	hash    uint64 // of those messages' bytes
	summary string
}

// NewLayer3 returns a Layer3 that remembers summaries of up to sessions sessions.
func NewLayer3(s Summarizer, sessions int) *Layer3 {
	return &Layer3{summarizer: s, seed: maphash.MakeSeed(), cache: newMemo[summaryEntry](sessions)}
}

// Layer3Result reports one Layer-3 run.
type Layer3Result struct {
	Summarized int  // messages replaced by the summary; 0 = nothing done
	CacheHit   bool // the summary came from the cache
}

// Apply forks r in place: [user: preamble + summary, assistant: ack, tail…].
// The tail — the last user message, or the whole last tool round when the
// request is inside a tool loop — stays verbatim, so a tool_use is never
// separated from its tool_result and the last assistant turn keeps its
// thinking. over reports whether a request is still above the threshold
// (nil = always); a cached summary is reused unless the fork built from it is
// still over. Summary requests are left alone.
func (l *Layer3) Apply(ctx context.Context, r *anthropic.Request, session string, over func(*anthropic.Request) bool) (Layer3Result, error) {
	if IsSummaryRequest(r) {
		return Layer3Result{}, nil
	}
	orig := r.Messages
	if covered, ok := l.Resume(r, session); ok {
		if over != nil && !over(r) {
			return Layer3Result{Summarized: covered, CacheHit: true}, nil
		}
	}
	res, err := l.Extend(ctx, r, orig, session)
	if err != nil {
		r.Messages = orig
	}
	return res, err
}

// Resume replaces the prefix of r's messages that session's cached summary
// covers by the summary, and reports how many messages it replaced. It does
// nothing (false) when there is no summary, the client's history no longer
// starts with what it covers, or r is itself a summary request.
func (l *Layer3) Resume(r *anthropic.Request, session string) (int, bool) {
	if session == "" || IsSummaryRequest(r) {
		return 0, false
	}
	e, ok := l.cache.get(session)
	msgs := r.Messages
	if !ok || e.covers >= len(msgs) || e.hash != l.prefixHash(msgs[:e.covers]) {
		return 0, false
	}
	fork, ok := makesRoom(e.summary, msgs, e.covers)
	if !ok {
		return 0, false
	}
	r.Messages = fork
	return e.covers, true
}

// Extend summarises orig — the client's messages, which r may already hold
// in a trimmed or resumed form — up to its verbatim tail, reusing a cached
// summary of a prefix instead of the messages it covers, and replaces r's
// messages with the fork. Nothing is done when there is nothing new to
// summarise.
func (l *Layer3) Extend(ctx context.Context, r *anthropic.Request, orig []anthropic.Message, session string) (Layer3Result, error) {
	tail := tailStart(orig)
	if tail <= forkHead(orig) {
		return Layer3Result{}, nil // nothing left to summarise
	}
	hist := History{System: r.System, LatestSignature: LatestSignature(orig[:tail]), Messages: orig[:tail]}
	if e, ok := l.cache.get(session); ok && session != "" && e.covers <= tail && e.hash == l.prefixHash(orig[:e.covers]) {
		if e.covers == tail {
			fork, ok := makesRoom(e.summary, orig, tail)
			if !ok {
				return Layer3Result{}, nil
			}
			r.Messages = fork
			return Layer3Result{Summarized: tail, CacheHit: true}, nil
		}
		head := buildFork(e.summary, nil)
		hist.Messages = append(head[:len(head):len(head)], orig[e.covers:tail]...)
	}
	if l.summarizer == nil {
		return Layer3Result{}, fmt.Errorf("%w: no summary model configured", ErrSummaryFailed)
	}
	s, err := l.summarizer.Summarize(ctx, hist)
	if err != nil {
		return Layer3Result{}, fmt.Errorf("%w: %w", ErrSummaryFailed, err)
	}
	if strings.TrimSpace(s) == "" {
		return Layer3Result{}, fmt.Errorf("%w: the summary model returned no text", ErrSummaryFailed)
	}
	s = withSignature(strings.TrimSpace(s), hist.LatestSignature)
	if session != "" {
		l.cache.put(session, summaryEntry{covers: tail, hash: l.prefixHash(orig[:tail]), summary: s})
	}
	fork, ok := makesRoom(s, orig, tail)
	if !ok {
		return Layer3Result{}, nil
	}
	r.Messages = fork
	return Layer3Result{Summarized: tail}, nil
}

// makesRoom builds the fork that puts summary in place of msgs[:covers] and
// reports whether it is smaller. A summary no shorter than the history it
// stands for makes no room and has lost detail: the request is better left
// as it is (the pipeline then sees that the pressure did not drop).
func makesRoom(summary string, msgs []anthropic.Message, covers int) ([]anthropic.Message, bool) {
	fork := buildFork(summary, msgs[covers:])
	size := func(ms []anthropic.Message) int {
		n := 0
		for i := range ms {
			n += len(ms[i].Raw()) + 1 // and a comma
		}
		return n
	}
	return fork, size(fork[:len(fork)-len(msgs[covers:])]) < size(msgs[:covers])
}

// withSignature makes sure the summary names the latest signature; the
// summary model is not trusted to copy a 400-character token exactly.
func withSignature(summary, sig string) string {
	if sig == "" || strings.Contains(summary, "<latest_thinking_signature>"+sig+"</latest_thinking_signature>") {
		return summary
	}
	return summary + "\n<latest_thinking_signature>" + sig + "</latest_thinking_signature>"
}

func (l *Layer3) prefixHash(msgs []anthropic.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(l.seed)
	for i := range msgs {
		h.Write(msgs[i].Raw())
		h.WriteByte(0)
	}
	return h.Sum64()
}

// forkHead is the number of leading messages that are a fork's own summary
// and acknowledgement (0 when r is not a fork), so a fork is not summarised
// again for nothing.
func forkHead(msgs []anthropic.Message) int {
	if len(msgs) == 0 || msgs[0].Role != "user" || !strings.HasPrefix(msgs[0].Text(), ContinuationPreamble) {
		return 0
	}
	if len(msgs) > 1 && msgs[1].Role == "assistant" && msgs[1].Text() == acknowledgement {
		return 2
	}
	return 1
}

// tailStart is the index of the first message kept verbatim: the client's
// last user message, or the start of its tool round when it carries tool
// results. What follows it (a system message, an assistant prefill) stays
// too, so the fork still ends the way the client's request did.
func tailStart(msgs []anthropic.Message) int {
	last := len(msgs) - 1
	for last >= 0 && msgs[last].Role != "user" {
		last--
	}
	if last <= 0 {
		return 0
	}
	if hasToolResult(&msgs[last]) {
		for _, rd := range findRounds(msgs) {
			if rd.start < last && last < rd.end {
				return rd.start
			}
		}
		// No round holds it (something stands between the call and its
		// result): still keep the assistant turn that made the call.
		for i := last - 1; i > 0; i-- {
			if msgs[i].Role == "assistant" {
				return i
			}
		}
	}
	return last
}

// buildFork is the forwarded sequence: the summary as a user turn, an
// acknowledgement when the tail opens with a user turn (an assistant tail
// turn follows the summary directly, so its thinking block stays first), then
// the tail.
func buildFork(summary string, tail []anthropic.Message) []anthropic.Message {
	out := make([]anthropic.Message, 0, len(tail)+2)
	out = append(out, anthropic.NewMessage("user", ContinuationPreamble+summary))
	if len(tail) == 0 || tail[0].Role != "assistant" {
		out = append(out, anthropic.NewMessage("assistant", acknowledgement))
	}
	return append(out, tail...)
}
