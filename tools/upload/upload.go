// Package upload sends one project file to R2R the way r2r-mcp does: confined to the
// allowed roots, read within the process's memory budget for uploads, refused when it
// holds a secret, written with r2r-mcp's metadata as the current version of its document,
// and recorded in the table of uploads R2R has not finished with. It also builds the sync
// engine, which reads files under the same rules.
package upload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/secretscan"
)

// Options describe one upload.
type Options struct {
	API kbsync.API
	// Roots are the directories files may be read from, the project root first (relative
	// paths start there). With HomeRoot the first root is the user's home directory or the
	// file-system root: it only anchors relative paths, and files are read from the others.
	Roots    []string
	HomeRoot bool
	// Remote: only absolute paths inside Roots are read (serve --http).
	Remote bool
	// Exact refuses a file reached through a symbolic link: it is written under its own
	// path (sync), never under the link's.
	Exact bool
	// Metadata is the caller's own metadata; reserved keys (kbsync.ReservedKey) are refused.
	Metadata map[string]any
	// Scope resolves the collection and owner the file is written for. It is called once
	// the file has been read and passed every check, so a refused file creates nothing.
	Scope func(ctx context.Context) (kbsync.Scope, error)
	// Old are the versions the file's document has; nil = looked up in R2R.
	Old func(ctx context.Context) ([]kbsync.Version, error)
	// Mode is R2R's ingestion mode; "" = fast.
	Mode string
	// Wait bounds the wait for R2R to finish (further capped by ctx's deadline); 0 =
	// kbsync.Writer's default. With Async, a file without older versions is looked at once
	// and not waited for.
	Wait  time.Duration
	Async bool
	Poll  time.Duration // first delay between status checks; 0 = 250 ms
	// Pending records the upload until R2R has finished with it; required.
	Pending *Pending
	// Budget bounds the memory concurrent uploads hold; nil = the process's budget.
	Budget *Budget
	Now    func() time.Time // nil = time.Now
	// OnWrite is called after every change to the collection; OnStatus with each
	// ingestion status seen while waiting. Either may be nil.
	OnWrite  func()
	OnStatus func(documentID, status string)
}

// Result is what an upload did.
type Result struct {
	kbsync.Outcome
	Path     string // the name the document is shown and titled by
	FileName string // base name of the file
	Size     int64
	AsText   bool // sent as text: R2R has no parser for the type
	OldKept  bool // older versions stay until the new one has succeeded
	// Warning is a problem that did not stop the upload (older versions not deleted).
	Warning error
}

// ErrBusy reports that the memory budget for uploads had no room before ctx's deadline.
var ErrBusy = errors.New("upload: the memory budget for uploads is full")

// MetadataError refuses the caller's metadata; nothing was sent.
type MetadataError struct{ Msg string }

func (e *MetadataError) Error() string { return e.Msg }

// ScopeError wraps the error of Options.Scope; nothing was sent.
type ScopeError struct{ Err error }

func (e *ScopeError) Error() string { return e.Err.Error() }
func (e *ScopeError) Unwrap() error { return e.Err }

// WriteError is a failure to write the file to R2R. DocumentID is the id the new version
// has ("" when R2R failed before anything was sent); R2R may have stored it even so.
type WriteError struct {
	DocumentID string
	Err        error
}

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Upload reads the file at p under the confinement rules and writes it to R2R as the
// current version of its document: unchanged content sends nothing, changed content
// replaces the older versions once the new one has succeeded. Errors are *confine.Error
// (nothing read), ErrBusy, *MetadataError, *ScopeError, *WriteError, or ctx's
// cancellation while waiting for the budget.
func Upload(ctx context.Context, p string, opts Options) (*Result, error) {
	budget := opts.Budget
	if budget == nil {
		budget = shared
	}
	release, err := reserve(ctx, budget, reservation(p, opts.Roots))
	if err != nil {
		return nil, err
	}
	defer release()
	f, err := read(p, opts)
	if err != nil {
		return nil, err
	}
	md, err := metadata(opts.Metadata, f.file.Ext, f.file.AsText)
	if err != nil {
		return nil, err
	}
	sc, err := opts.Scope(ctx)
	if err != nil {
		return nil, &ScopeError{Err: err}
	}
	if sc.Root == "" { // a sync over HTTP tags its whole directory with its --allow-dir root
		sc.Root = f.root
	}
	file := kbsync.File{Path: f.rel, IDPath: f.idPath, Data: f.file.Data, AsText: f.file.AsText, Metadata: md}
	r, err := put(ctx, sc, file, opts)
	if err != nil {
		return nil, err
	}
	r.FileName, r.Size = path.Base(f.file.Rel), int64(len(f.file.Data))
	return r, nil
}

// located is a confined file with the names it is written under.
type located struct {
	file   *confine.File
	rel    string // the name it is shown and titled by
	idPath string // the path its document id is derived from
	root   string // kbsync.MetaSourceRoot: "" for project files, "extra:<id>" for an extra root's
}

// read applies the confinement rules to p and reads the file.
func read(p string, opts Options) (*located, error) {
	roots := opts.Roots
	if opts.Remote && (len(roots) == 0 || !filepath.IsAbs(p)) {
		return nil, &confine.Error{Kind: confine.Outside, Msg: "over HTTP, r2r-mcp reads only files on its own host, inside a directory " +
			"its operator opened with --allow-dir, named by absolute path. Upload the file's directory there, or ingest from a local r2r-mcp."}
	}
	// Started in the home directory (or /) with no project around it, everything there
	// (agents' own credential files included) would be "in the project": only the other
	// roots are open then (relative paths still start at the project root).
	if opts.HomeRoot && len(roots) > 0 {
		if !filepath.IsAbs(p) {
			p = filepath.Join(roots[0], p)
		}
		roots = roots[1:]
	}
	f, err := confine.Read(p, roots)
	if err != nil {
		if ce, ok := errors.AsType[*confine.Error](err); ok {
			if opts.HomeRoot && ce.Kind == confine.Outside {
				return nil, &confine.Error{Kind: confine.Outside, Msg: "the project root is " + opts.Roots[0] + ", your home directory or " +
					"the file-system root, so r2r-mcp does not ingest from it. Start your MCP client in a project " +
					"directory (or pass --project-dir), or allow one directory with --allow-dir."}
			}
			return nil, ce
		}
		return nil, &confine.Error{Kind: confine.Missing, Msg: err.Error()}
	}
	if opts.Exact && f.Rel != filepath.ToSlash(p) {
		return nil, &confine.Error{Kind: "symlink", Msg: fmt.Sprintf("%s is reached through a symbolic link (it is %s); that path is synced instead", filepath.ToSlash(p), f.Rel)}
	}
	l := &located{file: f, rel: f.Rel, idPath: f.Rel}
	if !f.InProject {
		// A file from an extra root: named by the root's base name, never by the local
		// absolute path (user name, home layout), which would end up in shared metadata.
		// Its id also depends on the root's real path, so it cannot collide with a
		// project file (or another root's) that has the same displayed name.
		l.rel = path.Join(filepath.Base(f.Root), f.Rel)
		l.root = "extra:" + uuid.NewSHA1(kbsync.DocumentNamespace, []byte(f.Root)).String()[:8]
		l.idPath = l.root + "/" + f.Rel
	}
	return l, nil
}

// metadata checks the caller's metadata: keys r2r-mcp or R2R set are refused
// (kbsync.Writer adds them and the title, the relative path, when the caller sets none).
// R2R derives a file's type from the title's extension, so a file's title must keep the
// file's extension; text is typed by R2R as text whatever its title.
func metadata(user map[string]any, ext string, asText bool) (map[string]any, error) {
	md := make(map[string]any, len(user))
	for k, v := range user {
		if why := kbsync.ReservedKey(k); why != "" {
			return nil, &MetadataError{Msg: why}
		}
		md[k] = v
	}
	// The metadata is stored and searchable in R2R (the title leads every chunk's text).
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(md); err == nil {
		if found, ok, _ := secretscan.FindIn("json", enc.Bytes()); ok {
			return nil, &MetadataError{Msg: fmt.Sprintf("the metadata contains what looks like a secret (%s); it would be stored and searchable in R2R, so nothing was sent", found.Rule)}
		}
	}
	if t, ok := md["title"]; ok {
		ts, isStr := t.(string)
		switch {
		case !isStr:
			return nil, &MetadataError{Msg: "title must be a string"}
		case !asText && !strings.EqualFold(strings.TrimPrefix(path.Ext(ts), "."), ext):
			return nil, &MetadataError{Msg: fmt.Sprintf("title must be a string ending in .%s: R2R takes the document type from the title's extension", ext)}
		}
	}
	return md, nil
}

// put writes file for sc (kbsync.Writer.Put), recorded in opts.Pending until R2R has
// finished with it.
func put(ctx context.Context, sc kbsync.Scope, file kbsync.File, opts Options) (*Result, error) {
	versions := opts.Old
	if versions == nil {
		versions = func(ctx context.Context) ([]kbsync.Version, error) {
			return kbsync.Versions(ctx, opts.API, sc, file.Path)
		}
	}
	old, err := versions(ctx)
	if err != nil {
		return nil, &WriteError{Err: err}
	}
	docID := kbsync.VersionID(sc.CollectionID, sc.UserID, cmp(file.IDPath, file.Path), kbsync.SHA256(file.Data))
	w := &kbsync.Writer{API: opts.API, Scope: sc, Mode: opts.Mode, Wait: waitFor(ctx, opts, olderVersions(old, docID)), Poll: opts.Poll,
		OnWrite: opts.OnWrite, OnStatus: opts.OnStatus, Now: opts.Now, Pending: opts.Pending}
	out, err := w.Put(ctx, file, old)
	if err != nil && out.Action == kbsync.Failed {
		return nil, &WriteError{DocumentID: docID, Err: err}
	}
	r := &Result{Outcome: out, Path: file.Path, AsText: file.AsText, Warning: err}
	r.OldKept = out.Action != kbsync.Unchanged && olderVersions(old, out.DocumentID) > len(out.Deleted)
	return r, nil
}

// olderVersions counts the versions in old other than the current one, id (which old
// holds when an earlier upload of the same content is still being ingested).
func olderVersions(old []kbsync.Version, id string) int {
	n := 0
	for _, v := range old {
		if v.ID != id {
			n++
		}
	}
	return n
}

// waitFor is how long Put waits for R2R: opts.Wait, ending 2 s before ctx's deadline so
// there is time to answer; with Async and nothing to replace, one look at R2R's status.
func waitFor(ctx context.Context, opts Options, oldVersions int) time.Duration {
	wait := opts.Wait
	if dl, ok := ctx.Deadline(); ok && wait > 0 {
		wait = min(wait, time.Until(dl)-2*time.Second)
	}
	if opts.Async && oldVersions == 0 {
		wait = time.Nanosecond
	}
	return wait
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
