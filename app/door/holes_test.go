package door

import (
	"context"
	"net/http"
	"testing"

	"longhaul/app/recorder"
)

// Issue 11, item 2: the UI's own port answered the API without the client key the proxy's
// port asks for. It failed on the code before the guard, and passes with it.
func TestHoleUIPortRequiresTheClientKey(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	if _, err := f.app.Facades(context.Background).Settings.Set(map[string]any{"proxy.client_key": "lh-local-key-1234"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/longhaul/v1/settings", "/longhaul/v1/accounts", "/longhaul/v1/status", "/longhaul/v1/events"} {
		resp, err := http.Get(f.door.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the key = %d; want 401", path, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", f.door.URL+"/longhaul/v1/settings", nil)
	req.Header.Set("X-Api-Key", "lh-local-key-1234")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /longhaul/v1/settings with the key = %d; want 200", resp.StatusCode)
	}
}
