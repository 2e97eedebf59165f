package anthropic_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// walk is one of the two walks under test: over a complete slice (raw.go) or over an arriving
// body (walkstream.go).
type walk struct {
	body     func() []byte
	object   func(i int, fn func(key []byte, vi int) (int, error)) (int, error)
	array    func(i int, fn func(vi int) (int, error)) (int, error)
	skip     func(i int) (int, error)
	finished func(end int, err error) error
}

func sliceWalk(b []byte) walk {
	return walk{
		body:   func() []byte { return b },
		object: func(i int, fn func([]byte, int) (int, error)) (int, error) { return anthropic.WalkObject(b, i, fn) },
		array:  func(i int, fn func(int) (int, error)) (int, error) { return anthropic.WalkArray(b, i, fn) },
		skip:   func(i int) (int, error) { return anthropic.SkipValue(b, i) },
		finished: func(end int, err error) error {
			if err == nil && len(bytes.TrimSpace(b[end:])) > 0 {
				return &anthropic.SyntaxError{Offset: end, Msg: "unexpected data after the top-level value"}
			}
			return err
		},
	}
}

func arrivingWalk(a *anthropic.Arriving) walk {
	return walk{body: a.Body, object: a.WalkObject, array: a.WalkArray, skip: a.SkipValue, finished: a.End}
}

// trace walks a top-level object into every object and array, writing each member's key and
// each value's span, so two walks that differ anywhere write different traces.
func trace(w walk) string {
	var out strings.Builder
	var value func(vi int) (int, error)
	value = func(vi int) (int, error) {
		b := w.body()
		var ve int
		var err error
		switch {
		case vi < len(b) && b[vi] == '{':
			ve, err = w.object(vi, func(k []byte, ki int) (int, error) {
				fmt.Fprintf(&out, "%s:", k)
				return value(ki)
			})
		case vi < len(b) && b[vi] == '[':
			ve, err = w.array(vi, value)
		default:
			ve, err = w.skip(vi)
		}
		if err == nil {
			fmt.Fprintf(&out, "[%d,%d) ", vi, ve)
		}
		return ve, err
	}
	end, err := w.object(0, func(k []byte, vi int) (int, error) {
		fmt.Fprintf(&out, "%s:", k)
		return value(vi)
	})
	fmt.Fprintf(&out, "end %d, %v", end, w.finished(end, err))
	return out.String()
}

func arrivals(body []byte) map[string]*anthropic.Arriving {
	buf := func() []byte { return make([]byte, len(body)) }
	return map[string]*anthropic.Arriving{
		"complete":         anthropic.Arrived(body),
		"one byte a read":  anthropic.NewArriving(iotest.OneByteReader(bytes.NewReader(body)), buf()),
		"halves":           anthropic.NewArriving(iotest.HalfReader(bytes.NewReader(body)), buf()),
		"data with EOF":    anthropic.NewArriving(iotest.DataErrReader(bytes.NewReader(body)), buf()),
		"4093-byte pieces": anthropic.NewArriving(anthropic.SplitReader(body, every(4093, len(body))), buf()),
	}
}

func every(step, n int) []int {
	var cuts []int
	for c := step; c < n; c += step {
		cuts = append(cuts, c)
	}
	return cuts
}

func TestArrivingWalksAsTheSliceWalk(t *testing.T) {
	bodies := map[string][]byte{"Claude Code request": proxytest.ClaudeCodeRequest(64<<10, true)}
	for i, s := range []string{
		``, `{}`, " { } \n", `{}x`, "{}\u00a0", `[]`, `{"a":1,"b":[true,false,null,-1.5e3,"s\"",{}],"c":{"d":[[]]}}`,
		`{"a":"\\\\\"\\"}`, `{"a":01}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":"x`, `{"a`,
		`{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
	} {
		bodies[fmt.Sprintf("edge %d %.30q", i, s)] = []byte(s)
	}
	for name, body := range bodies {
		for cut := 0; cut <= len(body); cut += max(1, len(body)/50) {
			b := body[:cut]
			want := trace(sliceWalk(b))
			for how, a := range arrivals(b) {
				if got := trace(arrivingWalk(a)); got != want {
					t.Errorf("%s cut at %d, %s:\n got %.300s\nwant %.300s", name, cut, how, got, want)
				}
			}
		}
	}
}

func TestArrivingBodyCutShortIsAReadError(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	for _, cut := range []int{0, 1, 20, len(body) - 1} {
		a := anthropic.NewArriving(bytes.NewReader(body[:cut]), make([]byte, len(body)))
		end, err := a.WalkObject(0, func(_ []byte, vi int) (int, error) { return a.SkipValue(vi) })
		err = a.End(end, err)
		if re, ok := err.(*anthropic.ReadError); !ok || re.Err != io.ErrUnexpectedEOF {
			t.Errorf("walk of the body cut at %d = %v; want a *ReadError of io.ErrUnexpectedEOF", cut, err)
		}
	}
	a := anthropic.NewArriving(bytes.NewReader(body[:10]), make([]byte, len(body)))
	if _, err := a.Rest(); err == nil {
		t.Errorf("Rest of a body cut short = nil; want a *ReadError")
	}
}

func FuzzArrivingWalk(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"d"}],"e":null}`), uint8(3))
	f.Add([]byte(`{"a":-0.5e+2 , "b" : [ ] } `), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, size uint8) {
		want := trace(sliceWalk(body))
		piece := 1 + int(size)%32
		a := anthropic.NewArriving(anthropic.SplitReader(body, every(piece, len(body))), make([]byte, len(body)))
		if got := trace(arrivingWalk(a)); got != want {
			t.Fatalf("walk of %q in %d-byte pieces:\n got %s\nwant %s", body, piece, got, want)
		}
	})
}
