package anthropic

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

func TestNewHTTPRequest(t *testing.T) {
	client := http.Header{
		"Anthropic-Beta": {"context-1m-2025-08-07"},
		"X-Api-Key":      {"local-client-key"},
		"Authorization":  {"Bearer local-client-key"},
	}
	tests := []struct {
		name, base, path, key string
		header                http.Header
		body                  []byte
		wantURL               string
		want                  http.Header
	}{
		{"summary call", "https://api.anthropic.com/", "/v1/messages", "sk-ant-1", nil, []byte(`{}`),
			"https://api.anthropic.com/v1/messages",
			http.Header{"X-Api-Key": {"sk-ant-1"}, "Anthropic-Version": {Version}, "Content-Type": {"application/json"}}},
		{"forwarded: the client's key replaced, its betas kept", " https://gw.example/anthropic ", "/v1/messages?beta=true", "sk-ant-2", client.Clone(), nil,
			"https://gw.example/anthropic/v1/messages?beta=true",
			http.Header{"X-Api-Key": {"sk-ant-2"}, "Anthropic-Version": {Version}, "Anthropic-Beta": {"context-1m-2025-08-07"}}},
		{"the client's version wins", "http://127.0.0.1:1", "/v1/models", "", http.Header{"Anthropic-Version": {"2099-01-01"}}, nil,
			"http://127.0.0.1:1/v1/models", http.Header{"Anthropic-Version": {"2099-01-01"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != nil {
				body = bytes.NewReader(tt.body)
			}
			req, err := NewHTTPRequest(context.Background(), http.MethodPost, tt.base, tt.path, tt.key, tt.header, body)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tt.wantURL {
				t.Errorf("URL = %s; want %s", req.URL, tt.wantURL)
			}
			if len(req.Header) != len(tt.want) {
				t.Errorf("Header = %v; want %v", req.Header, tt.want)
			}
			for k, v := range tt.want {
				if got := req.Header.Get(k); got != v[0] {
					t.Errorf("Header %s = %q; want %q", k, got, v[0])
				}
			}
			if tt.body != nil && (req.ContentLength != int64(len(tt.body)) || req.GetBody == nil) {
				t.Errorf("ContentLength = %d, GetBody set %t; want %d, true", req.ContentLength, req.GetBody != nil, len(tt.body))
			}
		})
	}
	if _, err := NewHTTPRequest(context.Background(), http.MethodPost, "::not a url", "/v1/messages", "k", nil, nil); err == nil {
		t.Errorf("NewHTTPRequest with a bad base URL: no error")
	}
}
