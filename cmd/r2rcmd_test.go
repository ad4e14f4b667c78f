package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

type ctxKey struct{}

// TestRunE: every command built on runE hands its options the command's context, runs its
// prepare step on the arguments first, and never reaches the command when that step fails.
func TestRunE(t *testing.T) {
	var got *r2rCmd
	var dir string
	record := func(c *r2rCmd) error { got = c; return nil }
	tests := []struct {
		name    string
		cmd     func(Deps) *cobra.Command
		args    []string
		errLike string // "" = the command runs
		dir     string // sync's directory argument, as the command saw it
	}{
		{name: "status", cmd: func(d Deps) *cobra.Command {
			return newStatusCmd(d, func(o *statusOptions) error { return record(&o.r2rCmd) })
		}},
		{name: "index: --timeout must be positive", args: []string{"create", "--timeout", "0s"}, errLike: "--timeout must be positive",
			cmd: func(d Deps) *cobra.Command {
				return newIndexCmd(d, func(o *indexOptions) error { return record(&o.r2rCmd) })
			}},
		{name: "doctor: --timeout must be positive", args: []string{"--timeout", "-1s"}, errLike: "--timeout must be positive",
			cmd: func(d Deps) *cobra.Command {
				return newDoctorCmd(d, func(o *doctorOptions) error { return record(&o.r2rCmd) })
			}},
		{name: "auth header: bad --format", args: []string{"header", "--format", "xml"}, errLike: `--format "xml"`,
			cmd: func(d Deps) *cobra.Command {
				return newAuthCmd(d, func(o *authHeaderOptions) error { return record(&o.r2rCmd) })
			}},
		{name: "sync: the argument is the directory", args: []string{"docs", "--url", "http://r2r.test"}, dir: "docs",
			cmd: func(d Deps) *cobra.Command {
				return newSyncCmd(d, func(o *syncOptions) error { dir = o.Dir; return record(&o.r2rCmd) })
			}},
		{name: "sync: --concurrency out of range", args: []string{"--concurrency", "0"}, errLike: "--concurrency must be between 1 and 32",
			cmd: func(d Deps) *cobra.Command {
				return newSyncCmd(d, func(o *syncOptions) error { return record(&o.r2rCmd) })
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dir = nil, ""
			c := tt.cmd(Deps{Getenv: func(string) string { return "" }})
			c.SetArgs(tt.args)
			c.SilenceUsage, c.SilenceErrors = true, true
			ctx := context.WithValue(context.Background(), ctxKey{}, tt.name)
			err := c.ExecuteContext(ctx)
			if tt.errLike != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errLike) || got != nil {
					t.Fatalf("err %v, ran %v; want an error like %q before the command ran", err, got != nil, tt.errLike)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err %v, ran %v", err, got != nil)
			}
			if got.ctx().Value(ctxKey{}) != tt.name || dir != tt.dir {
				t.Errorf("context %v, dir %q; want the command's context and dir %q", got.ctx().Value(ctxKey{}), dir, tt.dir)
			}
			if tt.dir != "" && got.URL != "http://r2r.test" {
				t.Errorf("--url %q", got.URL)
			}
		})
	}
	if (&r2rCmd{}).ctx() != context.Background() {
		t.Error("without cobra, ctx is not Background")
	}
}
