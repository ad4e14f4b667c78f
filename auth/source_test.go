package auth

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestSourceFix: the next step for a rejected credential depends on its source: the
// environment overrides whatever login stores, so an env credential is fixed where it is
// set; a stored one is replaced by logging in again.
func TestSourceFix(t *testing.T) {
	tests := []struct {
		source       Source
		fromEnv      bool
		place        string
		want         string
		notContained string
	}{
		{source: SourceEnvAPIKey, fromEnv: true, place: string(SourceEnvAPIKey), want: "Fix R2R_API_KEY where it is set", notContained: "store a new"},
		{source: SourceEnvPassword, fromEnv: true, place: string(SourceEnvPassword), want: "Fix R2R_EMAIL/R2R_PASSWORD where they are set"},
		{source: SourceKeyring, place: string(SourceKeyring), want: "to store a new credential", notContained: "R2R_API_KEY"},
		{source: SourceKeyringPending, place: string(SourceKeyring), want: "to store a new credential"},
		{source: FileSource("/c/credentials.json"), place: "file /c/credentials.json", want: "to store a new credential"},
		{source: SourceNone, place: string(SourceNone), want: "(or set R2R_API_KEY)"},
		{source: "", place: "", want: "(or set R2R_API_KEY)"},
	}
	for _, tt := range tests {
		fix := tt.source.Fix()
		if tt.source.FromEnv() != tt.fromEnv || tt.source.Place() != tt.place || !strings.Contains(fix, tt.want) ||
			(tt.notContained != "" && strings.Contains(fix, tt.notContained)) {
			t.Errorf("%q: FromEnv %v Place %q Fix %q", tt.source, tt.source.FromEnv(), tt.source.Place(), fix)
		}
	}
}

// TestCredentialsCarryTheirOrigin: the credentials Resolve returns say where they came
// from, the ones that cannot renew themselves without gaining a Refresh, and none of them
// shows its secret in any %v form.
func TestCredentialsCarryTheirOrigin(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		stored *Secret
		want   Source
	}{
		{name: "env API key", env: map[string]string{"R2R_API_KEY": "key_env.SECRET"}, want: SourceEnvAPIKey},
		{name: "env password", env: map[string]string{"R2R_EMAIL": "a@b", "R2R_PASSWORD": "pw.SECRET"}, want: SourceEnvPassword},
		{name: "stored API key", stored: &Secret{Kind: KindAPIKey, Secret: "key_file.SECRET"}, want: "file"},
		{name: "nothing", env: map[string]string{"R2R_EMAIL": "a@b"}, want: SourceNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := lazyOptions(t, newMapKeyring(), tt.env)
			opts.InsecureStorage = true
			want := tt.want
			if want == "file" {
				want = FileSource(filepath.Join(opts.ConfigDir, CredentialsFileName))
				seedFile(t, opts.ConfigDir, testURL, *tt.stored)
			}
			res, err := Resolve(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := res.Credentials.(Described)
			if !ok || d.Origin().Source != want || OriginOf(res.Credentials).Source != want {
				t.Fatalf("credentials %v: described %v, origin %+v; want source %q", res.Credentials, ok, OriginOf(res.Credentials), want)
			}
			if _, renews := res.Credentials.(r2r.Refresher); renews != (tt.want == SourceEnvPassword) {
				t.Errorf("renews %v", renews)
			}
			if s := fmt.Sprintf("%v %+v %#v %s", res, res, res, res.Credentials); strings.Contains(s, "SECRET") {
				t.Errorf("secret shown: %s", s)
			}
		})
	}
	if !(Origin{}).Source.None() || OriginOf(nil).Source != "" {
		t.Error("a credential that does not say has no source")
	}
}
