// Package analytics keeps what the knowledge base was asked and how well it answered —
// searches, RAG questions, memory recalls — and reports the gaps: the questions that found
// nothing or only weak hits, with how often each was asked. Events are recorded off the
// hot path (Recorder), secret-scanned before they are kept, and stored bounded in size and
// age, per user in a file (FileStore) or per team in Redis (ListStore).
package analytics

import (
	"strings"
	"time"
	"unicode"

	"github.com/r2r-mcp/r2r-mcp/tools/secretscan"
)

// Kinds of events.
const (
	KindSearch = "search"
	KindRAG    = "rag"
	KindRecall = "recall"
)

// Bounds of one event, whatever a caller hands over: a kept event is at most a few
// hundred bytes.
const (
	MaxQueryRunes = 200
	MaxDocs       = 3
	maxDocIDBytes = 64
	maxTitleBytes = 120
	maxKinds      = 100
	maxKindBytes  = 16
)

// Withheld replaces a query that held a secret: the event is kept so counts stay true,
// the words are not.
const Withheld = "(withheld: it held a secret)"

// Event is one question put to the knowledge base.
type Event struct {
	Time  time.Time `json:"t"`
	Kind  string    `json:"k"`           // search, rag or recall
	Query string    `json:"q,omitempty"` // normalised, secret-scanned
	Hits  int       `json:"n"`           // documents found (rag: sources; recall: memories), or HitsUnknown
	// Weak: something was found but nothing that answers well (a RAG answer citing none
	// of its sources, a semantic search whose best score is below WeakScore).
	Weak   bool  `json:"w,omitempty"`
	Cached bool  `json:"c,omitempty"`
	Docs   []Doc `json:"d,omitempty"` // the best documents returned (rag: the cited ones)
	// MemoryKinds are the kinds of the memories a recall returned, one entry per memory.
	MemoryKinds []string `json:"m,omitempty"`
}

// Doc is a document an event returned.
type Doc struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// HitsUnknown is the Hits of a RAG question asked without its sources: how well it was
// answered is not known, so it is never a gap.
const HitsUnknown = -1

// WeakScore is the semantic similarity below which a basic (semantic) search's best hit
// counts as weak. Hybrid searches rank by reciprocal rank fusion, whose scores say nothing
// absolute, so they are judged by their hit count only.
const WeakScore = 0.3

// Normalize makes the same question read the same: lower case, spaces collapsed,
// punctuation at either end dropped, at most MaxQueryRunes runes.
func Normalize(q string) string {
	q = strings.Join(strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	q = strings.TrimFunc(q, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
	if r := []rune(q); len(r) > MaxQueryRunes {
		q = strings.TrimSpace(string(r[:MaxQueryRunes]))
	}
	return q
}

// clean bounds e and takes out a secret: the query is normalised, then scanned as typed
// and decoded; one with a secret is replaced by Withheld.
func clean(e Event) Event {
	raw := e.Query
	e.Query = Normalize(raw)
	if _, bad := secretscan.FindEncoded([]byte(raw)); bad {
		e.Query = Withheld
	} else if _, bad := secretscan.FindEncoded([]byte(e.Query)); bad {
		e.Query = Withheld
	}
	e.Kind = clip(e.Kind, maxKindBytes)
	if len(e.Docs) > MaxDocs {
		e.Docs = e.Docs[:MaxDocs]
	}
	docs := make([]Doc, 0, len(e.Docs))
	for _, d := range e.Docs {
		docs = append(docs, Doc{ID: clip(d.ID, maxDocIDBytes), Title: clip(d.Title, maxTitleBytes)})
	}
	e.Docs = docs
	if len(docs) == 0 {
		e.Docs = nil
	}
	e.MemoryKinds = clipAll(e.MemoryKinds, maxKinds, maxKindBytes)
	return e
}

func clipAll(l []string, n, size int) []string {
	if len(l) > n {
		l = l[:n]
	}
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, clip(s, size))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
