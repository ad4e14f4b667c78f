package servertest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func TestFindSecrets(t *testing.T) {
	const (
		key = "key_PubPart123.RawSecretPartXyz987654321"
		jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.SignatureSegment_abcdefgh123"
	)
	tests := []struct {
		name  string
		text  string
		leaks int
	}{
		{"clean text with the public key id", "API key key_PubPart123 (key_Pu…) for dev@example.com", 0},
		{"whole API key", "X-API-Key: " + key, 3}, // the key, its raw part and the raw part's prefix
		{"raw part only", "raw=RawSecretPartXyz987654321", 2},
		{"8-character prefix of the raw part", "…RawSecre…", 1},
		{"JWT", "Bearer " + jwt, 2}, // the token and its signature
		{"JWT signature alone", "sig SignatureSegment_abcdefgh123", 1},
		{"password", "login as dev with hunter2-password", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaks := FindSecrets(map[string]string{"out": tt.text}, []string{key, jwt, "hunter2-password"})
			if len(leaks) != tt.leaks {
				t.Errorf("%d leaks, want %d: %q", len(leaks), tt.leaks, leaks)
			}
			for _, l := range leaks {
				if strings.Contains(l, "Secret") || strings.Contains(l, "hunter2") {
					t.Errorf("the leak report quotes the secret: %q", l)
				}
			}
		})
	}
}

// TestRecordingR2RCollectsCredentials checks the recorder sees tokens and keys in responses
// and in request headers.
func TestRecordingR2RCollectsCredentials(t *testing.T) {
	srv := NewRecordingR2R(t, r2rtest.Options{RequireAuth: true})
	srv.CreateUser("rec@example.com", "rec-password", false)
	ctx := context.Background()
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(ctx, "rec@example.com", "rec-password")
	if err != nil {
		t.Fatal(err)
	}
	withToken := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	me, err := withToken.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := withToken.CreateAPIKey(ctx, me.ID, "k", "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range srv.Credentials() {
		got[s] = true
	}
	for name, want := range map[string]string{"access token": pair.AccessToken.Token, "refresh token": pair.RefreshToken.Token, "API key": key.APIKey} {
		if !got[want] {
			t.Errorf("%s not collected", name)
		}
	}
	// Down mode hijacks the connection through the recorder.
	srv.Down(true)
	if err := c.Health(ctx); err == nil {
		t.Error("health succeeded while the emulator is down")
	}
	srv.Down(false)
	if resp, err := http.Get(srv.URL + "/v3/health"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("health after Down(false): %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
