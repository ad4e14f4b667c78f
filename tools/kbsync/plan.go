package kbsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// FileReader reads one file of the project under the ingest rules (confinement, secrets,
// size limits, types). rel is relative to the project root with forward slashes. A file
// the rules refuse gives a *Refusal.
type FileReader interface {
	ReadFile(rel string) (File, error)
}

// Reserver is a FileReader that bounds the memory the files being written hold: Run
// reserves a file's share before reading it to write it, and releases it once the file is
// written. An error is why the file was not written.
type Reserver interface {
	Reserve(ctx context.Context, rel string) (release func(), err error)
}

// Refusal is a file the ingest rules do not let through; nothing of it was sent.
type Refusal struct {
	Kind   string // e.g. secret_file, file_too_large, unsupported_file_type
	Reason string // why, and what to do
}

func (r *Refusal) Error() string { return r.Reason }

// Options configure a Syncer.
type Options struct {
	// Root is the project root (absolute); Dir the directory to sync inside it ("" = Root).
	Root, Dir string
	Globs     Globs
	// Prune deletes the documents of files no longer in the synced set (deleted, now
	// ignored or excluded), after a complete scan.
	Prune bool
	// Concurrency bounds the files read and documents written at once; 0 = 4.
	Concurrency int
	Files       FileReader
	// Hashes remembers content hashes across runs; nil = every file is read.
	Hashes *HashCache
	// Team, when set, makes this a team sync (see Team); nil = every file goes to the
	// Writer's collection as the caller's own.
	Team *Team
}

// Syncer syncs one directory of a project into its collection.
type Syncer struct {
	Opts Options
	// Writer writes the plan's files, read again with Opts.Files, to its Scope's
	// collection, whose manifest the plan reads (in a team sync, the caller's private
	// layer; Team.Writer writes the team's version).
	Writer *Writer

	blobMu sync.Mutex
	blobs  map[string]string // listed file -> git object id, in a team sync
}

// Item is one file the plan uploads or replaces.
type Item struct {
	Path string    `json:"path"`
	SHA  string    `json:"content_sha256,omitempty"`
	Old  []Version `json:"-"`
	// Blob and Size are a team-layer item's object in the ref (its content is read from
	// there, not from the work tree).
	Blob string `json:"-"`
	Size int64  `json:"-"`
}

// Deletion is one document the plan prunes.
type Deletion struct {
	Path       string `json:"path"`
	DocumentID string `json:"document_id"`
	// SHA is the content hash the document records ("" before content hashes).
	SHA string `json:"-"`
	// OwnerID is the document's owner, when another member's document may be retired.
	OwnerID string `json:"-"`
}

// Problem is a file that was refused or failed, with the reason. Its desc and required
// tags describe it where a tool's output lists problems.
type Problem struct {
	Path   string `json:"path" required:"true" desc:"file path relative to the project root"`
	Kind   string `json:"kind,omitempty" desc:"kind of problem, e.g. secret_file, unsupported_file_type, r2r"`
	Reason string `json:"reason" required:"true" desc:"why, and what to do"`
}

// Plan is what a sync will do.
type Plan struct {
	Files     int        `json:"files"` // files listed and selected by the globs
	Upload    []Item     `json:"upload"`
	Replace   []Item     `json:"replace"`
	Unchanged int        `json:"unchanged"`
	Delete    []Deletion `json:"delete"`
	Refused   []Problem  `json:"refused"`
	// Empty counts the files that hold no text (confine.Blank): nothing of them is sent, and
	// the documents of one that had text are deleted (in Delete) — its content is now nothing.
	Empty int `json:"empty"`
	// PruneSkipped says why nothing is pruned although Prune was asked for ("" = it was
	// not asked for, or the scan was complete). Run may keep some documents for a reason
	// of its own (see Summary).
	PruneSkipped string `json:"prune_skipped,omitempty"`
	// Stale are documents of files no longer in the synced set that are kept because
	// Prune was not asked for (StaleKept words it).
	Stale int `json:"stale"`
	// Team is the team layer's part of a team sync (nil otherwise); the fields above are
	// then the caller's private layer.
	Team *TeamPlan `json:"team,omitempty"`
}

func (o *Options) concurrency() int {
	if o.Concurrency <= 0 {
		return 4
	}
	return o.Concurrency
}

func (o *Options) dir() string {
	if o.Dir == "" {
		return o.Root
	}
	return o.Dir
}

// Plan lists the files, reads the collection's manifest and compares content hashes.
func (s *Syncer) Plan(ctx context.Context) (*Plan, error) {
	o := &s.Opts
	if err := o.Globs.Validate(); err != nil {
		return nil, err
	}
	files, skipped, err := listFiles(ctx, o.Root, o.dir())
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return !o.Globs.Match(f) })
	slices.Sort(files)
	if o.Team != nil {
		return s.planTeamSync(ctx, files, skipped)
	}
	m := &Manifest{Paths: map[string][]Version{}} // no collection yet: nothing in it
	if s.Writer.Scope.CollectionID != "" {
		if m, err = LoadManifest(ctx, s.Writer.API, s.Writer.Scope); err != nil {
			return nil, err
		}
	}
	p := &Plan{Upload: []Item{}, Replace: []Item{}, Delete: []Deletion{}, Refused: []Problem{}}
	hashes, present, unchecked, blank, err := s.hashAll(ctx, files, p)
	if err != nil {
		return nil, err
	}
	// A file emptied since it was synced has nothing to search: its documents go, as an
	// older version's go once a file changes.
	for _, f := range sortedKeys(blank) {
		for _, v := range m.Paths[f] {
			p.Delete = append(p.Delete, Deletion{Path: f, DocumentID: v.ID, SHA: v.SHA})
		}
	}
	// A file that could not be read might be any file moved there, whose old document is the
	// only copy left: nothing is pruned. One that already has documents under its own path
	// was not moved there, and keeps only those.
	incomplete := ""
	for _, f := range sortedKeys(unchecked) {
		p.Refused = append(p.Refused, unreadable(f, unchecked[f]))
		if incomplete == "" && len(m.Paths[f]) == 0 {
			incomplete = fmt.Sprintf("%s could not be checked (%s)", f, errText(unchecked[f]))
		}
	}
	p.Files = len(present)
	for _, f := range files {
		sha, ok := hashes[f]
		if !ok {
			continue
		}
		classify(p, f, sha, m.Paths[f])
	}
	p.Refused = append(p.Refused, skipped...)
	prefix, _ := filepath.Rel(o.Root, o.dir())
	prefix = filepath.ToSlash(prefix)
	var gone []Deletion
	for _, pth := range sortedKeys(m.Paths) {
		if present[pth] || !within(prefix, pth) {
			continue
		}
		if prob := s.unproven(pth, skipped); prob != nil {
			// Not listed, but not proven gone either: its documents stay.
			if prob.Path != "" {
				p.Refused = append(p.Refused, *prob)
			}
			continue
		}
		for _, v := range m.Paths[pth] {
			if o.Prune {
				gone = append(gone, Deletion{Path: pth, DocumentID: v.ID, SHA: v.SHA})
			} else {
				p.Stale++
			}
		}
	}
	slices.SortFunc(p.Refused, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	if o.Prune && incomplete != "" {
		p.PruneSkipped = incomplete
		p.Stale += len(gone)
		gone = nil
	}
	p.Delete = append(p.Delete, gone...)
	return p, nil
}

// unproven returns nil when the file pth (not listed) is proven gone from the synced set:
// it does not exist, or it does and the listing left it out (ignored, excluded). Otherwise
// it says why it could not be looked at (with no Path when a skipped directory holding it
// was reported already).
func (s *Syncer) unproven(pth string, skipped []Problem) *Problem {
	_, err := os.Lstat(filepath.Join(s.Opts.Root, filepath.FromSlash(pth)))
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	for _, sk := range skipped {
		if within(sk.Path, pth) {
			return &Problem{}
		}
	}
	prob := unreadable(pth, err)
	return &prob
}

// classify puts one file into the plan given its documents.
func classify(p *Plan, f, sha string, old []Version) {
	it := Item{Path: f, SHA: sha, Old: old}
	current := false
	for _, v := range old {
		current = current || (v.SHA == sha && v.Status == r2r.IngestionSuccess)
	}
	switch {
	case len(old) == 0:
		p.Upload = append(p.Upload, it)
	case current && len(old) == 1:
		p.Unchanged++
	default:
		p.Replace = append(p.Replace, it)
	}
}

// hashAll hashes the files (from the hash cache when size and modification time match),
// concurrently. present holds every file that exists (refused ones too: their documents
// are not pruned); unchecked holds the files that could not be read, with the error; blank
// the files that hold no text (counted in p.Empty).
func (s *Syncer) hashAll(ctx context.Context, files []string, p *Plan) (hashes map[string]string, present map[string]bool, unchecked map[string]error, blank map[string]bool, err error) {
	o := &s.Opts
	hashes, present, unchecked, blank = map[string]string{}, map[string]bool{}, map[string]error{}, map[string]bool{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.concurrency())
	for _, f := range files {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			sha, exists, prob, err := s.hashOne(f)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				present[f] = true
				unchecked[f] = err
			case !exists:
				o.Hashes.Forget(f)
			case prob != nil && prob.Kind == confine.Empty:
				present[f] = true
				blank[f] = true
				p.Empty++
			case prob != nil:
				present[f] = true
				// A document written for a name R2R could not store holds the name it did
				// store: it may be this file's, so it is not pruned either.
				present[storedName(f)] = true
				p.Refused = append(p.Refused, *prob)
			default:
				present[f] = true
				hashes[f] = sha
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, nil, nil, err
	}
	slices.SortFunc(p.Refused, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return hashes, present, unchecked, blank, nil
}

// hashOne returns a file's hash, or that it does not exist (any more), or why it is
// refused (Kind confine.Empty: it holds no text, whether the reader refused it so or not).
// err is an unexpected failure to look at it. A file with no text is read again by every
// sync, as a refused one is: it is small, and has no hash worth keeping.
func (s *Syncer) hashOne(rel string) (sha string, exists bool, prob *Problem, err error) {
	o := &s.Opts
	if r := nameRefusal(rel); r != nil {
		return "", true, &Problem{Path: rel, Kind: r.Kind, Reason: r.Reason}, nil
	}
	fi, err := os.Lstat(filepath.Join(o.Root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil, nil
	case errors.Is(err, syscall.ENAMETOOLONG):
		prob := unreadable(rel, err)
		return "", true, &prob, nil
	case err != nil:
		return "", true, nil, err
	case fi.IsDir():
		return "", false, nil, nil // a submodule's work tree
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", true, &Problem{Path: rel, Kind: "symlink", Reason: "a symbolic link; its target is synced under its own path when it is inside the project"}, nil
	}
	format := o.Team.objectFormat()
	if sha, blob, ok := o.Hashes.Get(rel, fi.Size(), fi.ModTime()); ok && (format == "" || blob != "") {
		s.noteBlob(rel, blob)
		return sha, true, nil, nil
	}
	f, err := o.Files.ReadFile(rel)
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		return "", true, &Problem{Path: rel, Kind: ref.Kind, Reason: ref.Reason}, nil
	case err != nil:
		return "", true, nil, err
	case confine.Blank(f.Data):
		return "", true, &Problem{Path: rel, Kind: confine.Empty}, nil
	}
	sha = SHA256(f.Data)
	blob := BlobID(format, f.Data)
	o.Hashes.Put(rel, fi.Size(), fi.ModTime(), sha, blob)
	s.noteBlob(rel, blob)
	return sha, true, nil, nil
}

// noteBlob records a listed file's git object id for a team sync's comparison with the
// team's ref.
func (s *Syncer) noteBlob(rel, blob string) {
	if blob == "" {
		return
	}
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	if s.blobs == nil {
		s.blobs = map[string]string{}
	}
	s.blobs[rel] = blob
}

// within reports whether pth lies in directory prefix ("." or "" = everywhere).
func within(prefix, pth string) bool {
	if prefix == "" || prefix == "." {
		return true
	}
	return pth == prefix || strings.HasPrefix(pth, prefix+"/")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// StaleKept says that n documents of files no longer in the project are kept: one wording
// for sync's summary and analytics' index lag.
func StaleKept(n int) string {
	return fmt.Sprintf("%d document(s) of files no longer in the project are kept", n)
}
