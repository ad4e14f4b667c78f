// Package project finds the project an r2r-mcp call works in (the client's roots, the
// working directory, the git root above it, the .r2r-mcp.json there) and maps it to its R2R
// collection, remembering mappings in memory and on disk, and the R2R user the credentials
// act as.
package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/homedir"
)

// ConfigFile is the per-project override file in the project root:
// {"collection": "<collection name or id>"}.
const ConfigFile = ".r2r-mcp.json"

// CollectionPrefix is prepended to the project name to name its default collection.
const CollectionPrefix = "claude-code-"

// Options configure a Resolver.
type Options struct {
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
	// Now is the clock VerifyTTL is measured on; nil = time.Now.
	Now func() time.Time
}

// Project is the project a call works in.
type Project struct {
	Name           string // base name of Root
	Root           string // the git root above the start directory, else the start directory
	CollectionName string // the configured collection name, or claude-code-<Name>
	CollectionID   string // a collection id configured in .r2r-mcp.json; "" otherwise
	ConfigFile     string // the .r2r-mcp.json that configured the collection; "" if none
	// TeamOwner is the team collection's owner as .r2r-mcp.json records it; "" if none.
	TeamOwner string
}

// Collection is the project's collection in R2R.
type Collection struct {
	Project Project
	ID      string // "" when it does not exist yet
	Name    string
	Created bool // created by this call
}

// Exists reports whether the collection exists in R2R.
func (pc *Collection) Exists() bool { return pc.ID != "" }

// Resolver maps the working project to an R2R collection: the client's MCP roots if
// offered, else the working directory; up to the git root; .r2r-mcp.json overrides; else
// the collection claude-code-<project>, created on the first write. Mappings are cached in
// memory and on disk and revalidated on 404 (and by Verify, at most once per VerifyTTL).
// It also remembers, per R2R URL and credential, the R2R user id (UserID), which document
// ids depend on. It is safe for concurrent use.
type Resolver struct {
	opts Options
	log  *slog.Logger

	disk *mappingFile // mappings kept across runs

	mu            sync.Mutex
	rootsProvider func(ctx context.Context) ([]string, error)
	roots         []string // client roots as file paths; nil = not known
	rootsAsked    bool
	mem           map[string]cachedMapping // key: cacheKey
	validated     map[string]bool          // disk entries checked against R2R in this process
	configs       map[string]configEntry   // .r2r-mcp.json path → its last parse
	warnedRoots   map[string]bool          // roots already warned about (home, /)
	verified      map[string]time.Time     // collectionKey → last time R2R confirmed it exists
	users         map[string]User          // R2R URL + credential identity → R2R user

	sf singleflight.Group
}

// NewResolver returns a resolver; nothing is read until the first call.
func NewResolver(opts Options) *Resolver {
	l := opts.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &Resolver{opts: opts, log: l, disk: &mappingFile{path: mappingPath(opts.CacheFile), log: l},
		mem: map[string]cachedMapping{}, validated: map[string]bool{}, configs: map[string]configEntry{},
		warnedRoots: map[string]bool{}, verified: map[string]time.Time{}, users: map[string]User{}}
}

// CacheFile is the file mappings are kept in across runs; "" when there is none.
func (p *Resolver) CacheFile() string { return p.disk.path }

func (p *Resolver) clock() time.Time {
	if p.opts.Now != nil {
		return p.opts.Now()
	}
	return time.Now()
}

// SetRootsProvider installs a function that asks the MCP client for its roots (file://
// URIs); the server wires it to mcp-go's RequestRoots. A successful answer (also an
// empty one: the client has no roots) is kept until InvalidateRoots; after an error the
// working directory is used and the client is asked again on the next call.
func (p *Resolver) SetRootsProvider(f func(ctx context.Context) ([]string, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rootsProvider = f
	p.rootsAsked = false
}

// SetRoots sets the client's roots directly (file:// URIs or paths).
func (p *Resolver) SetRoots(uris []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = rootPaths(uris)
	p.rootsAsked = true
}

// InvalidateRoots forgets the client's roots so they are asked for again; call it on
// notifications/roots/list_changed.
func (p *Resolver) InvalidateRoots() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = nil
	p.rootsAsked = false
}

func (p *Resolver) clientRoots(ctx context.Context) []string {
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

func (p *Resolver) workDir() (string, error) {
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
func (p *Resolver) Project(ctx context.Context) (Project, error) {
	if p.opts.Remote {
		return Project{}, ErrRemote
	}
	wd, err := p.workDir()
	if err != nil {
		return Project{}, fmt.Errorf("cannot determine the working directory: %w", err)
	}
	start := wd
	if roots := p.clientRoots(ctx); len(roots) > 0 {
		start = roots[0]
		for _, r := range roots {
			if confine.Within(r, wd) {
				start = r
				break
			}
		}
	}
	root, inGit := p.projectRoot(start)
	return p.projectAt(root, inGit)
}

// RepositoryIn is the project of the git repository holding dir, when its root is inside
// within (serve --http syncs a repository under an --allow-dir root as a local sync would:
// its own name, its .r2r-mcp.json, paths relative to it); ok is false when dir is in no
// repository inside within.
func (p *Resolver) RepositoryIn(within, dir string) (pr Project, ok bool, err error) {
	root, inGit := gitRoot(dir)
	if !inGit || !confine.Within(within, root) || tooWide(root) {
		return Project{}, false, nil
	}
	pr, err = p.projectAt(root, true)
	return pr, err == nil, err
}

// projectAt is the project rooted at root, with its .r2r-mcp.json.
func (p *Resolver) projectAt(root string, inGit bool) (Project, error) {
	pr := Project{Name: projectName(root, inGit), Root: root}
	pr.CollectionName = CollectionPrefix + pr.Name

	cfgPath := filepath.Join(root, ConfigFile)
	cfg, err := p.readConfig(root, cfgPath)
	c := cfg.Collection
	switch {
	case err != nil:
		return Project{}, err
	case c == "":
		return pr, nil
	}
	pr.ConfigFile, pr.TeamOwner = cfgPath, cfg.Owner
	if u, err := uuid.Parse(c); err == nil && len(c) == 36 {
		pr.CollectionID = u.String()
		pr.CollectionName = ""
	} else {
		pr.CollectionName = c
	}
	return pr, nil
}

// projectName names the project rooted at root: a git work tree by its base name (clones of
// one repository share it, so teammates share its collection), any other directory by its
// base name and a hash of its full path, since two unrelated folders both called "docs"
// must not share one collection and prune each other's documents.
func projectName(root string, inGit bool) string {
	if inGit {
		return filepath.Base(root)
	}
	h := sha256.Sum256([]byte(filepath.Clean(root)))
	return filepath.Base(root) + "-" + hex.EncodeToString(h[:4])
}

// projectRoot is the git root above start, unless that is too wide to be a project (the
// home directory or the file-system root); then start. inGit reports a git root.
func (p *Resolver) projectRoot(start string) (root string, inGit bool) {
	start = filepath.Clean(start)
	root, inGit = gitRoot(start)
	if root == start || !tooWide(root) {
		return root, inGit
	}
	p.mu.Lock()
	warned := p.warnedRoots[root]
	p.warnedRoots[root] = true
	p.mu.Unlock()
	if !warned {
		p.log.Warn("the git root above the start directory is the home directory or the file-system root; "+
			"using the start directory as the project instead", "git_root", root, "project_root", start)
	}
	return start, false
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

// gitRoot walks up from dir to the nearest directory containing .git (a directory, or a
// file in worktrees and submodules); dir itself, and false, when there is none.
func gitRoot(dir string) (string, bool) {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir), false
		}
		d = parent
	}
}

// Roots returns the directories files may be ingested from: the project root first, then
// the configured extra roots.
func (p *Resolver) Roots(ctx context.Context) ([]string, error) {
	pr, err := p.Project(ctx)
	if err != nil {
		return nil, err
	}
	return p.RootsOf(pr), nil
}

// Remote reports a resolver without a local project (Options.Remote).
func (p *Resolver) Remote() bool { return p.opts.Remote }

// ErrRemote is Project's answer on a remote server.
var ErrRemote = &Error{msg: "This r2r-mcp serves clients over HTTP, so it has no local project. " +
	"Tools that take collection_id need it (or the X-R2R-Collection header; r2r_list_collections shows the ids); " +
	"to keep a directory in step, pass r2r_sync the directory on the server host (inside an --allow-dir root), " +
	"or run r2r-mcp sync DIR where the files are."}

// RootsOf is Roots for a project already resolved.
func (p *Resolver) RootsOf(pr Project) []string {
	if p.opts.Remote {
		return slices.Clone(p.opts.ExtraRoots)
	}
	return append([]string{pr.Root}, p.opts.ExtraRoots...)
}

// Error is a configuration problem the user must fix; shown as is.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }
