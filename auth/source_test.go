package auth

import (
	"strings"
	"testing"
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
