package memory

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Signature patterns: what differs between two occurrences of one error. They are
// compiled on first use, not when the binary starts.
var (
	sigUUID = lazyRE(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	sigTemp = lazyRE(`(?i)(/tmp|/var/folders|/private/var|[a-z]:\\users\\[^\\\s]+\\appdata\\local\\temp|\$tmpdir)[^\s:'"),]*`)
	// a number, or a word with one (addresses, hashes, ids)
	sigNumber = lazyRE(`\w*\d\w*`)
	sigSpaces = lazyRE(`\s+`)
	// A line (trimmed, lower case) that says where rather than what: a frame of a Go, Java,
	// JS or Python trace, a trace's header, a test runner's verdict.
	sigFrame = lazyRE(`^(at |file "|goroutine \d|traceback \(most recent|caused by:|\.\.\. \d+ more|created by |exit status|\[signal |--- fail|fail\b|ok\s)`)
	// A frame that is a position (path:line, Go's "+0x1d" after it) or a call.
	sigPathPos = lazyRE(`^\S+\.\w+:\d+(:\d+)?( \+0x[0-9a-f]+)?$|^[\w./*()\[\]-]+\(.*\)$`)
)

// lazyRE is expr compiled on first use.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Signature is the normalised signature of an error text: its message line (the first
// that is no stack frame, so a pasted trace does not change it) in lower case, with ids,
// temp paths and every number or word holding a digit (addresses, hashes, line numbers,
// pids, ports, timestamps) replaced, so two occurrences of one error have one signature;
// "" for no message.
func Signature(errText string) string {
	line := MessageLine(errText)
	line = strings.ToLower(line)
	line = sigTemp().ReplaceAllString(line, "<tmp>")
	line = sigUUID().ReplaceAllString(line, "<id>")
	line = sigNumber().ReplaceAllString(line, "<n>")
	return strings.TrimSpace(sigSpaces().ReplaceAllString(line, " "))
}

// MessageLine is the first line of s that says what went wrong rather than where (a stack
// frame); the first line when every one looks like a frame.
func MessageLine(s string) string {
	var fallback string
	code := false // an indented line after a Python frame is its source code
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if fallback == "" {
			fallback = t
		}
		lower := strings.ToLower(t)
		wasCode := code
		code = strings.HasPrefix(lower, `file "`)
		indented := strings.TrimLeft(l, " \t") != l
		if (wasCode && indented) || code || sigFrame().MatchString(lower) || sigPathPos().MatchString(lower) {
			continue
		}
		return t
	}
	return fallback
}

// SameError reports whether two signatures name one error: equal, or one holding the
// other (a message with a prefix such as a log time or a wrapping "open config:").
func SameError(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	const minHeld = 16
	return a == b || (len(b) >= minHeld && strings.Contains(a, b)) || (len(a) >= minHeld && strings.Contains(b, a))
}

// Indexed returns every searchable memory of kind that no other memory supersedes, newest
// first: one exact full-text search (see fullText) of up to supersededLimit chunks and one
// for what supersedes them, however large the collection (a listing reads all of it).
func (s *Store) Indexed(ctx context.Context, kind string) ([]Memory, error) {
	res, err := fullText(ctx, s.API, s.CollectionID, supersededLimit,
		map[string]any{MetaKind: map[string]any{"$eq": kind}})
	if err != nil {
		return nil, err
	}
	var ms []Memory
	seen := map[string]bool{}
	for _, c := range res.ChunkSearchResults {
		if m, ok := FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && m.Kind == kind && !seen[m.ID] {
			seen[m.ID] = true
			ms = append(ms, m)
		}
	}
	ms, err = s.current(ctx, ms)
	if err != nil {
		return nil, err
	}
	newestFirst(ms)
	s.withAuthors(ctx, ms)
	return ms, nil
}

// Pattern is one recurring error signature among the fixes.
type Pattern struct {
	Signature string
	Count     int
	Newest    Memory // the newest fix of it
}

// Patterns groups fixes (newest first, as Indexed returns them) by signature: most fixes
// first, then newest.
func Patterns(fixes []Memory) []Pattern {
	var out []Pattern
	index := map[string]int{}
	for _, m := range fixes {
		sig := Signature(m.Error)
		if sig == "" {
			sig = Signature(m.Title)
		}
		if i, ok := index[sig]; ok {
			out[i].Count++
			continue
		}
		index[sig] = len(out)
		out = append(out, Pattern{Signature: sig, Count: 1, Newest: m})
	}
	slices.SortStableFunc(out, func(a, b Pattern) int { return b.Count - a.Count })
	return out
}
