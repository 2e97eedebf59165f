package door

import (
	"strconv"
	"strings"
	"testing"

	"longhaul/app/recorder"
)

func TestAPIDoorSettingsAccountsAndErrors(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	const l2 = "proxy.experimental.context_compression_threshold_l2"

	if code, v := f.do(t, "GET", "/longhaul/v1/settings", ""); code != 200 || v["settings"] == nil || v["defaults"] == nil {
		t.Fatalf("GET settings = %d %v", code, v)
	}
	code, v := f.do(t, "PUT", "/longhaul/v1/settings", `{"values": {"`+l2+`": 0.1}}`)
	fields, _ := v["error"].(map[string]any)["fields"].([]any)
	if code != 400 || len(fields) != 1 || fields[0].(map[string]any)["field"] != l2 {
		t.Fatalf("PUT L2=0.1 = %d %v; want 400 with the field %s", code, v, l2)
	}
	if code, v = f.do(t, "PUT", "/longhaul/v1/settings", `{"values": {"`+l2+`": 0.6, "history.max_bytes": 2147483648}}`); code != 200 {
		t.Fatalf("PUT L2=0.6 = %d %v", code, v)
	}
	if got := f.srv.Config().Compaction.ThresholdL2; got != 0.6 {
		t.Errorf("proxy L2 = %v; want 0.6", got)
	}
	if code, v = f.do(t, "POST", "/longhaul/v1/settings/reset", `{"keys": ["`+l2+`"]}`); code != 200 {
		t.Fatalf("reset = %d %v", code, v)
	}

	code, v = f.do(t, "POST", "/longhaul/v1/accounts", `{"label": "w", "baseURL": "https://api.anthropic.com", "key": ""}`)
	if code != 400 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "key") {
		t.Errorf("add without key = %d %v; want 400 naming key", code, v)
	}
	code, v = f.do(t, "POST", "/longhaul/v1/accounts", `{"label": "w", "baseURL": "https://api.anthropic.com", "key": "sk-ant-api03-abcdefghijklmnop1234"}`)
	if code != 200 || v["key"] != "sk-…1234" {
		t.Fatalf("add = %d %v", code, v)
	}
	id := int(v["id"].(float64))
	path := "/longhaul/v1/accounts/" + strconv.Itoa(id)
	if code, v = f.do(t, "POST", path+"/enabled", `{"enabled": false}`); code != 200 || v["enabled"] != false {
		t.Errorf("disable = %d %v", code, v)
	}
	if code, v = f.do(t, "PUT", path, `{"label": "x", "baseURL": "https://api.anthropic.com"}`); code != 200 || v["label"] != "x" {
		t.Errorf("edit = %d %v", code, v)
	}
	if code, _ = f.do(t, "DELETE", path, ""); code != 200 {
		t.Errorf("delete = %d", code)
	}
	if code, _ = f.do(t, "DELETE", path, ""); code != 404 {
		t.Errorf("second delete = %d; want 404", code)
	}
	if code, _ = f.do(t, "GET", "/longhaul/v1/clients/claude-code", ""); code != 200 {
		t.Errorf("claude-code status = %d", code)
	}
	if code, v = f.do(t, "GET", "/longhaul/v1/stats/series?by=model&bucket=day", ""); code != 200 || v["by"] != "model" {
		t.Errorf("stats series = %d %v", code, v)
	}
	if code, _ = f.do(t, "GET", "/longhaul/v1/stats/series?by=nope", ""); code != 400 {
		t.Errorf("stats series by=nope = %d; want 400", code)
	}
	if code, v = f.do(t, "GET", "/longhaul/v1/update", ""); code != 200 || v["state"] != "off" {
		t.Errorf("update status = %d %v; want 200, off (no release source in tests)", code, v)
	}
	if code, _ = f.do(t, "POST", "/longhaul/v1/update/check", "{}"); code != 409 {
		t.Errorf("update check with updates off = %d; want 409", code)
	}
	// An id that names no account (ids are positive numbers).
	if code, v = f.do(t, "PUT", "/longhaul/v1/accounts/x", `{}`); code != 404 || v["error"] == nil {
		t.Errorf("PUT accounts/x = %d %v; want 404 in the door's error shape", code, v)
	}
	if code, v = f.do(t, "PUT", "/longhaul/v1/settings", `{"values": `); code != 400 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "malformed JSON") {
		t.Errorf("PUT settings with a broken body = %d %v; want 400 malformed JSON", code, v)
	}
}
