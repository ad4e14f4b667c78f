package cmd

import (
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

// urlFlagAliases are the former names of the R2R URL flag, still accepted and hidden.
var urlFlagAliases = []string{"r2r-url"}

// addURLFlag registers the R2R URL flag that every command talking to R2R takes under the
// same name (auth.DefaultURLFlagName), with the same help.
func addURLFlag(f *pflag.FlagSet, p *string) {
	const help = "R2R base URL (default: R2R_API_URL, R2R_API_BASE, the saved URL, or http://localhost:7272)"
	f.StringVar(p, auth.DefaultURLFlagName[2:], "", help)
	for _, alias := range urlFlagAliases {
		f.StringVar(p, alias, "", help)
		_ = f.MarkHidden(alias)
	}
}
