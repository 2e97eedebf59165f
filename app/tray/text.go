package tray

import (
	"fmt"
	"math"
)

// text is the tray's wording in one language (app.language).
type text struct {
	Proxy, Open, Quit string
	Restart           string // "%s": the version
	Listening         string // "%s": the address
	Off, OffBecause   string // OffBecause "%s": the error
	Line              string // "%s · %s · %s": where, requests today, active sessions
	Requests          func(n int64) string
	Sessions          func(n int64) string
	// The pressure line. Pressure's verbs: the ratio in percent, the next
	// layer (1–3), its threshold in percent; PressureTop's: the ratio, past
	// every threshold. NoSession: no session active lately.
	Pressure, PressureTop, NoSession string
}

// texts by app.language; anything else reads English.
var texts = map[string]text{
	"en": {
		Proxy: "Proxy on", Open: "Open window", Quit: "Quit",
		Restart:   "Restart to update (version %s)",
		Listening: "Listening on %s", Off: "Proxy off", OffBecause: "Proxy off: %s",
		Line:     "%s · %s today · %s",
		Requests: func(n int64) string { return plural(n, "request") },
		Sessions: func(n int64) string { return plural(n, "active session") },
		Pressure: "Context %d%% · next: Layer %d at %d%%", PressureTop: "Context %d%% · every layer reached",
		NoSession: "No active session",
	},
	"zh-CN": {
		Proxy: "启用代理", Open: "打开窗口", Quit: "退出",
		Restart:   "重启以完成更新（版本 %s）",
		Listening: "监听 %s", Off: "代理已关闭", OffBecause: "代理已关闭：%s",
		Line:     "%s · 今日 %s · %s",
		Requests: func(n int64) string { return fmt.Sprintf("%d 个请求", n) },
		Sessions: func(n int64) string { return fmt.Sprintf("%d 个活动会话", n) },
		Pressure: "上下文 %d%% · 下一层：第 %d 层（%d%%）", PressureTop: "上下文 %d%% · 各层均已触发",
		NoSession: "没有活动会话",
	},
}

func textFor(language string) text {
	if t, ok := texts[language]; ok {
		return t
	}
	return texts["en"]
}

// English labels: the menu starts with them, and the DBus test finds the
// entries by them.
var (
	labelProxy = texts["en"].Proxy
	labelOpen  = texts["en"].Open
	labelQuit  = texts["en"].Quit
	// labelRestart prefixes the entry shown once an update is installed.
	labelRestart = "Restart to update"
)

// restartLabel is the restart entry's label for an installed update's
// version ("": none, hide the entry).
func (t text) restartLabel(version string) string {
	if version == "" {
		return ""
	}
	return fmt.Sprintf(t.Restart, version)
}

// statusLine is the tray's first line: where the proxy listens (or why it
// does not), requests today and active sessions.
func (t text) statusLine(st State, today int64) string {
	where := fmt.Sprintf(t.Listening, st.Address)
	switch {
	case !st.Running && st.Error != "":
		where = fmt.Sprintf(t.OffBecause, st.Error)
	case !st.Running:
		where = t.Off
	}
	return fmt.Sprintf(t.Line, where, t.Requests(today), t.Sessions(int64(st.Sessions)))
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// pressureLine is the tray's second line: the busiest session's pressure and
// the layer that comes next. Percentages round down, so a session at 69.9%
// never reads as having reached a threshold of 70%.
func (t text) pressureLine(p Pressure) string {
	switch {
	case p.Session == "":
		return t.NoSession
	case p.NextLayer == 0:
		return fmt.Sprintf(t.PressureTop, percent(p.Ratio))
	}
	return fmt.Sprintf(t.Pressure, percent(p.Ratio), p.NextLayer, int(math.Round(p.NextThreshold*100)))
}

// percent is ratio in whole percent, rounded down; the tolerance keeps 0.29
// at 29 (0.29×100 is 28.999… in floating point).
func percent(ratio float64) int { return int(math.Floor(ratio*100 + 1e-9)) }
