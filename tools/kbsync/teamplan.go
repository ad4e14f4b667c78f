package kbsync

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// planTeamSync is Plan for a team sync: the caller's private layer in the Plan's own fields,
// the team layer in Plan.Team.
func (s *Syncer) planTeamSync(ctx context.Context, files []string, skipped []Problem) (*Plan, error) {
	o, t := &s.Opts, s.Opts.Team
	prefix, _ := filepath.Rel(o.Root, o.dir())
	prefix = filepath.ToSlash(prefix)
	tree, err := s.refTree(ctx, t.Commit, prefix)
	if err != nil {
		return nil, err
	}
	base := tree
	if t.Base != "" && t.Base != t.Commit {
		if base, err = s.refTree(ctx, t.Base, prefix); err != nil {
			return nil, err
		}
	}
	tm, err := loadTeamManifest(ctx, t.Writer.API, t.Writer.Scope)
	if err != nil {
		return nil, err
	}
	pm := &Manifest{Paths: map[string][]Version{}}
	if s.Writer.Scope.CollectionID != "" {
		if pm, err = LoadManifest(ctx, s.Writer.API, s.Writer.Scope); err != nil {
			return nil, err
		}
	}
	p := &Plan{Upload: []Item{}, Replace: []Item{}, Delete: []Deletion{}, Refused: []Problem{}}
	hashes, present, unchecked, _, err := s.hashAll(ctx, files, p)
	if err != nil {
		return nil, err
	}
	for _, f := range sortedKeys(unchecked) {
		p.Refused = append(p.Refused, unreadable(f, unchecked[f]))
	}
	p.Refused = append(p.Refused, skipped...)
	p.Files = len(present)
	own := map[string]bool{}
	for _, f := range files {
		sha, ok := hashes[f]
		if !ok || !mine(s.blobs[f], tree, base, f) {
			continue
		}
		own[f] = true
		classify(p, f, sha, pm.Paths[f])
	}
	// A private version whose file is no longer one of the caller's differences retires:
	// the team's version is theirs again (or the file is gone). Not after an incomplete scan.
	if len(unchecked) == 0 {
		for _, pth := range sortedKeys(pm.Paths) {
			if own[pth] || !within(prefix, pth) {
				continue
			}
			for _, v := range pm.Paths[pth] {
				p.Delete = append(p.Delete, Deletion{Path: pth, DocumentID: v.ID, SHA: v.SHA})
			}
		}
	}
	slices.SortFunc(p.Refused, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	known := map[string]string{} // blob -> content hash, of the listed files
	for f, sha := range hashes {
		if b := s.blobs[f]; b != "" {
			known[b] = sha
		}
	}
	p.Team = s.planTeam(ctx, tree, tm, prefix, s.contentHash(ctx, known))
	return p, nil
}

// refTree lists the files of commit under prefix that the sync would take: selected by the
// globs, with names R2R can store.
func (s *Syncer) refTree(ctx context.Context, commit, prefix string) (map[string]TreeEntry, error) {
	tree, err := LsTree(ctx, s.Opts.Root, commit, prefix)
	if err != nil {
		return nil, fmt.Errorf("listing the files of the team's version: %w", err)
	}
	for p := range tree {
		if !s.Opts.Globs.Match(p) || nameRefusal(p) != nil {
			delete(tree, p)
		}
	}
	return tree, nil
}

// contentHash returns the SHA-256 of a blob of the ref's: known for the listed files the
// work tree has as the ref does, read from git for the others ("" when it cannot be read:
// the version is then taken as not verified).
func (s *Syncer) contentHash(ctx context.Context, known map[string]string) func(TreeEntry) string {
	return func(e TreeEntry) string {
		if sha, ok := known[e.Blob]; ok {
			return sha
		}
		data, err := ReadBlob(ctx, s.Opts.Root, e.Blob, e.Size, maxBlobBytes)
		if err != nil {
			return ""
		}
		sha := SHA256(data)
		known[e.Blob] = sha
		return sha
	}
}

// maxBlobBytes bounds a blob read to check a team document's content (R2R's largest file).
const maxBlobBytes = 200 << 20
