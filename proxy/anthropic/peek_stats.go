package anthropic

import "bytes"

// The block counts the peek gathers inside messages (MessageStats), read by
// the proxy's screen to tell a request the compaction engine would leave
// alone without parsing it a second time.

// MessageStats are counts gathered from messages while peeking.
type MessageStats struct {
	Count int
	// Blocks counts the content blocks of the messages (not those inside a tool result).
	Blocks int
	// LastSpans are the last two messages (LastSpans[1] the very last).
	LastSpans [2]Span
	// MaxToolContent is the largest content value of a block inside a
	// message (a tool_result's content), in raw bytes.
	MaxToolContent int
	// Images counts image and document blocks anywhere in messages;
	// ToolImages those inside block content (tool results) of messages
	// other than the last.
	Images, ToolImages int
	// Thinking counts thinking blocks, Signed those with a non-empty
	// signature, Redacted redacted_thinking blocks.
	Thinking, Signed, Redacted int
	// SavedNotice: a block content outside the last message mentions
	// "saved to" (a tool's output-saved-to-a-file notice).
	SavedNotice bool
}

// msgScan accumulates MessageStats; counts that exclude the last message
// are held back one message until the next one starts.
type msgScan struct {
	stats             MessageStats
	toolImages, saved int // of the message being scanned
}

// next closes the message at span.
func (m *msgScan) next(span Span) {
	m.stats.Count++
	m.stats.LastSpans[0], m.stats.LastSpans[1] = m.stats.LastSpans[1], span
}

func (m *msgScan) done() MessageStats { return m.stats }

// fold adds the held-back counts of the previous message: it was not the last.
func (m *msgScan) fold() {
	m.stats.ToolImages += m.toolImages
	m.stats.SavedNotice = m.stats.SavedNotice || m.saved > 0
	m.toolImages, m.saved = 0, 0
}

var savedTo = []byte("aved to")

// mentionsSaved reports "saved to" or "Saved to" in b.
func mentionsSaved(b []byte) bool {
	for i := 1; i < len(b); {
		k := bytes.Index(b[i:], savedTo)
		if k < 0 {
			return false
		}
		if c := b[i+k-1]; c == 's' || c == 'S' {
			return true
		}
		i += k + 1
	}
	return false
}

// message scans one element of messages, gathering stats about its blocks.
func (s *scanner) message(depth int, ms *msgScan) error {
	ms.fold()
	if !s.more() || s.b[s.i] != '{' {
		return s.value(depth)
	}
	return s.object(depth, func(key []byte) error {
		if string(key) == "content" && s.more() && s.b[s.i] == '[' {
			return s.arrayEach(depth+1, func() error {
				ms.stats.Blocks++
				return s.block(depth+2, ms, false)
			})
		}
		return s.value(depth + 1)
	})
}

// block scans a content block (or a block inside a tool result's content).
func (s *scanner) block(depth int, ms *msgScan, nested bool) error {
	if !s.more() || s.b[s.i] != '{' {
		return s.value(depth)
	}
	return s.object(depth, func(key []byte) error {
		start := s.i
		switch string(key) {
		case "type":
			if err := s.value(depth + 1); err != nil {
				return err
			}
			switch string(s.b[start:s.i]) {
			case `"image"`, `"document"`:
				ms.stats.Images++
				if nested {
					ms.toolImages++
				}
			case `"thinking"`:
				ms.stats.Thinking++
			case `"redacted_thinking"`:
				ms.stats.Redacted++
			}
			return nil
		case "signature":
			err := s.value(depth + 1)
			if s.i-start > 2 && s.b[start] == '"' {
				ms.stats.Signed++
			}
			return err
		case "content":
			var err error
			if s.more() && s.b[s.i] == '[' {
				err = s.arrayEach(depth+1, func() error { return s.block(depth+2, ms, true) })
			} else {
				err = s.value(depth + 1)
			}
			if err != nil {
				return err
			}
			c := s.b[start:s.i]
			ms.stats.MaxToolContent = max(ms.stats.MaxToolContent, len(c))
			if mentionsSaved(c) {
				ms.saved++
			}
			return nil
		}
		return s.value(depth + 1)
	})
}
