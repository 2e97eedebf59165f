package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"longhaul/store"
)

func TestKeyTestDoesNotFollowRedirectsWithTheKey(t *testing.T) {
	for _, kind := range store.Kinds() {
		t.Run(kind, func(t *testing.T) {
			a, _ := newTestApp(t)
			accounts := a.Facades(context.Background).Accounts
			var reached atomic.Int64
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
				w.WriteHeader(http.StatusOK)
			}))
			defer elsewhere.Close()
			redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			defer redirecting.Close()

			v, err := accounts.Add(AccountInput{Kind: kind, BaseURL: redirecting.URL, Key: "sk-ant-api03-redirect-me-not-0000abcd"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := accounts.Test(v.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.Status != http.StatusTemporaryRedirect {
				t.Errorf("Test() = %+v; want the 307 as the result, not ok", res)
			}
			if n := reached.Load(); n != 0 {
				t.Errorf("the redirect target received %d requests; want 0", n)
			}
		})
	}
}
