package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/homedir"
)

// ProjectConfigFile is the per-project override file in the project root:
// {"collection": "<collection name or id>"}.
const ProjectConfigFile = ".r2r-mcp.json"

// CollectionPrefix is prepended to the project name to name its default collection.
const CollectionPrefix = "claude-code-"

// ProjectOptions configure a ProjectResolver.
type ProjectOptions struct {
	// WorkDir is where the server runs; "" = the process's working directory.
	WorkDir string
	// ExtraRoots are further directories r2r_ingest_document may read from.
	ExtraRoots []string
	// CacheFile stores resolved project → collection mappings across runs. "" = the
	// default, os.UserConfigDir()/r2r-mcp/projects.json; "-" = no disk cache.
	CacheFile string
	// Logger; nil = discard.
	Logger *slog.Logger
	// Remote marks a server whose clients run on other machines (serve --http): there is
	// no local project, Project fails with advice to pass collection_id, and files are
	// ingested only from ExtraRoots, named by absolute path.
	Remote bool
}

// Project is the project a call works in.
type Project struct {
	Name           string // base name of Root
	Root           string // the git root above the start directory, else the start directory
	CollectionName string // the configured collection name, or claude-code-<Name>
	CollectionID   string // a collection id configured in .r2r-mcp.json; "" otherwise
	ConfigFile     string // the .r2r-mcp.json that configured the collection; "" if none
}

// ProjectCollection is the project's collection in R2R.
type ProjectCollection struct {
	Project Project
	ID      string // "" when it does not exist yet
	Name    string
	Created bool // created by this call
}

// Exists reports whether the collection exists in R2R.
func (pc *ProjectCollection) Exists() bool { return pc.ID != "" }

// ProjectResolver maps the working project to an R2R collection: the client's MCP roots if
// offered, else the working directory; up to the git root; .r2r-mcp.json overrides; else
// the collection claude-code-<project>, created on the first write. Mappings are cached in
// memory and on disk and revalidated on 404 (and by Verify, at most once per VerifyTTL).
// It also remembers, per R2R URL and credential, the R2R user id (UserID), which document
// ids depend on. It is safe for concurrent use.
type ProjectResolver struct {
	opts ProjectOptions
	log  *slog.Logger

	mu            sync.Mutex
	rootsProvider func(ctx context.Context) ([]string, error)
	roots         []string // client roots as file paths; nil = not known
	rootsAsked    bool
	mem           map[string]cachedMapping // key: cacheKey
	disk          map[string]cachedMapping
	diskLoaded    bool
	validated     map[string]bool              // disk entries checked against R2R in this process
	configs       map[string]configEntry       // .r2r-mcp.json path → its last parse
	warnedRoots   map[string]bool              // roots already warned about (home, /)
	verified      map[string]time.Time         // collectionKey → last time R2R confirmed it exists
	users         map[string]string            // R2R URL + credential identity → R2R user id
	memberships   map[string]pendingMembership // document id → collection to ensure

	now func() time.Time // nil = time.Now; tests move the clock
	sf  singleflight.Group
}

type cachedMapping struct {
	CollectionID   string    `json:"collection_id"`
	CollectionName string    `json:"collection_name"`
	ProjectRoot    string    `json:"project_root"`
	R2RURL         string    `json:"r2r_url"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// NewProjectResolver returns a resolver; nothing is read until the first call.
func NewProjectResolver(opts ProjectOptions) *ProjectResolver {
	l := opts.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &ProjectResolver{opts: opts, log: l, mem: map[string]cachedMapping{}, validated: map[string]bool{},
		configs: map[string]configEntry{}, warnedRoots: map[string]bool{}, verified: map[string]time.Time{},
		users: map[string]string{}, memberships: map[string]pendingMembership{}}
}

func (p *ProjectResolver) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// SetRootsProvider installs a function that asks the MCP client for its roots (file://
// URIs); the server wires it to mcp-go's RequestRoots. A successful answer (also an
// empty one: the client has no roots) is kept until InvalidateRoots; after an error the
// working directory is used and the client is asked again on the next call.
func (p *ProjectResolver) SetRootsProvider(f func(ctx context.Context) ([]string, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rootsProvider = f
	p.rootsAsked = false
}

// SetRoots sets the client's roots directly (file:// URIs or paths).
func (p *ProjectResolver) SetRoots(uris []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = rootPaths(uris)
	p.rootsAsked = true
}

// InvalidateRoots forgets the client's roots so they are asked for again; call it on
// notifications/roots/list_changed.
func (p *ProjectResolver) InvalidateRoots() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = nil
	p.rootsAsked = false
}

func (p *ProjectResolver) clientRoots(ctx context.Context) []string {
	p.mu.Lock()
	if p.rootsAsked || p.rootsProvider == nil {
		r := p.roots
		p.mu.Unlock()
		return r
	}
	f := p.rootsProvider
	p.mu.Unlock()

	uris, err := f(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.log.Debug("client roots unavailable; using the working directory", "error", err)
		return p.roots
	}
	p.roots = rootPaths(uris)
	p.rootsAsked = true
	return p.roots
}

// rootPaths turns file:// URIs (or plain paths) into existing directories.
func rootPaths(uris []string) []string {
	var out []string
	for _, u := range uris {
		pth := u
		if strings.HasPrefix(u, "file:") {
			pu, err := url.Parse(u)
			if err != nil {
				continue
			}
			pth = pu.Path
			if runtime.GOOS == "windows" && len(pth) > 2 && pth[0] == '/' && pth[2] == ':' {
				pth = pth[1:]
			}
			pth = filepath.FromSlash(pth)
		}
		if !filepath.IsAbs(pth) {
			continue
		}
		if fi, err := os.Stat(pth); err == nil && fi.IsDir() {
			out = append(out, filepath.Clean(pth))
		}
	}
	return out
}

func (p *ProjectResolver) workDir() (string, error) {
	if p.opts.WorkDir != "" {
		return filepath.Abs(p.opts.WorkDir)
	}
	return os.Getwd()
}

// Project determines the current project. It reads the file system only (and asks the
// client for roots once).
//
// The project root is the git root above the start directory, except when that is the
// user's home directory or the file-system root (a dotfiles repository at ~ is common):
// then the start directory itself is the project, and a warning is logged once.
func (p *ProjectResolver) Project(ctx context.Context) (Project, error) {
	if p.opts.Remote {
		return Project{}, errRemoteProject
	}
	wd, err := p.workDir()
	if err != nil {
		return Project{}, fmt.Errorf("cannot determine the working directory: %w", err)
	}
	start := wd
	if roots := p.clientRoots(ctx); len(roots) > 0 {
		start = roots[0]
		for _, r := range roots {
			if within(r, wd) {
				start = r
				break
			}
		}
	}
	root := p.projectRoot(start)
	pr := Project{Name: filepath.Base(root), Root: root}
	pr.CollectionName = CollectionPrefix + pr.Name

	cfgPath := filepath.Join(root, ProjectConfigFile)
	c, err := p.readConfig(root, cfgPath)
	switch {
	case err != nil:
		return Project{}, err
	case c == "":
		return pr, nil
	}
	pr.ConfigFile = cfgPath
	if u, err := uuid.Parse(c); err == nil && len(c) == 36 {
		pr.CollectionID = u.String()
		pr.CollectionName = ""
	} else {
		pr.CollectionName = c
	}
	return pr, nil
}

// projectRoot is the git root above start, unless that is too wide to be a project (the
// home directory or the file-system root); then start.
func (p *ProjectResolver) projectRoot(start string) string {
	start = filepath.Clean(start)
	root := gitRoot(start)
	if root == start || !tooWide(root) {
		return root
	}
	p.mu.Lock()
	warned := p.warnedRoots[root]
	p.warnedRoots[root] = true
	p.mu.Unlock()
	if !warned {
		p.log.Warn("the git root above the start directory is the home directory or the file-system root; "+
			"using the start directory as the project instead", "git_root", root, "project_root", start)
	}
	return start
}

// NotAProject reports whether root is too wide to be a project (the file-system root, the
// home directory or a directory above it): r2r-mcp ingests nothing from it, so advice must
// not suggest that an ingest would create its collection.
func NotAProject(root string) bool { return root != "" && tooWide(root) }

// NoProjectAdvice says why root is not a project and what to do instead.
func NoProjectAdvice(root string) string {
	return fmt.Sprintf("r2r-mcp was started in %s, your home directory or the file-system root, which is not a project "+
		"and is never ingested from: start your MCP client in a project directory (or pass --project-dir, or set "+
		"CLAUDE_PROJECT_DIR), or name a collection with collection_id", root)
}

// tooWide reports whether dir is a file-system root, the user's home directory or a
// directory above it (homedir: $HOME and the OS user database).
func tooWide(dir string) bool {
	return filepath.Dir(dir) == dir || homedir.Covers(dir)
}

// samePath compares two directories after resolving symlinks (lexically when they cannot be
// resolved).
func samePath(a, b string) bool {
	if ra, err := realPath(a); err == nil {
		a = ra
	}
	if rb, err := realPath(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// maxConfigBytes bounds .r2r-mcp.json; it holds one short setting.
const maxConfigBytes = 64 << 10

// configEntry is the last parse of one .r2r-mcp.json, valid while the file is unchanged.
type configEntry struct {
	rel        string // the file read, relative to the real project root
	fi         os.FileInfo
	collection string
}

func (e configEntry) matches(rel string, fi os.FileInfo) bool {
	return e.fi != nil && e.rel == rel && os.SameFile(e.fi, fi) && e.fi.Size() == fi.Size() &&
		e.fi.ModTime().Equal(fi.ModTime())
}

// readConfig returns the collection configured in cfgPath ("" when there is no file or it
// sets none). The file must be a regular file; a symlink is followed only to a regular
// file inside the project root. It is read without blocking, from the descriptor that was
// checked, up to maxConfigBytes, and its parse is reused while path, inode, size and
// modification time stay the same. Every problem is a *projectError.
func (p *ProjectResolver) readConfig(root, cfgPath string) (string, error) {
	lfi, err := os.Lstat(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", &projectError{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, unwrapPathErr(err))}
	}
	realRoot, rel, err := configLocation(root, cfgPath, lfi)
	if err != nil {
		return "", err
	}
	notRegular := func(fi os.FileInfo) error {
		return &projectError{msg: fmt.Sprintf("%s Replace %s with a regular file containing {\"collection\": \"<name or id>\"}, or remove it.",
			regularFile(cfgPath, fi).Error(), ProjectConfigFile)}
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return "", &projectError{msg: fmt.Sprintf("Cannot open the project root %s: %v.", realRoot, unwrapPathErr(err))}
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	if err != nil {
		return "", &projectError{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, unwrapPathErr(err))}
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular(fi)
	}
	if fi.Size() > maxConfigBytes {
		return "", configTooLarge(cfgPath)
	}
	p.mu.Lock()
	e, ok := p.configs[cfgPath]
	p.mu.Unlock()
	if ok && e.matches(rel, fi) {
		return e.collection, nil
	}

	f, ofi, err := openChecked(r, rel, fi)
	switch {
	case errors.Is(err, errFileChanged):
		return "", &projectError{msg: fmt.Sprintf("%s changed while it was being read; try again.", cfgPath)}
	case err != nil:
		return "", &projectError{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, unwrapPathErr(err))}
	}
	defer f.Close()
	if !ofi.Mode().IsRegular() {
		return "", notRegular(ofi)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return "", &projectError{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, unwrapPathErr(err))}
	}
	if len(b) > maxConfigBytes {
		return "", configTooLarge(cfgPath)
	}
	var cfg struct {
		Collection string `json:"collection"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", &projectError{msg: fmt.Sprintf("%s is not valid JSON (%v); expected {\"collection\": \"<name or id>\"}.", cfgPath, err)}
	}
	c := strings.TrimSpace(cfg.Collection)
	p.mu.Lock()
	p.configs[cfgPath] = configEntry{rel: rel, fi: ofi, collection: c}
	p.mu.Unlock()
	return c, nil
}

// configLocation resolves the project root and the configuration file's path relative to
// it; a symlinked configuration must point inside the project.
func configLocation(root, cfgPath string, lfi os.FileInfo) (realRoot, rel string, err error) {
	if realRoot, err = realPath(root); err != nil {
		return "", "", &projectError{msg: fmt.Sprintf("Cannot resolve the project root %s: %v.", root, unwrapPathErr(err))}
	}
	if lfi.Mode()&os.ModeSymlink == 0 {
		return realRoot, ProjectConfigFile, nil
	}
	target, err := filepath.EvalSymlinks(cfgPath)
	if err != nil {
		return "", "", &projectError{msg: fmt.Sprintf("%s is a symlink whose target cannot be read (%v). Replace it with a regular file containing {\"collection\": \"<name or id>\"}, or remove it.", cfgPath, unwrapPathErr(err))}
	}
	if isSystemPath(target) || !within(realRoot, target) {
		return "", "", &projectError{msg: fmt.Sprintf("%s is a symlink to %s, outside the project root %s; r2r-mcp only reads its configuration from inside the project. Replace it with a regular file, or remove it.", cfgPath, target, realRoot)}
	}
	if rel, err = filepath.Rel(realRoot, target); err != nil {
		return "", "", &projectError{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, err)}
	}
	return realRoot, rel, nil
}

func configTooLarge(cfgPath string) error {
	return &projectError{msg: fmt.Sprintf("%s is larger than %d KiB, the limit for r2r-mcp's project configuration; it should hold only {\"collection\": \"<name or id>\"}.", cfgPath, maxConfigBytes>>10)}
}

// gitRoot walks up from dir to the nearest directory containing .git (a directory, or a
// file in worktrees and submodules); dir itself when there is none.
func gitRoot(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir)
		}
		d = parent
	}
}

// Roots returns the directories files may be ingested from: the project root first, then
// the configured extra roots.
func (p *ProjectResolver) Roots(ctx context.Context) ([]string, error) {
	pr, err := p.Project(ctx)
	if err != nil {
		return nil, err
	}
	return p.rootsOf(pr), nil
}

// Remote reports a resolver without a local project (ProjectOptions.Remote).
func (p *ProjectResolver) Remote() bool { return p.opts.Remote }

// errRemoteProject is Project's answer on a remote server.
var errRemoteProject = &projectError{msg: "This r2r-mcp serves clients over HTTP, so it has no local project. " +
	"Tools that take collection_id need it (or the X-R2R-Collection header; r2r_list_collections shows the ids); " +
	"to keep a directory in step, run r2r-mcp sync DIR where the files are."}

// rootsOf is Roots for a project already resolved.
func (p *ProjectResolver) rootsOf(pr Project) []string {
	if p.opts.Remote {
		return slices.Clone(p.opts.ExtraRoots)
	}
	return append([]string{pr.Root}, p.opts.ExtraRoots...)
}

func cacheKey(c *r2r.Client, root string) string {
	h := sha256.Sum256([]byte(c.BaseURL() + "\x00" + c.Identity() + "\x00" + root))
	return hex.EncodeToString(h[:16])
}

// Collection resolves the project's collection. With create, a missing collection is
// created (only a configured or default name can be created; a configured id must exist).
func (p *ProjectResolver) Collection(ctx context.Context, c *r2r.Client, create bool) (*ProjectCollection, error) {
	pr, err := p.Project(ctx)
	if err != nil {
		return nil, err
	}
	return p.collectionOf(ctx, c, pr, create)
}

// collectionOf is Collection for a project already resolved.
func (p *ProjectResolver) collectionOf(ctx context.Context, c *r2r.Client, pr Project, create bool) (*ProjectCollection, error) {
	key := cacheKey(c, pr.Root)
	if m, ok := p.lookup(ctx, c, key, pr); ok {
		return &ProjectCollection{Project: pr, ID: m.CollectionID, Name: m.CollectionName}, nil
	}
	sfKey := key
	if create {
		sfKey += "/create"
	}
	v, _, err := cache.Flight(ctx, &p.sf, sfKey, func(ctx context.Context) (*ProjectCollection, error) {
		return p.resolve(ctx, c, key, pr, create)
	})
	if err != nil {
		return nil, err
	}
	pc := *v
	return &pc, nil
}

// lookup returns a cached mapping that still matches the project's configuration. A disk
// entry is checked against R2R once per process.
func (p *ProjectResolver) lookup(ctx context.Context, c *r2r.Client, key string, pr Project) (cachedMapping, bool) {
	p.mu.Lock()
	if m, ok := p.mem[key]; ok && mappingMatches(m, pr) {
		p.mu.Unlock()
		return m, true
	}
	p.loadDiskLocked()
	m, ok := p.disk[key]
	if !ok || p.validated[key] || !mappingMatches(m, pr) {
		p.mu.Unlock()
		return cachedMapping{}, false
	}
	p.mu.Unlock()

	// Concurrent first calls share one check.
	coll, _, err := cache.Flight(ctx, &p.sf, "validate/"+key, func(ctx context.Context) (*r2r.Collection, error) {
		return c.GetCollection(ctx, m.CollectionID)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.validated[key] = true
	switch {
	case err == nil && (pr.CollectionID != "" || coll.Name == pr.CollectionName):
		p.mem[key] = m
		p.verified[collectionKey(c, m.CollectionID)] = p.clock()
		return m, true
	case err == nil || errors.Is(err, r2r.ErrNotFound):
		delete(p.disk, key)
		p.saveDiskLocked(key, nil)
	}
	return cachedMapping{}, false
}

func mappingMatches(m cachedMapping, pr Project) bool {
	if m.ProjectRoot != pr.Root {
		return false
	}
	if pr.CollectionID != "" {
		return m.CollectionID == pr.CollectionID
	}
	return m.CollectionName == pr.CollectionName
}

func (p *ProjectResolver) resolve(ctx context.Context, c *r2r.Client, key string, pr Project, create bool) (*ProjectCollection, error) {
	var coll *r2r.Collection
	var err error
	if pr.CollectionID != "" {
		coll, err = c.GetCollection(ctx, pr.CollectionID)
		if errors.Is(err, r2r.ErrNotFound) {
			return nil, &projectError{msg: fmt.Sprintf("Collection %s configured in %s does not exist in R2R at %s (or is not visible to this account). Fix the id, or use a collection name there to have it created.", pr.CollectionID, pr.ConfigFile, c.BaseURL())}
		}
		if err != nil {
			return nil, err
		}
	} else {
		coll, err = c.GetCollectionByName(ctx, pr.CollectionName)
		if errors.Is(err, r2r.ErrNotFound) {
			if !create {
				return &ProjectCollection{Project: pr, Name: pr.CollectionName}, nil
			}
			coll, err = c.CreateCollection(ctx, pr.CollectionName,
				fmt.Sprintf("Documents of the project %s, ingested by r2r-mcp.", pr.Name))
			if errors.Is(err, r2r.ErrConflict) { // created concurrently by another process
				coll, err = c.GetCollectionByName(ctx, pr.CollectionName)
			}
			if err != nil {
				return nil, err
			}
			p.remember(c, key, pr, coll)
			return &ProjectCollection{Project: pr, ID: coll.ID, Name: coll.Name, Created: true}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	p.remember(c, key, pr, coll)
	return &ProjectCollection{Project: pr, ID: coll.ID, Name: coll.Name}, nil
}

// projectError is a configuration problem the user must fix; shown as is.
type projectError struct{ msg string }

func (e *projectError) Error() string { return e.msg }

func (p *ProjectResolver) remember(c *r2r.Client, key string, pr Project, coll *r2r.Collection) {
	name := coll.Name
	if pr.CollectionID == "" {
		name = pr.CollectionName
	}
	m := cachedMapping{CollectionID: coll.ID, CollectionName: name, ProjectRoot: pr.Root, R2RURL: c.BaseURL(), UpdatedAt: time.Now().UTC()}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mem[key] = m
	p.validated[key] = true
	p.verified[collectionKey(c, coll.ID)] = p.clock()
	p.loadDiskLocked()
	if old, ok := p.disk[key]; ok && old.CollectionID == m.CollectionID {
		return
	}
	p.disk[key] = m
	p.saveDiskLocked(key, &m)
}

// Forget drops the cached mapping of the current project (after R2R answered 404 for its
// collection), so the next call resolves it again.
func (p *ProjectResolver) Forget(ctx context.Context, c *r2r.Client) {
	pr, err := p.Project(ctx)
	if err != nil {
		return
	}
	key := cacheKey(c, pr.Root)
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.mem[key]; ok {
		delete(p.verified, collectionKey(c, m.CollectionID))
	}
	delete(p.mem, key)
	p.loadDiskLocked()
	if _, ok := p.disk[key]; ok {
		delete(p.disk, key)
		p.saveDiskLocked(key, nil)
	}
}

// VerifyTTL is how long R2R's confirmation that a collection exists is trusted.
const VerifyTTL = 60 * time.Second

func collectionKey(c *r2r.Client, id string) string {
	return c.BaseURL() + "\x00" + c.Identity() + "\x00" + id
}

// Verify checks that collection id exists in R2R for c's credentials, asking R2R at most
// once per VerifyTTL (resolving the project's collection counts as a check; failures are
// not remembered). R2R's error is returned as is: errors.Is(err, r2r.ErrNotFound) means the
// collection is gone, and the caller should Forget the mapping when it was the project's.
// Concurrent checks of one collection share one request.
func (p *ProjectResolver) Verify(ctx context.Context, c *r2r.Client, id string) error {
	key := collectionKey(c, id)
	p.mu.Lock()
	at, ok := p.verified[key]
	p.mu.Unlock()
	if ok && p.clock().Sub(at) < VerifyTTL {
		return nil
	}
	_, _, err := cache.Flight(ctx, &p.sf, "verify\x00"+key, func(ctx context.Context) (struct{}, error) {
		_, err := c.GetCollection(ctx, id)
		if err == nil {
			p.mu.Lock()
			p.verified[key] = p.clock()
			p.mu.Unlock()
		}
		return struct{}{}, err
	})
	if err != nil {
		p.mu.Lock()
		delete(p.verified, key)
		p.mu.Unlock()
	}
	return err
}

// UserID returns the id of the R2R user c's credentials act as (GET /v3/users/me; with
// authentication off in R2R, the default admin). It is asked once per R2R URL and
// credential identity and remembered for the life of the resolver; failures are not
// remembered. Concurrent first calls share one request.
func (p *ProjectResolver) UserID(ctx context.Context, c *r2r.Client) (string, error) {
	key := c.BaseURL() + "\x00" + c.Identity()
	p.mu.Lock()
	id, ok := p.users[key]
	p.mu.Unlock()
	if ok {
		return id, nil
	}
	id, _, err := cache.Flight(ctx, &p.sf, "me\x00"+key, func(ctx context.Context) (string, error) {
		u, err := c.Me(ctx)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(u.ID) == "" {
			return "", &projectError{msg: fmt.Sprintf("R2R at %s did not say which user the credentials belong to (GET /v3/users/me returned no id), so no document id can be derived. Check the R2R version and the credentials (`r2r-mcp doctor`).", c.BaseURL())}
		}
		p.mu.Lock()
		p.users[key] = u.ID
		p.mu.Unlock()
		return u.ID, nil
	})
	return id, err
}

// pendingMembership is a document whose collection membership is checked once R2R has
// finished ingesting it (see Deps.ensureMembership).
type pendingMembership struct {
	collection string
	since      time.Time
}

// Bounds of the pending-membership table: entries older than maxMembershipAge are dropped,
// and at most maxMemberships are kept.
const (
	maxMembershipAge = 30 * time.Minute
	maxMemberships   = 1000
)

// expectMembership records that docID, uploaded by this server, belongs in collection once
// R2R has ingested it.
func (p *ProjectResolver) expectMembership(docID, collection string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	for id, m := range p.memberships {
		if now.Sub(m.since) > maxMembershipAge {
			delete(p.memberships, id)
		}
	}
	if len(p.memberships) >= maxMemberships {
		return
	}
	p.memberships[docID] = pendingMembership{collection: collection, since: now}
}

// expectedMembership returns the collection docID should be checked against, if any.
func (p *ProjectResolver) expectedMembership(docID string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.memberships[docID]
	return m.collection, ok
}

// membershipSettled forgets docID's pending membership.
func (p *ProjectResolver) membershipSettled(docID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.memberships, docID)
}

func (p *ProjectResolver) cacheFile() string {
	switch p.opts.CacheFile {
	case "-":
		return ""
	case "":
		dir, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		return filepath.Join(dir, "r2r-mcp", "projects.json")
	}
	return p.opts.CacheFile
}

type diskFile struct {
	Version  int                      `json:"version"`
	Projects map[string]cachedMapping `json:"projects"`
}

func (p *ProjectResolver) readDisk() map[string]cachedMapping {
	path := p.cacheFile()
	if path == "" {
		return map[string]cachedMapping{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return map[string]cachedMapping{}
	}
	var f diskFile
	if err := json.Unmarshal(b, &f); err != nil || f.Projects == nil {
		p.log.Warn("ignoring unreadable project cache", "path", path)
		return map[string]cachedMapping{}
	}
	return f.Projects
}

func (p *ProjectResolver) loadDiskLocked() {
	if p.diskLoaded {
		return
	}
	p.disk = p.readDisk()
	p.diskLoaded = true
}

// saveDiskLocked re-reads the file (another r2r-mcp process may have written it), applies
// one change (m == nil deletes key) and replaces the file atomically with mode 0600.
func (p *ProjectResolver) saveDiskLocked(key string, m *cachedMapping) {
	path := p.cacheFile()
	if path == "" {
		return
	}
	cur := p.readDisk()
	if m == nil {
		delete(cur, key)
	} else {
		cur[key] = *m
	}
	b, err := json.MarshalIndent(diskFile{Version: 1, Projects: cur}, "", "  ")
	if err != nil {
		return
	}
	if err := auth.WritePrivateFile(path, b); err != nil {
		p.log.Warn("cannot save project cache", "path", path, "error", err)
	}
}
