package door

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"longhaul/app/recorder"
	"longhaul/store"
)

func TestDoorReplaysARecordedRequestAsReceived(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	ctx := context.Background()
	if _, err := f.st.AddAccount(ctx, store.Account{Label: "work", BaseURL: f.up.URL, Secret: "sk-ant-api03-replay-test-account-6060", Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	f.up.SetRecordBodies(true)
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"replay me"}]}`
	req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Beta", "context-1m-2025-08-07,interleaved-thinking-2025-05-14")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // test
	resp.Body.Close()
	id := resp.Header.Get("Longhaul-Request-Id")
	f.waitRecorded(t, id)

	status, out := f.do(t, http.MethodPost, "/longhaul/v1/history/"+id+"/replay", `{"noCompaction":true,"model":"claude-opus-4-1"}`)
	newID, _ := out["id"].(string)
	if status != http.StatusOK || newID == "" || newID == id || out["status"] != float64(200) {
		t.Fatalf("replay = %d %v; want the new exchange's id and its 200", status, out)
	}
	last := f.up.LastRequest()
	if got := string(last.Body); got != strings.Replace(body, "claude-sonnet-4-5", "claude-opus-4-1", 1) {
		t.Errorf("the upstream got %s; want the request as received under the other model", got)
	}
	// The history kept the headers that change what the request means, and the replay sent them.
	if got := last.Header.Get("Anthropic-Beta"); got != "context-1m-2025-08-07,interleaved-thinking-2025-05-14" {
		t.Errorf("the replay's anthropic-beta = %q; want the client's", got)
	}
	f.waitRecorded(t, newID)
	if status, out := f.do(t, http.MethodPost, "/longhaul/v1/history/lh_nosuch/replay", `{}`); status != http.StatusNotFound {
		t.Errorf("replay of an unknown id = %d %v; want 404", status, out)
	}
}

// A replay, made through the door as the UI makes it, is no traffic of the session it re-sent
// a request of: the session and the dashboard count it apart, with its cost.
func TestDoorReplayIsCountedApart(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	f.up.SetDefault(cachedReply())
	ids := recordThree(t, f) // alpha, beta, beta
	var before []store.Session
	f.getJSON(t, "/longhaul/v1/sessions", &before)

	status, out := f.do(t, http.MethodPost, "/longhaul/v1/history/"+ids[1]+"/replay", `{"noCompaction":true}`)
	replayID, _ := out["id"].(string)
	if status != http.StatusOK || replayID == "" {
		t.Fatalf("replay = %d %v", status, out)
	}
	f.waitRecorded(t, replayID)

	var sessions []store.Session
	f.getJSON(t, "/longhaul/v1/sessions", &sessions)
	if len(sessions) != 2 || sessions[0].ID != "beta" || sessions[0].Requests != 2 || sessions[0].Replays != 1 ||
		sessions[0].Cost == nil || before[0].Cost == nil || !near(sessions[0].Cost.Total, before[0].Cost.Total) || !sessions[0].LastSeen.Equal(before[0].LastSeen) {
		t.Errorf("sessions after a replay = %+v; want beta as before (2 requests, same cost and last seen) with 1 replay", sessions)
	}
	var stats store.Stats
	f.getJSON(t, "/longhaul/v1/stats?bucket=day", &stats)
	if stats.Total.Requests != 3 || stats.Replays.Requests != 1 || stats.Replays.Cost == nil || stats.Total.Cost == nil ||
		!near(stats.Replays.Cost.Total, stats.Total.Cost.Total/3) {
		t.Errorf("stats after a replay: total %+v, replays %+v; want 3 requests and 1 replay at one request's cost", stats.Total, stats.Replays)
	}
}
