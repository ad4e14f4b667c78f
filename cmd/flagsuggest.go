package cmd

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/tools/argcheck"
)

// flagError answers a flag the command does not have as an unknown command is answered:
// the flag it is close to, if any, and where the flags are listed.
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return err
	}
	msg := err.Error()
	if ne.GetSpecifiedShortnames() == "" {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Deprecated == "" {
				names = append(names, f.Name)
			}
		})
		if near := argcheck.Closest(ne.GetSpecifiedName(), names); near != "" {
			msg += "\n\nDid you mean this?\n\t--" + near + "\n"
		}
	}
	return errors.New(msg + "\nRun '" + c.CommandPath() + " --help' for its flags.")
}
