package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"longhaul/app/internal/releasetest"
)

func TestUpdateDoorRoutes(t *testing.T) {
	a, _ := newTestApp(t) // version "test", no release source: updates off
	mux := http.NewServeMux()
	a.updateRoutes(mux)
	door := httptest.NewServer(mux)
	defer door.Close()
	call := func(method, path string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, door.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, v
	}
	code, st := call("GET", "/longhaul/v1/update")
	if code != http.StatusOK || st["state"] != UpdateOff || !strings.Contains(st["message"].(string), "no release source") {
		t.Errorf("GET update = %d %v; want 200, off, no release source", code, st)
	}
	code, body := call("POST", "/longhaul/v1/update/check")
	if msg, _ := body["error"].(map[string]any); code != http.StatusConflict || !strings.Contains(msg["message"].(string), "no release source") {
		t.Errorf("POST update/check = %d %v; want 409 saying there is no release source", code, body)
	}

	// With a source: the check answers with the outcome.
	gh := &releasetest.Server{Owner: "acme", Repo: "longhaul"}
	gh.Publish("v1.0.0")
	rel := httptest.NewServer(gh)
	defer rel.Close()
	a.updates = newUpdater(UpdateConfig{Repo: "acme/longhaul", APIURL: rel.URL + "/api/v3/"}, "1.0.0", slog.New(slog.DiscardHandler), nil)
	code, st = call("POST", "/longhaul/v1/update/check")
	if code != http.StatusOK || st["state"] != UpdateUpToDate {
		t.Errorf("POST update/check = %d %v; want 200, up to date", code, st)
	}
}
