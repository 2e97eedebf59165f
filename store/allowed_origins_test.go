package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestAllowedOriginsAreValidatedOrigins(t *testing.T) {
	st := openAPITestStore(t)
	ctx := context.Background()
	for _, bad := range []string{`["chat.example.com"]`, `["https://chat.example.com/"]`, `["https://chat.example.com/app"]`,
		`["ftp://chat.example.com"]`, `["https://user@chat.example.com"]`, `["https://chat.example.com?x=1"]`, `["*"]`, `[""]`} {
		_, err := st.SetSetting(ctx, "proxy.allowed_origins", bad)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "proxy.allowed_origins" {
			t.Errorf("allowed_origins %s: error %v; want a ValidationError on proxy.allowed_origins", bad, err)
		}
	}
	s, err := st.SetSetting(ctx, "proxy.allowed_origins", `["https://chat.example.com","http://localhost:3000"]`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://chat.example.com", "http://localhost:3000"}; !slices.Equal(s.Proxy.AllowedOrigins, want) {
		t.Errorf("allowed_origins = %v; want %v", s.Proxy.AllowedOrigins, want)
	}
	if d := DefaultSettings().Proxy.AllowedOrigins; d == nil || len(d) != 0 {
		t.Errorf("default allowed_origins = %#v; want empty", d)
	}
}
