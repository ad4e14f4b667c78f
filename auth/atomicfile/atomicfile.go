// Package atomicfile writes a file whole or not at all: the data goes to a temporary file
// beside it, which is synced and then renamed over the target, so a reader (or a crash)
// never meets a half-written file. Every file r2r-mcp writes in place goes through it: the
// credentials and configuration files, the sync hash cache, the MCP clients' configuration.
// It lives under auth because auth, the lowest layer that writes files, needs it.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm. The directory must exist. On an
// error path is unchanged and no temporary file is left behind.
func Write(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly after the rename
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
