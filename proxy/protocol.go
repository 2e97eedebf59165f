package proxy

import (
	"errors"
	"net/http"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/proxy/pool"
)

// The protocol seam. Anthropic Messages is the proxy's working shape (the pivot): a request in
// any client protocol is translated into a Messages request, where compaction, signature repair
// and estimation run; each attempt translates it to what the chosen account speaks; the reply
// comes back the same way, event by event for streams. When the client and the account speak
// the same protocol and nothing was rewritten, the client's bytes go upstream as they came and
// the upstream's bytes come back as they came (prompt caching depends on it); the translations
// then only feed the record (usage, stop reason, signatures).
//
// A protocol is a value with the methods below; the core never switches on protocol names.
// The translation functions live in the protocol packages (proxy/anthropic, proxy/openai,
// proxy/gemini); these types only plug them in.

// clientProtocol is a wire format clients speak to the proxy.
type clientProtocol interface {
	// name is the protocol's name in the record (Exchange.ClientProtocol).
	name() string
	// nativeKind is the account kind that speaks this protocol itself.
	nativeKind() string
	// toMessages translates the client's request body into a Messages request, and notes on
	// t what the way back needs. Its errors are the client's fault (4xx).
	toMessages(r *http.Request, body []byte, t *translation) ([]byte, *Error)
	// replyFromMessages translates a Messages reply into the client's shape.
	replyFromMessages(body []byte, t *translation) ([]byte, error)
	// streamFromMessages starts translating a Messages stream into the client's stream.
	streamFromMessages(t *translation) streamEncoder
	// streamContentType is the Content-Type of the client's stream.
	streamContentType(t *translation) string
	// errorBody renders an error in the client's shape.
	errorBody(e *Error) []byte
	// peek reads what routing needs from the client's own body while it arrives, checking its
	// syntax, without translating it (clientpeek.go). Unused for Messages, whose reader peeks
	// with anthropic.ReadAndPeek.
	peek(a *anthropic.Arriving, rs *chatRecallScan) (clientPeek, error)
	// lazy reports whether a request the engine would leave alone may skip its translation
	// into Messages when an account of the client's own protocol takes it. Not for Responses:
	// its conversation is kept for previous_response_id from the Messages shape.
	lazy() bool
	// forwardHeader is the allow-list of the client's own headers that may reach an upstream
	// of the same protocol (never another: an anthropic-beta means nothing to OpenAI).
	forwardHeader(name string) bool
}

// streamEncoder turns Messages events into frames of a client's stream (the Event/End pair
// every protocol package's StreamFromAnthropic has).
type streamEncoder interface {
	Event(name string, data []byte, write func(frame []byte) error) error
	End(write func(frame []byte) error) error
}

// streamDecoder turns an upstream's stream into Messages events (the packages'
// StreamToAnthropic).
type streamDecoder interface {
	Event(name string, data []byte, emit func(name string, data []byte) error) error
	End(emit func(name string, data []byte) error) error
}

// translation is what one request's translations need beyond its bodies: set by the client
// protocol on the way in, read on the way back.
type translation struct {
	model  string // as the client named it
	stream bool
	// client is the client's body before translation (Gemini takes back what Messages cannot
	// carry from it).
	client []byte

	includeUsage bool // Chat: stream_options.include_usage

	echo  openai.ResponsesEcho   // Responses: what the response object repeats
	store *openai.ResponsesStore // Responses: where the conversation is kept for previous_response_id

	geminiMethod    string // generateContent, streamGenerateContent, countTokens
	geminiSSE       bool   // alt=sse
	includeThoughts bool   // thinkingConfig.includeThoughts
}

// writeErrorAs answers e in the client protocol's error shape.
func writeErrorAs(w http.ResponseWriter, p clientProtocol, e *Error) {
	if p == nil {
		writeError(w, e)
		return
	}
	setErrorHeaders(w, e)
	w.WriteHeader(e.Status)
	w.Write(p.errorBody(e)) //nolint:errcheck // the client is gone if this fails
}

// messagesClient is the Anthropic Messages API: the pivot itself.
type messagesClient struct{}

func (messagesClient) name() string       { return ProtocolAnthropic }
func (messagesClient) nativeKind() string { return pool.KindAnthropic }
func (messagesClient) toMessages(_ *http.Request, body []byte, _ *translation) ([]byte, *Error) {
	return body, nil
}
func (messagesClient) replyFromMessages(body []byte, _ *translation) ([]byte, error) {
	return body, nil
}
func (messagesClient) streamFromMessages(*translation) streamEncoder { return nil }
func (messagesClient) streamContentType(*translation) string         { return "text/event-stream" }
func (messagesClient) errorBody(e *Error) []byte                     { return anthropic.ErrorJSON(e.Type, e.Message) }
func (messagesClient) forwardHeader(name string) bool                { return anthropic.ForwardHeader(name) }
func (messagesClient) peek(*anthropic.Arriving, *chatRecallScan) (clientPeek, error) {
	return clientPeek{}, nil
}
func (messagesClient) lazy() bool { return false }

// responsesClient is OpenAI's Responses API (Codex CLI, the OpenAI SDKs' responses.create).
type responsesClient struct{}

func (responsesClient) name() string       { return ProtocolOpenAIResponses }
func (responsesClient) nativeKind() string { return pool.KindOpenAIResponses }

func (responsesClient) toMessages(_ *http.Request, body []byte, t *translation) ([]byte, *Error) {
	t.echo = openai.ResponsesEchoOf(body)
	out, err := openai.ResponsesRequestToAnthropic(body, openai.ResponsesRequestOptions{
		Previous: t.store.Lookup(responsesStorePartition),
		// Compaction runs on the Messages shape; OpenAI's encrypted reasoning rides through it
		// in marked signatures and is dropped only if the request ends at Anthropic (the
		// upstream translation purifies it there).
		ForResponses: true,
	})
	if err != nil {
		return nil, openAIRequestError(err)
	}
	return out, nil
}

func (responsesClient) replyFromMessages(body []byte, t *translation) ([]byte, error) {
	return openai.ResponsesReplyFromAnthropic(body, t.responsesReplyOptions())
}

func (responsesClient) streamFromMessages(t *translation) streamEncoder {
	return openai.NewResponsesStreamFromAnthropic(t.responsesReplyOptions())
}
func (responsesClient) streamContentType(*translation) string { return "text/event-stream" }
func (responsesClient) errorBody(e *Error) []byte             { return openAIErrorBody(e) }
func (responsesClient) forwardHeader(name string) bool        { return openAIForwardHeader(name) }
func (responsesClient) peek(a *anthropic.Arriving, _ *chatRecallScan) (clientPeek, error) {
	return peekOpenAI(a, nil)
}
func (responsesClient) lazy() bool { return false }

func (t *translation) responsesReplyOptions() openai.ResponsesReplyOptions {
	return openai.ResponsesReplyOptions{Model: t.model, Echo: t.echo}
}

// responsesStorePartition keys the conversations kept for previous_response_id. Response ids
// are random and unguessable, and one Longhaul serves one user, so one partition is enough.
const responsesStorePartition = "longhaul"

// geminiClient is the Gemini API (Gemini CLI, the Google Gen AI SDKs).
type geminiClient struct{}

func (geminiClient) name() string       { return ProtocolGemini }
func (geminiClient) nativeKind() string { return pool.KindGemini }

func (geminiClient) toMessages(_ *http.Request, body []byte, t *translation) ([]byte, *Error) {
	t.client = body
	t.includeThoughts = gemini.IncludeThoughts(body)
	opts := gemini.RequestOptions{Model: t.model, Stream: t.stream}
	var out []byte
	var err error
	if t.geminiMethod == "countTokens" {
		out, err = gemini.CountTokensToAnthropic(body, opts)
	} else {
		out, err = gemini.RequestToAnthropic(body, opts)
	}
	if err != nil {
		return nil, geminiRequestError(err)
	}
	return out, nil
}

func (geminiClient) replyFromMessages(body []byte, t *translation) ([]byte, error) {
	return gemini.ReplyFromAnthropic(body, gemini.ReplyOptions{Model: t.model, IncludeThoughts: t.includeThoughts})
}

func (geminiClient) streamFromMessages(t *translation) streamEncoder {
	return gemini.NewStreamFromAnthropic(gemini.ReplyOptions{Model: t.model, SSE: t.geminiSSE, IncludeThoughts: t.includeThoughts})
}

func (geminiClient) streamContentType(t *translation) string {
	if t.geminiSSE {
		return "text/event-stream"
	}
	return "application/json"
}

func (geminiClient) errorBody(e *Error) []byte {
	return gemini.ErrorFromAnthropic(e.Status, anthropic.ErrorJSON(e.Type, e.Message))
}
func (geminiClient) forwardHeader(name string) bool { return geminiForwardHeader(name) }
func (geminiClient) peek(a *anthropic.Arriving, _ *chatRecallScan) (clientPeek, error) {
	return peekGemini(a)
}
func (geminiClient) lazy() bool { return true }

// openAIErrorBody renders e in OpenAI's shape ({"error":{"message","type","param","code"}}),
// keeping the code a translation set and naming an over-long prompt as OpenAI does.
func openAIErrorBody(e *Error) []byte {
	if e.Code == "" && e.Param == "" {
		return openai.ResponsesErrorFromAnthropic(e.Status, anthropic.ErrorJSON(e.Type, e.Message))
	}
	return openai.ErrorJSON(e.Status, e.Code, e.Param, e.Message)
}

// openAIRequestError is a Responses (or Chat) translation failure as the proxy's Error.
func openAIRequestError(err error) *Error {
	var re *openai.ResponsesRequestError
	if errors.As(err, &re) {
		e := newError(re.Status, anthropic.ErrorType(re.Status), re.Message)
		e.Param, e.Code = re.Param, re.Code
		return e
	}
	return newError(http.StatusBadRequest, anthropic.InvalidRequestError, err.Error())
}

// geminiRequestError is a Gemini translation failure as the proxy's Error.
func geminiRequestError(err error) *Error {
	var ge *gemini.Error
	if errors.As(err, &ge) {
		e := newError(ge.Status, anthropic.ErrorType(ge.Status), ge.Message)
		if ge.Param != "" {
			e.Message = ge.Param + ": " + ge.Message
		}
		return e
	}
	return newError(http.StatusBadRequest, anthropic.InvalidRequestError, err.Error())
}

// openAIForwardHeader lets the OpenAI SDKs' own headers through to an OpenAI upstream: their
// x-stainless-* telemetry and OpenAI-Beta. OpenAI-Organization and OpenAI-Project name the
// caller's billing and belong to the account, so they stay local.
func openAIForwardHeader(name string) bool {
	return name == "Openai-Beta" || len(name) > 12 && name[:12] == "X-Stainless-"
}

// geminiForwardHeader lets the Google SDKs' client identification through to Gemini.
func geminiForwardHeader(name string) bool { return name == "X-Goog-Api-Client" }

func anthropicErrorJSON(e *Error) []byte { return anthropic.ErrorJSON(e.Type, e.Message) }
