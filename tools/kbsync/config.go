package kbsync

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ConfigFile is the project's r2r-mcp configuration in its root. Sync reads its
// "include" and "exclude" glob lists (see Globs); the rest belongs to project resolution.
const ConfigFile = ".r2r-mcp.json"

const maxConfigBytes = 64 << 10

// LoadGlobs reads the include/exclude globs of root's ConfigFile (none when it is
// missing). The file is opened beneath root and must be a regular file.
func LoadGlobs(root string) (Globs, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Globs{}, err
	}
	defer r.Close()
	f, err := r.Open(ConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Globs{}, nil
	}
	if err != nil {
		return Globs{}, fmt.Errorf("reading %s: %w", ConfigFile, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return Globs{}, fmt.Errorf("%s is not a regular file", ConfigFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return Globs{}, fmt.Errorf("reading %s: %w", ConfigFile, err)
	}
	if len(b) > maxConfigBytes {
		return Globs{}, fmt.Errorf("%s is larger than %d KiB", ConfigFile, maxConfigBytes>>10)
	}
	var g Globs
	if err := json.Unmarshal(b, &g); err != nil {
		return Globs{}, fmt.Errorf("%s is not valid JSON: %v", ConfigFile, err)
	}
	if err := g.Validate(); err != nil {
		return Globs{}, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	return g, nil
}
