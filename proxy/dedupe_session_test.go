package proxy

import (
	"fmt"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
)

// An agent that reads the same 40 KB file five times sends it five times; the proxy forwards it
// once, the older copies folded into notes naming the newest, every tool_use still paired.
func TestDuplicateReadsAreForwardedOnce(t *testing.T) {
	f := newFixture(t, Config{})
	file := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 600) // 40 KB
	msgs := []string{`{"role":"user","content":"Look at server.go"}`}
	for i := range 5 {
		id := fmt.Sprintf("toolu_read_%d", i)
		msgs = append(msgs,
			`{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"Read","input":{"file_path":"server.go"}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+string(anthropic.Quote(file))+`}]}`)
	}
	msgs = append(msgs, `{"role":"assistant","content":"Read it."}`, `{"role":"user","content":"Now fix it."}`)
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[` + strings.Join(msgs, ",") + `]}`
	resp := f.post(t, "/v1/messages", body)
	readAll(t, resp.Body)
	resp.Body.Close()
	got := string(f.up.LastRequest().Body)
	if n := strings.Count(got, "func handler"); n != 600 {
		t.Errorf("the file's lines appear %d times upstream; want 600 (one copy)", n/600)
	}
	for i := range 5 {
		id := fmt.Sprintf("toolu_read_%d", i)
		if !strings.Contains(got, `"tool_use_id":"`+id+`"`) || !strings.Contains(got, `"id":"`+id+`"`) {
			t.Errorf("%s lost its pair", id)
		}
	}
	ex := f.obs.last(t)
	var folded int
	for _, st := range ex.Compaction {
		if st.Layer == string(compact.LayerDedupe) {
			for _, e := range st.Edits {
				if e.Kind == compact.EditResultFolded {
					folded++
				}
			}
		}
	}
	if folded != 4 {
		t.Errorf("ledger names %d folded results; want 4 (%+v)", folded, ex.Compaction)
	}
	t.Logf("received %d bytes, forwarded %d", len(body), len(got))
}
