package door

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"longhaul/app"
	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
	"longhaul/store"
)

// recordThree sends three requests (sessions alpha, beta, beta; streams and not) through the
// proxy and waits until history holds them, finished.
func recordThree(t *testing.T, f *fixture) []string {
	t.Helper()
	if _, err := f.st.AddAccount(context.Background(), store.Account{Label: "work", BaseURL: f.up.URL, Secret: "sk-ant-api03-UPSTREAMaccountKEY000000000-wxyz", Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, sess := range []string{"alpha", "beta", "beta"} {
		resp := f.post(t, messagesBody(i%2 == 0, sess))
		ids = append(ids, resp.Header.Get("Longhaul-Request-Id"))
	}
	for _, id := range ids {
		f.waitRecorded(t, id)
	}
	return ids
}

func TestDoorHistoryLive(t *testing.T) {
	f := newFixture(t, recorder.Options{LiveEvery: 20 * time.Millisecond})
	// The live feed first, so it sees the requests; its context turns a hang into a failed read.
	ctx, cancel := context.WithTimeout(context.Background(), wait.Timeout)
	defer cancel()
	liveReq, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.door.URL+"/longhaul/v1/history/live", nil)
	liveResp, err := http.DefaultClient.Do(liveReq)
	if err != nil {
		t.Fatal(err)
	}
	defer liveResp.Body.Close()
	ids := recordThree(t, f)
	live := bufio.NewReader(liveResp.Body)
	seen := map[string]string{}
	for len(seen) < 3 || seen[ids[2]] != "finished" {
		line, err := live.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if name, ok := strings.CutPrefix(line, "event: "); ok && strings.TrimSpace(name) != "exchanges" {
			t.Fatalf("live stream sent event %q; want only exchanges", name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var batch []store.Exchange
			if err := json.Unmarshal([]byte(data), &batch); err != nil {
				t.Fatalf("live batch %q: %v", data, err)
			}
			for _, e := range batch {
				seen[e.ID] = e.State
			}
		}
	}
}

func TestDoorHistoryRoutes(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	ids := recordThree(t, f)
	var page store.HistoryPage
	if code := f.getJSON(t, "/longhaul/v1/history?session=beta&limit=1", &page); code != 200 || len(page.Exchanges) != 1 || page.Exchanges[0].ID != ids[2] || page.Next == 0 {
		t.Errorf("list = %d %+v; want the newest beta exchange and a cursor", code, page)
	}
	var next store.HistoryPage
	f.getJSON(t, "/longhaul/v1/history?session=beta&limit=1&before="+strconv.FormatInt(page.Next, 10), &next)
	if len(next.Exchanges) != 1 || next.Exchanges[0].ID != ids[1] || next.Next != 0 {
		t.Errorf("second page = %+v; want the older beta exchange, last page", next)
	}
	var detail store.Exchange
	if code := f.getJSON(t, "/longhaul/v1/history/"+ids[0], &detail); code != 200 || detail.Bodies == nil || len(detail.Attempts) != 1 {
		t.Errorf("detail = %d %+v; want bodies and attempts", code, detail)
	}
	if code := f.getJSON(t, "/longhaul/v1/history/lh_nope", nil); code != 404 {
		t.Errorf("detail of an unknown id = %d; want 404", code)
	}
	if code := f.getJSON(t, "/longhaul/v1/history?status=teapot", nil); code != 400 {
		t.Errorf("bad status filter = %d; want 400", code)
	}
	var sessions []store.Session
	if f.getJSON(t, "/longhaul/v1/sessions", &sessions); len(sessions) != 2 || sessions[0].ID != "beta" || sessions[0].Requests != 2 || sessions[0].BoundAccount != "work" {
		t.Errorf("sessions = %+v; want beta (2 requests) then alpha", sessions)
	}
	var stats store.Stats
	if f.getJSON(t, "/longhaul/v1/stats?bucket=day", &stats); stats.Total.Requests != 3 || len(stats.ByAccount) != 1 || stats.ByAccount[0].Key != "work" {
		t.Errorf("stats = %+v; want 3 requests on account work", stats)
	}
	for _, path := range []string{"/longhaul/v1/pressure", "/longhaul/v1/sessions/latest/pressure", "/longhaul/v1/sessions/beta/pressure"} {
		var p app.Pressure
		if code := f.getJSON(t, path, &p); code != 200 || p.Session != "beta" || p.Limit != 200000 || p.NextLayer != "Layer-1" || p.NextThreshold != 0.4 || p.Account != "work" || !p.Bound {
			t.Errorf("GET %s = %d %+v; want session beta, limit 200000, next Layer-1 at 0.4, bound to work", path, code, p)
		}
	}
	if code := f.getJSON(t, "/longhaul/v1/sessions/nobody/pressure", nil); code != 404 {
		t.Errorf("pressure of an unknown session = %d; want 404", code)
	}
	var status app.HistoryStatus
	if f.getJSON(t, "/longhaul/v1/history/status", &status); status.Dropped != 0 || status.Written < 3 || status.DatabaseBytes == 0 {
		t.Errorf("history status = %+v; want no drops, ≥ 3 written, a size", status)
	}
	resp, err := http.Get(f.door.URL + "/longhaul/v1/history/export?session=beta")
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if lines := strings.Split(strings.TrimSpace(string(exported)), "\n"); len(lines) != 2 || !strings.Contains(lines[0], ids[1]) {
		t.Errorf("export = %q; want 2 lines, oldest first", exported)
	}
	if resp.Header.Get("Content-Disposition") == "" {
		t.Errorf("export headers = %v; want a download", resp.Header)
	}
	if code, v := f.do(t, "GET", "/longhaul/v1/history/export?status=teapot", ""); code != 400 || v["error"] == nil {
		t.Errorf("export with a bad filter = %d %v; want the door's 400 error, not a download", code, v)
	}
	if code, _ := f.do(t, "GET", "/longhaul/v1/stats?bucket=week", ""); code != 400 {
		t.Errorf("stats with bucket=week = %d; want 400", code)
	}
}
