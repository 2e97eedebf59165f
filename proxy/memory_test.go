package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// A request of more messages than the Messages API takes is refused by the peek, in the
// client's protocol, before any of it is translated or sent: each protocol counts what becomes
// messages (Chat messages, Responses input items, Gemini contents).
func TestTooManyMessagesRefusedInTheClientsShape(t *testing.T) {
	f := newFixture(t, Config{})
	for p, mp := range manyMessageProtocols {
		t.Run(mp.name, func(t *testing.T) {
			resp := f.post(t, mp.path, string(manyMessagesBody(p, anthropic.MaxMessages+1, 1, 0)), "Content-Type", "application/json")
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d; want 400: %.300s", resp.StatusCode, body)
			}
			var reply struct {
				Type  string `json:"type"`
				Error struct {
					Type, Message, Status string
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &reply); err != nil {
				t.Fatalf("reply %q: %v", body, err)
			}
			wantShape := map[string]bool{
				"messages":  reply.Type == "error" && reply.Error.Type == anthropic.InvalidRequestError,
				"chat":      reply.Error.Type == anthropic.InvalidRequestError,
				"responses": reply.Error.Type == anthropic.InvalidRequestError,
				"gemini":    reply.Error.Status == "INVALID_ARGUMENT",
			}[mp.name]
			if !wantShape || reply.Error.Message == "" {
				t.Errorf("reply %s is not a %s invalid-request error", body, mp.name)
			}
		})
	}
	if n := len(f.up.Requests()); n != 0 {
		t.Errorf("the upstream received %d requests; want none", n)
	}
}

// maxPeakPerBodyByte bounds what one request may take: its child's peak resident set above
// idle, per byte of body.
const maxPeakPerBodyByte = 4

// TestPeakRSSPerRequest sends one request of each shape that costs the most per body byte to a
// proxy of its own in a child process (TestBenchChild, kind longhaul-default: the default
// settings, no client key, one Anthropic account in front of an upstream here that reads and
// discards), and checks the child's peak resident set (VmHWM) above what it had idle: within
// maxPeakPerBodyByte times the body. A 29 MB body of 900k messages in every protocol (the
// peek stops them at anthropic.MaxMessages), and the costliest body per byte that the proxy
// takes whole and that is not mostly its own overhead: 100k messages in 28 MB, compacted by a
// Layer-3 summary. Memory, not time: a busy machine changes
// nothing here.
func TestPeakRSSPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is several times the heap")
	}
	if testing.Short() {
		t.Skip("starts a proxy process per shape")
	}
	up := discardUpstream(proxytest.TextMessage(proxytest.DefaultModel, "ok").JSON())
	defer up.Close()
	type run struct{ shape, protocol int }
	var runs []run
	for p := range manyMessageProtocols {
		runs = append(runs, run{0, p}) // 900k-tiny
	}
	runs = append(runs, run{3, 0}) // 100k-260B, Messages
	for _, r := range runs {
		shape, mp := manyMessageShapes[r.shape], manyMessageProtocols[r.protocol]
		t.Run(shape.name+"/"+mp.name, func(t *testing.T) {
			body := shape.body(r.protocol)
			child := startBenchChild(t, "longhaul-default", up.URL)
			defer child.stop(t)
			idle, _, err := child.memMB()
			if err != nil {
				t.Fatal(err)
			}
			resp, err := postTo(http.DefaultClient, child.base+mp.path, body)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != shape.status {
				t.Fatalf("status %d, %v; want %d: %.200s", resp.StatusCode, err, shape.status, reply)
			}
			peak, _, err := child.memMB()
			if err != nil {
				t.Fatal(err)
			}
			bodyMB := float64(len(body)) / (1 << 20)
			t.Logf("%.1f MiB body: idle %.0f MiB, peak %.0f MiB: %.1fx the body above idle", bodyMB, idle, peak, (peak-idle)/bodyMB)
			if peak-idle > maxPeakPerBodyByte*bodyMB {
				t.Errorf("peak RSS %.0f MiB above idle for a %.1f MiB body; want at most %dx the body (%.0f MiB)",
					peak-idle, bodyMB, maxPeakPerBodyByte, maxPeakPerBodyByte*bodyMB)
			}
		})
	}
}
