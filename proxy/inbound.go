package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
)

// inbound reads an API request's body and, for a client of another protocol, translates it
// into Messages, unless the engine would leave it alone (then it may never need translating:
// messages is nil); it records the model, session and whether it streams on ex. A failure has
// been answered (unless the client left) and recorded when ok is false. messages is client
// itself for an Anthropic client.
func (s *Server) inbound(w http.ResponseWriter, r *http.Request, cfg *Config, comp *compactor, ex *Exchange, c *call) (client, messages *requestBody, peek anthropic.Peek, ok bool) {
	pivot := c.proto.nativeKind() == pool.KindAnthropic
	var cp clientPeek
	foreign := &cp
	if pivot {
		foreign = nil
	}
	var sendEarly func(*turnNote, *growingBody)
	if c.op == opGenerate && c.replay == nil && c.proto.nativeKind() != pool.KindGemini {
		sendEarly = func(note *turnNote, g *growingBody) {
			if acct, model, ok := s.earlyTarget(cfg, c, note); ok && c.early == nil {
				c.early = s.sendEarly(r, cfg, c, acct, model, g)
			}
		}
	}
	client, peek, rb, e := s.readBody(r, cfg.MaxBodyBytes, &c.memory, c.proto, foreign, sendEarly)
	if e == nil {
		ex.BytesIn = int64(len(client.buf))
		ex.RequestRepeats = RequestRepeats{Exchange: rb.found.Tag, Bytes: rb.found.Shared}
		if cfg.CaptureBodies {
			ex.RequestMessageEnds = rb.marks.MessageEnds()
		}
		messages = client
		if tag, shared, ok := rb.chat.repeats(); ok {
			ex.RequestRepeats = RequestRepeats{Exchange: tag, Bytes: shared}
		}
		if cfg.CaptureBodies && rb.chat != nil {
			ex.RequestMessageEnds = rb.chat.messageEnds()
		}
		if !pivot {
			s.chats.remember(client, rb.chat, ex.ID)
			messages, peek, e = s.inboundForeign(r, cfg, comp, c, client, cp)
			if e != nil {
				client.release()
			}
		}
	}
	if e != nil {
		s.finish(ex, e.Status, e)
		if e.Status == http.StatusRequestEntityTooLarge || e.Type == anthropic.OverloadedError {
			// Refused for its size, or by the memory budget, before all of the body was read:
			// the rest is still coming.
			refuseUnread(w, r)
		}
		if e.Status != statusClientClosed {
			writeErrorAs(w, c.proto, e)
		}
		return nil, nil, peek, false
	}
	if messages != nil {
		c.messages = messages.buf
		ex.Model, ex.SessionID = peek.Model, peek.SessionID(messages.buf)
		if rb.marks != nil {
			c.turn = &turnNote{session: ex.SessionID, model: ex.Model}
			client.retain()
			s.recall.Remember(ex.ID, c.turn, client.buf, rb.marks, rb.found, client.unref)
		}
		ex.Tools, ex.ToolTokens = peek.Tools, toolTokens(peek.ToolsSpan.End-peek.ToolsSpan.Start)
	} else {
		ex.Tools, ex.ToolTokens = c.tools, toolTokens(c.toolBytes)
	}
	if !pivot {
		ex.SessionID = c.session
	}
	if c.tr.model != "" {
		ex.Model = c.tr.model
	}
	c.tr.model = ex.Model
	ex.Stream = c.op == opGenerate && (peek.Stream || c.tr.stream)
	c.tr.stream = ex.Stream
	if !pivot && sendEarly != nil && len(client.buf) >= minEarlyBody {
		c.turn = &turnNote{session: ex.SessionID, model: c.tr.model}
		s.prefixes.remember(c.proto.name(), client.buf[:earlyPrefix], c.turn)
	}
	return client, messages, peek, true
}

// inboundForeign takes a request of another protocol: its model, stream and session from the
// peek of its own body (cp), then its translation into Messages unless the screen shows the
// engine would leave it alone (messages nil).
func (s *Server) inboundForeign(r *http.Request, cfg *Config, comp *compactor, c *call, client *requestBody, cp clientPeek) (*requestBody, anthropic.Peek, *Error) {
	if c.tr.model == "" {
		c.tr.model = cp.model
	}
	c.tr.stream = c.tr.stream || cp.stream
	c.session, c.tools, c.toolBytes = cp.session, cp.tools, cp.toolBytes
	if c.op == opGenerate && c.proto.lazy() && comp != nil {
		tg := s.guessTarget(cfg, comp, c.tr.model, c.session, compact.ParseBetas(r.Header.Values("Anthropic-Beta")))
		if limit, ok := comp.untouchedForeign(client.buf, cp, tg); ok {
			c.limit, c.screenedFor = limit, tg
			return nil, anthropic.Peek{Model: c.tr.model, Stream: c.tr.stream}, nil
		}
	}
	return s.translateInbound(r, c, client)
}

// toolTokens is about how many tokens n bytes of tool definitions take: JSON schemas are
// ASCII, about 4 characters a token, with the estimator's margin. Read from the size alone,
// so it costs nothing per request.
func toolTokens(n int) int {
	return int(float64(n) / 4 * (1 + compact.DefaultMargin))
}

// translateInbound translates a client's request into Messages and peeks at the result. The
// translation is a second body, reserved against the memory budget with its blocks.
func (s *Server) translateInbound(r *http.Request, c *call, client *requestBody) (*requestBody, anthropic.Peek, *Error) {
	b, e := c.proto.toMessages(r, client.buf, &c.tr)
	if e != nil {
		return nil, anthropic.Peek{}, e
	}
	peek, err := anthropic.PeekRequest(b)
	if err != nil {
		s.log.Warn("translated request does not parse", "protocol", c.proto.name(), "err", err)
		return nil, peek, newError(http.StatusBadRequest, anthropic.InvalidRequestError, "cannot read the request: "+err.Error())
	}
	if e := c.memory.grow(costPerBodyByte*int64(len(b)) + itemsCost(0, peek.Messages.Blocks)); e != nil {
		return nil, peek, e
	}
	return staticBody(b), peek, nil
}

// bodyTooLarge is the refusal of a body over proxy.max_body_bytes.
func bodyTooLarge(limit int64) *Error {
	return newError(http.StatusRequestEntityTooLarge, anthropic.RequestTooLarge,
		fmt.Sprintf("request body exceeds the proxy's limit of %d bytes (proxy.max_body_bytes)", limit))
}

// recalledBody is what the recall found of a request body and what remembers it.
type recalledBody struct {
	found anthropic.Recollection
	marks *anthropic.Marks
	chat  *chatRecallScan // a Chat body's (chatrecall.go)
}

// readBody buffers the request body within the limit (retries replay it) and peeks at it
// while it arrives: a Messages request into the Peek it returns, skipping what it repeats of
// a recent body (s.recall); another protocol's, when foreign is not nil, by proto into
// *foreign. What the body will cost is reserved on mem before it is read (budget.go), and
// what its messages and blocks will once the peek has counted them.
//
// sendEarly, when not nil, is called while the body arrives once it starts as a recent
// request of the same protocol did, with that request's note and the buffer as it fills
// (early.go).
func (s *Server) readBody(r *http.Request, limit int64, mem *reservation, proto clientProtocol, foreign *clientPeek, sendEarly func(*turnNote, *growingBody)) (*requestBody, anthropic.Peek, recalledBody, *Error) {
	peekMessages := foreign == nil
	tooLarge := bodyTooLarge(limit)
	var rb recalledBody
	if r.ContentLength > limit {
		return nil, anthropic.Peek{}, rb, tooLarge
	}
	var body *requestBody
	var peek anthropic.Peek
	var err error
	if r.ContentLength >= 0 {
		if e := mem.grow(bodyCost(r.ContentLength)); e != nil {
			return nil, peek, rb, e
		}
		body = s.bodies.get(int(r.ContentLength))
		if peekMessages {
			var src io.Reader = r.Body
			var onFound func(anthropic.Recollection)
			if sendEarly != nil && len(body.buf) >= minEarlyBody { // the recall leaves smaller ones alone
				g := newGrowingBody(body)
				src = &publishingReader{r: r.Body, g: g}
				onFound = func(found anthropic.Recollection) {
					if note, ok := found.Note.(*turnNote); ok {
						sendEarly(note, g)
					}
				}
			}
			peek, rb.found, rb.marks, err = s.recall.ReadAndPeek(src, body.buf, onFound)
		} else {
			var src io.Reader = r.Body
			if sendEarly != nil && len(body.buf) >= minEarlyBody {
				g := newGrowingBody(body)
				src = &publishingReader{r: r.Body, g: g, watch: func(arrived int) bool {
					if arrived < earlyPrefix {
						return false
					}
					if note := s.prefixes.match(proto.name(), body.buf[:earlyPrefix]); note != nil {
						sendEarly(note, g)
					}
					return true
				}}
			}
			rb.chat = s.chats.scan(len(body.buf))
			*foreign, err = proto.peek(anthropic.NewArriving(src, body.buf), rb.chat)
		}
	} else {
		// Chunked upload: size unknown, so read it all, reserving as it grows, then peek.
		if e := mem.grow(requestBaseCost); e != nil {
			return nil, peek, rb, e
		}
		var refused *Error
		body, err = s.readChunked(r.Body, limit, mem)
		switch {
		case errors.Is(err, errBodyTooLarge):
			return nil, peek, rb, tooLarge
		case errors.As(err, &refused):
			return nil, peek, rb, refused
		case err != nil:
			err = &anthropic.ReadError{Err: err}
		case peekMessages:
			peek, err = anthropic.PeekRequest(body.buf)
		default:
			*foreign, err = proto.peek(anthropic.Arrived(body.buf), nil)
		}
	}
	if err == nil {
		items := itemsCost(peek.Messages.Count, peek.Messages.Blocks)
		if !peekMessages {
			items = itemsCost(foreign.messages, 0)
		}
		if e := mem.grow(items); e != nil {
			body.release()
			return nil, peek, rb, e
		}
		return body, peek, rb, nil
	}
	if body != nil {
		body.release()
	}
	if anthropic.IsSyntaxError(err) {
		return nil, peek, rb, newError(http.StatusBadRequest, anthropic.InvalidRequestError, "malformed JSON request body: "+err.Error())
	}
	var tooMany *anthropic.TooManyMessagesError
	if errors.As(err, &tooMany) {
		return nil, peek, rb, newError(http.StatusBadRequest, anthropic.InvalidRequestError, err.Error())
	}
	return nil, peek, rb, newError(statusClientClosed, "client_cancelled", err.Error())
}
