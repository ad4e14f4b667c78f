package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// defaultStatusTimeout bounds each live check of status (health, user, collection).
const defaultStatusTimeout = 5 * time.Second

type statusOptions struct {
	JSON       bool
	ProjectDir string
	Timeout    time.Duration

	r2rCmd
}

func newStatusCmd(deps Deps, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the effective configuration and check that R2R is usable",
		Long: `Show what r2r-mcp serve would use — the R2R URL, the credential, the project and its
collection — and where each value comes from, then check R2R live: its health endpoint, the
account the credential acts as (GET /v3/users/me) and whether the project's collection exists
(looked up, never created). Secrets are never printed; API keys are shown as key_ab…. A
stored refresh token is renewed, and the new one stored, as serve would do.

Exits 0 when r2r-mcp is usable, 1 otherwise. --json prints the same report as JSON.`,
		Args: cobra.NoArgs,
		RunE: runE(opts, nil, runF, runStatus),
	}
	f := c.Flags()
	addURLFlag(f, &opts.URL)
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.StringVar(&opts.ProjectDir, "project-dir", "", "directory the project is inferred from (default: the working directory)")
	f.DurationVar(&opts.Timeout, "timeout", defaultStatusTimeout, "time limit of each live check")
	return c
}

// StatusReport is what `r2r-mcp status --json` prints. Field names are stable; fields are
// only ever added. It never holds a secret: API keys appear as auth.ShortKey ("key_ab…").
type StatusReport struct {
	// Usable is true when R2R is healthy, the credential is accepted and the project
	// resolves; the exit code is 0 exactly then.
	Usable  bool   `json:"usable"`
	Version string `json:"version"`
	// Config lists the effective settings, each with where it came from.
	Config     []StatusSetting   `json:"config"`
	R2R        StatusR2R         `json:"r2r"`
	Credential StatusCredential  `json:"credential"`
	User       *StatusUser       `json:"user"`
	Project    StatusProjectInfo `json:"project"`
	// Problems say, one sentence each, what stands in the way and what to do.
	Problems []string `json:"problems"`
	// Warnings are things to know that do not make r2r-mcp unusable.
	Warnings []string `json:"warnings"`

	// cred are the credential's warnings, joined in Warnings[credAt] (credAt -1: none).
	// The text report says the standing ones (auth.Warning.Standing) once a day, the JSON
	// report always.
	cred   []auth.Warning
	credAt int
}

// StatusSetting is one effective setting and its source (flag, env, keyring, file,
// config, default, or git/working-directory inference).
type StatusSetting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// StatusR2R is the live check of the R2R server.
type StatusR2R struct {
	URL       string `json:"url"`
	URLSource string `json:"url_source"`
	// Health is "ok", "error" (R2R answered with an error status) or "unreachable".
	Health    string `json:"health"`
	Error     string `json:"error,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// StatusCredential describes the credential without revealing it.
type StatusCredential struct {
	// Source is "env R2R_API_KEY", "env R2R_EMAIL/R2R_PASSWORD", "keyring", "file <path>"
	// or "none".
	Source string `json:"source"`
	// Kind is "api_key", "refresh_token", "password" or "" (none).
	Kind string `json:"kind,omitempty"`
	// Key is the masked API key ("key_ab…"), for API keys only.
	Key   string `json:"key,omitempty"`
	KeyID string `json:"key_id,omitempty"`
	Email string `json:"email,omitempty"`
	// Accepted is true when GET /v3/users/me succeeded with it.
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
	// CheckMS is how long that authenticated request took, in milliseconds.
	CheckMS int64 `json:"check_ms"`
}

// StatusUser is the account the credential acts as (GET /v3/users/me).
type StatusUser struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Superuser bool   `json:"superuser"`
}

// StatusProjectInfo is the current project and its collection.
type StatusProjectInfo struct {
	Name   string `json:"name,omitempty"`
	Root   string `json:"root,omitempty"`
	Source string `json:"source,omitempty"`
	// CollectionName and CollectionID name the collection serve uses; the id only when it
	// exists or is configured.
	CollectionName   string `json:"collection_name,omitempty"`
	CollectionID     string `json:"collection_id,omitempty"`
	CollectionSource string `json:"collection_source,omitempty"`
	// CollectionExists is false also when the lookup could not run (see CollectionChecked).
	CollectionExists  bool   `json:"collection_exists"`
	CollectionChecked bool   `json:"collection_checked"`
	Error             string `json:"error,omitempty"`
	// Team is the team collection .r2r-mcp.json names by id and the caller's relation to
	// it; absent outside team projects or when it could not be read.
	Team *team.Team `json:"team,omitempty"`
}

// Health values of StatusR2R.
const (
	healthOK          = string(diagnose.Healthy)
	healthError       = string(diagnose.Failing)
	healthUnreachable = string(diagnose.Unreachable)
)

func runStatus(o *statusOptions) error {
	ctx := o.ctx()
	rep, err := buildStatus(ctx, o)
	if err != nil {
		return err
	}
	out := o.Deps.IO.Out
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := writeStatus(out, rep.quieter(o.Env.noticeDir(o.Deps.getenv()), time.Now())); err != nil {
		return err
	}
	if !rep.Usable {
		return SilentError
	}
	return nil
}

// quieter is rep for people: without the credential's standing warnings that were already
// said today (auth.NoticeDue records them in dir).
func (rep *StatusReport) quieter(dir string, now time.Time) *StatusReport {
	if rep.credAt < 0 || !slices.ContainsFunc(rep.cred, auth.Warning.Standing) {
		return rep
	}
	o := auth.Origin{}
	for _, w := range rep.cred {
		if !w.Standing() || auth.NoticeDue(dir, w, now) {
			o.Warnings = append(o.Warnings, w)
		}
	}
	q := *rep
	q.Warnings = slices.Clone(rep.Warnings)
	if len(o.Warnings) == 0 {
		q.Warnings = slices.Delete(q.Warnings, rep.credAt, rep.credAt+1)
	} else {
		q.Warnings[rep.credAt] = o.Warning()
	}
	return &q
}

// buildStatus resolves the configuration as serve does and runs the live checks. It fails
// only when the configuration itself is invalid (a malformed URL, no config dir).
func buildStatus(ctx context.Context, o *statusOptions) (*StatusReport, error) {
	deps := o.Deps
	getenv := deps.getenv()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = defaultStatusTimeout
	}
	rep := &StatusReport{Version: deps.Build.Version, Problems: []string{}, Warnings: []string{}}

	configDir, err := o.configDir()
	if err != nil {
		return nil, err
	}
	dirSource := "default"
	if getenv(auth.ConfigDirEnv) != "" {
		dirSource = "env " + auth.ConfigDirEnv
	}

	res, client, err := o.resolve(ctx, configDir)
	if err != nil {
		return nil, err
	}
	origin := res.Origin()
	rep.credAt = -1
	if w := origin.Warning(); w != "" {
		rep.cred, rep.credAt = origin.Warnings, len(rep.Warnings)
		rep.Warnings = append(rep.Warnings, w)
	}
	rep.R2R = StatusR2R{URL: res.URL, URLSource: res.URLSource}
	rep.Credential = StatusCredential{Source: string(origin.Source), Kind: res.Kind, Email: res.Email, KeyID: res.KeyID}
	if res.Kind == auth.KindAPIKey {
		rep.Credential.Key = maskedKey(ctx, res.Credentials)
	}
	rep.Config = append(rep.Config,
		StatusSetting{Name: "r2r_url", Value: res.URL, Source: res.URLSource},
		StatusSetting{Name: "credential", Value: describeCredential(rep.Credential), Source: string(origin.Source)},
		StatusSetting{Name: "config_dir", Value: configDir, Source: dirSource},
	)

	dir, startSource, err := projectDir(deps.Getenv, o.ProjectDir)
	if err != nil {
		return nil, err
	}
	projects := newProjectResolver(dir)
	pr, perr := projects.Project(ctx)
	if perr != nil {
		rep.Project.Error = perr.Error()
		rep.Problems = append(rep.Problems, "Cannot determine the project: "+perr.Error())
	} else {
		rep.Project = StatusProjectInfo{Name: pr.Name, Root: pr.Root, Source: projectSource(pr, startSource),
			CollectionName: pr.CollectionName, CollectionID: pr.CollectionID}
		rep.Project.CollectionSource = "default name for project " + pr.Name
		if pr.ConfigFile != "" {
			rep.Project.CollectionSource = "config " + pr.ConfigFile
		}
		rep.Config = append(rep.Config,
			StatusSetting{Name: "project", Value: pr.Root, Source: rep.Project.Source},
			StatusSetting{Name: "collection", Value: collectionLabel(pr.CollectionName, pr.CollectionID), Source: rep.Project.CollectionSource},
		)
	}

	rep.checkHealth(ctx, client, timeout)
	if rep.R2R.Health != healthUnreachable {
		rep.checkUser(ctx, client, timeout, origin.Source)
		// What the check itself ran into (a renewal without the session lock, a renewed
		// session that could not be saved) is said too; warnings are only ever added.
		if now := res.Origin().Warnings; len(now) > len(origin.Warnings) {
			for _, w := range now[len(origin.Warnings):] {
				rep.Warnings = append(rep.Warnings, w.Text)
			}
		}
	}
	if perr == nil && rep.Credential.Accepted && rep.checkTeam(ctx, pr, client, timeout) {
		rep.checkCollection(ctx, projects, client, timeout)
	}
	rep.Usable = rep.R2R.Health == healthOK && rep.Credential.Accepted && rep.Project.Error == ""
	return rep, nil
}

// projectSource says how the project root was inferred.
func projectSource(pr project.Project, start string) string {
	if _, err := os.Lstat(filepath.Join(pr.Root, ".git")); err == nil {
		return "git root of " + start
	}
	return start + ", not in a git repository"
}

// describeCredential names the credential for people, never revealing it.
func describeCredential(c StatusCredential) string {
	if t := credentialText(c.Kind, c.Key, c.Email); t != "" {
		return t
	}
	return "none (requests go unauthenticated)"
}

func (rep *StatusReport) checkHealth(ctx context.Context, c *r2r.Client, timeout time.Duration) {
	h := diagnose.CheckHealth(ctx, c, timeout)
	rep.R2R.Health, rep.R2R.LatencyMS = string(h.Verdict), h.Latency.Milliseconds()
	if h.Verdict != diagnose.Healthy {
		rep.R2R.Error = h.Err.Error()
		rep.Problems = append(rep.Problems, diagnose.Sentence(h.Problem(rep.R2R.URL, rep.R2R.URLSource)))
	}
}

// checkUser asks R2R who the credential from src acts as.
func (rep *StatusReport) checkUser(ctx context.Context, c *r2r.Client, timeout time.Duration, src auth.Source) {
	cred := rep.Credential
	a := diagnose.CheckAccount(ctx, c, timeout)
	rep.Credential.CheckMS = a.Latency.Milliseconds()
	if a.Verdict == diagnose.Accepted {
		if cost := apiKeyCost(cred.Kind, a.Latency); cost != "" {
			rep.Warnings = append(rep.Warnings, diagnose.Sentence(cost, ""))
		}
		rep.Credential.Accepted = true
		rep.User = &StatusUser{ID: a.User.ID, Email: a.User.Email, Superuser: a.User.IsSuperuser}
		return
	}
	rep.Credential.Error = a.Err.Error()
	described := describeCredential(cred) + " (from " + string(src) + ")"
	rep.Problems = append(rep.Problems, diagnose.Sentence(a.Problem(described, src, cred.Email)))
}

// checkTeam describes the team collection of a team project (team.Describe); false when
// the caller is not a member, so the collection cannot be looked up.
func (rep *StatusReport) checkTeam(ctx context.Context, pr project.Project, c *r2r.Client, timeout time.Duration) bool {
	if pr.CollectionID == "" {
		return true
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := team.Describe(tctx, c, pr.CollectionID, pr.TeamOwner)
	if err != nil {
		rep.Warnings = append(rep.Warnings, "The team collection "+pr.CollectionID+" could not be described: "+err.Error())
		return true
	}
	rep.Project.Team = t
	if t.Access == team.AccessNone {
		rep.Project.Error = team.JoinAdvice(t)
		rep.Problems = append(rep.Problems, rep.Project.Error)
		return false
	}
	rep.Warnings = append(rep.Warnings, t.Warnings()...)
	return true
}

// checkCollection looks the project's collection up without creating it.
func (rep *StatusReport) checkCollection(ctx context.Context, projects *project.Resolver, c *r2r.Client, timeout time.Duration) {
	pc, err := lookupCollection(ctx, projects, c, timeout)
	if err != nil {
		rep.Project.Error = err.Error()
		rep.Problems = append(rep.Problems, "The project's collection cannot be used: "+err.Error())
		return
	}
	rep.Project.CollectionChecked = true
	rep.Project.CollectionExists = pc.Exists()
	if pc.ID != "" {
		rep.Project.CollectionID = pc.ID
	}
	if pc.Name != "" {
		rep.Project.CollectionName = pc.Name
	}
}

// Marks of the human-readable report.
const (
	markOK   = "✓"
	markFail = "✗"
	markWarn = "!"
)

// writeStatus prints the report for people: settings with their sources, then one line
// per live check, then what to do.
func writeStatus(w io.Writer, rep *StatusReport) error {
	ew := &statusPrinter{w: w}
	labels := map[string]string{"r2r_url": "R2R URL", "credential": "Credential", "config_dir": "Config dir",
		"project": "Project", "collection": "Collection"}
	rows := make([][3]string, 0, len(rep.Config))
	for _, s := range rep.Config {
		name := labels[s.Name]
		if name == "" {
			name = s.Name
		}
		rows = append(rows, [3]string{name, s.Value, s.Source})
	}
	lw, vw := 0, 0
	for _, r := range rows {
		lw = max(lw, utf8.RuneCountInString(r[0]))
		vw = max(vw, utf8.RuneCountInString(r[1]))
	}
	ew.printf("r2r-mcp %s\n\n", rep.Version)
	for _, r := range rows {
		ew.printf("  %s  %s  (%s)\n", padRight(r[0], lw), padRight(r[1], vw), r[2])
	}
	ew.printf("\n")

	checks := statusChecks(rep)
	cw := 0
	for _, c := range checks {
		cw = max(cw, utf8.RuneCountInString(c[1]))
	}
	for _, c := range checks {
		ew.printf("%s %s  %s\n", c[0], padRight(c[1], cw), c[2])
	}
	for _, warn := range rep.Warnings {
		ew.printf("%s %s\n", markWarn, warn)
	}
	ew.printf("\n")
	if rep.Usable {
		ew.printf("%s r2r-mcp is ready.\n", markOK)
	} else {
		ew.printf("%s r2r-mcp is not usable:\n", markFail)
		for _, p := range rep.Problems {
			ew.printf("  - %s\n", p)
		}
	}
	return ew.err
}

// statusChecks turns the live checks into [mark, label, text] rows.
func statusChecks(rep *StatusReport) [][3]string {
	var rows [][3]string
	switch rep.R2R.Health {
	case healthOK:
		rows = append(rows, [3]string{markOK, "R2R", fmt.Sprintf("healthy (%d ms)", rep.R2R.LatencyMS)})
	default:
		rows = append(rows, [3]string{markFail, "R2R", rep.R2R.Health + ": " + rep.R2R.Error})
	}
	switch {
	case rep.User != nil:
		su := "no"
		if rep.User.Superuser {
			su = "yes"
		}
		rows = append(rows, [3]string{markOK, "Account", fmt.Sprintf("%s (id %s, superuser: %s)", rep.User.Email, rep.User.ID, su)})
	case rep.Credential.Error != "":
		rows = append(rows, [3]string{markFail, "Account", rep.Credential.Error})
	default:
		rows = append(rows, [3]string{markFail, "Account", "not checked (R2R unreachable)"})
	}
	p := rep.Project
	coll := collectionLabel(p.CollectionName, p.CollectionID)
	if t := p.Team; t != nil {
		mark := markOK
		if t.Access == team.AccessNone {
			mark = markFail
		}
		rows = append(rows, [3]string{mark, "Team", t.Standing()})
	}
	switch {
	case p.Error != "":
		rows = append(rows, [3]string{markFail, "Collection", p.Error})
	case p.CollectionExists:
		rows = append(rows, [3]string{markOK, "Collection", fmt.Sprintf("%s exists (id %s)", coll, p.CollectionID)})
	case p.CollectionChecked && project.NotAProject(p.Root):
		rows = append(rows, [3]string{markWarn, "Collection", "none: " + project.NoProjectAdvice(p.Root)})
	case p.CollectionChecked:
		rows = append(rows, [3]string{markOK, "Collection", coll + " does not exist yet; the first r2r_ingest_document creates it"})
	default:
		rows = append(rows, [3]string{markFail, "Collection", coll + " not checked (no working R2R connection)"})
	}
	return rows
}

func padRight(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// statusPrinter keeps the first write error so a report is printed without checking each line.
type statusPrinter struct {
	w   io.Writer
	err error
}

func (e *statusPrinter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
