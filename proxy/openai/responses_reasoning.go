package openai

import "strings"

// How reasoning crosses between the Responses API and Messages: the marks
// that carry each family's signed reasoning through the other's shape, and
// reasoning effort ⇄ thinking budget.

// responsesReasoningPrefix marks a thinking signature that carries an OpenAI
// reasoning item (its id and encrypted_content) through the Messages shape.
// Such a signature belongs to the OpenAI family: it is restored into a
// reasoning item when the request goes back to a Responses upstream and must
// never reach Anthropic (ResponsesIsReasoningSignature lets the proxy check).
const responsesReasoningPrefix = "openai-reasoning:"

// ResponsesIsReasoningSignature reports whether a thinking signature is an
// OpenAI reasoning item carried through the Messages shape (family "openai").
func ResponsesIsReasoningSignature(signature string) bool {
	return strings.HasPrefix(signature, responsesReasoningPrefix)
}

func responsesReasoningSignature(id, encrypted string) string {
	return responsesReasoningPrefix + id + ":" + encrypted
}

// Anthropic's own thinking rides the other way: a Responses client gets a
// Claude thinking block as a reasoning item whose encrypted_content holds the
// signature (or a redacted block's data) under these marks, and sends it
// back, so a tool loop with thinking keeps its signed chain. Such content
// goes back to Anthropic only; toward OpenAI it is dropped.
const (
	responsesAnthropicThinkingPrefix = "anthropic-thinking:"
	responsesAnthropicRedactedPrefix = "anthropic-redacted:"
)

// responsesEncryptedForThinking is the encrypted_content a Claude thinking
// block travels in ("" for a block without a signature).
func responsesEncryptedForThinking(signature string) string {
	if signature == "" {
		return ""
	}
	return responsesAnthropicThinkingPrefix + signature
}

// responsesSignatureForReasoning is the thinking signature a reasoning item
// from a Responses upstream travels in: Anthropic's own signature when the
// item carried one, else the OpenAI mark.
func responsesSignatureForReasoning(id, encrypted string) string {
	if sig, ok := strings.CutPrefix(encrypted, responsesAnthropicThinkingPrefix); ok {
		return sig
	}
	return responsesReasoningSignature(id, encrypted)
}

func parseResponsesReasoningSignature(sig string) (id, encrypted string, ok bool) {
	rest, ok := strings.CutPrefix(sig, responsesReasoningPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

// Reasoning effort ⇄ thinking budget. Each effort maps to a budget that maps
// back to the same effort, so a round trip keeps it.
var responsesEffortBudgets = []struct {
	effort string
	budget int
}{{"low", 2048}, {"medium", 8192}, {"high", 24576}}

func responsesBudgetForEffort(effort string) (int, bool) {
	switch effort {
	case "xhigh":
		return 32768, true
	case "none", "minimal", "":
		return 0, false
	}
	for _, e := range responsesEffortBudgets {
		if e.effort == effort {
			return e.budget, true
		}
	}
	return 0, false
}

func responsesEffortForBudget(budget int) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}
