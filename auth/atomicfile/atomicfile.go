// Package atomicfile writes a file whole or not at all: the data goes to a temporary file
// beside it, which is synced and then renamed over the target, so a reader (or a crash)
// never meets a half-written file. Every file r2r-mcp writes goes through it: the
// credentials and configuration files, the sync hash cache, the MCP clients' configuration
// and its backups. It lives under auth because auth, the lowest layer that writes files,
// needs it.
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
		err = fill(f, data)
	} else {
		f.Close()
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteNew creates path, which must not exist (the error then matches fs.ErrExist), with
// data and permissions perm, synced to disk. On an error nothing is left at path.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if err := fill(f, data); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// fill writes data to f, syncs and closes it.
func fill(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
