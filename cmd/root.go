// Package cmd holds the cobra commands of r2r-mcp. It is the only package that writes
// user-facing text to stdout; everything below it logs to stderr or a log file.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

// Build information, set with -ldflags "-X github.com/r2r-mcp/r2r-mcp/cmd.version=...".
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

// BuildInfo describes the running binary.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// Build returns the version information injected at link time or, where -ldflags did not
// set it (go install, go build), what the Go toolchain recorded in the binary.
func Build() BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return buildInfo(BuildInfo{Version: version, Commit: commit, Date: date}, bi)
}

// IOStreams are the streams a command reads from and writes to, so tests can inject them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Deps is what every command constructor receives.
type Deps struct {
	IO    IOStreams
	Build BuildInfo
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
}

// getenv is Getenv, or os.Getenv when none was given.
func (d Deps) getenv() func(string) string {
	if d.Getenv == nil {
		return os.Getenv
	}
	return d.Getenv
}

// SilentError is returned by a command that has already told the user what went wrong;
// Execute exits 1 without printing anything more.
var SilentError = errors.New("silent error")

// NewRootCmd builds the command tree.
func NewRootCmd(deps Deps) *cobra.Command { return newRootCmd(deps, false) }

// newRootCmd builds the command tree; with serveOnly, the root and serve alone. A client
// starts serve and waits for it to answer initialize, so serve does not build the other
// commands' flags and help first (TestServeOnlyTree: serve behaves the same in both).
func newRootCmd(deps Deps, serveOnly bool) *cobra.Command {
	root := &cobra.Command{
		Use:   "r2r-mcp",
		Short: "An MCP server that gives coding agents an R2R knowledge base",
		Long: `r2r-mcp is a stdio MCP server for R2R (https://github.com/SciPhi-AI/R2R).

Run "r2r-mcp login" once, then add "r2r-mcp serve" to your MCP client:
  claude mcp add r2r -- r2r-mcp serve`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownCommand,
		// A command two edits away (sycn, statsu) is suggested, as cobra does by default
		// where it suggests itself.
		SuggestionsMinimumDistance: 2,
		// The completion command is ours (newCompletionCmd); without this, cobra builds its
		// own for the serve-only tree on every start of serve.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	// --version is ours, not cobra's: cobra's version template would link text/template's
	// reflective method calls, which keep every exported method of every type in the binary.
	var showVersion bool
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print the version, commit and build date")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if !showVersion {
			return cmd.Help()
		}
		_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(deps.Build))
		return err
	}
	root.SetFlagErrorFunc(flagError)
	root.SetIn(deps.IO.In)
	root.SetOut(deps.IO.Out)
	root.SetErr(deps.IO.ErrOut)
	root.AddCommand(newServeCmd(deps, nil))
	if serveOnly {
		return root
	}
	root.AddCommand(
		newLoginCmd(deps, nil),
		newLogoutCmd(deps, nil),
		newAuthCmd(deps, nil),
		newStatusCmd(deps, nil),
		newDoctorCmd(deps, nil),
		newSyncCmd(deps, nil),
		newIndexCmd(deps, nil),
		newTeamCmd(deps, nil),
		newMemoryCmd(deps, nil),
		newAnalyticsCmd(deps, nil),
		newSkillCmd(deps, nil),
		newInstallCmd(deps, nil),
		newCompletionCmd(deps, nil),
		newVersionCmd(deps, nil),
	)
	return root
}

// unknownCommand refuses arguments to the root command as cobra does for a command with
// subcommands and no Run, naming the commands a mistyped one is close to: cobra only
// suggests for a root that does not run itself, and ours runs for --version.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?"
		for _, name := range s {
			msg += "\n\t" + name
		}
	}
	return errors.New(msg + "\nRun '" + cmd.CommandPath() + " --help' for the commands.")
}

// Execute runs the root command with the process's streams and exits with its status.
func Execute() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	deps := Deps{
		IO:     IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Build:  Build(),
		Getenv: os.Getenv,
	}
	err := newRootCmd(deps, len(os.Args) > 1 && os.Args[1] == "serve").ExecuteContext(ctx)
	stop()
	if err != nil {
		if !errors.Is(err, SilentError) {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(1)
	}
}
