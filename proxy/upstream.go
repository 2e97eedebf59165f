package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/proxy/pool"
	"longhaul/proxy/sigcache"
)

// upstreamProtocol is what an account of one kind speaks: how a Messages request becomes its
// request, and how its replies, streams and errors become Messages ones (see protocol.go).
type upstreamProtocol interface {
	kind() string
	// fromMessages translates the Messages request into this upstream's body.
	fromMessages(messages []byte, c *upstreamCall) ([]byte, error)
	// newRequest builds the HTTP request to the account: its URL under the account's base
	// URL (the one origin its secret goes to), its credentials, the given headers and body.
	newRequest(ctx context.Context, acct pool.Account, c *upstreamCall, h http.Header, body io.Reader) (*http.Request, error)
	// replyToMessages translates a non-stream reply into a Messages reply.
	replyToMessages(body []byte, c *upstreamCall) ([]byte, error)
	// streamToMessages starts translating a stream into Messages events (nil: it is one).
	streamToMessages(c *upstreamCall) streamDecoder
	// errorToMessages reads an error reply as a Messages error type and message.
	errorToMessages(status int, body []byte) (typ, message string)
	// retryDelay is how long an error reply's body asks to wait (0: it does not say).
	retryDelay(body []byte) time.Duration
}

// upstreamCall is one attempt's facts the upstream side needs.
type upstreamCall struct {
	route  string // "messages" or "count_tokens"
	model  string // as sent, after the model map
	stream bool
	// path is the client's path and query, for an Anthropic client on an Anthropic upstream
	// (its ?beta=true and route are kept).
	path string
	// client is the client protocol's request as received when it is Gemini's (what the
	// Messages shape cannot carry is taken back from it for a Gemini upstream); nil otherwise.
	client []byte
	// sigs keeps Gemini's thought signatures (nil: the signature cache is off).
	sigs *sigcache.Cache
	// translated: the Messages request was translated from another protocol's.
	translated bool
	// baseURL is the account's, for what differs between servers of one protocol.
	baseURL string
}

// upstreamFor is the protocol of an account kind.
func upstreamFor(kind string) upstreamProtocol {
	switch kind {
	case pool.KindOpenAIResponses:
		return responsesUpstream{}
	case pool.KindGemini:
		return geminiUpstream{}
	case pool.KindOpenAI:
		return chatUpstream{}
	}
	return messagesUpstream{}
}

// joinURL puts path under an account's base URL; a trailing slash or space is fine.
func joinURL(baseURL, path string) string {
	return strings.TrimRight(strings.TrimSpace(baseURL), "/") + path
}

func newUpstreamRequest(ctx context.Context, acct pool.Account, path string, h http.Header, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, joinURL(acct.BaseURL, path), body)
	if err != nil {
		return nil, fmt.Errorf("account %s: bad base URL: %w", acct.Name(), err)
	}
	req.Header = h
	h.Del("X-Api-Key")
	h.Del("Authorization")
	h.Del("X-Goog-Api-Key")
	h.Set("Content-Type", "application/json")
	return req, nil
}

// messagesUpstream is the Anthropic Messages API.
type messagesUpstream struct{}

func (messagesUpstream) kind() string { return pool.KindAnthropic }

// fromMessages keeps the request, but OpenAI reasoning carried through the Messages shape in
// marked signatures never reaches Anthropic, and a request translated from another protocol
// is brought within the Messages API's rules.
func (messagesUpstream) fromMessages(messages []byte, c *upstreamCall) ([]byte, error) {
	body, err := dropThinkingSignedBy(messages, openAIReasoning)
	if err != nil || !c.translated {
		return body, err
	}
	return messagesAPIRules(body)
}

// translatedMaxTokens is max_tokens for a request translated from a client that set no
// limit (Messages requires one; every current Claude model accepts this many).
const translatedMaxTokens = 32000

// messagesAPIRules brings a Messages request translated from another protocol within what the
// Messages API accepts (a translation meant to go back to its own protocol does not apply
// them): max_tokens is required; with thinking on, temperature, top_p and top_k must be left
// to their defaults, and no tool may be forced. A request within them is returned as is.
func messagesAPIRules(body []byte) ([]byte, error) {
	var maxTokens, thinking, toolChoice []byte
	sampling := false
	if err := anthropic.EachMember(body, func(k, v []byte) error {
		switch string(k) {
		case "max_tokens":
			maxTokens = v
		case "thinking":
			thinking = v
		case "tool_choice":
			toolChoice = v
		case "temperature", "top_p", "top_k":
			sampling = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	thinkingOn := anthropic.ThinkingEnabled(thinking)
	forced := false
	if toolChoice != nil {
		typ := anthropic.Unquote(anthropic.MemberValue(toolChoice, "type"))
		forced = typ == "any" || typ == "tool"
	}
	// budget_tokens must stay below max_tokens: the client's limit was for the answer.
	var budget int
	if thinkingOn {
		budget, _ = strconv.Atoi(string(anthropic.MemberValue(thinking, "budget_tokens")))
	}
	limit, _ := strconv.Atoi(string(maxTokens))
	raise := maxTokens != nil && budget > 0 && budget >= limit
	if maxTokens != nil && !raise && !(thinkingOn && (sampling || forced)) {
		return body, nil
	}
	var head []byte
	if maxTokens == nil {
		head = []byte(`"max_tokens":` + strconv.Itoa(translatedMaxTokens))
	}
	return rewriteMembers(body, head, func(k, v []byte) ([]byte, bool) {
		switch string(k) {
		case "max_tokens":
			if raise && !forced {
				return []byte(strconv.Itoa(budget + limit)), true
			}
		case "temperature", "top_p", "top_k":
			return v, !thinkingOn
		case "thinking":
			return v, !forced
		}
		return v, true
	})
}

// rewriteMembers rebuilds the object body member by member, after head (members already
// written, or nil): edit returns the value to write and whether to keep the member.
func rewriteMembers(body, head []byte, edit func(k, v []byte) ([]byte, bool)) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(body) + len(head) + 1)
	out.WriteByte('{')
	out.Write(head)
	first := len(head) == 0
	err := anthropic.EachMember(body, func(k, v []byte) error {
		v, keep := edit(k, v)
		if !keep {
			return nil
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		out.WriteByte('"')
		out.Write(k)
		out.WriteString(`":`)
		out.Write(v)
		return nil
	})
	out.WriteByte('}')
	return out.Bytes(), err
}

func (messagesUpstream) newRequest(ctx context.Context, acct pool.Account, c *upstreamCall, h http.Header, body io.Reader) (*http.Request, error) {
	path := c.path
	if path == "" {
		path = "/v1/messages"
		if c.route == "count_tokens" {
			path = "/v1/messages/count_tokens"
		}
	}
	req, err := anthropic.NewHTTPRequest(ctx, http.MethodPost, acct.BaseURL, path, acct.Secret, h, body)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", acct.Name(), err)
	}
	return req, nil
}

func (messagesUpstream) replyToMessages(body []byte, _ *upstreamCall) ([]byte, error) {
	return body, nil
}
func (messagesUpstream) streamToMessages(*upstreamCall) streamDecoder { return nil }
func (messagesUpstream) errorToMessages(status int, body []byte) (string, string) {
	if e, ok := anthropic.ParseError(body); ok && e.Message != "" {
		return e.Type, e.Message
	}
	return anthropic.ErrorType(status), fmt.Sprintf("upstream answered %d", status)
}
func (messagesUpstream) retryDelay([]byte) time.Duration { return 0 }

// responsesUpstream is OpenAI's Responses API at the account's base URL
// (https://api.openai.com/v1 → …/v1/responses), with a bearer key.
type responsesUpstream struct{}

func (responsesUpstream) kind() string { return pool.KindOpenAIResponses }
func (responsesUpstream) fromMessages(messages []byte, c *upstreamCall) ([]byte, error) {
	body, err := openai.ResponsesRequestFromAnthropic(messages, openai.ResponsesRequestOptions{})
	if err != nil || !withoutReasoning(c.model) {
		return body, err
	}
	return withoutMembers(body, "reasoning")
}

// withoutReasoning reports OpenAI models that refuse a reasoning effort (it is an error on
// gpt-4o, gpt-4.1 and older, not a no-op): a client's thinking, such as Claude Code's, is
// not asked of them. Other models take it or ignore it.
func withoutReasoning(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // a router's vendor/model name
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "chatgpt-4o"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// withoutMembers returns the object body without its top-level members names (body itself
// when it has none of them).
func withoutMembers(body []byte, names ...string) ([]byte, error) {
	found := false
	if err := anthropic.EachMember(body, func(k, _ []byte) error {
		found = found || slices.Contains(names, string(k))
		return nil
	}); err != nil || !found {
		return body, err
	}
	return rewriteMembers(body, nil, func(k, v []byte) ([]byte, bool) {
		return v, !slices.Contains(names, string(k))
	})
}
func (responsesUpstream) newRequest(ctx context.Context, acct pool.Account, _ *upstreamCall, h http.Header, body io.Reader) (*http.Request, error) {
	req, err := newUpstreamRequest(ctx, acct, "/responses", h, body)
	if err == nil {
		req.Header.Set("Authorization", "Bearer "+acct.Secret)
	}
	return req, err
}
func (responsesUpstream) replyToMessages(body []byte, c *upstreamCall) ([]byte, error) {
	return openai.ResponsesReplyToAnthropic(body, openai.ResponsesReplyOptions{Model: c.model})
}
func (responsesUpstream) streamToMessages(c *upstreamCall) streamDecoder {
	return openai.NewResponsesStreamToAnthropic(openai.ResponsesReplyOptions{Model: c.model})
}
func (responsesUpstream) errorToMessages(status int, body []byte) (string, string) {
	return openai.ResponsesErrorToAnthropic(status, body)
}
func (responsesUpstream) retryDelay([]byte) time.Duration { return 0 }

// geminiUpstream is the Gemini API (generativelanguage) with an API key. Streams are always
// asked for as SSE (alt=sse), one chunk per event.
type geminiUpstream struct{}

func (geminiUpstream) kind() string { return pool.KindGemini }

func (geminiUpstream) fromMessages(messages []byte, c *upstreamCall) ([]byte, error) {
	opts := gemini.RequestOptions{Original: c.client}
	if c.sigs != nil {
		sigs := c.sigs
		opts.Signature = func(key string) (string, bool) { return sigs.RecoverForTool(key, geminiFamily) }
	}
	return gemini.RequestFromAnthropic(messages, opts)
}

func (geminiUpstream) newRequest(ctx context.Context, acct pool.Account, c *upstreamCall, h http.Header, body io.Reader) (*http.Request, error) {
	method := ":generateContent"
	switch {
	case c.route == "count_tokens":
		method = ":countTokens"
	case c.stream:
		method = ":streamGenerateContent?alt=sse"
	}
	// The base URL is the API's root; one that already names the version is accepted too.
	base := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(acct.BaseURL), "/"), "/v1beta")
	acct.BaseURL = base
	req, err := newUpstreamRequest(ctx, acct, "/v1beta/models/"+url.PathEscape(c.model)+method, h, body)
	if err == nil {
		req.Header.Set("X-Goog-Api-Key", acct.Secret)
	}
	return req, err
}

func (geminiUpstream) replyToMessages(body []byte, c *upstreamCall) ([]byte, error) {
	return gemini.ReplyToAnthropic(body, gemini.ReplyOptions{Model: c.model, OnSignature: c.keepSignature})
}
func (geminiUpstream) streamToMessages(c *upstreamCall) streamDecoder {
	return gemini.NewStreamToAnthropic(gemini.ReplyOptions{Model: c.model, OnSignature: c.keepSignature})
}
func (geminiUpstream) errorToMessages(status int, body []byte) (string, string) {
	return gemini.ErrorToAnthropic(status, body)
}
func (geminiUpstream) retryDelay(body []byte) time.Duration {
	d, _ := gemini.RetryDelay(body)
	return d
}

// geminiFamily is the signature cache's family of Gemini's thought signatures.
const geminiFamily = "gemini"

// keepSignature files a Gemini thought signature under the key the next request asks for it
// by, in the Gemini family: restored for Gemini, never sent to another family.
func (c *upstreamCall) keepSignature(key, signature string) {
	if c.sigs == nil || key == "" || signature == "" {
		return
	}
	c.sigs.PutToolSignature(key, signature)
	c.sigs.PutFamily(signature, geminiFamily)
}

// openAIReasoning recognises OpenAI reasoning (Responses or Chat) carried as a thinking block.
func openAIReasoning(signature string) bool {
	return openai.ResponsesIsReasoningSignature(signature) || openai.ChatIsReasoningSignature(signature)
}

// dropThinkingSignedBy removes the thinking blocks whose signature foreign recognises (another
// family's reasoning carried through the Messages shape). A body with none is returned as is.
func dropThinkingSignedBy(body []byte, foreign func(signature string) bool) ([]byte, error) {
	if !bytes.Contains(body, []byte(`"signature":"openai-`)) { // what both marks start with
		return body, nil
	}
	req, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil, err
	}
	dropped := false
	kept := req.Messages[:0]
	for _, m := range req.Messages {
		if m.IsString || m.Role != "assistant" {
			kept = append(kept, m)
			continue
		}
		var blocks []anthropic.Block
		for _, b := range m.Blocks {
			if b.Type == "thinking" && foreign(b.Signature()) {
				dropped = true
				continue
			}
			blocks = append(blocks, b)
		}
		if len(blocks) == len(m.Blocks) {
			kept = append(kept, m)
			continue
		}
		if len(blocks) > 0 {
			m.SetBlocks(blocks)
			kept = append(kept, m)
		}
	}
	if !dropped {
		return body, nil
	}
	req.Messages = kept
	return req.Encode(), nil
}
