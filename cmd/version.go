package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type versionOptions struct {
	JSON bool
}

func newVersionCmd(deps Deps, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{}
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			out := cmd.OutOrStdout()
			if opts.JSON {
				enc := json.NewEncoder(out)
				return enc.Encode(struct {
					BuildInfo
					GoVersion string `json:"go_version"`
					Platform  string `json:"platform"`
				}{deps.Build, runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH})
			}
			_, err := fmt.Fprintln(out, versionLine(deps.Build))
			return err
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return c
}

// versionLine is what `r2r-mcp version` and `r2r-mcp --version` print.
func versionLine(b BuildInfo) string {
	return fmt.Sprintf("r2r-mcp %s (commit %s, built %s, %s, %s/%s)",
		b.Version, b.Commit, b.Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildInfo fills what the link flags left at their defaults from the toolchain's record:
// the module version (go install m@v; a pseudo-version or "(devel)" for go build), the VCS
// revision and commit time (go build in a checkout), a "-dirty" commit when the tree had
// changes.
func buildInfo(b BuildInfo, bi *debug.BuildInfo) BuildInfo {
	if bi == nil {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	var rev, at string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		rev, at = pseudoRevision(bi.Main.Version, at)
	}
	if b.Commit == "none" && rev != "" {
		b.Commit = rev[:min(len(rev), 12)]
		if modified {
			b.Commit += "-dirty"
		}
	}
	if b.Date == "unknown" && at != "" {
		b.Date = at
	}
	return b
}

// pseudoRevision reads the commit and its time out of a pseudo-version (go install m@<commit>
// of an untagged commit), which ends in [-.]<14-digit UTC time>-<12 hex digits of the
// commit>, maybe followed by +incompatible; at is kept when version is not one. (Read by
// hand: a regular expression here was compiled by every start of serve.)
func pseudoRevision(version, at string) (string, string) {
	v := strings.TrimSuffix(version, "+incompatible")
	n := len(v)
	if n < 28 || v[n-13] != '-' || (v[n-28] != '-' && v[n-28] != '.') ||
		strings.Trim(v[n-12:], "0123456789abcdef") != "" || strings.Trim(v[n-27:n-13], "0123456789") != "" {
		return "", at
	}
	if t, err := time.Parse("20060102150405", v[n-27:n-13]); err == nil {
		at = t.Format(time.RFC3339)
	}
	return v[n-12:], at
}
