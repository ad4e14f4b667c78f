// Package confine decides whether a file a caller names may be uploaded to R2R, and reads
// it if so: inside one of the allowed roots (as written and as resolved), a regular file
// that is not a secret by name or content (secretscan's rules), within R2R's size limit
// for its type, and text when R2R has no parser for it. It also holds the path checks
// other readers of project files share.
package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/tools/safeopen"
	"github.com/r2r-mcp/r2r-mcp/tools/secretscan"
)

// Refusal kinds of path confinement (the "type" of the error result).
const (
	Outside  = "path_outside_project"
	Special  = "not_a_regular_file"
	Missing  = "file_not_found"
	Secret   = "secret_file"
	TooLarge = "file_too_large"
	Type     = "unsupported_file_type"
	System   = "system_path"
	HardLink = "hard_link"
	// Unscannable: R2R would read text from the file that the secret scan cannot.
	Unscannable = "unscannable_file"
	// Empty: the file holds no text (see Blank).
	Empty = "empty_file"
)

// Error is a refusal to read a file; nothing has been sent to R2R.
type Error struct {
	Kind string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func refuse(kind, format string, a ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// maxUploadBytes is R2R's default per-extension upload limit (decimal
// MB). Extensions R2R accepts but lists no limit for use OtherMaxBytes.
var maxUploadBytes = map[string]int64{
	"txt": 2e6, "md": 2e6, "tsv": 2e6,
	"csv": 5e6, "html": 5e6,
	"doc": 10e6, "docx": 10e6, "xls": 10e6, "xlsx": 10e6, "epub": 10e6,
	"ppt": 20e6, "pptx": 20e6,
	"pdf": 30e6,
	"odt": 5e6, "eml": 5e6, "msg": 5e6, "p7s": 5e6, "bmp": 5e6, "heic": 5e6, "jpeg": 5e6,
	"jpg": 5e6, "png": 5e6, "tiff": 5e6, "rtf": 5e6, "rst": 5e6, "org": 5e6,
}

// OtherMaxBytes bounds the remaining accepted types. R2R's code default is 2 MB and
// its shipped config 200 GiB; r2r-mcp reads the file into memory, so it keeps to the
// largest per-type default.
const OtherMaxBytes = 30e6

// documentTypes are the extensions R2R ingests; others get 415.
var documentTypes = []string{"mp3", "csv", "eml", "msg", "p7s", "epub", "xls", "xlsx", "html", "htm",
	"bmp", "heic", "jpeg", "png", "tiff", "jpg", "svg", "md", "org", "odt", "pdf", "txt", "json", "ppt",
	"pptx", "rst", "rtf", "tsv", "gif", "doc", "docx", "py", "js", "ts", "css"}

// Limit is the largest file of extension ext (lower case, no dot) R2R accepts.
func Limit(ext string) int64 {
	if n, ok := maxUploadBytes[ext]; ok {
		return n
	}
	return OtherMaxBytes
}

// systemPrefixes are pseudo-filesystems: their "regular" files (/proc/self/environ) expose
// process state and secrets.
var systemPrefixes = []string{"/proc", "/sys", "/dev"}

// File is a file that passed every rule, with its content.
type File struct {
	Abs  string // real absolute path (symlinks resolved)
	Rel  string // path relative to its root, forward slashes
	Root string // the root it lies in (real path)
	Ext  string // lower-case extension without the dot
	Data []byte
	// AsText is true for a text file of a type R2R has no parser for (source code, YAML,
	// Makefile…): it is sent as text, titled with its path.
	AsText bool
	// InProject is false for files from an extra root.
	InProject bool
	// Links is the file's hard-link count. More than one means the same content is also
	// reachable under another name, possibly outside the root; it is reported, not refused
	// (editors and build tools create hard links routinely).
	Links uint64
}

// Read applies the confinement rules to a caller's path and reads the file.
// Relative paths are taken from the first root (the project root). Every failure is a
// *Error that names the rule and the way out.
func Read(p string, roots []string) (*File, error) {
	loc, err := locate(p, roots)
	if err != nil {
		return nil, err
	}
	return loc.read(p, roots)
}

// located is a caller's path that passed the rules on names: inside a root (as written and
// as resolved), not a system path, not a secret's name.
type located struct {
	real, root string // resolved path, and the root it lies in
	rel        string // relative to root, OS separators
	relSlash   string // the same with forward slashes
}

// locate applies the rules on names to p.
func locate(p string, roots []string) (*located, error) {
	if len(roots) == 0 {
		return nil, refuse(Outside, "No project root is known, so no file can be ingested. Start r2r-mcp inside the project.")
	}
	if strings.ContainsRune(p, 0) {
		return nil, refuse(Outside, "file_path contains a NUL byte.")
	}
	realRoots := make([]string, 0, len(roots))
	for _, r := range roots {
		rr, err := RealPath(r)
		if err != nil {
			continue // a configured extra root that does not exist does not widen anything
		}
		realRoots = append(realRoots, rr)
	}
	if len(realRoots) == 0 {
		return nil, refuse(Outside, "The project root %s cannot be read.", roots[0])
	}

	cand := p
	if !filepath.IsAbs(cand) {
		cand = filepath.Join(realRoots[0], cand)
	}
	cand = filepath.Clean(cand)
	if IsSystemPath(cand) {
		return nil, refuse(System, "%s is inside a system pseudo-filesystem (/proc, /sys, /dev); those files are never ingested.", p)
	}
	// Judge the lexical path first, so "../x" is refused as an escape even when it happens
	// to resolve back inside. Absolute paths may name a root as given or as resolved.
	bases := slices.Clone(realRoots)
	for _, r := range roots {
		if abs, err := filepath.Abs(r); err == nil {
			bases = append(bases, abs)
		}
	}
	if !slices.ContainsFunc(bases, func(b string) bool { return Within(b, cand) }) {
		return nil, refuse(Outside, "%s is outside the project root %s. Only files inside the project (or configured extra roots) can be ingested; copy the file into the project first.", p, realRoots[0])
	}

	real, err := filepath.EvalSymlinks(cand)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, refuse(Missing, "%s does not exist. Give a path relative to the project root %s, or an absolute path inside it.", p, realRoots[0])
		}
		return nil, refuse(Missing, "%s cannot be read: %v.", p, UnwrapPathErr(err))
	}
	if IsSystemPath(real) {
		return nil, refuse(System, "%s resolves to %s, a system pseudo-filesystem; those files are never ingested.", p, real)
	}
	root := ""
	for _, rr := range realRoots {
		if Within(rr, real) {
			root = rr
			break
		}
	}
	if root == "" {
		return nil, refuse(Outside, "%s is a symlink that points outside the project (%s). Only files really inside the project root %s can be ingested.", p, real, realRoots[0])
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." {
		return nil, refuse(Special, "%s is the project root itself, not a file.", p)
	}
	relSlash := filepath.ToSlash(rel)
	if why := secretscan.Path(relSlash); why != "" {
		return nil, refuse(Secret, "%s looks like a secret (%s) and is never uploaded. If it really holds documentation, copy the text to a file with another name.", relSlash, why)
	}
	return &located{real: real, root: root, rel: rel, relSlash: relSlash}, nil
}

// read opens the located file beneath its root and reads it, checking type, extension and
// size on the handle that is read.
func (l *located) read(p string, roots []string) (*File, error) {
	real, root, rel, relSlash := l.real, l.root, l.rel, l.relSlash
	// Everything below happens through a handle on the root: os.Root resolves rel beneath
	// it, so a directory of rel swapped for a link leaving the root after the checks above
	// is refused instead of followed. Type and size are checked again on the descriptor
	// that is read, which must be the file that was checked. (A swap that stays inside the
	// root is followed; it needs write access to the project, which could copy a file into
	// place just as well.)
	rootFS, err := os.OpenRoot(root)
	if err != nil {
		return nil, refuse(Outside, "The root %s cannot be opened: %v.", root, UnwrapPathErr(err))
	}
	defer rootFS.Close()
	fi, err := rootFS.Lstat(rel)
	if err != nil {
		return nil, openRefusal(p, root, err)
	}
	if err := RegularFile(p, fi); err != nil {
		return nil, err
	}
	limit, _, _ := Limits(relSlash)
	if fi.Size() > limit {
		return nil, Oversize(relSlash, fi.Size())
	}

	data, links, err := readRegular(rootFS, rel, p, root, fi, limit)
	if err != nil {
		return nil, err
	}
	checked, err := Check(relSlash, data)
	if err != nil {
		return nil, err
	}
	ext, asText := checked.Ext, checked.AsText
	projectRoot, _ := RealPath(roots[0])
	return &File{Abs: real, Rel: relSlash, Root: root, Ext: ext, Data: data, AsText: asText, InProject: root == projectRoot, Links: links}, nil
}

// Limits is what the ingest rules allow of a file named rel: the most bytes R2R takes for
// its type, its extension, and whether it goes as text (R2R has no parser for its type).
func Limits(rel string) (limit int64, ext string, asText bool) {
	ext = strings.TrimPrefix(strings.ToLower(path.Ext(rel)), ".")
	asText = ext == "" || !slices.Contains(documentTypes, ext)
	if asText {
		return maxTextBytes, ext, asText
	}
	return Limit(ext), ext, asText
}

// Oversize is the refusal of the file rel of size bytes, over what R2R takes for its type.
func Oversize(rel string, size int64) *Error {
	limit, ext, asText := Limits(rel)
	return refuse(TooLarge, "%s is %s; R2R accepts at most %s for %s. Split it or export a smaller version.", rel, HumanBytes(size), HumanBytes(limit), typeLabel(ext, asText))
}

// Check applies the ingest rules on content to data, the bytes of the file rel (forward
// slashes, relative to its root), wherever they were read from: size, secrets in the name
// and in the content as R2R will read it, and text for types R2R has no parser for. The
// File it returns has Rel, Ext, Data and AsText set.
func Check(rel string, data []byte) (*File, error) {
	limit, ext, asText := Limits(rel)
	if int64(len(data)) > limit {
		return nil, Oversize(rel, int64(len(data)))
	}
	relSlash := rel
	// The path becomes the document's title and metadata, which R2R indexes too.
	if found, ok := secretscan.Find([]byte(relSlash)); ok {
		return nil, refuse(Secret, "The path of this file contains what looks like a secret (%s); it would become the document's title, so the file is not uploaded. Rename it.", found.Rule)
	}
	if Blank(data) {
		return nil, EmptyFile(relSlash)
	}
	// Scanned as R2R will read it: text sent as raw_text is read as a .txt file.
	scanExt := ext
	if asText {
		scanExt = "txt"
	}
	found, ok, err := secretscan.FindIn(scanExt, data)
	if err != nil {
		return nil, refuse(Unscannable, "%s is not uploaded: %s, so it could hold a secret no scan has seen. "+
			"Export its text to a .md or .txt file and ingest that instead.", relSlash, err)
	}
	if ok {
		return nil, refuse(Secret, "%s contains what looks like a secret (%s) and is never uploaded. "+
			"Remove the credential from the file, or copy the documentation without it to another file, and ingest that.", relSlash, found.Rule)
	}
	if asText && !isText(data) {
		return nil, refuse(Type, "%s is a binary file (%s) that R2R has no parser for. Export its content to text, markdown or PDF and ingest that instead. Types R2R parses: %s.", relSlash, typeLabel(ext, false), strings.Join(documentTypes, " "))
	}
	return &File{Rel: relSlash, Ext: ext, Data: data, AsText: asText}, nil
}

// Blank reports whether data holds no text: nothing but whitespace (Unicode's), after a
// UTF-8 byte order mark. R2R 3.6.6 stores such a file or raw_text as a successful document
// with no chunks, refuses an empty raw_text with a 422, and stores such chunks as they are:
// there is nothing to search either way (conformance tests
// TestLive/ingestion_outcomes/blank_* and empty_*).
func Blank(data []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF")))) == 0
}

// EmptyFile is the refusal of the file rel, which holds no text (Blank).
func EmptyFile(rel string) *Error {
	return refuse(Empty, "%s is empty (nothing but whitespace): there is no text in it to search, so nothing is sent to R2R. "+
		"Write its content and ingest it again; r2r-mcp sync counts such files as empty and skips them.", rel)
}

// maxTextBytes bounds files sent as text (R2R's limit for .txt files).
const maxTextBytes = 2e6

// isText reports whether data looks like text: valid UTF-8 without NUL bytes (files R2R
// has no parser for are sent as text only then).
func isText(data []byte) bool {
	return utf8.Valid(data) && !bytes.ContainsRune(data, 0)
}

func typeLabel(ext string, asText bool) string {
	switch {
	case asText:
		return "text files"
	case ext == "":
		return "no extension"
	}
	return "." + ext + " files"
}

// ErrFileChanged reports that the file opened is not the one that was checked.
var ErrFileChanged = errors.New("the file changed while it was being checked")

// OpenChecked opens rel (beneath root, native separators) read-only without blocking on
// FIFOs or devices, and checks on the open descriptor that it is the file checked (same
// device and inode). The caller must read from the returned file only.
func OpenChecked(root *os.Root, rel string, checked os.FileInfo) (*os.File, os.FileInfo, error) {
	f, err := safeopen.Open(root, rel, os.O_RDONLY|noBlockFlag)
	if errors.Is(err, safeopen.ErrChanged) {
		return nil, nil, ErrFileChanged
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !os.SameFile(fi, checked) {
		f.Close()
		return nil, fi, ErrFileChanged
	}
	return f, fi, nil
}

// readRegular opens rel beneath root (see OpenChecked), re-checks type and size on the
// descriptor, and reads at most limit bytes. It also reports the file's hard-link count.
func readRegular(root *os.Root, rel, p, rootPath string, checked os.FileInfo, limit int64) ([]byte, uint64, error) {
	f, fi, err := OpenChecked(root, rel, checked)
	switch {
	case errors.Is(err, ErrFileChanged):
		return nil, 0, refuse(Special, "%s changed while it was being checked; try again.", p)
	case err != nil:
		return nil, 0, openRefusal(p, rootPath, err)
	}
	defer f.Close()
	if err := RegularFile(p, fi); err != nil {
		return nil, 0, err
	}
	if n := linkCount(fi); n > 1 {
		return nil, 0, refuse(HardLink, "%s has %d hard links: the same file is also reachable under another name, possibly outside the project, so it is not read. "+
			"To ingest it anyway, make an independent copy inside the project (cp, not ln) and ingest the copy.", p, n)
	}
	if fi.Size() > limit {
		return nil, 0, refuse(TooLarge, "%s grew beyond %s while being checked.", p, HumanBytes(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, refuse(Missing, "%s cannot be read: %v.", p, UnwrapPathErr(err))
	}
	if int64(len(data)) > limit {
		return nil, 0, refuse(TooLarge, "%s grew beyond %s while being read.", p, HumanBytes(limit))
	}
	return data, linkCount(fi), nil
}

// openRefusal maps a failure to stat or open a checked path beneath its root: it vanished,
// or something was swapped in that os.Root will not follow (a link leaving the root).
func openRefusal(p, root string, err error) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return refuse(Missing, "%s disappeared while it was being checked.", p)
	}
	if errors.Is(err, fs.ErrPermission) {
		return refuse(Missing, "%s cannot be read: %v.", p, UnwrapPathErr(err))
	}
	return refuse(Outside, "%s cannot be opened beneath %s (%v): part of its path changed or now leaves the root. Only files really inside the project can be ingested.", p, root, UnwrapPathErr(err))
}

// RegularFile refuses fi (the file named p) unless it is a regular file, saying what it is.
func RegularFile(p string, fi os.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return refuse(Special, "%s is a directory. Ingest its files one at a time.", p)
	case m&os.ModeNamedPipe != 0:
		return refuse(Special, "%s is a named pipe (FIFO), not a regular file.", p)
	case m&os.ModeSocket != 0:
		return refuse(Special, "%s is a socket, not a regular file.", p)
	case m&os.ModeDevice != 0 || m&os.ModeCharDevice != 0:
		return refuse(Special, "%s is a device file, not a regular file.", p)
	case !m.IsRegular():
		return refuse(Special, "%s is not a regular file.", p)
	}
	return nil
}

// IsSystemPath reports whether p lies in a pseudo-filesystem (/proc, /sys, /dev).
func IsSystemPath(p string) bool {
	if runtime.GOOS == "windows" {
		return false
	}
	for _, pre := range systemPrefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// Within reports whether p is root or below it (both clean absolute paths).
func Within(root, p string) bool {
	if root == p {
		return true
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// RealPath is the absolute path with every symlink resolved.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// UnwrapPathErr drops the path an *fs.PathError repeats, for messages that name it already.
func UnwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// HumanBytes formats n bytes in decimal units, as r2r-mcp's messages show sizes.
func HumanBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
