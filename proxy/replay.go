package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
)

// Replay re-sends a recorded request through the normal path, as a new exchange linked to the
// one it replays: uncompacted, on another account, or under another model, for that one
// request. A replay never teaches the engine (calibration, the signature cache) or the session's
// account affinity anything: it is an experiment, not the session.
type Replay struct {
	// Of is the id of the exchange replayed (Exchange.ReplayOf of the new one).
	Of string
	// Path is the route the original came in on, with its query ("/v1/messages?beta=true",
	// "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse").
	Path string
	// Body is the request as the client sent it.
	Body []byte
	// Header carries the protocol headers to send again (anthropic-version, anthropic-beta);
	// credentials and anything else are dropped as for any request.
	Header http.Header
	// NoCompaction sends the request without the engine: no compressor, layers or repairs.
	NoCompaction bool
	// AccountID, when not 0, is the only account tried.
	AccountID int64
	// Model, when not "", replaces the model the client named (then mapped as usual).
	Model string
}

// ErrReplayRoute is a replay of a path that is not a model route.
var ErrReplayRoute = errors.New("not a model route")

// Replay runs rp and returns the new exchange's id and the status the replayed request got.
// The reply goes to w (nil: discarded; it is in the record either way when bodies are kept).
func (s *Server) Replay(ctx context.Context, rp Replay, w http.ResponseWriter) (id string, status int, err error) {
	path, query, _ := strings.Cut(rp.Path, "?")
	c, err := replayCall(path, query, s)
	if err != nil {
		return "", 0, err
	}
	body := rp.Body
	if rp.Model != "" {
		if body, err = replayModel(c, body, rp.Model); err != nil {
			return "", 0, err
		}
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, rp.Path, bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("replay %s: %w", rp.Path, err)
	}
	r.Header = forwardHeaders(rp.Header, c.proto.forwardHeader)
	r.Header.Set("Content-Type", "application/json")
	r.Host, r.RemoteAddr = "replay", "replay"
	if c.proto.nativeKind() == pool.KindGemini && rp.Model != "" { // its model is in the path
		c.tr.model = rp.Model
	}
	c.replay = &rp
	rec := &replayWriter{header: http.Header{}, w: w}
	comp := s.comp.Load()
	if rp.NoCompaction {
		comp = nil
	}
	s.forward(rec, r, s.cfg.Load(), comp, c)
	return rec.header.Get("Longhaul-Request-Id"), rec.status, nil
}

// replayCall is the call of a model route's path, as the router would make it.
func replayCall(path, query string, s *Server) (*call, error) {
	c := &call{}
	var setup func(*call, *http.Request) *Error
	switch {
	case path == "/v1/messages":
		c.proto, setup = messagesClient{}, fixedCall(opGenerate, "messages")
	case path == "/v1/chat/completions":
		c.proto, setup = chatClient{}, fixedCall(opGenerate, "chat")
	case path == "/v1/responses":
		c.proto = responsesClient{}
		setup = func(c *call, _ *http.Request) *Error {
			c.op, c.route, c.tr.store = opGenerate, "responses", s.responses
			return nil
		}
	case strings.HasPrefix(path, "/v1beta/models/"):
		c.proto, setup = geminiClient{}, geminiCall
	default:
		return nil, fmt.Errorf("replay %s: %w", path, ErrReplayRoute)
	}
	r, err := http.NewRequest(http.MethodPost, path+"?"+query, nil)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(path, "/v1beta/models/") {
		r.SetPathValue("call", strings.TrimPrefix(path, "/v1beta/models/"))
	}
	if e := setup(c, r); e != nil {
		return nil, fmt.Errorf("replay %s: %w", path, e)
	}
	return c, nil
}

// replayModel names another model in the request: in the body's top-level model member, or
// for Gemini in the path (see Replay).
func replayModel(c *call, body []byte, model string) ([]byte, error) {
	if c.proto.nativeKind() == pool.KindGemini {
		return body, nil
	}
	span, ok := anthropic.MemberSpan(body, "model")
	if !ok {
		return nil, errors.New("replay: the request names no model to replace")
	}
	return anthropic.WithModel(body, span, model), nil
}

// replayWriter is where a replay's reply goes: to w when given, else nowhere; it keeps the
// status and headers for the caller.
type replayWriter struct {
	header http.Header
	status int
	w      http.ResponseWriter
}

func (r *replayWriter) Header() http.Header { return r.header }

func (r *replayWriter) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		if r.w != nil {
			copyHeader(r.w.Header(), r.header)
			r.w.WriteHeader(status)
		}
	}
}

func (r *replayWriter) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.w == nil {
		return len(b), nil
	}
	return r.w.Write(b)
}

func (r *replayWriter) Flush() {
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
}
