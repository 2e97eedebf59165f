package leaks

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Gitleaks(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFind800K(b *testing.B) {
	rs := gitleaksRules(b)
	var body strings.Builder
	body.WriteString(`{"messages":[`)
	for _, f := range goSources(b, filepath.Join(runtime.GOROOT(), "src", "net", "http"), 1000) {
		if body.Len() > 800<<10 {
			break
		}
		t, _ := os.ReadFile(f)
		body.WriteString(toolResult(string(t)) + ",")
	}
	text := []byte(body.String())
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		rs.Find(text)
	}
}
