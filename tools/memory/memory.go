// Package memory keeps a team's memories in R2R: one small document per memory in the
// project's collection, so search and RAG see it too, with metadata under keys of its own
// (prefix r2r_mcp_) that R2R's filters read as metadata, never as one of its columns. The
// same normalised content is the same memory (a deterministic id), a memory that
// supersedes another replaces it without a moment in which neither is found, every byte is
// secret-scanned before it leaves, and sync never takes a memory for a file it wrote (a
// memory has no source_path). The tools and the memory command share it.
package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/secretscan"
)

// Kinds of memory.
const (
	KindDecision   = "decision"
	KindConvention = "convention"
	KindFix        = "fix"
	KindGotcha     = "gotcha"
	KindCheckpoint = "checkpoint"
	KindNote       = "note"
)

// Kinds lists every kind, in the order tools and listings show them.
var Kinds = []string{KindDecision, KindConvention, KindFix, KindGotcha, KindCheckpoint, KindNote, KindSkill}

// TextKinds are the kinds whose body is free text (a skill's is a SKILL.md).
var TextKinds = []string{KindDecision, KindConvention, KindFix, KindGotcha, KindCheckpoint, KindNote}

// Metadata keys of a memory document. R2R reads a bare filter key such as type, status, id
// or text as one of its own columns; every key here carries the r2r_mcp_ prefix, which no
// R2R column has (conformance test memory_filters).
const (
	// MetaKind holds the kind; its presence marks the document as a memory.
	MetaKind       = "r2r_mcp_memory"
	MetaTitle      = "r2r_mcp_title"
	MetaCreated    = "r2r_mcp_created_at"
	MetaCreatedSec = "r2r_mcp_created_unix" // a number, for age filters
	MetaPaths      = "r2r_mcp_paths"
	MetaTags       = "r2r_mcp_tags"
	MetaCommit     = "r2r_mcp_commit"
	MetaSupersedes = "r2r_mcp_supersedes"
	MetaSHA        = "r2r_mcp_content_sha256"
	MetaError      = "r2r_mcp_error"
	MetaExcerpt    = "r2r_mcp_excerpt"
)

// Bounds of a memory's fields (bytes unless named).
const (
	MaxTitleChars = 200
	MaxBodyBytes  = 8 << 10
	MaxErrorBytes = 2 << 10
	MaxPaths      = 20
	MaxPathChars  = 512
	MaxTags       = 10
	MaxTagChars   = 64
	// excerptChars bounds the one-line excerpt kept in metadata (the index clips further).
	excerptChars = 160
)

// Namespace is the UUIDv5 namespace of memory ids.
var Namespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/r2r-mcp/r2r-mcp/memories"))

// Draft is a memory as the caller writes it.
type Draft struct {
	Kind, Title, Body string
	Error             string   // the error text a fix resolves
	Paths             []string // project files it is about, relative to the project root
	Tags              []string
	Supersedes        string // id of the memory it replaces
	Version           int    // of a skill: 1, then one more each time it changes (SaveSkill)
}

// Memory is one stored memory, as read back from R2R's metadata. Its author is the owner
// of its document, which R2R sets to the account that created it; the metadata, which
// anyone creating a document can write, never names it.
type Memory struct {
	ID      string
	Kind    string
	Title   string
	Error   string
	Excerpt string
	OwnerID string // R2R's owner_id of the document
	// Author is the owner's email as R2R gives it, "user <id prefix>" when R2R does not
	// say (the owner is no member of the collection); set by the Store.
	Author     string
	Created    time.Time
	Paths      []string
	Tags       []string
	Commit     string
	Supersedes string
	SHA        string
	// Description and Version of a skill.
	Description string
	Version     int
}

// Error is a draft r2r-mcp refuses: Field names the argument, Msg says why. A secret's
// Msg names the scanner's rule, never the text.
type Error struct {
	Field  string
	Msg    string
	Secret bool
}

func (e *Error) Error() string { return e.Field + " " + e.Msg }

// Normalise returns d with its text in canonical form (NFC, LF line ends, no trailing
// blanks, at most one empty line in a row, no control characters but tab and newline;
// title and tags on one line; paths cleaned, relative, sorted and unique; tags sorted and
// unique), or an *Error
// for a draft that breaks a bound.
func Normalise(d Draft) (Draft, error) {
	out := Draft{Kind: strings.ToLower(strings.TrimSpace(d.Kind)), Title: oneLine(d.Title),
		Body: text(d.Body), Error: text(d.Error), Supersedes: strings.ToLower(strings.TrimSpace(d.Supersedes)), Version: d.Version}
	maxBody := MaxBodyBytes
	if out.Kind == KindSkill {
		var err error
		if out, err = normaliseSkill(out); err != nil {
			return Draft{}, err
		}
		maxBody = MaxSkillBytes
	}
	switch {
	case !slices.Contains(Kinds, out.Kind):
		return Draft{}, &Error{Field: "kind", Msg: fmt.Sprintf("must be one of %s", strings.Join(Kinds, ", "))}
	case out.Title == "":
		return Draft{}, &Error{Field: "title", Msg: "must not be blank"}
	case utf8.RuneCountInString(out.Title) > MaxTitleChars:
		return Draft{}, &Error{Field: "title", Msg: fmt.Sprintf("is longer than %d characters; put the detail in body", MaxTitleChars)}
	case out.Body == "":
		return Draft{}, &Error{Field: "body", Msg: "must not be blank"}
	case len(out.Body) > maxBody:
		return Draft{}, &Error{Field: "body", Msg: fmt.Sprintf("is %d bytes; a memory holds at most %d (save the essentials, or several memories)", len(out.Body), maxBody)}
	case len(out.Error) > MaxErrorBytes:
		return Draft{}, &Error{Field: "error", Msg: fmt.Sprintf("is %d bytes; keep the first %d bytes of the error (its message line matters most)", len(out.Error), MaxErrorBytes)}
	case out.Error != "" && out.Kind != KindFix:
		return Draft{}, &Error{Field: "error", Msg: "is for kind fix only (the error text the fix resolves)"}
	case out.Supersedes != "" && uuid.Validate(out.Supersedes) != nil:
		return Draft{}, &Error{Field: "supersedes", Msg: "must be the id (UUID) of the memory this one replaces"}
	}
	var err error
	if out.Paths, err = cleanPaths(d.Paths); err != nil {
		return Draft{}, err
	}
	if out.Tags, err = cleanTags(d.Tags); err != nil {
		return Draft{}, err
	}
	return out, nil
}

// cleanPaths makes paths relative, slash-separated, cleaned, sorted and unique.
func cleanPaths(in []string) ([]string, error) {
	return cleanList("paths", in, MaxPaths, MaxPathChars, func(p string) (string, string) {
		c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
		switch {
		case c == ".":
			return "", ""
		case path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../"):
			return c, fmt.Sprintf("has %q, which is not inside the project: name files relative to the project root",
				clip(strings.ReplaceAll(p, `\`, "/"), 80))
		}
		return c, ""
	})
}

func cleanTags(in []string) ([]string, error) {
	return cleanList("tags", in, MaxTags, MaxTagChars, func(t string) (string, string) { return t, "" })
}

// cleanList is the rule paths and tags share: at most max entries, each made one line, none
// blank (key "" is blank too) or over maxChars characters, none that key refuses (its second
// result says why); duplicate keys dropped, sorted.
func cleanList(field string, in []string, max, maxChars int, key func(string) (string, string)) ([]string, error) {
	if len(in) > max {
		return nil, &Error{Field: field, Msg: fmt.Sprintf("has %d entries; at most %d", len(in), max)}
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = oneLine(s)
		k, refused := key(s)
		switch {
		case s == "" || k == "":
			return nil, &Error{Field: field, Msg: "has a blank entry"}
		case utf8.RuneCountInString(s) > maxChars:
			return nil, &Error{Field: field, Msg: fmt.Sprintf("has an entry longer than %d characters", maxChars)}
		case refused != "":
			return nil, &Error{Field: field, Msg: refused}
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// oneLine is s in NFC with every run of white space (newlines too) one space, trimmed,
// and control characters dropped.
func oneLine(s string) string {
	return strings.Join(strings.Fields(dropControls(norm.NFC.String(s))), " ")
}

// text is s in NFC with LF line ends, no trailing blanks on a line, at most one empty line
// in a row, no control characters but tab and newline, trimmed.
func text(s string) string {
	s = strings.ReplaceAll(norm.NFC.String(s), "\r\n", "\n")
	s = dropControls(strings.ReplaceAll(s, "\r", "\n"))
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" && blank {
			continue
		}
		blank = l == ""
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// dropControls removes control characters other than tab and newline (Postgres refuses
// NUL in text, and the others only hide what a memory says).
func dropControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == utf8.RuneError) {
			return -1
		}
		return r
	}, s)
}

// ContentSHA is the hex SHA-256 of a normalised draft's content: kind, title, error and
// body. Paths and tags describe a memory; they do not make another one.
func ContentSHA(d Draft) string {
	return kbsync.SHA256([]byte(d.Kind + "\x00" + d.Title + "\x00" + d.Error + "\x00" + d.Body))
}

// ID is the id of the memory with content hash sha that user ownerID saves in collection
// collectionID: the same content saved again by the same user is one document. The owner
// is part of it so that teammates never contend for one id; since anyone can compute it,
// Remember checks whose document holds it (see Remember).
func ID(collectionID, ownerID, sha string) string {
	return uuid.NewSHA1(Namespace, []byte(collectionID+"/"+ownerID+"/memory#sha256:"+sha)).String()
}

// Label is the document title a memory carries: search and RAG list it labelled as a
// memory of its kind.
func Label(kind, title string) string { return "memory (" + kind + "): " + title }

// Text is the text R2R indexes for a memory: its label, the error a fix resolves (first,
// so a pasted error meets it in the first chunk), paths and tags, an empty line, then the
// body.
func Text(d Draft) string { return header(d) + "\n" + d.Body + "\n" }

func header(d Draft) string {
	var b strings.Builder
	b.WriteString(Label(d.Kind, d.Title) + "\n")
	if d.Error != "" {
		b.WriteString("Error:\n" + d.Error + "\n")
	}
	if len(d.Paths) > 0 {
		b.WriteString("Paths: " + strings.Join(d.Paths, ", ") + "\n")
	}
	if len(d.Tags) > 0 {
		b.WriteString("Tags: " + strings.Join(d.Tags, ", ") + "\n")
	}
	return b.String()
}

// Body is the body of a memory document's text (see Text); the whole text when it does
// not have the form Text gives it.
func Body(m Memory, txt string) string {
	head := header(Draft{Kind: m.Kind, Title: m.Title, Error: m.Error, Paths: m.Paths, Tags: m.Tags}) + "\n"
	if rest, ok := strings.CutPrefix(strings.ReplaceAll(txt, "\r\n", "\n"), head); ok {
		return strings.TrimSpace(rest)
	}
	return strings.TrimSpace(txt)
}

// Stamp is what a memory records about its saving besides its content.
type Stamp struct {
	// UserID is the R2R user the credentials act as, who will own the document.
	UserID string
	Time   time.Time
	Commit string // the project's git HEAD; "" outside a repository
}

// Metadata is the metadata of a memory document for the normalised draft d.
func Metadata(d Draft, sha string, st Stamp) map[string]any {
	md := map[string]any{
		"title":        Label(d.Kind, d.Title),
		MetaKind:       d.Kind,
		MetaTitle:      d.Title,
		MetaCreated:    st.Time.UTC().Format(time.RFC3339Nano),
		MetaCreatedSec: st.Time.Unix(),
		MetaPaths:      anyList(d.Paths),
		MetaTags:       anyList(d.Tags),
		MetaSHA:        sha,
		MetaExcerpt:    clip(oneLine(d.Body), excerptChars),
	}
	if d.Error != "" {
		md[MetaError] = d.Error
	}
	if st.Commit != "" {
		md[MetaCommit] = st.Commit
	}
	if d.Supersedes != "" {
		md[MetaSupersedes] = d.Supersedes
	}
	if d.Kind == KindSkill {
		skillMetadata(d, md)
	}
	return md
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Secret reports the scanner's rule when a memory holds what looks like a secret: in its
// text, also where the text disguises one (encoded, escaped, reversed, split by an
// invisible character), in its short fields joined (a token split across two tags), and
// in its metadata as R2R would store it (decoded from its JSON too).
func Secret(d Draft, md map[string]any) (rule string, found bool) {
	if f, ok := secretscan.FindEncoded([]byte(Text(d))); ok {
		return f.Rule, true
	}
	pieces := append([]string{d.Title, d.Error}, d.Paths...)
	if f, ok := secretscan.FindJoined(append(pieces, d.Tags...)); ok {
		return f.Rule, true
	}
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(md); err != nil {
		return "", false
	}
	if f, ok, _ := secretscan.FindIn("json", enc.Bytes()); ok {
		return f.Rule, true
	}
	return "", false
}

// FromMetadata reads a memory from the metadata of a document (or chunk) of owner
// ownerID; ok is false when it is no memory.
func FromMetadata(id, ownerID string, md map[string]any) (Memory, bool) {
	str := func(k string) string { s, _ := md[k].(string); return s }
	kind := str(MetaKind)
	if !slices.Contains(Kinds, kind) {
		return Memory{}, false
	}
	m := Memory{ID: id, Kind: kind, Title: str(MetaTitle), Error: str(MetaError), Excerpt: str(MetaExcerpt),
		OwnerID: ownerID, Commit: str(MetaCommit),
		Supersedes: str(MetaSupersedes), SHA: str(MetaSHA), Paths: strList(md[MetaPaths]), Tags: strList(md[MetaTags])}
	m.Description = str(MetaDescription)
	if v, ok := md[MetaVersion].(float64); ok {
		m.Version = int(v)
	} else if v, ok := md[MetaVersion].(int); ok {
		m.Version = v
	}
	if t, err := time.Parse(time.RFC3339, str(MetaCreated)); err == nil {
		m.Created = t
	}
	return m, true
}

// FromDocument reads a memory from an R2R document; ok is false when it is no memory.
func FromDocument(doc r2r.Document) (Memory, bool) {
	m, ok := FromMetadata(doc.ID, doc.OwnerID, doc.Metadata)
	if !ok {
		return Memory{}, false
	}
	if m.Created.IsZero() {
		m.Created = doc.CreatedAt.Time
	}
	return m, true
}

func strList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// clip cuts s to at most n runes, marking a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
