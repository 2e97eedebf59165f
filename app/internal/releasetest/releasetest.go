// Package releasetest plays GitHub's releases API for one repository, as
// go-selfupdate's GitHub source asks it (through an Enterprise API base URL):
// the list of releases and asset downloads. The self-update tests and the
// desktop smoke test serve releases with it on 127.0.0.1.
package releasetest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Asset is one file of a release.
type Asset struct {
	Name string
	Data []byte
}

// Server serves one release of Owner/Repo under /api/v3/ (the API base is
// SERVER_URL + "/api/v3/").
type Server struct {
	Owner, Repo string

	mu        sync.Mutex
	tag       string
	assets    []Asset
	downloads []string
	lists     int
}

// Publish replaces the release.
func (s *Server) Publish(tag string, assets ...Asset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tag, s.assets = tag, assets
}

// Downloads lists the assets downloaded so far, in order.
func (s *Server) Downloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.downloads...)
}

// Lists counts the release list requests (update checks).
func (s *Server) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// ServeHTTP answers GET /api/v3/repos/OWNER/REPO/releases and
// GET /api/v3/repos/OWNER/REPO/releases/assets/ID.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := "/api/v3/repos/" + s.Owner + "/" + s.Repo + "/releases"
	switch {
	case r.URL.Path == base:
		s.lists++
		type asset struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Size int    `json:"size"`
			URL  string `json:"browser_download_url"`
		}
		var list []asset
		for i, a := range s.assets {
			list = append(list, asset{ID: int64(i + 1), Name: a.Name, Size: len(a.Data),
				URL: "http://" + r.Host + "/download/" + a.Name})
		}
		releases := []any{}
		if s.tag != "" {
			releases = append(releases, map[string]any{
				"id": 7, "tag_name": s.tag, "name": s.tag, "draft": false, "prerelease": false,
				"published_at": time.Now().UTC().Format(time.RFC3339), "assets": list,
			})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(releases) //nolint:errcheck // the client sees a short body
	case strings.HasPrefix(r.URL.Path, base+"/assets/"):
		id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, base+"/assets/"))
		if err != nil || id < 1 || id > len(s.assets) {
			http.NotFound(w, r)
			return
		}
		s.downloads = append(s.downloads, s.assets[id-1].Name)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(s.assets[id-1].Data) //nolint:errcheck // the client sees a short body
	default:
		http.NotFound(w, r)
	}
}
