package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"

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
