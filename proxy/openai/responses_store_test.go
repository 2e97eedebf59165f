package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func conv(texts ...string) ResponsesConversation {
	var c ResponsesConversation
	for _, t := range texts {
		c.Messages = append(c.Messages, json.RawMessage(fmt.Sprintf(`{"role":"user","content":%q}`, t)))
	}
	return c
}

func TestResponsesStoreEvictsLeastRecentlyUsed(t *testing.T) {
	s := NewResponsesStore(ResponsesStoreOptions{MaxEntries: 3})
	for i := range 3 {
		s.Put("s", fmt.Sprintf("resp_%d", i), conv(fmt.Sprint(i)))
	}
	if _, ok := s.Get("s", "resp_0"); !ok { // resp_0 is now the most recently used
		t.Fatal("resp_0 missing before any eviction")
	}
	s.Put("s", "resp_3", conv("3"))
	if s.Len() != 3 {
		t.Errorf("Len() = %d; want 3", s.Len())
	}
	for id, want := range map[string]bool{"resp_0": true, "resp_1": false, "resp_2": true, "resp_3": true} {
		if _, ok := s.Get("s", id); ok != want {
			t.Errorf("Get(%s) found = %v; want %v", id, ok, want)
		}
	}
}

func TestResponsesStoreExpiresAfterTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	s := NewResponsesStore(ResponsesStoreOptions{TTL: time.Minute, Now: clock.Now})
	s.Put("s", "resp_a", conv("a"))
	s.Put("s", "resp_b", conv("b"))

	clock.Advance(50 * time.Second)
	if _, ok := s.Get("s", "resp_a"); !ok { // a use renews resp_a's time to live
		t.Fatal("resp_a expired before its TTL")
	}
	clock.Advance(20 * time.Second) // resp_b is 70 s old, resp_a 20 s since its use
	if _, ok := s.Get("s", "resp_b"); ok {
		t.Error("resp_b found after its TTL")
	}
	if s.Len() != 1 {
		t.Errorf("Len() = %d after an expired Get; want 1 (the expired entry dropped)", s.Len())
	}
	if got, ok := s.Get("s", "resp_a"); !ok || !reflect.DeepEqual(got, conv("a")) {
		t.Errorf("Get(resp_a) = %v, %v; want its conversation", got, ok)
	}
	clock.Advance(time.Minute)
	if _, ok := s.Get("s", "resp_a"); ok {
		t.Error("resp_a found a TTL after its last use")
	}
}

func TestResponsesStoreKeepsSessionsApart(t *testing.T) {
	s := NewResponsesStore(ResponsesStoreOptions{})
	s.Put("alice", "resp_1", conv("alice's"))
	if _, ok := s.Get("bob", "resp_1"); ok {
		t.Error("bob read alice's response")
	}
	if _, ok := s.Lookup("bob")("resp_1"); ok {
		t.Error("bob's Lookup read alice's response")
	}
	if got, ok := s.Lookup("alice")("resp_1"); !ok || !reflect.DeepEqual(got, conv("alice's")) {
		t.Errorf("alice's Lookup = %v, %v", got, ok)
	}
}

// A two-turn Responses session with previous_response_id: the second request
// names the first response and carries only its new items; the translation
// sends Messages the whole conversation.
func TestResponsesPreviousResponseIDExpandsTheConversation(t *testing.T) {
	store := NewResponsesStore(ResponsesStoreOptions{})
	opts := ResponsesRequestOptions{Previous: store.Lookup("sess")}

	first := `{"model":"claude-sonnet-4-5","instructions":"Be brief.","input":"List files.","tools":[{"type":"function","name":"ls"}]}`
	req1, err := ResponsesRequestToAnthropic([]byte(first), opts)
	if err != nil {
		t.Fatal(err)
	}
	reply1 := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":5}}`
	c, err := ResponsesConversationAfter(req1, []byte(reply1))
	if err != nil {
		t.Fatal(err)
	}
	store.Put("sess", "resp_1", c)

	second := `{"model":"claude-sonnet-4-5","instructions":"Be brief.","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"toolu_1","output":"a.go"}],"tools":[{"type":"function","name":"ls"}]}`
	req2, err := ResponsesRequestToAnthropic([]byte(second), opts)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		System   string
		Messages []json.RawMessage
	}
	if err := json.Unmarshal(req2, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"role":"user","content":"List files."}`,
		`{"role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go"}]}`,
	}
	if len(got.Messages) != len(want) {
		t.Fatalf("messages = %s; want %d", req2, len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(canonicalJSON(t, got.Messages[i]), canonicalJSON(t, []byte(want[i]))) {
			t.Errorf("message %d = %s; want %s", i, got.Messages[i], want[i])
		}
	}
	if got.System != "Be brief." {
		t.Errorf("system = %q; want the new request's instructions", got.System)
	}

	// Another session cannot continue it.
	_, err = ResponsesRequestToAnthropic([]byte(second), ResponsesRequestOptions{Previous: store.Lookup("other")})
	var re *ResponsesRequestError
	if !errors.As(err, &re) || re.Code != "previous_response_not_found" || re.Status != 400 {
		t.Errorf("other session: err = %v; want 400 previous_response_not_found", err)
	}
}

// A stored conversation that went through a Responses upstream holds OpenAI
// reasoning; continuing it toward Anthropic drops that (and a turn left
// empty), continuing it toward OpenAI keeps it.
func TestResponsesPreviousConversationDropsOpenAIReasoningForAnthropic(t *testing.T) {
	store := NewResponsesStore(ResponsesStoreOptions{})
	store.Put("s", "resp_1", ResponsesConversation{Messages: []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"q"}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"openai-reasoning:rs_1:gAAAAsecret"}]}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"openai-reasoning:rs_2:gAAAAsecret"},{"type":"text","text":"a"}]}`),
	}})
	body := []byte(`{"model":"m","previous_response_id":"resp_1","input":"more"}`)
	toClaude, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{Previous: store.Lookup("s")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(toClaude), "gAAAAsecret") || !strings.Contains(string(toClaude), `{"role":"assistant","content":[{"type":"text","text":"a"}]}`) {
		t.Errorf("toward Anthropic: %s", toClaude)
	}
	var got struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(toClaude, &got); err != nil || len(got.Messages) != 3 {
		t.Errorf("toward Anthropic: %d messages (%v); want 3 (the reasoning-only turn dropped)", len(got.Messages), err)
	}
	toOpenAI, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{Previous: store.Lookup("s"), ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(toOpenAI), "gAAAAsecret") != 2 {
		t.Errorf("toward OpenAI the reasoning must stay: %s", toOpenAI)
	}
}

func TestResponsesConversationAfterRefusesAReplyWithoutContent(t *testing.T) {
	if _, err := ResponsesConversationAfter([]byte(`{"model":"m","messages":[]}`), []byte(`{"type":"error"}`)); err == nil {
		t.Error("want an error for a reply without content")
	}
}

func TestResponsesStoreBoundsBytes(t *testing.T) {
	big := ResponsesConversation{Messages: []json.RawMessage{json.RawMessage(`{"role":"user","content":"` + strings.Repeat("x", 1000) + `"}`)}}
	s := NewResponsesStore(ResponsesStoreOptions{MaxBytes: 2500})
	for _, id := range []string{"resp_1", "resp_2", "resp_3"} {
		s.Put("s", id, big)
	}
	if _, ok := s.Get("s", "resp_1"); ok || s.Len() != 2 {
		t.Errorf("after 3 × ~1 KB in a 2.5 KB store: resp_1 kept = %v, Len() = %d; want the oldest evicted, 2 left", ok, s.Len())
	}
	// Replacing an id does not count its old size twice.
	s.Put("s", "resp_3", big)
	if s.Len() != 2 {
		t.Errorf("Len() = %d after replacing resp_3; want 2", s.Len())
	}
	// One entry over the bound on its own is still kept: the next request names it.
	huge := ResponsesConversation{Messages: []json.RawMessage{json.RawMessage(`"` + strings.Repeat("y", 5000) + `"`)}}
	s.Put("s", "resp_4", huge)
	if _, ok := s.Get("s", "resp_4"); !ok || s.Len() != 1 {
		t.Errorf("oversized newest entry: kept = %v, Len() = %d; want kept alone", ok, s.Len())
	}
}
