package proxytest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"longhaul/proxy/gemini"
)

// GeminiUpstream is a scripted Gemini API (generativelanguage v1beta) on
// 127.0.0.1, as strict as the real one where a translation can go wrong.
// Checked against the API reference, the thought-signature guide and
// @google/genai's types:
//
//   - POST /v1beta/models/{m}:generateContent, :streamGenerateContent (SSE
//     with alt=sse, each data line a GenerateContentResponse; without it one
//     JSON array whose elements arrive as they are made), :countTokens;
//     GET /v1beta/models and /v1beta/models/{m}.
//   - The key comes in x-goog-api-key or ?key=; a missing key is 403
//     PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT.
//   - Thought signatures: the first functionCall part of a reply carries one
//     (parallel calls: only the first), a reply without calls carries one on
//     its last part. In a request, the current turn (every content after the
//     last user content holding something other than functionResponse
//     parts) must give back, on the first functionCall part of each model
//     step, a signature this upstream issued or the documented
//     skip_thought_signature_validator: missing → 400 "Function call is
//     missing a thought_signature", unknown → 400 "Corrupted thought
//     signature". Earlier turns are not checked, as the guide says.
//   - Function declarations' parameters must be in the Schema subset
//     (ValidateGeminiSchema), names must match the declaration name rule, and a
//     functionResponse turn must answer as many calls as the turn before made.
//   - 429 RESOURCE_EXHAUSTED carries google.rpc.RetryInfo.retryDelay.
type GeminiUpstream struct {
	URL string
	// Key, when set, is the API key every request must carry.
	Key string

	srv *httptest.Server

	mu       sync.Mutex
	queue    []GeminiReply
	def      GeminiReply
	seq      int
	issued   map[string]bool
	recs     []Received
	rejected int
	secret   []byte
}

// GeminiReply scripts one reply to generateContent / streamGenerateContent.
type GeminiReply struct {
	Status     int           // 0 = 200; >= 400 answers a Google error
	Message    string        // error message for Status >= 400
	RetryDelay time.Duration // for 429: RetryInfo.retryDelay
	Body       []byte        // raw body sent as-is (overrides everything)
	// Parts is the model turn. Function calls get thought signatures as the
	// real API gives them; give ThoughtSignature yourself to override.
	Parts        []gemini.Part
	FinishReason string // "" = STOP
	BlockReason  string // a prompt blocked by safety filters (no candidate)
	ChunkRunes   int    // stream text in pieces of this many runes; 0 = 16
	// FailAfter, for streams, drops the connection after N chunks (0 = never).
	FailAfter int
}

// GeminiText is a reply of one text part.
func GeminiText(text string) GeminiReply { return GeminiReply{Parts: []gemini.Part{{Text: text}}} }

// GeminiCalls is a reply of function calls (parallel when several), with a
// thought before them.
func GeminiCalls(calls ...gemini.FunctionCall) GeminiReply {
	parts := []gemini.Part{{Text: "Let me use a tool.", Thought: true}}
	for _, c := range calls {
		c := c
		parts = append(parts, gemini.Part{FunctionCall: &c})
	}
	return GeminiReply{Parts: parts}
}

// GeminiCall builds one function call with JSON-encoded args.
func GeminiCall(name string, args any) gemini.FunctionCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return gemini.FunctionCall{Name: name, Args: raw}
}

// GeminiRateLimited is a 429 RESOURCE_EXHAUSTED with a retryDelay.
func GeminiRateLimited(delay time.Duration) GeminiReply {
	return GeminiReply{Status: http.StatusTooManyRequests, RetryDelay: delay,
		Message: "You exceeded your current quota, please check your plan and billing details."}
}

// NewGeminiUpstream starts an upstream whose default reply is a short text.
func NewGeminiUpstream() *GeminiUpstream {
	u := &GeminiUpstream{
		def:    GeminiText("Hello from the scripted Gemini upstream."),
		issued: map[string]bool{},
		secret: []byte(randomSecret()),
	}
	u.srv = httptest.NewUnstartedServer(u)
	u.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.srv.Start()
	u.URL = u.srv.URL
	return u
}

func randomSecret() string { return fmt.Sprintf("proxytest-%d", time.Now().UnixNano()) }

// Close shuts the server down.
func (u *GeminiUpstream) Close() {
	u.srv.CloseClientConnections()
	u.srv.Close()
}

// Enqueue appends scripted replies, served in order; then the default.
func (u *GeminiUpstream) Enqueue(replies ...GeminiReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queue = append(u.queue, replies...)
}

// SetDefault sets the reply served when the queue is empty.
func (u *GeminiUpstream) SetDefault(r GeminiReply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.def = r
}

// Requests returns the requests received so far.
func (u *GeminiUpstream) Requests() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Received(nil), u.recs...)
}

// Rejected counts the requests answered with a validation 400.
func (u *GeminiUpstream) Rejected() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rejected
}

// Issued reports whether signature is one this upstream issued.
func (u *GeminiUpstream) Issued(signature string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.issued[signature]
}

func (u *GeminiUpstream) next() GeminiReply {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) > 0 {
		r := u.queue[0]
		u.queue = u.queue[1:]
		return r
	}
	return u.def
}

// sign issues a signature for part n of reply seq.
func (u *GeminiUpstream) sign(seq, n int) string {
	mac := hmac.New(sha256.New, u.secret)
	fmt.Fprintf(mac, "%d/%d", seq, n)
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	u.issued[sig] = true
	return sig
}

func writeGeminiError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
}

func (u *GeminiUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	u.mu.Lock()
	if len(u.recs) >= maxRecords {
		u.recs = u.recs[1:]
	}
	u.recs = append(u.recs, Received{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	u.mu.Unlock()

	if u.Key != "" {
		key := r.Header.Get("x-goog-api-key")
		if key == "" {
			key = r.URL.Query().Get("key")
		}
		switch {
		case key == "":
			writeGeminiError(w, http.StatusForbidden, gemini.ErrorJSON(http.StatusForbidden, "", "",
				"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."))
			return
		case key != u.Key:
			writeGeminiError(w, http.StatusBadRequest, gemini.ErrorJSON(http.StatusBadRequest, "", "", "API key not valid. Please pass a valid API key."))
			return
		}
	}
	tail, isModels := strings.CutPrefix(r.URL.Path, "/v1beta/models")
	switch {
	case isModels && (tail == "" || tail == "/") && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(gemini.ModelsJSON(geminiModels))
		return
	case isModels && strings.HasPrefix(tail, "/") && r.Method == http.MethodGet && !strings.Contains(tail, ":"):
		for _, m := range geminiModels {
			if m.Name == "models"+tail {
				b, _ := json.Marshal(m)
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				w.Write(b)
				return
			}
		}
	case isModels && strings.HasPrefix(tail, "/") && r.Method == http.MethodPost:
		model, method, ok := gemini.ParseModelPath(tail[1:])
		if ok {
			switch method {
			case "generateContent":
				u.generate(w, r, model, body, false)
				return
			case "streamGenerateContent":
				u.generate(w, r, model, body, true)
				return
			case "countTokens":
				var ct gemini.CountTokensRequest
				if json.Unmarshal(body, &ct) != nil {
					u.reject(w, "Invalid JSON payload received.")
					return
				}
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				fmt.Fprintf(w, `{"totalTokens":%d}`, max(1, len(body)/4))
				return
			}
		}
	}
	writeGeminiError(w, http.StatusNotFound, gemini.ErrorJSON(http.StatusNotFound, "", "", "Requested entity was not found."))
}

var geminiModels = []gemini.Model{
	gemini.NewModel("gemini-2.5-pro", 1048576, 65536),
	gemini.NewModel("gemini-2.5-flash", 1048576, 65536),
	gemini.NewModel("gemini-3-pro-preview", 1048576, 65536),
}

func (u *GeminiUpstream) reject(w http.ResponseWriter, msg string) {
	u.mu.Lock()
	u.rejected++
	u.mu.Unlock()
	writeGeminiError(w, http.StatusBadRequest, gemini.ErrorJSON(http.StatusBadRequest, "", "", msg))
}

// validate checks a request as the real API does (see the type's comment).
func (u *GeminiUpstream) validate(req *gemini.Request) string {
	if len(req.Contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	for ci, c := range req.Contents {
		if c.Role != "user" && c.Role != "model" && c.Role != "" {
			return fmt.Sprintf("Please use a valid role: user, model. (contents[%d].role %q)", ci, c.Role)
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", ci)
		}
		calls := 0
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				calls++
			}
		}
		if calls > 0 && ci+1 < len(req.Contents) {
			responses := 0
			for _, p := range req.Contents[ci+1].Parts {
				if p.FunctionResponse != nil {
					responses++
				}
			}
			if responses != calls {
				return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
			}
		}
	}
	for ti, t := range req.Tools {
		for di, d := range t.FunctionDeclarations {
			path := fmt.Sprintf("* GenerateContentRequest.tools[%d].function_declarations[%d]", ti, di)
			if !functionNameRE.MatchString(d.Name) {
				return path + ".name: Invalid function name."
			}
			if len(d.Parameters) > 0 && len(d.ParametersJSONSchema) > 0 {
				return path + ": parameters and parametersJsonSchema are mutually exclusive"
			}
			if len(d.Parameters) > 0 {
				if err := ValidateGeminiSchema(d.Parameters, path+".parameters"); err != nil {
					return err.Error()
				}
			}
		}
	}
	if g := req.GenerationConfig; g != nil && len(g.ResponseSchema) > 0 {
		if err := ValidateGeminiSchema(g.ResponseSchema, "* GenerateContentRequest.generation_config.response_schema"); err != nil {
			return err.Error()
		}
	}
	// The current turn starts after the last user content with standard content.
	start := 0
	for ci := len(req.Contents) - 1; ci >= 0; ci-- {
		c := req.Contents[ci]
		if c.Role == "model" {
			continue
		}
		standard := false
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				standard = true
			}
		}
		if standard {
			start = ci
			break
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for ci := start; ci < len(req.Contents); ci++ {
		c := req.Contents[ci]
		if c.Role != "model" {
			continue
		}
		first := true
		for pi, p := range c.Parts {
			sig := p.ThoughtSignature
			if sig != "" && sig != gemini.SkipSignatureValidator && !u.issued[sig] {
				return fmt.Sprintf("Corrupted thought signature. (contents[%d].parts[%d])", ci, pi)
			}
			if p.FunctionCall != nil && first {
				first = false
				if sig == "" {
					return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to the thought signatures guide for more details.", p.FunctionCall.Name, pi+1)
				}
			}
		}
	}
	return ""
}

func (u *GeminiUpstream) generate(w http.ResponseWriter, r *http.Request, model string, body []byte, stream bool) {
	var req gemini.Request
	if err := json.Unmarshal(body, &req); err != nil {
		u.reject(w, "Invalid JSON payload received. "+err.Error())
		return
	}
	if msg := u.validate(&req); msg != "" {
		u.reject(w, msg)
		return
	}
	rep := u.next()
	if rep.Body != nil {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if rep.Status != 0 {
			w.WriteHeader(rep.Status)
		}
		w.Write(rep.Body)
		return
	}
	if rep.Status >= 400 {
		b := gemini.ErrorJSON(rep.Status, "", "", rep.Message)
		if rep.Status == http.StatusTooManyRequests {
			b = gemini.RateLimitJSON(rep.Message, rep.RetryDelay)
		}
		writeGeminiError(w, rep.Status, b)
		return
	}
	chunks := u.render(rep, model, len(body))
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(mergeChunks(chunks))
		return
	}
	sse := r.URL.Query().Get("alt") == "sse"
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	flusher, _ := w.(http.Flusher)
	for i, c := range chunks {
		if rep.FailAfter > 0 && i == rep.FailAfter {
			panic(http.ErrAbortHandler) // drop the connection mid-stream
		}
		switch {
		case sse:
			fmt.Fprintf(w, "data: %s\r\n\r\n", c)
		case i == 0:
			fmt.Fprintf(w, "[%s", c)
		default:
			fmt.Fprintf(w, ",\r\n%s", c)
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !sse {
		w.Write([]byte("]"))
	}
}

// render makes the stream chunks of a reply: text in pieces, each function
// call whole, finishReason and usage on the last chunk.
func (u *GeminiUpstream) render(rep GeminiReply, model string, promptBytes int) [][]byte {
	u.mu.Lock()
	u.seq++
	seq := u.seq
	parts := append([]gemini.Part(nil), rep.Parts...)
	hasCall := false
	for i := range parts {
		if parts[i].FunctionCall != nil && !hasCall {
			hasCall = true
			if parts[i].ThoughtSignature == "" {
				parts[i].ThoughtSignature = u.sign(seq, i)
			}
		}
	}
	var finalSig string
	if !hasCall && len(parts) > 0 {
		finalSig = u.sign(seq, len(parts))
	}
	u.mu.Unlock()

	respID := fmt.Sprintf("gemresp%06d", seq)
	usage := &gemini.UsageMetadata{PromptTokenCount: max(1, promptBytes/4)}
	chunk := func(ps []gemini.Part, finish string) []byte {
		resp := gemini.Response{ModelVersion: model, ResponseID: respID, UsageMetadata: usage}
		if rep.BlockReason != "" {
			resp.PromptFeedback = &gemini.PromptFeedback{BlockReason: rep.BlockReason}
			resp.UsageMetadata = usage
			b, _ := json.Marshal(resp)
			return b
		}
		resp.Candidates = []gemini.Candidate{{Content: &gemini.Content{Role: "model", Parts: ps}, FinishReason: finish}}
		b, _ := json.Marshal(resp)
		return b
	}
	if rep.BlockReason != "" {
		return [][]byte{chunk(nil, "")}
	}
	size := rep.ChunkRunes
	if size <= 0 {
		size = 16
	}
	var out [][]byte
	for _, p := range parts {
		usage.CandidatesTokenCount += max(1, len(p.Text)/4)
		if p.Text == "" || p.FunctionCall != nil {
			out = append(out, chunk([]gemini.Part{p}, ""))
			continue
		}
		for _, piece := range splitRunes(p.Text, size) {
			q := p
			q.Text = piece
			out = append(out, chunk([]gemini.Part{q}, ""))
		}
	}
	usage.TotalTokenCount = usage.PromptTokenCount + usage.CandidatesTokenCount
	finish := rep.FinishReason
	if finish == "" {
		finish = gemini.FinishStop
	}
	out = append(out, chunk([]gemini.Part{{Text: "", ThoughtSignature: finalSig}}, finish))
	return out
}

func splitRunes(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// mergeChunks assembles the non-stream reply from the stream's chunks: the
// parts in order (adjacent text pieces joined), the last chunk's finish
// reason and usage.
func mergeChunks(chunks [][]byte) []byte {
	var out gemini.Response
	var parts []gemini.Part
	for _, c := range chunks {
		var r gemini.Response
		json.Unmarshal(c, &r) //nolint:errcheck // rendered here
		out.ModelVersion, out.ResponseID, out.UsageMetadata, out.PromptFeedback = r.ModelVersion, r.ResponseID, r.UsageMetadata, r.PromptFeedback
		if len(r.Candidates) == 0 {
			continue
		}
		cand := r.Candidates[0]
		if cand.FinishReason != "" {
			out.Candidates = []gemini.Candidate{{FinishReason: cand.FinishReason}}
		}
		if cand.Content == nil {
			continue
		}
		for _, p := range cand.Content.Parts {
			n := len(parts) - 1
			if n >= 0 && p.FunctionCall == nil && parts[n].FunctionCall == nil && parts[n].Thought == p.Thought && parts[n].ThoughtSignature == "" && (p.Text != "" || p.ThoughtSignature != "") {
				parts[n].Text += p.Text
				parts[n].ThoughtSignature = p.ThoughtSignature
				continue
			}
			if p.Text == "" && p.FunctionCall == nil && p.ThoughtSignature == "" {
				continue
			}
			parts = append(parts, p)
		}
	}
	if len(out.Candidates) > 0 {
		out.Candidates[0].Content = &gemini.Content{Role: "model", Parts: parts}
	}
	b, _ := json.Marshal(out)
	return b
}
