package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"longhaul/proxy/anthropic"
)

// CountTokensRequest is the body of models/{model}:countTokens: either
// contents alone or a whole generateContentRequest.
type CountTokensRequest struct {
	Contents               []Content `json:"contents,omitempty"`
	GenerateContentRequest *Request  `json:"generateContentRequest,omitempty"`
}

// CountTokensResponse is countTokens' reply.
type CountTokensResponse struct {
	TotalTokens             int `json:"totalTokens"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
}

// CountTokensToAnthropic translates a countTokens body into a Messages
// count_tokens body (a Messages request without max_tokens' meaning).
func CountTokensToAnthropic(body []byte, opts RequestOptions) ([]byte, error) {
	var ct CountTokensRequest
	if err := json.Unmarshal(body, &ct); err != nil {
		return nil, badRequest("", "request body is not a valid CountTokensRequest: %v", err)
	}
	inner := ct.GenerateContentRequest
	if inner == nil {
		inner = &Request{Contents: ct.Contents}
	}
	raw, err := json.Marshal(inner)
	if err != nil {
		return nil, err
	}
	return RequestToAnthropic(raw, opts)
}

// CountTokensReply renders countTokens' reply from a Messages
// count_tokens reply ({"input_tokens": N}).
func CountTokensReply(anthropicBody []byte) ([]byte, error) {
	var a struct {
		InputTokens *int `json:"input_tokens"`
	}
	if err := json.Unmarshal(anthropicBody, &a); err != nil || a.InputTokens == nil {
		return nil, fmt.Errorf("count_tokens reply has no input_tokens")
	}
	return json.Marshal(CountTokensResponse{TotalTokens: *a.InputTokens})
}

// Model is one entry of GET /v1beta/models (and the body of
// GET /v1beta/models/{model}).
type Model struct {
	Name                       string   `json:"name"` // "models/gemini-2.5-pro"
	BaseModelID                string   `json:"baseModelId,omitempty"`
	Version                    string   `json:"version,omitempty"`
	DisplayName                string   `json:"displayName,omitempty"`
	Description                string   `json:"description,omitempty"`
	InputTokenLimit            int      `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit           int      `json:"outputTokenLimit,omitempty"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods,omitempty"`
	Thinking                   bool     `json:"thinking,omitempty"`
}

// ModelList is GET /v1beta/models' reply.
type ModelList struct {
	Models        []Model `json:"models"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
}

// NewModel describes a model the proxy serves under id.
func NewModel(id string, inputLimit, outputLimit int) Model {
	id = strings.TrimPrefix(id, "models/")
	return Model{
		Name: "models/" + id, BaseModelID: id, Version: "001", DisplayName: id,
		InputTokenLimit: inputLimit, OutputTokenLimit: outputLimit,
		SupportedGenerationMethods: []string{"generateContent", "countTokens", "streamGenerateContent"},
	}
}

// ModelsJSON renders a model list.
func ModelsJSON(models []Model) []byte {
	if models == nil {
		models = []Model{}
	}
	b, err := json.Marshal(ModelList{Models: models})
	if err != nil {
		return []byte(`{"models":[]}`)
	}
	return b
}

// ModelIDs reads the model ids (without "models/") of a model list, for
// merging an upstream's list with others.
func ModelIDs(body []byte) ([]string, error) {
	var l ModelList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("model list: %w", err)
	}
	ids := make([]string, 0, len(l.Models))
	for _, m := range l.Models {
		ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
	}
	return ids, nil
}

// ParseModelPath splits the tail of a /v1beta/models/ path, such as
// "gemini-2.5-pro:streamGenerateContent", into model and method.
func ParseModelPath(tail string) (model, method string, ok bool) {
	model, method, ok = strings.Cut(strings.TrimPrefix(tail, "models/"), ":")
	if !ok || model == "" || method == "" {
		return "", "", false
	}
	return model, method, true
}

// IncludeThoughts reports whether a generateContent request asks for thought parts in the
// reply (generationConfig.thinkingConfig.includeThoughts), without decoding its contents.
func IncludeThoughts(body []byte) bool {
	tc := anthropic.MemberValue(anthropic.MemberValue(body, "generationConfig"), "thinkingConfig")
	return string(anthropic.MemberValue(tc, "includeThoughts")) == "true"
}
