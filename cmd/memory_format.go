package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// memoryRecord is one memory as memory list --json, show --json and export --format jsonl
// print it.
type memoryRecord struct {
	ID         string   `json:"id"`
	Kind       string   `json:"kind"`
	Title      string   `json:"title"`
	Author     string   `json:"author"`
	CreatedAt  string   `json:"created_at,omitempty"`
	Paths      []string `json:"paths"`
	Tags       []string `json:"tags"`
	Commit     string   `json:"commit,omitempty"`
	Supersedes string   `json:"supersedes,omitempty"`
	Error      string   `json:"error,omitempty"`
	Body       string   `json:"body,omitempty"`
	SHA256     string   `json:"content_sha256,omitempty"`
}

// exportRecord is m (with its body, when read) as printed; text another user wrote is
// cleaned of control and invisible characters.
func exportRecord(m memory.Memory, body string) memoryRecord {
	r := memoryRecord{ID: m.ID, Kind: m.Kind, Title: cleantext.String(m.Title), Author: cleantext.String(m.Author),
		Paths: cleanAll(m.Paths), Tags: cleanAll(m.Tags), Commit: cleantext.String(m.Commit), Supersedes: cleantext.String(m.Supersedes),
		Error: cleantext.String(m.Error), Body: cleantext.String(body), SHA256: cleantext.String(m.SHA)}
	if !m.Created.IsZero() {
		r.CreatedAt = m.Created.UTC().Format(time.RFC3339)
	}
	return r
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = cleantext.String(s)
	}
	return out
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// markdownMemory renders one memory for people: a heading, a line of facts, the error a
// fix resolves in a code block, then the body.
func markdownMemory(m memory.Memory, body string) string {
	r := exportRecord(m, body)
	var b strings.Builder
	fmt.Fprintf(&b, "## %s: %s\n\n", r.Kind, oneLineMD(r.Title))
	facts := []string{"id `" + r.ID + "`", "by " + oneLineMD(orDash(r.Author))}
	if r.CreatedAt != "" {
		facts = append(facts, "saved "+r.CreatedAt)
	}
	if r.Commit != "" {
		facts = append(facts, "at commit `"+r.Commit[:min(len(r.Commit), 12)]+"`")
	}
	if len(r.Paths) > 0 {
		facts = append(facts, "about `"+strings.Join(r.Paths, "`, `")+"`")
	}
	if len(r.Tags) > 0 {
		facts = append(facts, "tags: "+strings.Join(r.Tags, ", "))
	}
	if r.Supersedes != "" {
		facts = append(facts, "supersedes `"+r.Supersedes+"`")
	}
	b.WriteString(strings.Join(facts, " · ") + "\n\n")
	if r.Error != "" {
		fence := "```"
		for strings.Contains(r.Error, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "Error:\n\n%s\n%s\n%s\n\n", fence, r.Error, fence)
	}
	if r.Body != "" {
		b.WriteString(r.Body + "\n")
	}
	return b.String()
}

func oneLineMD(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// humanAge is how long ago t was, e.g. "3d ago".
func humanAge(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}
