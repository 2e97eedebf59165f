package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
	"longhaul/proxy/pool"
)

// The model list (GET /v1/models, GET /v1beta/models): every model the pool can serve, merged
// from each enabled account's own list, its allow-list, and the model map's aliases, answered
// in the caller's shape. An account whose list cannot be read adds what is known of it and
// never empties the answer.

const (
	// modelListTTL is how long an account's list is reused: lists change rarely, and clients
	// ask for them at every start.
	modelListTTL = 5 * time.Minute
	// modelListTimeout bounds one account's list fetch.
	modelListTimeout = 5 * time.Second
	maxModelList     = 4 << 20
)

// modelLister fetches and caches account model lists.
type modelLister struct {
	transport http.RoundTripper
	now       func() time.Time

	mu    sync.Mutex
	lists map[int64]modelList // by account id
}

type modelList struct {
	ids    []string
	at     time.Time
	secret string // a new key for the account means a new list
}

// listedModel is one model of the merged list and the kind serving it.
type listedModel struct {
	id, kind string
}

// merged returns the pool's models, fetching the lists it has not got (all at once, each
// bounded; every fetch ends before merged returns).
func (l *modelLister) merged(ctx context.Context, accounts []pool.Account, mappings []pool.ModelMapping) []listedModel {
	var wg sync.WaitGroup
	lists := make([][]string, len(accounts))
	for i, a := range accounts {
		if !a.Enabled {
			continue
		}
		if ids, ok := l.cached(a); ok {
			lists[i] = ids
			continue
		}
		wg.Go(func() {
			ids, err := l.fetch(ctx, a)
			if err != nil {
				return
			}
			lists[i] = ids
			l.mu.Lock()
			l.lists[a.ID] = modelList{ids: ids, at: l.now(), secret: a.Secret}
			l.mu.Unlock()
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	var out []listedModel
	add := func(id, kind string) {
		if id != "" && !strings.Contains(id, "*") && !seen[id] {
			seen[id] = true
			out = append(out, listedModel{id: id, kind: kind})
		}
	}
	for i, a := range accounts {
		if !a.Enabled {
			continue
		}
		for _, id := range lists[i] {
			if len(a.Models) == 0 || slices.ContainsFunc(a.Models, func(m string) bool { return m == id || strings.Contains(m, "*") }) {
				add(id, a.KindOf())
			}
		}
		for _, m := range a.Models {
			add(m, a.KindOf())
		}
	}
	for _, m := range mappings { // aliases: names a client may use that the map resolves
		add(m.Pattern, "alias")
	}
	slices.SortFunc(out, func(a, b listedModel) int { return strings.Compare(a.id, b.id) })
	return out
}

func (l *modelLister) cached(a pool.Account) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.lists[a.ID]
	return c.ids, ok && c.secret == a.Secret && l.now().Sub(c.at) < modelListTTL
}

// fetch reads one account's model list from its own endpoint, with its own credentials,
// under its base URL only (redirects are not followed).
func (l *modelLister) fetch(ctx context.Context, a pool.Account) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	var req *http.Request
	var err error
	switch a.KindOf() {
	case pool.KindAnthropic:
		req, err = anthropic.NewHTTPRequest(ctx, http.MethodGet, a.BaseURL, "/v1/models?limit=1000", a.Secret, nil, nil)
	case pool.KindGemini:
		base := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(a.BaseURL), "/"), "/v1beta")
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1beta/models?pageSize=1000", nil)
		if err == nil {
			req.Header.Set("X-Goog-Api-Key", a.Secret)
		}
	default:
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, joinURL(a.BaseURL, "/models"), nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+a.Secret)
		}
	}
	if err != nil {
		return nil, err
	}
	resp, err := l.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("model list: upstream answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelList))
	if err != nil {
		return nil, err
	}
	if a.KindOf() == pool.KindGemini {
		return gemini.ModelIDs(body)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("model list: %w", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// serveModels answers a model list in the caller's shape: Gemini's on the Gemini routes; on
// /v1/models the Anthropic list for a caller that speaks Messages (the Anthropic SDKs send
// anthropic-version, Claude Code x-api-key), OpenAI's for one that sends only a bearer key.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, c *call) {
	ex := &Exchange{
		ID: newExchangeID(), State: ExchangeStarted, Route: "models", Method: r.Method, Path: r.URL.Path,
		UserAgent: r.UserAgent(), RemoteAddr: r.RemoteAddr, Start: s.now(), ClientProtocol: c.proto.name(),
	}
	cfg := s.cfg.Load()
	models := s.models.merged(r.Context(), s.pool.Accounts(), cfg.ModelMap)
	var body []byte
	switch {
	case c.proto.nativeKind() == pool.KindGemini:
		limits := s.comp.Load().pipe
		var list []gemini.Model
		for _, m := range models {
			list = append(list, gemini.NewModel(m.id, limits.Limit(m.id, nil), 65536))
		}
		if one := r.PathValue("model"); one != "" {
			i := slices.IndexFunc(list, func(m gemini.Model) bool { return m.BaseModelID == one })
			if i < 0 {
				e := newError(http.StatusNotFound, anthropic.NotFoundError, fmt.Sprintf("model %q is not served by any account", one))
				s.finish(ex, e.Status, e)
				writeErrorAs(w, c.proto, e)
				return
			}
			body, _ = json.Marshal(list[i]) //nolint:errcheck // a struct of strings and ints always encodes
		} else {
			body = gemini.ModelsJSON(list)
		}
	case r.Header.Get("Anthropic-Version") == "" && r.Header.Get("X-Api-Key") == "" && r.Header.Get("Authorization") != "":
		ex.ClientProtocol = ProtocolOpenAIChat
		body = openAIModelList(models)
	default:
		body = anthropicModelList(models)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	n, _ := w.Write(body) //nolint:errcheck // client gone
	ex.BytesOut = int64(n)
	s.finish(ex, http.StatusOK, nil)
}

// anthropicModelList is the Messages API's model list (ModelInfo: type, id, display_name,
// created_at; has_more, first_id, last_id), as the Anthropic SDKs' models.list reads it.
func anthropicModelList(models []listedModel) []byte {
	type info struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	list := struct {
		Data    []info  `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: []info{}}
	for _, m := range models {
		list.Data = append(list.Data, info{Type: "model", ID: m.id, DisplayName: m.id, CreatedAt: "1970-01-01T00:00:00Z"})
	}
	if n := len(list.Data); n > 0 {
		list.FirstID, list.LastID = &list.Data[0].ID, &list.Data[n-1].ID
	}
	b, _ := json.Marshal(list) //nolint:errcheck // strings and bools always encode
	return b
}

// openAIModelList is OpenAI's model list ({"object":"list","data":[{id, object, created,
// owned_by}]}), as openai-node's models.list reads it.
func openAIModelList(models []listedModel) []byte {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range models {
		list.Data = append(list.Data, model{ID: m.id, Object: "model", OwnedBy: "longhaul:" + m.kind})
	}
	b, _ := json.Marshal(list) //nolint:errcheck // strings always encode
	return b
}
