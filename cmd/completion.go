package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

type completionOptions struct {
	Shell          string
	NoDescriptions bool
}

// completionShells are the shells cobra generates scripts for, in the order help lists them.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// newCompletionCmd replaces cobra's default completion command (cobra adds its own only when
// none exists) with one whose help says how to install the script in each shell.
func newCompletionCmd(_ Deps, runF func(*completionOptions) error) *cobra.Command {
	opts := &completionOptions{}
	c := &cobra.Command{
		Use:   "completion <bash|zsh|fish|powershell>",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell to stdout. Completions cover commands, flags
and values such as the clients of "r2r-mcp install".

Bash (needs the bash-completion package):
  current shell:  source <(r2r-mcp completion bash)
  permanently:    r2r-mcp completion bash > ~/.local/share/bash-completion/completions/r2r-mcp

Zsh:
  current shell:  source <(r2r-mcp completion zsh)
  permanently:    r2r-mcp completion zsh > "${fpath[1]}/_r2r-mcp"   (then start a new shell;
                  needs "autoload -U compinit; compinit" in ~/.zshrc)

Fish:
  current shell:  r2r-mcp completion fish | source
  permanently:    r2r-mcp completion fish > ~/.config/fish/completions/r2r-mcp.fish

PowerShell:
  current shell:  r2r-mcp completion powershell | Out-String | Invoke-Expression
  permanently:    add that line to your $PROFILE`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("completion needs one shell: bash, zsh, fish or powershell")
			}
			for _, s := range completionShells {
				if args[0] == s {
					return nil
				}
			}
			return fmt.Errorf("unsupported shell %q: choose bash, zsh, fish or powershell", args[0])
		},
		ValidArgs:             completionShells,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shell = args[0]
			if runF != nil {
				return runF(opts)
			}
			return writeCompletion(cmd.Root(), cmd.OutOrStdout(), opts)
		},
	}
	c.Flags().BoolVar(&opts.NoDescriptions, "no-descriptions", false, "leave out the descriptions of completions")
	return c
}

func writeCompletion(root *cobra.Command, w io.Writer, opts *completionOptions) error {
	desc := !opts.NoDescriptions
	switch opts.Shell {
	case "bash":
		return root.GenBashCompletionV2(w, desc)
	case "zsh":
		if desc {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	case "fish":
		return root.GenFishCompletion(w, desc)
	case "powershell":
		if desc {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	}
	return fmt.Errorf("unsupported shell %q", opts.Shell)
}
