package recall

import (
	"bytes"
	"fmt"
	"testing"
)

// end is the simplest Mark: a message end and nothing else.
type end int

func (e end) End() int { return int(e) }

// body is a request of n messages of 10 KiB each after a 100-byte head, with the ends of its
// messages; tag makes its head (everything before the first message) its own.
func body(tag string, n int) ([]byte, []end) {
	b := append(bytes.Repeat([]byte{'h'}, 100-len(tag)), tag...)
	var ends []end
	for i := range n {
		b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, 10<<10)...)
		ends = append(ends, end(len(b)))
	}
	return b, ends
}

func entry(tag string, b []byte, ends []end, released map[string]int) *Entry[end, string] {
	return &Entry[end, string]{Tag: tag, Body: b, Start: 100, Marks: ends, Info: "info of " + tag, Release: func() { released[tag]++ }}
}

func all(int) bool { return true }

func TestMatchTakesTheLastEqualMessage(t *testing.T) {
	var m Memory[end, string]
	released := map[string]int{}
	prev, ends := body("s", 5)
	m.Remember(entry("prev", prev, ends, released), "")

	next, _ := body("s", 7) // two more messages
	next[ends[3]+5] = 'X'   // the fifth message differs
	var first []Found[end, string]
	f, ok := m.Match(next, 100, all, func(f Found[end, string]) { first = append(first, f) })
	if !ok || f.Tag != "prev" || f.Shared != int(ends[3]) || len(f.Marks) != 4 || f.Info != "info of prev" {
		t.Fatalf("found %+v (ok %v); want prev through its fourth message", f, ok)
	}
	if len(first) != 1 || first[0].Shared != int(ends[0]) {
		t.Fatalf("onFirst called %d times (%+v); want once, at the first message's end", len(first), first)
	}
	f.Marks = append(f.Marks, 99) // the copy is the caller's
	if f2, _ := m.Match(next, 100, all, nil); len(f2.Marks) != 4 {
		t.Fatalf("the entry's marks changed with the caller's copy: %v", f2.Marks)
	}

	other, _ := body("t", 7) // another head
	if f, ok := m.Match(other, 100, all, nil); ok {
		t.Fatalf("a body with another head matched %+v", f)
	}
	if f, ok := m.Match(next, 90, all, nil); ok {
		t.Fatalf("a body whose first message starts elsewhere matched %+v", f)
	}
}

func TestMatchWaitsForWhatHasArrived(t *testing.T) {
	var m Memory[end, string]
	prev, ends := body("s", 5)
	m.Remember(entry("prev", prev, ends, map[string]int{}), "")
	next, _ := body("s", 6)
	arrived := int(ends[2]) + 10 // the body ends there for good (a client that hung up)
	f, ok := m.Match(next, 100, func(n int) bool { return n <= arrived }, nil)
	if !ok || f.Shared != int(ends[2]) {
		t.Fatalf("found %+v (ok %v); want the messages that arrived whole", f, ok)
	}
}

func TestRememberBoundsAndReleasesEachBodyOnce(t *testing.T) {
	var m Memory[end, string]
	released := map[string]int{}
	for i := range MaxEntries + 3 {
		b, ends := body(fmt.Sprint(i), 3)
		m.Remember(entry(fmt.Sprint(i), b, ends, released), "")
	}
	if m.Len() != MaxEntries || len(released) != 3 || released["0"] != 1 || released["2"] != 1 {
		t.Fatalf("%d kept, released %v; want %d kept and the 3 oldest released", m.Len(), released, MaxEntries)
	}
	// A next turn takes the place of the body it repeats.
	b, ends := body("5", 4)
	m.Remember(entry("5 next", b, ends, released), "5")
	if m.Len() != MaxEntries || released["5"] != 1 {
		t.Fatalf("%d kept, released %v; want the repeated body replaced", m.Len(), released)
	}
	m.Remember(entry("no marks", b, nil, released), "")
	huge := bytes.Repeat([]byte{'h'}, maxBytes/2+1)
	m.Remember(entry("huge", huge, []end{200}, released), "")
	if released["no marks"] != 1 || released["huge"] != 1 {
		t.Fatalf("released %v; want a body without marks and one over half the bound released at once", released)
	}
	m.Forget()
	if m.Len() != 0 {
		t.Fatalf("%d entries after Forget", m.Len())
	}
	for tag, n := range released {
		if n != 1 {
			t.Errorf("%s released %d times; want once", tag, n)
		}
	}
	if len(released) != MaxEntries+3+1+2 {
		t.Errorf("%d bodies released; want every one of the %d", len(released), MaxEntries+3+1+2)
	}
}

func TestBytesBoundEvicts(t *testing.T) {
	var m Memory[end, string]
	released := map[string]int{}
	for i := range 3 {
		b := bytes.Repeat([]byte{byte('a' + i)}, maxBytes/2-1000)
		m.Remember(entry(fmt.Sprint(i), b, []end{200}, released), "")
	}
	if m.Len() != 2 || released["0"] != 1 {
		t.Fatalf("%d kept, released %v; want the oldest evicted past %d bytes", m.Len(), released, maxBytes)
	}
}

// A match reads a remembered body while it compares: an entry evicted meanwhile is released
// once the match is done with it, not before.
func TestAMatchHoldsItsEntries(t *testing.T) {
	var m Memory[end, string]
	released := map[string]int{}
	prev, ends := body("s", 3)
	m.Remember(entry("prev", prev, ends, released), "")
	next, _ := body("s", 4)
	during := -1
	f, ok := m.Match(next, 100, all, func(Found[end, string]) {
		m.Forget()
		during = released["prev"]
	})
	if !ok || f.Tag != "prev" || during != 0 || released["prev"] != 1 {
		t.Fatalf("found %+v (ok %v); released %d times during the match, %d after; want 0 then 1", f, ok, during, released["prev"])
	}
}

func TestEnds(t *testing.T) {
	if got := Ends([]end{10, 25, 40}); fmt.Sprint(got) != "[10 25 40]" {
		t.Fatalf("Ends = %v", got)
	}
}
