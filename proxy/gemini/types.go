package gemini

import "encoding/json"

// The wire types below follow the v1beta REST reference and the
// @google/genai SDK's types.ts (Content, Part, FunctionCall,
// FunctionResponse, GenerationConfig, UsageMetadata), field names in the
// REST casing. Members a type does not declare are kept in its Extra
// (extra.go), so decoding and encoding a body loses nothing.

// Request is a generateContent / streamGenerateContent request body.
type Request struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    json.RawMessage   `json:"safetySettings,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	CachedContent     string            `json:"cachedContent,omitempty"`
	// Model appears in countTokens' generateContentRequest; generateContent
	// takes it from the URL path.
	Model string `json:"model,omitempty"`
	// Extra holds the members this type does not declare, written back as
	// they came.
	Extra map[string]json.RawMessage `json:"-"`
}

// Content is one turn: role "user" or "model" (absent in systemInstruction).
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a turn. Exactly one data field is set; Thought marks a
// thought summary, ThoughtSignature may ride on any part.
type Part struct {
	Text             string            `json:"text,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	// ExecutableCode and CodeExecutionResult come from the built-in code
	// execution tool; kept raw.
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty"`
	Thought             bool            `json:"thought,omitempty"`
	ThoughtSignature    string          `json:"thoughtSignature,omitempty"`
	// Extra holds the members this type does not declare, written back as
	// they came.
	Extra map[string]json.RawMessage `json:"-"`
}

// Blob is inline bytes, base64 in JSON.
type Blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData points at an uploaded file.
type FileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a call the model asks for. ID is optional on the Gemini API
// (most models leave it out); Args is a JSON object.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is the client's answer to a FunctionCall. Response is a
// JSON object (the SDKs use {"output": …} or {"error": …}).
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Tool is one entry of tools. Only function declarations are translated;
// built-in tools (googleSearch, codeExecution, urlContext …) are kept raw.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         json.RawMessage       `json:"googleSearch,omitempty"`
	CodeExecution        json.RawMessage       `json:"codeExecution,omitempty"`
	URLContext           json.RawMessage       `json:"urlContext,omitempty"`
}

// FunctionDeclaration declares a function. Parameters is the OpenAPI-subset
// Schema; ParametersJSONSchema the newer plain JSON Schema alternative
// (mutually exclusive with Parameters).
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// ToolConfig carries functionCallingConfig.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`
}

// FunctionCallingConfig: Mode AUTO, ANY, NONE or VALIDATED.
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// GenerationConfig is generationConfig. Pointers tell "absent" from zero.
type GenerationConfig struct {
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *float64        `json:"topK,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ThinkingConfig     *ThinkingConfig `json:"thinkingConfig,omitempty"`
	// Extra holds the members this type does not declare, written back as
	// they came.
	Extra map[string]json.RawMessage `json:"-"`
}

// ThinkingConfig: ThinkingBudget -1 is dynamic, 0 turns thinking off;
// ThinkingLevel (low/high) is Gemini 3's alternative to a budget.
type ThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Response is a GenerateContentResponse: a whole reply, or one chunk of a
// stream (each SSE data line, or each element of the JSON-array stream).
type Response struct {
	Candidates     []Candidate     `json:"candidates,omitempty"`
	PromptFeedback *PromptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *UsageMetadata  `json:"usageMetadata,omitempty"`
	ModelVersion   string          `json:"modelVersion,omitempty"`
	ResponseID     string          `json:"responseId,omitempty"`
	// Extra holds the members this type does not declare, written back as
	// they came.
	Extra map[string]json.RawMessage `json:"-"`
}

// Candidate is one generated answer.
type Candidate struct {
	Content       *Content        `json:"content,omitempty"`
	FinishReason  string          `json:"finishReason,omitempty"`
	FinishMessage string          `json:"finishMessage,omitempty"`
	SafetyRatings json.RawMessage `json:"safetyRatings,omitempty"`
	Index         int             `json:"index"`
	// Extra holds the members this type does not declare, written back as
	// they came.
	Extra map[string]json.RawMessage `json:"-"`
}

// PromptFeedback reports a prompt blocked before any candidate was made.
type PromptFeedback struct {
	BlockReason        string          `json:"blockReason,omitempty"`
	BlockReasonMessage string          `json:"blockReasonMessage,omitempty"`
	SafetyRatings      json.RawMessage `json:"safetyRatings,omitempty"`
}

// UsageMetadata counts tokens. PromptTokenCount includes
// CachedContentTokenCount; CandidatesTokenCount excludes ThoughtsTokenCount.
type UsageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount,omitempty"`
}

// Finish reasons (Candidate.FinishReason) and prompt block reasons
// (PromptFeedback.BlockReason), from the v1beta FinishReason and BlockReason
// enums.
const (
	FinishStop                  = "STOP"
	FinishMaxTokens             = "MAX_TOKENS"
	FinishSafety                = "SAFETY"
	FinishRecitation            = "RECITATION"
	FinishLanguage              = "LANGUAGE"
	FinishOther                 = "OTHER"
	FinishBlocklist             = "BLOCKLIST"
	FinishProhibitedContent     = "PROHIBITED_CONTENT"
	FinishSPII                  = "SPII"
	FinishMalformedFunctionCall = "MALFORMED_FUNCTION_CALL"
	FinishImageSafety           = "IMAGE_SAFETY"
	FinishUnexpectedToolCall    = "UNEXPECTED_TOOL_CALL"
	FinishTooManyToolCalls      = "TOO_MANY_TOOL_CALLS"
)
