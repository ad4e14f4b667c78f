package cmd

import (
	"strings"
	"testing"
)

// TestUnknownFlagSuggests: a mistyped flag is answered with the flags it is close to, as
// a mistyped command is.
func TestUnknownFlagSuggests(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" = no suggestion
	}{
		{[]string{"sync", "--prnue"}, "--prune"},
		{[]string{"sync", "--dryrun"}, "--dry-run"},
		{[]string{"memory", "list", "--kidn", "fix"}, "--kind"},
		{[]string{"status", "--jsno"}, "--json"},
		{[]string{"sync", "--zzzzzzzz"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := runRoot(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "unknown flag: "+tt.args[len(tt.args)-1]) && !strings.Contains(msg, "unknown flag") {
				t.Errorf("error does not say the flag is unknown: %q", msg)
			}
			switch {
			case tt.want == "" && strings.Contains(msg, "Did you mean"):
				t.Errorf("suggests something for a flag close to none: %q", msg)
			case tt.want != "" && !strings.Contains(msg, "Did you mean this?\n\t"+tt.want+"\n"):
				t.Errorf("error does not suggest %s: %q", tt.want, msg)
			}
			if !strings.Contains(msg, "--help") {
				t.Errorf("error does not point to --help: %q", msg)
			}
		})
	}
}
