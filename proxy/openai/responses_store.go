package openai

import (
	"container/list"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
)

// Defaults for a zero ResponsesStoreOptions field.
const (
	DefaultResponsesStoreEntries = 512
	DefaultResponsesStoreTTL     = time.Hour
	DefaultResponsesStoreBytes   = 64 << 20
)

// ResponsesStoreOptions configures a ResponsesStore. The zero value is usable.
type ResponsesStoreOptions struct {
	// MaxEntries bounds the responses kept; beyond it the least recently
	// used is dropped. 0 = DefaultResponsesStoreEntries.
	MaxEntries int
	// MaxBytes bounds the messages' bytes held, counted per entry (bytes a
	// chain of responses shares count once per entry, so the real footprint
	// is smaller); beyond it the least recently used go first.
	// 0 = DefaultResponsesStoreBytes.
	MaxBytes int
	// TTL is how long a response is kept after it was stored or last used.
	// 0 = DefaultResponsesStoreTTL.
	TTL time.Duration
	// Now is the clock. nil = time.Now.
	Now func() time.Time
}

// ResponsesStore remembers, for a bounded time, each response's whole
// conversation (input and output, as Messages-shape messages), so a request
// carrying previous_response_id can be expanded to the full conversation
// before translation. Entries belong to a session: an id is found only by the
// session that stored it. Chained responses share their messages' bytes, so
// a long chain costs little more than its last conversation. Safe for
// concurrent use.
type ResponsesStore struct {
	opts ResponsesStoreOptions

	mu    sync.Mutex
	byID  map[string]*list.Element
	order *list.List // front = most recently used
	bytes int        // sum of the entries' sizes
}

type responsesStoreEntry struct {
	id, session string
	conv        ResponsesConversation
	size        int
	expires     time.Time
}

// NewResponsesStore returns an empty store.
func NewResponsesStore(opts ResponsesStoreOptions) *ResponsesStore {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultResponsesStoreEntries
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultResponsesStoreTTL
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultResponsesStoreBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &ResponsesStore{opts: opts, byID: map[string]*list.Element{}, order: list.New()}
}

// Put remembers conv as response id of session.
func (s *ResponsesStore) Put(session, id string, conv ResponsesConversation) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byID[id]; ok {
		s.drop(el)
	}
	size := 0
	for _, m := range conv.Messages {
		size += len(m)
	}
	e := &responsesStoreEntry{id: id, session: session, conv: conv, size: size, expires: now.Add(s.opts.TTL)}
	s.byID[id] = s.order.PushFront(e)
	s.bytes += size
	// The newest entry stays even when it alone is over the byte bound: it
	// is the one a next request will name.
	for s.order.Len() > 1 && (s.order.Len() > s.opts.MaxEntries || s.bytes > s.opts.MaxBytes) {
		s.drop(s.order.Back())
	}
}

// Get returns the conversation of response id if session stored it and it
// has not expired; a hit renews its time to live.
func (s *ResponsesStore) Get(session, id string) (ResponsesConversation, bool) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byID[id]
	if !ok {
		return ResponsesConversation{}, false
	}
	e := el.Value.(*responsesStoreEntry)
	if !now.Before(e.expires) {
		s.drop(el)
		return ResponsesConversation{}, false
	}
	if e.session != session {
		return ResponsesConversation{}, false
	}
	e.expires = now.Add(s.opts.TTL)
	s.order.MoveToFront(el)
	return e.conv, true
}

// Lookup is Get bound to session, in the form ResponsesRequestOptions.Previous takes.
func (s *ResponsesStore) Lookup(session string) func(id string) (ResponsesConversation, bool) {
	return func(id string) (ResponsesConversation, bool) { return s.Get(session, id) }
}

// Len is the number of responses held (expired ones included until touched).
func (s *ResponsesStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func (s *ResponsesStore) drop(el *list.Element) {
	e := el.Value.(*responsesStoreEntry)
	s.order.Remove(el)
	delete(s.byID, e.id)
	s.bytes -= e.size
}

// ResponsesConversationAfter is the conversation to store for a response: the
// messages of the Messages request that produced it, then its reply as an
// assistant message. request is the translated request (with any previous
// conversation already expanded), reply a Messages reply body.
//
// The messages are read as they are in request, without parsing them into blocks: only their
// bytes are kept.
func ResponsesConversationAfter(request, reply []byte) (ResponsesConversation, error) {
	messages := anthropic.MemberValue(request, "messages")
	if len(messages) == 0 || messages[0] != '[' {
		return ResponsesConversation{}, fmt.Errorf("conversation after a response: the request has no messages")
	}
	content := anthropic.MemberValue(reply, "content")
	if len(content) == 0 || content[0] != '[' {
		return ResponsesConversation{}, fmt.Errorf("conversation after a response: the reply has no content")
	}
	var msgs []json.RawMessage
	if err := anthropic.EachElement(messages, func(m []byte) error {
		msgs = append(msgs, m)
		return nil
	}); err != nil {
		return ResponsesConversation{}, fmt.Errorf("conversation after a response: %w", err)
	}
	last := make([]byte, 0, len(content)+32)
	last = append(last, `{"role":"assistant","content":`...)
	last = append(last, content...)
	last = append(last, '}')
	return ResponsesConversation{Messages: append(msgs, last)}, nil
}
