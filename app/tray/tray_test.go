package tray

import (
	"testing"
	"time"
)

func TestTrayStatusLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lang  string
		st    State
		today int64
		want  string
	}{
		{"running", "en", State{Running: true, Address: "127.0.0.1:8045", Sessions: 2}, 12,
			"Listening on 127.0.0.1:8045 · 12 requests today · 2 active sessions"},
		{"singular", "en", State{Running: true, Address: "127.0.0.1:8045", Sessions: 1}, 1,
			"Listening on 127.0.0.1:8045 · 1 request today · 1 active session"},
		{"off", "en", State{Address: "127.0.0.1:8045"}, 0,
			"Proxy off · 0 requests today · 0 active sessions"},
		{"failed", "en", State{Address: "127.0.0.1:8045", Error: "port 8045 is in use"}, 3,
			"Proxy off: port 8045 is in use · 3 requests today · 0 active sessions"},
		{"Chinese", "zh-CN", State{Running: true, Address: "127.0.0.1:8045", Sessions: 1}, 12,
			"监听 127.0.0.1:8045 · 今日 12 个请求 · 1 个活动会话"},
		{"Chinese off", "zh-CN", State{Address: "127.0.0.1:8045"}, 0,
			"代理已关闭 · 今日 0 个请求 · 0 个活动会话"},
		{"unknown language reads English", "fr", State{Address: "127.0.0.1:8045"}, 0,
			"Proxy off · 0 requests today · 0 active sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textFor(tc.lang).statusLine(tc.st, tc.today); got != tc.want {
				t.Errorf("statusLine[%s](%+v, %d) = %q; want %q", tc.lang, tc.st, tc.today, got, tc.want)
			}
		})
	}
}

func TestTrayPressureLine(t *testing.T) {
	const session = "6d0b8f3e-1111-4222-8333-944455556666"
	for _, tc := range []struct {
		name  string
		lang  string
		p     Pressure
		want  string
		alert bool
	}{
		{"no active session", "en", Pressure{}, "No active session", false},
		{"below Layer 1", "en", Pressure{Session: session, Ratio: 0.12, NextLayer: 1, NextThreshold: 0.4},
			"Context 12% · next: Layer 1 at 40%", false},
		{"Layer 1 reached", "en", Pressure{Session: session, Ratio: 0.5, NextLayer: 2, NextThreshold: 0.55},
			"Context 50% · next: Layer 2 at 55%", false},
		{"Layer 2 reached changes the icon", "en", Pressure{Session: session, Ratio: 0.62, NextLayer: 3, NextThreshold: 0.7},
			"Context 62% · next: Layer 3 at 70%", true},
		{"every layer reached", "en", Pressure{Session: session, Ratio: 0.81},
			"Context 81% · every layer reached", true},
		{"a hair under a threshold does not read as reaching it", "en", Pressure{Session: session, Ratio: 0.6999, NextLayer: 3, NextThreshold: 0.7},
			"Context 69% · next: Layer 3 at 70%", true},
		{"a whole percent stays whole", "en", Pressure{Session: session, Ratio: 0.29, NextLayer: 1, NextThreshold: 0.4},
			"Context 29% · next: Layer 1 at 40%", false},
		{"Chinese", "zh-CN", Pressure{Session: session, Ratio: 0.62, NextLayer: 3, NextThreshold: 0.7},
			"上下文 62% · 下一层：第 3 层（70%）", true},
		{"Chinese, no active session", "zh-CN", Pressure{}, "没有活动会话", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textFor(tc.lang).pressureLine(tc.p); got != tc.want {
				t.Errorf("pressureLine[%s](%+v) = %q; want %q", tc.lang, tc.p, got, tc.want)
			}
			if got := tc.p.alert(); got != tc.alert {
				t.Errorf("(%+v).alert() = %v; want %v", tc.p, got, tc.alert)
			}
		})
	}
}

func TestDayCounterRestartsAtMidnight(t *testing.T) {
	var d dayCounter
	morning := time.Date(2026, 11, 22, 9, 0, 0, 0, time.Local)
	if got := d.today(morning, 5); got != 5 {
		t.Errorf("first day: today = %d; want 5 (everything since start)", got)
	}
	if got := d.today(morning.Add(14*time.Hour+59*time.Minute), 40); got != 40 {
		t.Errorf("23:59: today = %d; want 40", got)
	}
	if got := d.today(morning.Add(15*time.Hour+time.Minute), 41); got != 0 {
		t.Errorf("00:01 next day: today = %d; want 0", got)
	}
	if got := d.today(morning.Add(16*time.Hour), 50); got != 9 {
		t.Errorf("01:00 next day: today = %d; want 9", got)
	}
}

// Every language has every text.
func TestTrayTextsComplete(t *testing.T) {
	for lang, text := range texts {
		if text.Proxy == "" || text.Open == "" || text.Quit == "" || text.Restart == "" || text.Listening == "" ||
			text.Off == "" || text.OffBecause == "" || text.Line == "" || text.Requests == nil || text.Sessions == nil ||
			text.Pressure == "" || text.PressureTop == "" || text.NoSession == "" {
			t.Errorf("tray text %s is incomplete: %+v", lang, text)
		}
	}
	if got := textFor("zh-CN").restartLabel("2.0.0"); got != "重启以完成更新（版本 2.0.0）" {
		t.Errorf("zh-CN restart label = %q", got)
	}
	if got := textFor("en").restartLabel(""); got != "" {
		t.Errorf("restart label with no update installed = %q; want none", got)
	}
}
