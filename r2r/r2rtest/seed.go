package r2rtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Seed ingests every regular file under dir as the user with ownerEmail (which must exist),
// synchronously, using the same rules as POST /v3/documents: the document id is derived from
// the file's path relative to dir, unsupported extensions and oversized files are skipped and
// reported in the returned error, hidden files and directories are skipped.
func (e *Emulator) Seed(ownerEmail, dir string) error {
	return e.SeedInto(ownerEmail, dir, "")
}

// SeedInto is Seed with the documents assigned to the owner's collection named collection,
// created if the owner has none of that name; "" means the owner's default collection.
func (e *Emulator) SeedInto(ownerEmail, dir, collection string) error {
	e.mu.Lock()
	u := e.st.byEmail[strings.ToLower(ownerEmail)]
	ch := e.chunkingLocked()
	var target string
	if u != nil && collection != "" {
		target = e.ownedCollectionLocked(u, collection)
	}
	e.mu.Unlock()
	if u == nil {
		return fmt.Errorf("seed: unknown user %q", ownerEmail)
	}
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := e.seedFile(u, rel, content, ch, target); err != nil {
			errs = append(errs, fmt.Errorf("seed %s: %w", rel, err))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// ownedCollectionLocked returns the id of u's collection called name, creating it (with u
// as a member, as POST /v3/collections does) when there is none.
func (e *Emulator) ownedCollectionLocked(u *user, name string) string {
	for _, col := range e.st.collections {
		if col.ownerID == u.id && col.name == name {
			return col.id
		}
	}
	now := e.nowLocked()
	col := &collection{id: newUUID(), ownerID: u.id, name: name, clusterStatus: "pending", syncStatus: "pending",
		createdAt: now, updatedAt: now}
	e.st.collections[col.id] = col
	u.collectionIDs = append(u.collectionIDs, col.id)
	return col.id
}

func (e *Emulator) seedFile(u *user, name string, content []byte, ch chunking, collectionID string) error {
	ext := strings.ToLower(name[strings.LastIndex(name, ".")+1:])
	if !documentTypes[ext] {
		return fmt.Errorf("'%s' is not a valid DocumentType", ext)
	}
	max := int64(defaultMaxUpload)
	if m, ok := maxUploadByExt[ext]; ok {
		max = m
	}
	if int64(len(content)) > max {
		return fmt.Errorf("file size exceeds maximum of %d bytes for extension '%s'", max, ext)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	id := uuid5(strings.ReplaceAll(name, "/", "_") + "-" + u.id)
	if old := e.st.docs[id]; old != nil && old.status != "failed" {
		return fmt.Errorf("document %s already exists", id)
	}
	now := e.nowLocked()
	title := name[strings.LastIndex(name, "/")+1:]
	d := &document{id: id, ownerID: u.id, docType: ext, metadata: map[string]any{"version": "v0"}, title: &title,
		fileName: name, content: content, size: int64(len(content)), status: "parsing", createdAt: now, updatedAt: now}
	d.collectionIDs = []string{}
	if collectionID != "" {
		d.assignTo = []string{collectionID}
	}
	e.st.docs[id] = d
	return e.processLocked(d, ch)
}
