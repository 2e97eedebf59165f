package anthropic

import (
	"bytes"
	"io"
)

// Arriving is a body walked while it arrives, for readers of other wire formats (the OpenAI
// and Gemini peeks in proxy/clientpeek.go): the walk of WalkObject, WalkArray and SkipValue
// (raw.go), the same checks in the same order with the same errors, except that where those
// stop at the end of the slice, Arriving reads more of the body first. So a peek needs no pass
// of its own after the body is in: it walks each read as it comes, as ReadAndPeek does for
// Messages.
//
// Offsets index Body(). A value's bytes are there once the walk has passed its end: fn may
// slice Body()[vi:ve] after SkipValue returned ve, never beyond what the walk has passed.
type Arriving struct{ s scanner }

// NewArriving walks a body read from r into buf, which is sized to the request's
// Content-Length.
func NewArriving(r io.Reader, buf []byte) *Arriving { return &Arriving{scanner{b: buf, r: r}} }

// Arrived walks a body that is already complete.
func Arrived(body []byte) *Arriving { return &Arriving{scanner{b: body, n: len(body)}} }

// Body is the body's buffer: what the walk has passed is in it, the rest may not have arrived.
func (a *Arriving) Body() []byte { return a.s.b }

// at reports whether b[i] has arrived, reading until it has; false past the end of input.
func (a *Arriving) at(i int) bool {
	for i >= a.s.n {
		if !a.s.fill() {
			return false
		}
	}
	return true
}

func (a *Arriving) skipWS(i int) int {
	for a.at(i) && (a.s.b[i] == ' ' || a.s.b[i] == '\n' || a.s.b[i] == '\r' || a.s.b[i] == '\t') {
		i++
	}
	return i
}

// stringEnd is stringEnd (swar.go) on what has arrived, resuming after each read where the
// last scan stopped (scanString is stateless), or -1 when the input ends first.
func (a *Arriving) stringEnd(start int) int {
	a.at(start) // the first bytes, so the first scan usually finds the end
	for i := start; ; {
		if end := scanString(a.s.b[:a.s.n], start, i); end >= 0 {
			return end
		}
		i = a.s.n
		if !a.s.fill() {
			return -1
		}
	}
}

// WalkObject is WalkObject (raw.go) on the arriving body.
func (a *Arriving) WalkObject(i int, fn func(key []byte, vi int) (int, error)) (int, error) {
	b := a.s.b
	i = a.skipWS(i)
	if !a.at(i) || b[i] != '{' {
		return 0, syntaxError(i, "expected an object")
	}
	i = a.skipWS(i + 1)
	if a.at(i) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if !a.at(i) || b[i] != '"' {
			return 0, syntaxError(i, "expected a string key")
		}
		ke := a.stringEnd(i + 1)
		if ke < 0 {
			return 0, syntaxError(a.s.n, "unterminated string")
		}
		key := b[i : ke+1]
		i = a.skipWS(ke + 1)
		if !a.at(i) || b[i] != ':' {
			return 0, syntaxError(i, "expected ':' after object key")
		}
		ve, err := fn(key, a.skipWS(i+1))
		if err != nil {
			return 0, err
		}
		i = a.skipWS(ve)
		if !a.at(i) {
			return 0, syntaxError(i, "unexpected end of JSON in object")
		}
		switch b[i] {
		case ',':
			i = a.skipWS(i + 1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxError(i, "expected ',' or '}' in object")
		}
	}
}

// WalkArray is WalkArray (raw.go) on the arriving body.
func (a *Arriving) WalkArray(i int, fn func(vi int) (int, error)) (int, error) {
	b := a.s.b
	i = a.skipWS(i)
	if !a.at(i) || b[i] != '[' {
		return 0, syntaxError(i, "expected an array")
	}
	i = a.skipWS(i + 1)
	if a.at(i) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := fn(i)
		if err != nil {
			return 0, err
		}
		i = a.skipWS(ve)
		if !a.at(i) {
			return 0, syntaxError(i, "unexpected end of JSON in array")
		}
		switch b[i] {
		case ',':
			i = a.skipWS(i + 1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxError(i, "expected ',' or ']' in array")
		}
	}
}

// SkipValue is SkipValue (raw.go) on the arriving body: the scanner's value, reading as it
// goes.
func (a *Arriving) SkipValue(i int) (int, error) {
	if a.at(i) && a.s.b[i] == '"' { // most values are strings
		if end := a.stringEnd(i + 1); end >= 0 {
			return end + 1, nil
		}
	}
	a.s.i = i
	if err := a.s.value(0); err != nil {
		return 0, err
	}
	return a.s.i, nil
}

// Has reports whether the first end bytes have arrived, reading until they have; false when the
// body ends (or fails) before.
func (a *Arriving) Has(end int) bool { return end <= 0 || a.at(end-1) }

// Rest reads the rest of the body and returns it whole; err is a *ReadError when the
// client's body failed or ended short.
func (a *Arriving) Rest() ([]byte, error) {
	for a.s.fill() {
	}
	if err := a.readFailure(); err != nil {
		return nil, err
	}
	return a.s.b, nil
}

// End finishes a walk of one top-level value that ended at end (walkErr its error, if it
// failed): it reads the rest of the body and checks that nothing but whitespace follows, as
// the walk over a slice in proxy/clientpeek.go's walkTop does. A body that failed or ended
// short is a *ReadError whatever the walk made of it (a truncated body is not malformed
// JSON); a walk that stopped at malformed JSON reads no further.
func (a *Arriving) End(end int, walkErr error) error {
	if walkErr != nil {
		if a.s.r == nil { // the input ended: the syntax error may only be the body cut short
			if err := a.readFailure(); err != nil {
				return err
			}
		}
		return walkErr
	}
	rest, err := a.Rest()
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest[end:])) > 0 {
		return &SyntaxError{Offset: end, Msg: "unexpected data after the top-level value"}
	}
	return nil
}

// readFailure is a *ReadError when reading the body failed, or (the reader at its end) the body
// is shorter than its buffer; nil otherwise.
func (a *Arriving) readFailure() error {
	switch {
	case a.s.readErr != nil:
		return &ReadError{a.s.readErr}
	case a.s.r == nil && a.s.n < len(a.s.b):
		return &ReadError{io.ErrUnexpectedEOF}
	}
	return nil
}
