package proxy

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/openai"
	"longhaul/proxy/pool"
)

// chatClient is OpenAI's Chat Completions API (the OpenAI SDKs, Cherry Studio, Cline,
// Continue, Open WebUI).
type chatClient struct{}

func (chatClient) name() string       { return ProtocolOpenAIChat }
func (chatClient) nativeKind() string { return pool.KindOpenAI }

func (chatClient) toMessages(_ *http.Request, body []byte, t *translation) ([]byte, *Error) {
	t.includeUsage = openai.ChatIncludeUsage(body)
	// ForChat: reasoning a Chat upstream returned rides through the Messages shape in marked
	// signatures, dropped only if the request ends at Anthropic (messagesUpstream does).
	out, err := openai.ChatRequestToAnthropic(body, openai.ChatRequestOptions{ForChat: true})
	if err != nil {
		return nil, openAIRequestError(err)
	}
	return out, nil
}

func (chatClient) replyFromMessages(body []byte, t *translation) ([]byte, error) {
	return openai.ChatReplyFromAnthropic(body, openai.ChatReplyOptions{Model: t.model})
}

func (chatClient) streamFromMessages(t *translation) streamEncoder {
	return openai.NewChatStreamFromAnthropic(openai.ChatReplyOptions{Model: t.model, IncludeUsage: t.includeUsage})
}
func (chatClient) streamContentType(*translation) string { return "text/event-stream" }
func (chatClient) errorBody(e *Error) []byte {
	if e.Code == "" && e.Param == "" {
		return openai.ChatErrorFromAnthropic(e.Status, anthropicErrorJSON(e))
	}
	return openai.ErrorJSON(e.Status, e.Code, e.Param, e.Message)
}
func (chatClient) forwardHeader(name string) bool { return openAIForwardHeader(name) }
func (chatClient) peek(a *anthropic.Arriving, rs *chatRecallScan) (clientPeek, error) {
	return peekOpenAI(a, rs)
}
func (chatClient) lazy() bool { return true }

// chatUpstream is an OpenAI-compatible Chat Completions server (the official API, DeepSeek,
// OpenRouter, Ollama, LM Studio, vLLM…) at the account's base URL, as a user gives it to the
// OpenAI SDK (https://api.openai.com/v1, http://localhost:11434/v1), with a bearer key.
type chatUpstream struct{}

func (chatUpstream) kind() string { return pool.KindOpenAI }
func (chatUpstream) fromMessages(messages []byte, c *upstreamCall) ([]byte, error) {
	// OpenAI itself reads max_completion_tokens (its reasoning models refuse max_tokens);
	// compatible servers (DeepSeek, OpenRouter, Ollama, vLLM…) document max_tokens.
	body, err := openai.ChatRequestFromAnthropic(messages, openai.ChatRequestOptions{LegacyMaxTokens: !officialOpenAI(c.baseURL)})
	if err != nil || !withoutReasoning(c.model) {
		return body, err
	}
	return withoutMembers(body, "reasoning_effort")
}
func (chatUpstream) newRequest(ctx context.Context, acct pool.Account, _ *upstreamCall, h http.Header, body io.Reader) (*http.Request, error) {
	req, err := newUpstreamRequest(ctx, acct, "/chat/completions", h, body)
	if err == nil && acct.Secret != "" { // a local server may take no key at all
		req.Header.Set("Authorization", "Bearer "+acct.Secret)
	}
	return req, err
}
func (chatUpstream) replyToMessages(body []byte, c *upstreamCall) ([]byte, error) {
	return openai.ChatReplyToAnthropic(body, openai.ChatReplyOptions{Model: c.model})
}
func (chatUpstream) streamToMessages(c *upstreamCall) streamDecoder {
	return openai.NewChatStreamToAnthropic(openai.ChatReplyOptions{Model: c.model})
}
func (chatUpstream) errorToMessages(status int, body []byte) (string, string) {
	return openai.ChatErrorToAnthropic(status, body)
}
func (chatUpstream) retryDelay([]byte) time.Duration { return 0 }

// officialOpenAI reports whether a base URL is OpenAI's own API.
func officialOpenAI(baseURL string) bool {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}
