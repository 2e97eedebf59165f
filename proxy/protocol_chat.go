package proxy

// Chat Completions is plugged in when proxy/openai has its translation; until then the route
// answers a clear error.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
)

type chatClient struct{}

func (chatClient) name() string       { return ProtocolOpenAIChat }
func (chatClient) nativeKind() string { return pool.KindOpenAI }
func (chatClient) toMessages(_ *http.Request, body []byte, t *translation) ([]byte, *Error) {
	return nil, newError(400, anthropic.InvalidRequestError, "Chat Completions is not served by this build yet")
}
func (chatClient) replyFromMessages(body []byte, t *translation) ([]byte, error) {
	return nil, errors.New("x")
}
func (chatClient) streamFromMessages(t *translation) streamEncoder { return nil }
func (chatClient) streamContentType(*translation) string           { return "text/event-stream" }
func (chatClient) errorBody(e *Error) []byte                       { return openAIErrorBody(e) }
func (chatClient) forwardHeader(name string) bool                  { return openAIForwardHeader(name) }

type chatUpstream struct{}

func (chatUpstream) kind() string { return pool.KindOpenAI }
func (chatUpstream) fromMessages(messages []byte, _ *upstreamCall) ([]byte, error) {
	return nil, errors.New("x")
}
func (chatUpstream) newRequest(ctx context.Context, acct pool.Account, _ *upstreamCall, h http.Header, body io.Reader) (*http.Request, error) {
	return nil, errors.New("x")
}
func (chatUpstream) replyToMessages(body []byte, c *upstreamCall) ([]byte, error) {
	return nil, errors.New("x")
}
func (chatUpstream) streamToMessages(c *upstreamCall) streamDecoder { return nil }
func (chatUpstream) errorToMessages(status int, body []byte) (string, string) {
	return "", ""
}
func (chatUpstream) retryDelay([]byte) time.Duration { return 0 }
