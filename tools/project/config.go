package project

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// MaxConfigBytes bounds .r2r-mcp.json; it holds one short setting.
const MaxConfigBytes = 64 << 10

// configEntry is the last parse of one .r2r-mcp.json, valid while the file is unchanged.
type configEntry struct {
	rel string // the file read, relative to the real project root
	fi  os.FileInfo
	cfg fileConfig
}

// fileConfig is what project resolution reads of .r2r-mcp.json.
type fileConfig struct {
	// Collection is the project's collection: a name, or (a team's) id.
	Collection string `json:"collection"`
	// Owner is the team collection's owner as "r2r-mcp team init" recorded it (an email):
	// a teammate who is not a member yet cannot read the collection to learn whom to ask.
	Owner string `json:"owner"`
}

func (e configEntry) matches(rel string, fi os.FileInfo) bool {
	return e.fi != nil && e.rel == rel && os.SameFile(e.fi, fi) && e.fi.Size() == fi.Size() &&
		e.fi.ModTime().Equal(fi.ModTime())
}

// readConfig returns the configuration in cfgPath (empty when there is no file or it sets
// nothing). The file must be a regular file; a symlink is followed only to a regular
// file inside the project root. It is read without blocking, from the descriptor that was
// checked, up to MaxConfigBytes, and its parse is reused while path, inode, size and
// modification time stay the same. Every problem is a *Error.
func (p *Resolver) readConfig(root, cfgPath string) (fileConfig, error) {
	lfi, err := os.Lstat(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileConfig{}, nil
	case err != nil:
		return fileConfig{}, &Error{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, confine.UnwrapPathErr(err))}
	}
	realRoot, rel, err := configLocation(root, cfgPath, lfi)
	if err != nil {
		return fileConfig{}, err
	}
	notRegular := func(fi os.FileInfo) error {
		return &Error{msg: fmt.Sprintf("%s Replace %s with a regular file containing {\"collection\": \"<name or id>\"}, or remove it.",
			confine.RegularFile(cfgPath, fi).Error(), ConfigFile)}
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return fileConfig{}, &Error{msg: fmt.Sprintf("Cannot open the project root %s: %v.", realRoot, confine.UnwrapPathErr(err))}
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	if err != nil {
		return fileConfig{}, &Error{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, confine.UnwrapPathErr(err))}
	}
	if !fi.Mode().IsRegular() {
		return fileConfig{}, notRegular(fi)
	}
	if fi.Size() > MaxConfigBytes {
		return fileConfig{}, configTooLarge(cfgPath)
	}
	p.mu.Lock()
	e, ok := p.configs[cfgPath]
	p.mu.Unlock()
	if ok && e.matches(rel, fi) {
		return e.cfg, nil
	}

	f, ofi, err := confine.OpenChecked(r, rel, fi)
	switch {
	case errors.Is(err, confine.ErrFileChanged):
		return fileConfig{}, &Error{msg: fmt.Sprintf("%s changed while it was being read; try again.", cfgPath)}
	case err != nil:
		return fileConfig{}, &Error{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, confine.UnwrapPathErr(err))}
	}
	defer f.Close()
	if !ofi.Mode().IsRegular() {
		return fileConfig{}, notRegular(ofi)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return fileConfig{}, &Error{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, confine.UnwrapPathErr(err))}
	}
	if len(b) > MaxConfigBytes {
		return fileConfig{}, configTooLarge(cfgPath)
	}
	var cfg fileConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fileConfig{}, &Error{msg: fmt.Sprintf("%s is not valid JSON (%v); expected {\"collection\": \"<name or id>\"}.", cfgPath, err)}
	}
	cfg.Collection, cfg.Owner = strings.TrimSpace(cfg.Collection), strings.TrimSpace(cfg.Owner)
	p.mu.Lock()
	p.configs[cfgPath] = configEntry{rel: rel, fi: ofi, cfg: cfg}
	p.mu.Unlock()
	return cfg, nil
}

// configLocation resolves the project root and the configuration file's path relative to
// it; a symlinked configuration must point inside the project.
func configLocation(root, cfgPath string, lfi os.FileInfo) (realRoot, rel string, err error) {
	if realRoot, err = confine.RealPath(root); err != nil {
		return "", "", &Error{msg: fmt.Sprintf("Cannot resolve the project root %s: %v.", root, confine.UnwrapPathErr(err))}
	}
	if lfi.Mode()&os.ModeSymlink == 0 {
		return realRoot, ConfigFile, nil
	}
	target, err := filepath.EvalSymlinks(cfgPath)
	if err != nil {
		return "", "", &Error{msg: fmt.Sprintf("%s is a symlink whose target cannot be read (%v). Replace it with a regular file containing {\"collection\": \"<name or id>\"}, or remove it.", cfgPath, confine.UnwrapPathErr(err))}
	}
	if confine.IsSystemPath(target) || !confine.Within(realRoot, target) {
		return "", "", &Error{msg: fmt.Sprintf("%s is a symlink to %s, outside the project root %s; r2r-mcp only reads its configuration from inside the project. Replace it with a regular file, or remove it.", cfgPath, target, realRoot)}
	}
	if rel, err = filepath.Rel(realRoot, target); err != nil {
		return "", "", &Error{msg: fmt.Sprintf("Cannot read %s: %v.", cfgPath, err)}
	}
	return realRoot, rel, nil
}

func configTooLarge(cfgPath string) error {
	return &Error{msg: fmt.Sprintf("%s is larger than %d KiB, the limit for r2r-mcp's project configuration; it should hold only {\"collection\": \"<name or id>\"}.", cfgPath, MaxConfigBytes>>10)}
}
