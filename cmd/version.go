package cmd

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
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

// pseudoVersion matches a Go module pseudo-version's commit time and revision.
var pseudoVersion = regexp.MustCompile(`[-.]([0-9]{14})-([0-9a-f]{12})(\+incompatible)?$`)

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
	if m := pseudoVersion.FindStringSubmatch(bi.Main.Version); m != nil && rev == "" {
		// go install m@<commit> of an untagged commit: the pseudo-version names the commit.
		rev = m[2]
		if t, err := time.Parse("20060102150405", m[1]); err == nil {
			at = t.Format(time.RFC3339)
		}
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
