package door

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"longhaul/app"
	"longhaul/app/internal/releasetest"
	"longhaul/app/recorder"
	"longhaul/app/update"
)

func TestUpdateRoutes(t *testing.T) {
	off := newFixture(t, recorder.Options{}) // version "test", no release source: updates off
	code, st := off.do(t, "GET", "/longhaul/v1/update", "")
	if code != http.StatusOK || st["state"] != update.Off || !strings.Contains(st["message"].(string), "no release source") {
		t.Errorf("GET update = %d %v; want 200, off, no release source", code, st)
	}
	code, body := off.do(t, "POST", "/longhaul/v1/update/check", "{}")
	if msg, _ := body["error"].(map[string]any); code != http.StatusConflict || !strings.Contains(msg["message"].(string), "no release source") {
		t.Errorf("POST update/check = %d %v; want 409 saying there is no release source", code, body)
	}

	// With a source. The automatic checks are off (app.check_updates), so that "check now"
	// is the only one: a check already running would answer with its current state.
	withSource := func(api string) func(*app.Deps) {
		return func(d *app.Deps) {
			if _, err := d.Store.SetSetting(context.Background(), "app.check_updates", "false"); err != nil {
				t.Fatal(err)
			}
			d.Version, d.Update = "1.0.0", update.Config{Repo: "acme/longhaul", APIURL: api}
		}
	}
	gh := &releasetest.Server{Owner: "acme", Repo: "longhaul"}
	gh.Publish("v1.0.0")
	rel := httptest.NewServer(gh)
	defer rel.Close()
	on := newFixture(t, recorder.Options{}, withSource(rel.URL+"/api/v3/"))
	if code, st = on.do(t, "POST", "/longhaul/v1/update/check", "{}"); code != http.StatusOK || st["state"] != update.UpToDate {
		t.Errorf("POST update/check = %d %v; want 200, up to date", code, st)
	}

	// A release source that fails: 502, the error saying why.
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
	}))
	defer broken.Close()
	failing := newFixture(t, recorder.Options{}, withSource(broken.URL+"/api/v3/"))
	if code, body = failing.do(t, "POST", "/longhaul/v1/update/check", "{}"); code != http.StatusBadGateway || body["error"] == nil {
		t.Errorf("POST update/check with a failing source = %d %v; want 502 with the error", code, body)
	}
}
