package gemini_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"longhaul/proxy/gemini"
	"longhaul/proxy/proxytest"
)

type corpusTool struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

func loadCorpus(t *testing.T) []corpusTool {
	t.Helper()
	raw, err := os.ReadFile("testdata/tool_schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []corpusTool
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestSchemaCorpusAcceptedByUpstream rewrites every tool schema of the corpus
// (Claude Code's and Codex's tools, MCP schemas with $ref/$defs, anyOf,
// oneOf/allOf, const, type lists, free-form maps, recursion) and checks that
// the strict validator accepts each one, that the original is refused
// wherever it uses something outside the subset, and that the whole tool list
// goes through the scripted upstream.
func TestSchemaCorpusAcceptedByUpstream(t *testing.T) {
	tools := loadCorpus(t)
	refusedBefore := 0
	var decls []gemini.FunctionDeclaration
	for _, tool := range tools {
		out, err := gemini.RewriteSchema(tool.Schema)
		if err != nil {
			t.Errorf("RewriteSchema(%s): %v", tool.Name, err)
			continue
		}
		if proxytest.ValidateGeminiSchema(tool.Schema, tool.Name) != nil {
			refusedBefore++
		}
		if out == nil {
			decls = append(decls, gemini.FunctionDeclaration{Name: tool.Name})
			continue
		}
		if err := proxytest.ValidateGeminiSchema(out, tool.Name); err != nil {
			t.Errorf("rewritten %s refused: %v\n%s", tool.Name, err, out)
		}
		again, err := gemini.RewriteSchema(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Errorf("RewriteSchema is not idempotent on %s:\n%s\n%s", tool.Name, out, again)
		}
		decls = append(decls, gemini.FunctionDeclaration{Name: tool.Name, Parameters: out})
	}
	t.Logf("schema corpus: %d tool schemas rewritten and accepted (%d refused before rewriting)", len(tools), refusedBefore)
	if refusedBefore < len(tools)/2 {
		t.Errorf("only %d of %d corpus schemas are refused unrewritten; the validator is too lax", refusedBefore, len(tools))
	}

	up := proxytest.NewGeminiUpstream()
	defer up.Close()
	body, _ := json.Marshal(gemini.Request{Contents: []gemini.Content{{Role: "user", Parts: []gemini.Part{{Text: "hi"}}}},
		Tools: []gemini.Tool{{FunctionDeclarations: decls}}})
	resp, err := http.Post(up.URL+"/v1beta/models/gemini-2.5-pro:generateContent", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upstream refused the rewritten tool list: %d", resp.StatusCode)
	}
}

func TestRewriteSchemaCases(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no properties means no parameters", `{"type":"object","properties":{}}`, `null`},
		{"type list with null is nullable", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			`{"properties":{"a":{"nullable":true,"type":"STRING"}},"type":"OBJECT"}`},
		{"const becomes a one-value enum", `{"type":"object","properties":{"k":{"const":"x"}}}`,
			`{"properties":{"k":{"enum":["x"],"type":"STRING"}},"type":"OBJECT"}`},
		{"ref inlined, sibling description kept", `{"type":"object","$defs":{"P":{"type":"integer"}},"properties":{"p":{"$ref":"#/$defs/P","description":"d"}}}`,
			`{"properties":{"p":{"description":"d","type":"INTEGER"}},"type":"OBJECT"}`},
		{"anyOf with null flattens", `{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"properties":{"q":{"nullable":true,"type":"STRING"}},"type":"OBJECT"}`},
		{"required only names declared properties", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","ghost"]}`,
			`{"properties":{"a":{"type":"STRING"}},"required":["a"],"type":"OBJECT"}`},
		{"exclusiveMinimum becomes minimum", `{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0}}}`,
			`{"properties":{"n":{"minimum":0,"type":"INTEGER"}},"type":"OBJECT"}`},
		{"unsupported format dropped", `{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`,
			`{"properties":{"u":{"type":"STRING"}},"type":"OBJECT"}`},
		{"numeric enum moves to the description", `{"type":"object","properties":{"l":{"type":"integer","enum":[1,2]}}}`,
			`{"properties":{"l":{"description":"Allowed values: [1,2]","type":"INTEGER"}},"type":"OBJECT"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gemini.RewriteSchema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want && !(got == nil && tt.want == "null") {
				t.Errorf("RewriteSchema(%s) = %s; want %s", tt.in, got, tt.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"type":`, `"s"`} {
		if _, err := gemini.RewriteSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("RewriteSchema(%s) = nil error; want one", bad)
		}
	}
}

// TestRecursiveRefIsBounded: a self-referencing schema is cut at MaxRefDepth
// instead of growing without end.
func TestRecursiveRefIsBounded(t *testing.T) {
	in := `{"type":"object","$defs":{"N":{"type":"object","properties":{"c":{"$ref":"#/$defs/N"},"v":{"type":"string"}}}},"properties":{"n":{"$ref":"#/$defs/N"}}}`
	out, err := gemini.RewriteSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	if depth := strings.Count(string(out), `"c":`); depth != gemini.MaxRefDepth {
		t.Errorf("recursive $ref inlined %d levels; want %d", depth, gemini.MaxRefDepth)
	}
	if err := proxytest.ValidateGeminiSchema(out, "n"); err != nil {
		t.Error(err)
	}
	_ = fmt.Sprint()
}
