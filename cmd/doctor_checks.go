package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/searchindex"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// Time limits of the individual R2R checks.
const (
	doctorHealthTimeout  = 5 * time.Second
	doctorMeTimeout      = 10 * time.Second // a password credential logs in first
	doctorProjectTimeout = 10 * time.Second
)

// keyringProbeAccount is the keyring entry doctor reads to see whether the keyring answers.
// It is never written, so the read always ends in "not found" on a working keyring.
const keyringProbeAccount = "r2r-mcp-doctor-probe (never stored)"

// doctor runs the checks of one doctor invocation; later checks read what earlier ones
// found.
type doctor struct {
	opts     *doctorOptions
	progress io.Writer

	cfg        doctorConfig
	configOK   bool
	res        auth.Resolved
	key        string // the API key, masked ("key_ab…"); "" for other credentials
	client     *r2r.Client
	keyringErr error // nil = the keyring answered
	reachable  bool  // GET /v3/health answered 200
	credsOK    bool
	anonymous  bool // R2R accepted a request without credentials
	needLogin  bool // R2R requires credentials and none were found
	warned     int  // how many warnings the credential had when resolved
}

// run performs every check and builds the report.
func (d *doctor) run(ctx context.Context) doctorReport {
	start := time.Now()
	rep := doctorReport{}
	steps := []struct {
		name string
		f    func(context.Context) doctorCheck
	}{
		{checkConfig, d.checkConfig},
		{checkKeyring, d.checkKeyring},
		{checkR2R, d.checkR2R},
		{checkCredentials, d.checkCredentials},
		{checkProject, d.checkProject},
		{checkSearchIndex, d.checkSearchIndex},
	}
	for _, s := range steps {
		d.note(checkTitles[s.name])
		t0 := time.Now()
		c := s.f(ctx)
		rep.Checks = append(rep.Checks, finishCheck(s.name, c, time.Since(t0)))
	}
	// The keyring verdict depends on whether R2R wanted a credential (check 4).
	for i := range rep.Checks {
		if rep.Checks[i].Name == checkKeyring {
			d.settleKeyring(&rep.Checks[i])
		}
	}
	d.note(checkTitles[checkInitialize])
	mcpChecks, srv := d.checkServer(ctx)
	rep.Checks = append(rep.Checks, mcpChecks...)
	rep.Server = srv
	d.note("")

	rep.Config = d.cfg
	rep.OK = true
	for _, c := range rep.Checks {
		if c.Status == statusFail {
			rep.OK = false
		}
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep
}

// finishCheck fills the fields every check shares.
func finishCheck(name string, c doctorCheck, took time.Duration) doctorCheck {
	c.Name, c.Title = name, checkTitles[name]
	c.OK = c.Status != statusFail
	c.DurationMS = took.Milliseconds()
	return c
}

// note shows which check is running, on a terminal only.
func (d *doctor) note(what string) {
	if d.progress == nil {
		return
	}
	if what == "" {
		fmt.Fprint(d.progress, "\r\033[K")
		return
	}
	fmt.Fprintf(d.progress, "\r\033[K… %s", what)
}

func okCheck(detail string) doctorCheck { return doctorCheck{Status: statusOK, Detail: detail} }
func warnCheck(detail, fix string) doctorCheck {
	return doctorCheck{Status: statusWarn, Detail: detail, Fix: fix}
}
func failCheck(detail, fix string) doctorCheck {
	return doctorCheck{Status: statusFail, Detail: detail, Fix: fix}
}
func skipCheck(detail string) doctorCheck { return doctorCheck{Status: statusSkip, Detail: detail} }

// checkConfig resolves the R2R URL and credentials exactly as serve does.
func (d *doctor) checkConfig(ctx context.Context) doctorCheck {
	o := d.opts
	deps := o.Deps
	dir, err := o.configDir()
	if err != nil {
		return failCheck(err.Error(), "Set "+auth.ConfigDirEnv+" to a directory r2r-mcp may use.")
	}
	d.cfg.ConfigDir = dir

	pdir, _, err := projectDir(deps.Getenv, o.ProjectDir)
	if err != nil {
		fix := "Run doctor from the project directory, or pass --project-dir."
		if o.ProjectDir != "" {
			fix = "Pass the project's directory to --project-dir."
		}
		return failCheck(err.Error(), fix)
	}
	d.cfg.ProjectDir = pdir

	res, client, err := o.resolve(ctx, dir)
	if err != nil {
		return failCheck(err.Error(), "Give a valid R2R base URL such as http://localhost:7272 (with --url, R2R_API_URL, or r2r-mcp login --url).")
	}
	d.res = res
	d.cfg.R2RURL, d.cfg.URLSource = res.URL, res.URLSource
	origin := res.Origin()
	d.warned = len(origin.Warnings)
	d.cfg.CredentialSource, d.cfg.CredentialKind = string(origin.Source), res.Kind
	if res.Kind == auth.KindAPIKey {
		d.key = maskedKey(ctx, res.Credentials)
	}
	d.client = client
	d.configOK = true

	detail := fmt.Sprintf("R2R URL %s (from %s)\ncredentials: %s\nconfig dir: %s\nproject dir: %s",
		res.URL, res.URLSource, d.describeCredential(), dir, pdir)
	if len(origin.Warnings) == 0 {
		return okCheck(detail)
	}
	var own []string
	var kinds []auth.WarningKind
	for _, w := range origin.Warnings {
		d.cfg.Warnings = append(d.cfg.Warnings, w.Text)
		// The keyring check reports an unreadable keyring, with a fix.
		if w.Kind == auth.WarnKeyringUnavailable {
			detail += "\nnote: " + w.Text + " (see the keyring check)"
			continue
		}
		own = append(own, w.Text)
		kinds = append(kinds, w.Kind)
	}
	if len(own) == 0 {
		return okCheck(detail)
	}
	return warnCheck(detail+"\nwarning: "+strings.Join(own, "; "), warningFix(kinds))
}

// describeCredential names the resolved credential and its source without revealing it.
func (d *doctor) describeCredential() string {
	what := credentialText(d.res.Kind, d.key, d.res.Email)
	if what == "" {
		return "none found; requests go unauthenticated (fine when R2R has auth off)"
	}
	return what + " (from " + string(d.res.Origin().Source) + ")"
}

// warningFix suggests what to do about auth.Resolve warnings of these kinds: the fix for
// the most pressing one.
func warningFix(kinds []auth.WarningKind) string {
	switch {
	case slices.Contains(kinds, auth.WarnEnvIncomplete):
		return "Set both R2R_EMAIL and R2R_PASSWORD, or neither."
	case slices.Contains(kinds, auth.WarnUnusableEntry):
		return "Run r2r-mcp logout, then r2r-mcp login."
	case slices.Contains(kinds, auth.WarnPlainTextFile):
		return "r2r-mcp works as is. To move the secret into the OS keyring, make one available (see the keyring check) and run r2r-mcp login again."
	}
	return "r2r-mcp still works."
}

// keyringBackend names the OS keyring go-keyring uses here.
func keyringBackend() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS Keychain"
	case "windows":
		return "Windows Credential Manager"
	}
	return "Secret Service (D-Bus)"
}

// keyringFix says how to get a working keyring on this OS.
func keyringFix() string {
	switch runtime.GOOS {
	case "darwin":
		return "Unlock the login keychain (Keychain Access), or rely on R2R_API_KEY or the 0600 file fallback (r2r-mcp login --insecure-storage)."
	case "windows":
		return "Make sure Windows Credential Manager is available to your user, or rely on R2R_API_KEY or the 0600 file fallback (r2r-mcp login --insecure-storage)."
	}
	return "Install and unlock a Secret Service provider (gnome-keyring, KeePassXC with Secret Service on) in a session with a D-Bus session bus, " +
		"or rely on R2R_API_KEY or the 0600 file fallback (r2r-mcp login --insecure-storage)."
}

// checkKeyring judges the keyring by what auth.Resolve found when it asked it (check 1);
// when Resolve did not ask (a credential in the environment, or no valid configuration),
// it reads an entry that never exists, through auth's keyring wrapper and its timeout:
// "not found" proves the keyring answers. The verdict for an unreachable keyring is
// settled after the credentials check (settleKeyring).
func (d *doctor) checkKeyring(ctx context.Context) doctorCheck {
	var err error
	if d.res.KeyringRead && ctx.Err() == nil {
		err = d.res.KeyringErr
	} else {
		store := &auth.KeyringStore{Keyring: d.opts.Env.Keyring, Timeout: d.opts.Env.KeyringTimeout}
		_, err = store.Load(ctx, keyringProbeAccount)
	}
	if err == nil || errors.Is(err, auth.ErrNoCredential) || (!errors.Is(err, auth.ErrKeyringUnavailable) && ctx.Err() == nil) {
		detail := keyringBackend() + " answered"
		if d.res.Origin().Source == auth.SourceKeyring {
			detail += "; it holds the credential for " + d.res.URL
		}
		return okCheck(detail)
	}
	d.keyringErr = err
	what := keyringBackend() + " is unavailable: " + err.Error()
	if errors.Is(err, auth.ErrKeyringTimeout) {
		t := d.opts.Env.KeyringTimeout
		if t <= 0 {
			t = auth.DefaultKeyringTimeout
		}
		what = fmt.Sprintf("%s did not answer within %s (locked, waiting for an unlock prompt, or hung)", keyringBackend(), t)
	}
	return failCheck(what, keyringFix())
}

// settleKeyring turns an unreachable keyring into a warning unless it stands in the way:
// no credential was found and R2R requires one, so login has nowhere safe to put it.
func (d *doctor) settleKeyring(c *doctorCheck) {
	if d.keyringErr == nil {
		return
	}
	noKeyring := errors.Is(d.keyringErr, auth.ErrNoKeyring)
	if d.needLogin {
		if noKeyring {
			c.Detail += "\nno credential was found and R2R requires one; r2r-mcp login would have to store it in a plain-text file"
		} else {
			// Login stores in the keyring whenever there is one (auth.Vault.Save); a locked or
			// slow one is an error there, never a silent move to the file.
			c.Detail += "\nno credential was found and R2R requires one; r2r-mcp login fails until the keyring is unlocked, " +
				"or needs --insecure-storage to store it in a plain-text file"
		}
		return
	}
	c.Status, c.OK = statusWarn, true
	switch src := d.res.Origin().Source; {
	case src == "":
		// Resolution stopped at the configuration (a bad URL), before any credential was looked for.
		c.Detail += "\nwhether it is needed is known once the configuration is fixed"
	case src == auth.SourceNone && d.anonymous:
		c.Detail += "\nnot needed now: R2R has auth off"
	case src == auth.SourceNone && noKeyring:
		c.Detail += "\nnot needed unless R2R requires a login; r2r-mcp login would then store the secret in a 0600 file"
	case src == auth.SourceNone:
		c.Detail += "\nnot needed unless R2R requires a login; r2r-mcp login would then need the keyring unlocked, or --insecure-storage"
	default:
		c.Detail += "\nnot needed now: the credentials come from " + string(src)
	}
}

// checkR2R sends GET /v3/health.
func (d *doctor) checkR2R(ctx context.Context) doctorCheck {
	if !d.configOK {
		return skipCheck("the configuration is invalid")
	}
	h := diagnose.CheckHealth(ctx, d.client, doctorHealthTimeout)
	switch {
	case h.Verdict == diagnose.Healthy:
		d.reachable = true
		return okCheck(fmt.Sprintf("GET %s/v3/health answered 200 in %d ms", d.res.URL, h.Latency.Milliseconds()))
	case ctx.Err() != nil:
		return failCheck("interrupted", "")
	}
	return failCheck(h.Problem(d.res.URL, d.res.URLSource))
}

// checkCredentials sends GET /v3/users/me with the resolved credentials.
func (d *doctor) checkCredentials(ctx context.Context) doctorCheck {
	if !d.reachable {
		return skipCheck("R2R is not reachable")
	}
	src := d.res.Origin().Source
	a := diagnose.CheckAccount(ctx, d.client, doctorMeTimeout)
	switch {
	case a.Verdict == diagnose.Accepted:
		d.credsOK = true
		role := "user"
		if a.User.IsSuperuser {
			role = "superuser"
		}
		if src == auth.SourceNone {
			d.anonymous = true
			return okCheck(fmt.Sprintf("anonymous (R2R has auth off); requests act as %s (%s)", a.User.Email, role))
		}
		detail := fmt.Sprintf("%s (%s), credentials from %s; GET /v3/users/me took %d ms", a.User.Email, role, src, a.Latency.Milliseconds())
		var notes []string
		if cost := apiKeyCost(d.res.Kind, a.Latency); cost != "" {
			notes = append(notes, diagnose.Sentence(cost, ""))
		}
		// What the check itself ran into: a renewal without the session lock, a renewed
		// session that could not be saved.
		if now := d.res.Origin().Warnings; len(now) > d.warned {
			for _, w := range now[d.warned:] {
				notes = append(notes, diagnose.Sentence(w.Text, ""))
			}
		}
		if len(notes) > 0 {
			return warnCheck(detail, strings.Join(notes, " "))
		}
		return okCheck(detail)
	case ctx.Err() != nil:
		return failCheck("interrupted", "")
	}
	d.needLogin = a.Verdict == diagnose.NeedsLogin
	return failCheck(a.Problem(d.describeCredential(), src, d.res.Email))
}

// checkProject maps the project to its collection, read only: a missing collection is
// not created.
func (d *doctor) checkProject(ctx context.Context) doctorCheck {
	if !d.configOK {
		return skipCheck("the configuration is invalid")
	}
	pr := newProjectResolver(d.cfg.ProjectDir)
	p, err := pr.Project(ctx)
	if err != nil {
		return failCheck(err.Error(), "Fix "+project.ConfigFile+" in the project root (it should be {\"collection\": \"<name or id>\"}).")
	}
	head := fmt.Sprintf("%s (%s)", p.Name, p.Root)
	want := collectionLabel(p.CollectionName, p.CollectionID)
	configured := ""
	if p.ConfigFile != "" {
		configured = "\nconfigured in " + p.ConfigFile
	}
	switch {
	case !d.reachable:
		return skipCheck(fmt.Sprintf("%s → collection %s; not looked up: R2R is not reachable%s", head, want, configured))
	case !d.credsOK:
		return skipCheck(fmt.Sprintf("%s → collection %s; not looked up: the credentials were not accepted%s", head, want, configured))
	}
	standing := ""
	if p.CollectionID != "" {
		tctx, cancel := context.WithTimeout(ctx, doctorProjectTimeout)
		t, err := team.Describe(tctx, d.client, p.CollectionID, p.TeamOwner)
		cancel()
		switch {
		case err != nil:
			return warnCheck(fmt.Sprintf("%s → team collection %s: cannot be described: %v", head, p.CollectionID, err), "Check R2R's logs; run doctor again.")
		case t.Access == team.AccessNone:
			return failCheck(head+" → "+t.Standing(), team.JoinAdvice(t))
		}
		standing = "\n" + t.Standing()
		if w := t.Warnings(); len(w) > 0 {
			return warnCheck(head+" → "+t.Standing()+configured, strings.Join(w, "\n"))
		}
	}
	configured += standing
	pc, err := lookupCollection(ctx, pr, d.client, doctorProjectTimeout)
	if err != nil {
		var re *r2r.Error
		if !errors.As(err, &re) { // a configuration problem, already worded for people
			return failCheck(head+": "+err.Error(), "Fix the collection in "+p.ConfigFile+".")
		}
		return failCheck(fmt.Sprintf("%s → collection %s: lookup failed: %v", head, want, err), "Check R2R's logs; run doctor again.")
	}
	if !pc.Exists() && project.NotAProject(p.Root) {
		return warnCheck(fmt.Sprintf("%s: no project collection", head), project.NoProjectAdvice(p.Root)+".")
	}
	if !pc.Exists() {
		return okCheck(fmt.Sprintf("%s → collection %s: not created yet — the first ingest creates it%s", head, pc.Name, configured))
	}
	return okCheck(fmt.Sprintf("%s → collection %s (id %s)%s", head, pc.Name, pc.ID, configured))
}

// checkSearchIndex asks R2R for its indexes and warns when its chunks are many and none is
// a vector index.
func (d *doctor) checkSearchIndex(ctx context.Context) doctorCheck {
	if !d.reachable || !d.credsOK {
		return skipCheck("R2R is not reachable or the credentials were not accepted")
	}
	ictx, cancel := context.WithTimeout(ctx, doctorProjectTimeout)
	defer cancel()
	v, err := searchindex.Check(ictx, d.client)
	switch {
	case errors.Is(err, searchindex.ErrNotAllowed):
		return skipCheck(err.Error())
	case err != nil:
		return warnCheck("GET /v3/indices failed: "+err.Error(), "Check R2R's logs; run doctor again.")
	case v.NeedsIndex():
		return warnCheck(v.Summary(), "Run "+searchindex.Command+" (R2R builds an HNSW index on the chunks' embeddings; minutes on a large corpus).")
	}
	return okCheck(v.Summary())
}
