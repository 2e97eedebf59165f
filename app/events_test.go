package app

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// The UI subscribes to events by name; frontend/src/events.ts mirrors the names here. The
// generated bindings cover types and methods but not these strings, so this test is their
// drift check: a name added, renamed or removed on one side only fails it.
func TestFrontendMirrorsEventNames(t *testing.T) {
	src, err := os.ReadFile("../frontend/src/events.ts")
	if err != nil {
		t.Fatal(err)
	}
	var ui []string
	for _, m := range regexp.MustCompile(`(?m)^export const \w+ = '([^']+)'`).FindAllSubmatch(src, -1) {
		ui = append(ui, string(m[1]))
	}
	goNames := []string{EventProxyStatus, EventUpdateStatus, EventHistoryExchanges}
	slices.Sort(ui)
	slices.Sort(goNames)
	if !slices.Equal(ui, goNames) {
		t.Errorf("event names in frontend/src/events.ts = %q; want %q (app/events.go)", ui, goNames)
	}
}
