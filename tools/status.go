package tools

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/searchindex"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// statusCheckTimeout bounds each live check of r2r_status.
const statusCheckTimeout = 3 * time.Second

// memoryCountTimeout bounds r2r_status's count of the project's memories (a listing of its
// collection).
const memoryCountTimeout = 1500 * time.Millisecond

// StatusHealth is the live health check of R2R.
type StatusHealth struct {
	OK        bool   `json:"ok" required:"true" desc:"true when R2R answered healthy"`
	Status    string `json:"status" required:"true" enum:"ok,unreachable,error" desc:"ok, unreachable or error"`
	Error     string `json:"error,omitempty" desc:"what went wrong"`
	LatencyMS int64  `json:"latency_ms" desc:"round-trip time of the check in milliseconds"`
}

// StatusProject is the project → collection mapping.
type StatusProject struct {
	Name             string `json:"name" required:"true" desc:"project name (base name of the project root)"`
	Path             string `json:"path" required:"true" desc:"project root"`
	CollectionName   string `json:"collection_name,omitempty" desc:"name of the project's collection"`
	CollectionID     string `json:"collection_id,omitempty" desc:"id of the project's collection, when it exists"`
	CollectionExists bool   `json:"collection_exists" required:"true" desc:"whether the collection exists in R2R yet"`
	ConfigFile       string `json:"config_file,omitempty" desc:"the .r2r-mcp.json that configured the collection, if any"`
	Error            string `json:"error,omitempty" desc:"why the project or its collection could not be resolved"`
	// Memories counts the team memories of the collection by kind, when counted.
	Memories map[string]int `json:"memories,omitempty" desc:"team memories in the collection by kind (decision, fix, checkpoint, …); absent when not counted"`
	// Team is the team collection .r2r-mcp.json names by id; absent elsewhere.
	Team *StatusTeam `json:"team,omitempty" desc:"team projects (.r2r-mcp.json names the collection by id): the team collection and what you are in it"`
}

// StatusTeam is the caller's relation to a team project's collection (team.Describe).
type StatusTeam struct {
	CollectionID string   `json:"collection_id" required:"true" desc:"the team collection"`
	Name         string   `json:"name,omitempty" desc:"its name, when visible to you"`
	OwnerID      string   `json:"owner_id,omitempty" desc:"its owner's R2R user id, when visible to you"`
	OwnerEmail   string   `json:"owner_email,omitempty" desc:"its owner's email, from its members or .r2r-mcp.json"`
	Access       string   `json:"access" required:"true" enum:"teamAccess" desc:"what you are in it"`
	Summary      string   `json:"summary" required:"true" desc:"the collection, its owner and what you are in it, in a sentence"`
	Warnings     []string `json:"warnings,omitempty" items:"a warning" desc:"other collections of the same name visible to you; for a non-member, whom to ask and what to run"`
}

// StatusVersions are the versions of the parts.
type StatusVersions struct {
	R2RMCP string `json:"r2r_mcp" required:"true" desc:"r2r-mcp version"`
	Commit string `json:"commit,omitempty" desc:"r2r-mcp build commit"`
	Go     string `json:"go" required:"true" desc:"Go version"`
	MCPGo  string `json:"mcp_go" required:"true" desc:"mcp-go library version"`
}

// StatusBreaker is the circuit breaker's state.
type StatusBreaker struct {
	URL   string `json:"url" required:"true" desc:"R2R URL the breaker guards"`
	State string `json:"state" required:"true" enum:"closed,open,half-open" desc:"closed (calls go through), open (calls fail fast) or half-open (probing)"`
	// ConsecutiveFailures counts the current run of failed calls while closed; while
	// open, the run that opened it.
	ConsecutiveFailures uint32 `json:"consecutive_failures" required:"true" desc:"current run of failed calls; while open, the run that opened it"`
	// RetryAfter is the number of seconds (rounded up) until an open breaker lets probes
	// through; 0 when not open.
	RetryAfter  int64              `json:"retry_after" required:"true" desc:"seconds until an open breaker lets calls through again; 0 when not open"`
	OpenedAt    string             `json:"opened_at,omitempty" desc:"when the breaker last opened, RFC 3339"`
	Transitions []StatusTransition `json:"transitions" required:"true" desc:"the last state changes, oldest first"`
}

// StatusTransition is one change of the breaker's state.
type StatusTransition struct {
	From string `json:"from" required:"true" desc:"state before"`
	To   string `json:"to" required:"true" desc:"state after"`
	At   string `json:"at" required:"true" desc:"time of the change, RFC 3339"` // with milliseconds
}

// StatusOutput is the structured result of r2r_status.
type StatusOutput struct {
	R2RURL             string                    `json:"r2r_url" required:"true" desc:"R2R base URL in use"`
	URLSource          string                    `json:"url_source,omitempty" desc:"where the URL came from (flag, environment, config, default)"`
	AuthSource         string                    `json:"auth_source" required:"true" desc:"where the credentials came from (environment, keyring, file, none)"`
	Health             StatusHealth              `json:"health" required:"true" desc:"live check of R2R's /v3/health"`
	Project            StatusProject             `json:"project" required:"true" desc:"the current project and its collection"`
	Breaker            string                    `json:"breaker" required:"true" desc:"circuit breaker state (closed, open, half-open), or n/a"`
	BreakerState       *StatusBreaker            `json:"breaker_state,omitempty" desc:"the circuit breaker in detail"`
	Cache              *cache.Stats              `json:"cache,omitempty" free:"true" desc:"cache statistics (hits, misses, hit_ratio, entries, cost_bytes, evictions, …); enabled false when the cache is off"`
	RateLimits         map[string]map[string]any `json:"rate_limits,omitempty" desc:"per-tool rate limits: rate (calls/s), burst and calls rejected so far"`
	Versions           StatusVersions            `json:"versions" required:"true" desc:"versions of r2r-mcp and its parts"`
	SearchHistoryCount int                       `json:"search_history_count" required:"true" desc:"searches remembered for this project (see resource r2r://search/history)"`
	ReadOnly           bool                      `json:"read_only" required:"true" desc:"true when write tools are disabled (--read-only)"`
	SearchIndex        string                    `json:"search_index,omitempty" desc:"the next step when R2R holds many chunks and no vector index (searches are slow); absent otherwise"`
	Config             map[string]string         `json:"config,omitempty" desc:"other effective settings and where they came from"`
}

// StatusToolName is the status tool's name; doctor calls it through a running server.
const StatusToolName = "r2r_status"

// statusTool reports on the server; its rate limits are lim's.
func statusTool(d *Deps, lim *rateLimiter) Tool {
	opts := readTool("r2r-mcp status",
		"Diagnose r2r-mcp when a tool reports a connection, authentication or setup problem: R2R URL and live health, "+
			"where the credentials come from, the current project and its collection, circuit breaker and cache state, versions.", outputSchema[StatusOutput]())
	opts = append(opts, searchHint("r2r connection auth problem diagnose"))
	def := newTool(StatusToolName, opts...)
	return Tool{Def: def, Group: GroupStatus, ReadOnly: true, Example: Example{Args: map[string]any{}}, run: bound(d, def, func(ctx context.Context, _ *call, _ mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
		o := d.status(ctx, lim)
		return result(statusText(o), o), nil
	})}
}

// credentialLoader is a credential read on first use (auth.LazyCredentials in serve). Load
// reads it now if that has not happened yet, waiting at most the keyring timeout.
type credentialLoader interface {
	Load(ctx context.Context) error
}

// loadCredentials reads a lazily read credential, so that r2r_status reports where it
// really comes from rather than "not read yet". It runs beside the health check.
func (d *Deps) loadCredentials(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	l, ok := d.Client.Credentials().(credentialLoader)
	if !ok {
		done <- nil
		return done
	}
	go func() {
		lctx, cancel := context.WithTimeout(ctx, statusCheckTimeout)
		defer cancel()
		done <- l.Load(lctx)
	}()
	return done
}

func (d *Deps) status(ctx context.Context, lim *rateLimiter) StatusOutput {
	loaded := d.loadCredentials(ctx)
	o := StatusOutput{
		R2RURL:    d.Client.BaseURL(),
		URLSource: d.Status.URLSource,
		Breaker:   "n/a",
		ReadOnly:  d.Status.ReadOnly,
		Config:    d.Status.settings(),
		Versions:  versions(d.Status),
	}
	if d.Cache != nil {
		st := d.Cache.Stats()
		o.Cache = &st
	}
	if rl := lim.stats(); len(rl) > 0 {
		o.RateLimits = rl
	}

	var hc diagnose.HealthChecker = d.Client
	if d.HealthClient != nil {
		hc = d.HealthClient
	}
	h := diagnose.CheckHealth(ctx, hc, statusCheckTimeout)
	// After the health check, which ends an open breaker when it succeeds: a status never
	// shows R2R healthy and calls paused together.
	if d.BreakerState != nil {
		st := d.BreakerState() // one snapshot for both forms
		o.Breaker, o.BreakerState = st.String(), breakerState(st)
	}
	o.Health.OK, o.Health.Status, o.Health.LatencyMS = h.Verdict == diagnose.Healthy, string(h.Verdict), h.Latency.Milliseconds()
	if h.Err != nil {
		o.Health.Error = errText(h.Err)
	}

	// The credential is read before the collection lookup, which needs it.
	loadErr := <-loaded
	d.reportAuth(&o, loadErr)
	d.statusProject(ctx, &o, loadErr)
	return o
}

// statusProject fills in the current project and its collection; the collection is looked
// up only when R2R answered the health check and the credential could be read.
func (d *Deps) statusProject(ctx context.Context, o *StatusOutput, loadErr error) {
	pr, err := d.Projects.Project(ctx)
	if err != nil {
		o.Project.Error = errText(err)
		return
	}
	o.Project = StatusProject{Name: pr.Name, Path: pr.Root, CollectionName: pr.CollectionName,
		CollectionID: pr.CollectionID, ConfigFile: pr.ConfigFile}
	o.SearchHistoryCount = d.History.Len(pr.Root)
	if !o.Health.OK {
		o.Project.Error = "R2R is not reachable, so the collection was not looked up"
		return
	}
	if loadErr != nil {
		// Looking up would wait for the keyring once more.
		o.Project.Error = "the stored credential could not be read (see auth_warning), so the collection was not looked up"
		return
	}
	pctx, cancel := context.WithTimeout(ctx, statusCheckTimeout)
	defer cancel()
	if !d.statusTeam(pctx, &o.Project, pr) {
		return
	}
	pc, err := d.Projects.Collection(pctx, d.Client, false)
	if err != nil {
		o.Project.Error = errText(err)
		return
	}
	o.Project.CollectionID, o.Project.CollectionExists = pc.ID, pc.Exists()
	if pc.Name != "" {
		o.Project.CollectionName = pc.Name
	}
	if pc.Exists() {
		// Best effort: without an answer there is no advice to give.
		if v, err := searchindex.Check(pctx, d.Client); err == nil {
			o.SearchIndex = v.Advice()
		}
		// Best effort too: a collection too large to list in memoryCountTimeout is not counted.
		cctx, ccancel := context.WithTimeout(pctx, memoryCountTimeout)
		if counts, truncated, err := (&memory.Store{API: d.Client, CollectionID: pc.ID}).Counts(cctx); err == nil && !truncated {
			o.Project.Memories = counts
		}
		ccancel()
	}
}

// statusTeam fills in the team of a team project; false when the caller is not a member,
// so its collection cannot be looked up (the project's error is then team.JoinAdvice).
func (d *Deps) statusTeam(ctx context.Context, sp *StatusProject, pr project.Project) bool {
	if pr.CollectionID == "" {
		return true
	}
	t, err := team.Describe(ctx, d.Client, pr.CollectionID, pr.TeamOwner)
	if err != nil {
		sp.Error = "the team collection could not be described: " + errText(err)
		return false
	}
	sp.Team = &StatusTeam{CollectionID: t.CollectionID, Name: Sanitize(t.Name), OwnerID: t.OwnerID, OwnerEmail: Sanitize(t.OwnerEmail),
		Access: string(t.Access), Summary: Sanitize(t.Standing())}
	for _, w := range t.Warnings() {
		sp.Team.Warnings = append(sp.Team.Warnings, Sanitize(w))
	}
	if t.Access == team.AccessNone {
		sp.Error = Sanitize(team.JoinAdvice(t))
		return false
	}
	return true
}

// reportAuth fills in where the credentials come from and any warning about them, as known
// after the read; loadErr is why a lazily read credential could not be read.
func (d *Deps) reportAuth(o *StatusOutput, loadErr error) {
	a := d.authState()
	o.AuthSource = string(a.Source)
	if o.AuthSource == "" {
		o.AuthSource = auth.SourceNone
	}
	warning := a.Warning()
	if loadErr != nil {
		w := "could not read the stored credential: " + loadErr.Error()
		if warning != "" {
			w = warning + "; " + w
		}
		warning = w
	}
	if warning != "" && warning != o.Config["auth_warning"] {
		o.Config = maps.Clone(o.Config)
		if o.Config == nil {
			o.Config = map[string]string{}
		}
		o.Config["auth_warning"] = warning
	}
}

func breakerState(st r2r.BreakerState) *StatusBreaker {
	out := &StatusBreaker{URL: st.URL, State: st.State, ConsecutiveFailures: st.ConsecutiveFailures,
		RetryAfter: int64(math.Ceil(st.RetryAfter.Seconds())), Transitions: []StatusTransition{}}
	if !st.OpenedAt.IsZero() {
		out.OpenedAt = st.OpenedAt.UTC().Format(time.RFC3339Nano)
	}
	for _, tr := range st.Transitions {
		out.Transitions = append(out.Transitions, StatusTransition{From: tr.From, To: tr.To,
			At: tr.At.UTC().Format("2006-01-02T15:04:05.000Z07:00")})
	}
	return out
}

func versions(s StatusInfo) StatusVersions {
	v := StatusVersions{R2RMCP: s.Version, Commit: s.Commit, Go: runtime.Version(), MCPGo: "unknown"}
	if v.R2RMCP == "" {
		v.R2RMCP = "dev"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/mark3labs/mcp-go" {
				v.MCPGo = dep.Version
			}
		}
	}
	return v
}

func statusText(o StatusOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "R2R: %s", o.R2RURL)
	if o.URLSource != "" {
		fmt.Fprintf(&b, " (from %s)", o.URLSource)
	}
	if o.Health.OK {
		fmt.Fprintf(&b, " — healthy (%d ms)\n", o.Health.LatencyMS)
	} else {
		fmt.Fprintf(&b, " — %s: %s\n", strings.ToUpper(o.Health.Status), o.Health.Error)
		if o.Health.Status == string(diagnose.Unreachable) {
			b.WriteString("  " + diagnose.StartR2R(o.URLSource) + "\n")
		}
	}
	fmt.Fprintf(&b, "Credentials: %s\n", o.AuthSource)
	if w := o.Config["auth_warning"]; w != "" {
		fmt.Fprintf(&b, "  Warning: %s\n", w)
	}
	p := o.Project
	if p.Path != "" {
		fmt.Fprintf(&b, "Project: %s (%s)\n", p.Name, p.Path)
		coll := p.CollectionName
		if coll == "" {
			coll = p.CollectionID
		}
		switch {
		case p.CollectionExists:
			fmt.Fprintf(&b, "Collection: %s (id %s)\n", coll, p.CollectionID)
		case p.Error == "" && project.NotAProject(p.Path):
			fmt.Fprintf(&b, "Collection: none — %s\n", project.NoProjectAdvice(p.Path))
		case p.Error == "":
			fmt.Fprintf(&b, "Collection: %s — not created yet; r2r_ingest_document creates it\n", coll)
		}
		if p.ConfigFile != "" {
			fmt.Fprintf(&b, "  configured in %s\n", p.ConfigFile)
		}
		if t := p.Team; t != nil {
			fmt.Fprintf(&b, "Team: %s\n", t.Summary)
			for _, w := range t.Warnings {
				if t.Access != string(team.AccessNone) {
					fmt.Fprintf(&b, "  Warning: %s\n", w)
				}
			}
		}
		if p.Memories != nil {
			fmt.Fprintf(&b, "Memories: %s\n", memoryCounts(p.Memories))
		}
	}
	if p.Error != "" {
		fmt.Fprintf(&b, "Project problem: %s\n", p.Error)
	}
	fmt.Fprintf(&b, "Circuit breaker: %s\n", o.Breaker)
	if bs := o.BreakerState; bs != nil && len(bs.Transitions) > 0 {
		last := bs.Transitions[len(bs.Transitions)-1]
		fmt.Fprintf(&b, "  last change: %s → %s at %s (%d recorded)\n", last.From, last.To, last.At, len(bs.Transitions))
	}
	if c := o.Cache; c != nil && c.Enabled {
		fmt.Fprintf(&b, "Cache: %d hits, %d misses (%.0f%% hits), %d entries, %s of %s, %d evictions\n",
			c.Hits, c.Misses, c.HitRatio*100, c.Entries, confine.HumanBytes(c.CostBytes), confine.HumanBytes(c.MaxBytes), c.Evictions)
	} else {
		b.WriteString("Cache: off\n")
	}
	if len(o.RateLimits) > 0 {
		fmt.Fprintf(&b, "Rate limits: %s, %.0f calls refused so far\n", limitedText(o.RateLimits), rejectedCalls(o.RateLimits))
	}
	if o.ReadOnly {
		b.WriteString("Mode: read-only (write tools disabled)\n")
	}
	if o.SearchIndex != "" {
		fmt.Fprintf(&b, "Search index: %s\n", o.SearchIndex)
	}
	fmt.Fprintf(&b, "Recent searches in this project: %d\n", o.SearchHistoryCount)
	fmt.Fprintf(&b, "Versions: r2r-mcp %s, %s, mcp-go %s", o.Versions.R2RMCP, o.Versions.Go, o.Versions.MCPGo)
	return b.String()
}

// limitedText says what has a rate limit: tools, counted as such, and resource reads,
// which share one bucket (resourceReads) but are no tool.
func limitedText(limits map[string]map[string]any) string {
	tools := len(limits)
	_, reads := limits[resourceReads]
	if reads {
		tools--
	}
	s := plural(tools, "tool")
	if reads {
		s += " and resource reads"
	}
	return s + " limited"
}

// rejectedCalls is how many calls the rate limits refused, in all.
func rejectedCalls(limits map[string]map[string]any) float64 {
	names := make([]string, 0, len(limits))
	for k := range limits {
		names = append(names, k)
	}
	sort.Strings(names) // a fixed order: float sums depend on it
	rejected := 0.0
	for _, n := range names {
		rejected += num(limits[n]["rejected"])
	}
	return rejected
}

// num reads a JSON number of any Go numeric type as float64.
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

// settings are the effective settings r2r_status reports; nil when none are known.
func (s StatusInfo) settings() map[string]string {
	if s.Config == nil {
		return nil
	}
	return s.Config()
}
