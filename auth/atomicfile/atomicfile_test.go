package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		old     string // "" = no file before
		perm    fs.FileMode
		missing bool // the directory does not exist
	}{
		{name: "new private file", perm: 0o600},
		{name: "replaces a file and sets its mode", old: "old content that is longer", perm: 0o644},
		{name: "missing directory", perm: 0o600, missing: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := dir
			if tt.missing {
				target = filepath.Join(dir, "absent")
			}
			path := filepath.Join(target, "f.json")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, []byte("new"), tt.perm)
			if tt.missing {
				if err == nil {
					t.Fatal("Write into a missing directory succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Fatalf("content = %q, %v; want new", got, err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != tt.perm {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.perm)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 1 {
				t.Errorf("directory holds %v (%v), want only f.json: a temporary file was left behind", entries, err)
			}
		})
	}
}

// TestWriteFailureKeepsTheOldFile: when the rename cannot happen (the target is a
// directory), the target is unchanged and no temporary file remains.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "target")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		t.Errorf("directory holds %v (%v), want only the untouched target", entries, err)
	}
}

// TestWriteNew: WriteNew creates a file with its content and mode, and never replaces one.
func TestWriteNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bak")
	if err := WriteNew(path, []byte("first"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(path, []byte("second"), 0o640); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteNew over an existing file: %v, want fs.ErrExist", err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "first" {
		t.Fatalf("content = %q, %v; want first", got, err)
	}
	if fi, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640) {
		t.Errorf("stat = %v, %v; want mode 0640", fi, err)
	}
}
