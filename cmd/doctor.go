package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// defaultDoctorTimeout bounds the whole MCP phase of doctor (start serve, initialize,
// tools/list, tools/call r2r_status).
const defaultDoctorTimeout = 20 * time.Second

type doctorOptions struct {
	JSON          bool
	ServerCommand string
	ProjectDir    string
	Timeout       time.Duration

	r2rCmd
	// Environ is the environment of the server child; nil = os.Environ. The child gets
	// the same environment doctor runs in, so it resolves the same configuration.
	Environ func() []string
	// Executable finds the server binary when ServerCommand is empty; nil = os.Executable.
	Executable func() (string, error)
}

func newDoctorCmd(deps Deps, runF func(*doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, keyring, R2R and the MCP server end to end",
		Long: `Check everything r2r-mcp needs, in order, and say how to fix what fails:

  1. configuration: the R2R URL and credentials and where each came from
  2. keyring: the OS keyring answers (a harmless read of an entry that does not exist)
  3. R2R reachable: GET /v3/health
  4. credentials accepted: GET /v3/users/me (anonymous is fine when R2R has auth off)
  5. project: the current project and its collection (read only; nothing is created)
  6. search index: GET /v3/indices; a warning when R2R holds many chunks and no vector
     index (then "r2r-mcp index create" builds one)
  7. MCP server: starts "r2r-mcp serve" and talks to it as an MCP client over stdio:
     initialize (the tools capability and a supported protocol version), the
     notifications/initialized notification, tools/list (every tool has an object
     inputSchema) and tools/call r2r_status.

A keyring that cannot be reached is a warning (⚠), not a failure, when the credentials come
from the environment or a file, or R2R needs none: r2r-mcp works without it. It fails (✗)
only when no credential was found and R2R requires one: "r2r-mcp login" would then have to
store the secret in a plain-text file (no keyring at all), or fail until the keyring is
unlocked (a locked or unresponsive one) unless given --insecure-storage.

Exit status 0 when nothing failed (warnings allowed), 1 otherwise.`,
		Example: `  r2r-mcp doctor
  r2r-mcp doctor --url http://r2r.internal:7272
  r2r-mcp doctor --json | jq '.checks[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: runE(opts, positiveTimeout(&opts.Timeout), runF, runDoctor),
	}
	f := c.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print a machine-readable report")
	addURLFlag(f, &opts.URL) // passed on to serve
	f.StringVar(&opts.ServerCommand, "server-command", "", "`PATH` of the MCP server binary to check, run as \"PATH serve ...\" (default: this r2r-mcp)")
	f.StringVar(&opts.ProjectDir, "project-dir", "", "directory the project is inferred from (default: the working directory); passed to serve")
	f.DurationVar(&opts.Timeout, "timeout", defaultDoctorTimeout, "time limit for the MCP server checks")
	return c
}

// Check statuses.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
	statusSkip = "skip"
)

// Check names, in the order doctor runs them.
const (
	checkConfig      = "configuration"
	checkKeyring     = "keyring"
	checkR2R         = "r2r_reachable"
	checkCredentials = "credentials"
	checkProject     = "project"
	checkSearchIndex = "search_index"
	checkInitialize  = "mcp_initialize"
	checkToolsList   = "mcp_tools_list"
	checkStatusCall  = "mcp_status_call"
	checkDiscover    = "mcp_discover"
)

var checkTitles = map[string]string{
	checkConfig:      "Configuration",
	checkKeyring:     "Keyring",
	checkR2R:         "R2R reachable",
	checkCredentials: "Credentials accepted",
	checkProject:     "Project → collection",
	checkSearchIndex: "R2R search index",
	checkInitialize:  "MCP initialize",
	checkToolsList:   "MCP tools/list",
	checkStatusCall:  "MCP tools/call r2r_status",
	checkDiscover:    "MCP server/discover (protocol 2026-07-28)",
}

// doctorCheck is one line of the report.
type doctorCheck struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	OK     bool   `json:"ok"`     // false only for fail
	Status string `json:"status"` // ok, warn, fail, skip
	// Detail says what was found; several lines at most.
	Detail string `json:"detail"`
	// Fix says what to do about a warn or fail.
	Fix        string `json:"fix,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Code and Retryable describe a JSON-RPC or tool error code behind an MCP failure.
	Code      int   `json:"code,omitempty"`
	Retryable *bool `json:"retryable,omitempty"`
}

// doctorConfig is the effective configuration, as check 1 found it.
type doctorConfig struct {
	R2RURL           string   `json:"r2r_url,omitempty"`
	URLSource        string   `json:"url_source,omitempty"`
	CredentialSource string   `json:"credential_source,omitempty"`
	CredentialKind   string   `json:"credential_kind,omitempty"`
	ConfigDir        string   `json:"config_dir,omitempty"`
	ProjectDir       string   `json:"project_dir,omitempty"`
	Warnings         []string `json:"warnings,omitempty"`
}

// doctorServer describes the MCP server as the client saw it.
type doctorServer struct {
	Command         string   `json:"command"`
	Args            []string `json:"args"`
	Name            string   `json:"name,omitempty"`
	Version         string   `json:"version,omitempty"`
	ProtocolVersion string   `json:"protocol_version,omitempty"`
	Capabilities    []string `json:"capabilities,omitempty"`
	// Handshake lists the methods the client sent, in order.
	Handshake []string `json:"handshake,omitempty"`
	Tools     []string `json:"tools"`
	// StderrTail is the end of the server's stderr, kept when a check failed.
	StderrTail []string `json:"stderr_tail,omitempty"`
}

// doctorReport is the --json output.
type doctorReport struct {
	OK         bool          `json:"ok"`
	Checks     []doctorCheck `json:"checks"`
	Config     doctorConfig  `json:"config"`
	Server     *doctorServer `json:"server"`
	DurationMS int64         `json:"duration_ms"`
}

func runDoctor(o *doctorOptions) error {
	ctx := o.ctx()
	d := &doctor{opts: o, progress: progressWriter(o.Deps.IO.ErrOut)}
	rep := d.run(ctx)
	if o.JSON {
		enc := json.NewEncoder(o.Deps.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := printDoctorReport(o.Deps.IO.Out, rep); err != nil {
		return err
	}
	if !rep.OK {
		return SilentError
	}
	return nil
}

// progressWriter returns w when it is a terminal (progress lines are overwritten in
// place), else nil: piped stderr stays quiet.
func progressWriter(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return f
}

var statusMarks = map[string]string{statusOK: "✓", statusWarn: "⚠", statusFail: "✗", statusSkip: "-"}

// printDoctorReport writes the human report: one mark and title per check, details
// indented under it, then the fix.
func printDoctorReport(w io.Writer, rep doctorReport) error {
	var b strings.Builder
	counts := map[string]int{}
	for _, c := range rep.Checks {
		counts[c.Status]++
		lines := strings.Split(strings.TrimRight(c.Detail, "\n"), "\n")
		fmt.Fprintf(&b, "%s %s: %s\n", statusMarks[c.Status], c.Title, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		if c.Fix != "" && (c.Status == statusFail || c.Status == statusWarn) {
			fmt.Fprintf(&b, "    fix: %s\n", c.Fix)
		}
	}
	if rep.Server != nil && len(rep.Server.StderrTail) > 0 {
		fmt.Fprintf(&b, "\nLast lines of %s stderr:\n", filepath.Base(rep.Server.Command))
		for _, l := range rep.Server.StderrTail {
			fmt.Fprintf(&b, "  | %s\n", l)
		}
	}
	var summary []string
	for _, s := range []string{statusOK, statusWarn, statusFail, statusSkip} {
		if n := counts[s]; n > 0 {
			name := map[string]string{statusOK: "ok", statusWarn: "warning", statusFail: "failed", statusSkip: "skipped"}[s]
			if s == statusWarn && n > 1 {
				name = "warnings"
			}
			summary = append(summary, fmt.Sprintf("%d %s", n, name))
		}
	}
	verdict := "All checks passed"
	switch {
	case !rep.OK:
		verdict = "Some checks failed"
	case counts[statusWarn] > 0:
		verdict = "No check failed"
	}
	took := fmt.Sprintf("%d ms", rep.DurationMS)
	if rep.DurationMS >= 1000 {
		took = fmt.Sprintf("%.1f s", float64(rep.DurationMS)/1000)
	}
	fmt.Fprintf(&b, "\n%s (%s) in %s.\n", verdict, strings.Join(summary, ", "), took)
	_, err := io.WriteString(w, b.String())
	return err
}
