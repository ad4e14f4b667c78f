package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"github.com/dustin/go-humanize"
)

// CredentialsFileName is the name of the plain-text fallback store in the config dir.
const CredentialsFileName = "credentials.json"

// FileStore keeps Secrets in a JSON file readable only by the user (0600, directory 0700):
// the fallback for machines without any keyring (ErrNoKeyring), or with --insecure-storage.
type FileStore struct {
	Path string
}

// fileMu serialises read-modify-write cycles on credential files within this process.
// Across processes the atomic rename keeps the file whole; the last writer wins.
var fileMu sync.Mutex

type credentialsFile struct {
	// Credentials maps the normalised R2R URL to its Secret.
	Credentials map[string]Secret `json:"credentials"`
}

// Source is the credential source name of this store: "file <path>".
func (s *FileStore) Source() Source { return FileSource(s.Path) }

// Load returns the Secret stored for url, or ErrNoCredential.
func (s *FileStore) Load(_ context.Context, url string) (Secret, error) {
	fileMu.Lock()
	defer fileMu.Unlock()
	f, err := s.read()
	if err != nil {
		return Secret{}, err
	}
	sec, ok := f.Credentials[url]
	if !ok {
		return Secret{}, ErrNoCredential
	}
	if err := sec.Validate(); err != nil {
		return Secret{}, fmt.Errorf("%s: %w; run r2r-mcp login again", s.Path, err)
	}
	return sec, nil
}

// Save stores sec for url, keeping other URLs' entries.
func (s *FileStore) Save(_ context.Context, url string, sec Secret) error {
	if err := sec.Validate(); err != nil {
		return err
	}
	fileMu.Lock()
	defer fileMu.Unlock()
	f, err := s.read()
	if err != nil && !errors.Is(err, ErrInsecureFile) {
		return err
	}
	f.Credentials[url] = sec
	return s.write(f)
}

// Delete removes the entry for url (and the file when it becomes empty); ErrNoCredential
// when there was none.
func (s *FileStore) Delete(_ context.Context, url string) error {
	fileMu.Lock()
	defer fileMu.Unlock()
	f, err := s.read()
	if err != nil && !errors.Is(err, ErrInsecureFile) {
		return err
	}
	if _, ok := f.Credentials[url]; !ok {
		return ErrNoCredential
	}
	delete(f.Credentials, url)
	if len(f.Credentials) == 0 {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", s.Path, err)
		}
		return nil
	}
	return s.write(f)
}

// ErrInsecureFile is returned when the credentials file can be read by other users.
var ErrInsecureFile = errors.New("credentials file is readable by other users")

// ErrForeignFile is returned when the credentials file belongs to another user: its secret
// is not this user's to use, and that user could replace it at will.
var ErrForeignFile = errors.New("credentials file belongs to another user")

// ErrCorruptFile is returned when the credentials file is not one r2r-mcp wrote: not valid
// JSON, far too large, or not a regular file. Login sets such a file aside (SetAside).
var ErrCorruptFile = errors.New("credentials file is not valid JSON")

// maxCredentialsFileBytes bounds a read of the credentials file. r2r-mcp writes a few
// hundred bytes per R2R; a file this large is not its own, and reading it whole would cost
// every command and serve the memory and time.
const maxCredentialsFileBytes = 1 << 20

// fileProblem is an error about the credentials file that leads with what to do and
// matches its sentinel (ErrCorruptFile, ErrInsecureFile).
type fileProblem struct {
	is   error
	text string
}

func (e *fileProblem) Error() string        { return e.text }
func (e *fileProblem) Is(target error) bool { return target == e.is }

// SetAside renames a corrupt credentials file to <path>.corrupt so that a login can write a
// new one, and returns the new name.
func (s *FileStore) SetAside() (string, error) {
	fileMu.Lock()
	defer fileMu.Unlock()
	to := s.Path + ".corrupt"
	if err := os.Rename(s.Path, to); err != nil {
		return "", fmt.Errorf("move %s aside: %w", s.Path, err)
	}
	return to, nil
}

// read loads the file; a missing file is empty. A file others can read is refused with
// ErrInsecureFile (the returned content is still usable by Save and Delete, which rewrite
// it with mode 0600).
func (s *FileStore) read() (credentialsFile, error) {
	f := credentialsFile{Credentials: map[string]Secret{}}
	b, err := s.readBounded()
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(s.Path)
		if err != nil {
			return f, fmt.Errorf("read %s: %w", s.Path, err)
		}
		if owner, me, ok := fileOwner(fi); ok && owner != me {
			return f, fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d), so r2r-mcp will not use it; "+
				"remove it and run r2r-mcp login", ErrForeignFile, s.Path, owner, me)
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return credentialsFile{Credentials: map[string]Secret{}}, fmt.Errorf("%w: %s; run r2r-mcp login (it sets the file aside and writes a new one)", ErrCorruptFile, s.Path)
	}
	if f.Credentials == nil {
		f.Credentials = map[string]Secret{}
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(s.Path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return f, &fileProblem{ErrInsecureFile, fmt.Sprintf("run `chmod 600 %s`: the credentials file has mode %04o, "+
				"readable by other users, so r2r-mcp does not use it", s.Path, fi.Mode().Perm())}
		}
	}
	return f, nil
}

// readBounded reads the credentials file, refusing (and naming) one that is not a regular
// file or is larger than maxCredentialsFileBytes. The open does not block on a FIFO.
func (s *FileStore) readBounded() ([]byte, error) {
	fh, err := os.OpenFile(s.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", s.Path, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Path, err)
	}
	setAside := "run r2r-mcp login (it sets the file aside and writes a new one)"
	if what := notRegular(fi.Mode()); what != "" {
		return nil, &fileProblem{ErrCorruptFile, fmt.Sprintf("the credentials file %s is %s, not a regular file: %s", s.Path, what, setAside)}
	}
	tooLarge := func(n int64) error {
		return &fileProblem{ErrCorruptFile, fmt.Sprintf("the credentials file %s is %s, far larger than r2r-mcp writes "+
			"(a few hundred bytes per R2R), so it is not r2r-mcp's or was damaged: %s", s.Path, humanize.IBytes(uint64(n)), setAside)}
	}
	if fi.Size() > maxCredentialsFileBytes {
		return nil, tooLarge(fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxCredentialsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Path, err)
	}
	if len(b) > maxCredentialsFileBytes {
		return nil, tooLarge(int64(len(b)))
	}
	return b, nil
}

func (s *FileStore) write(f credentialsFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := WritePrivateFile(s.Path, append(b, '\n')); err != nil {
		return err
	}
	if runtime.GOOS != "windows" {
		// The directory is ours alone; tighten it if something created it wider.
		if err := os.Chmod(filepath.Dir(s.Path), 0o700); err != nil {
			return fmt.Errorf("restrict %s: %w", filepath.Dir(s.Path), err)
		}
	}
	return nil
}
