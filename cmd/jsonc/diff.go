package jsonc

import (
	"fmt"
	"strings"
)

// Diff renders the change from a to b as one unified-diff hunk with three lines of
// context. Install edits one entry, so the lines that differ are contiguous in practice; when
// they are not, the hunk simply spans everything between the first and last change, which is
// still a correct diff. It returns "" when a and b are equal.
func Diff(oldName, newName string, a, b []byte) string {
	al, bl := diffLines(a), diffLines(b)
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	if p == len(al) && p == len(bl) {
		return ""
	}
	s := 0
	for s < len(al)-p && s < len(bl)-p && al[len(al)-1-s] == bl[len(bl)-1-s] {
		s++
	}
	const context = 3
	from := max(0, p-context)
	aEnd, bEnd := len(al)-s, len(bl)-s
	aTo := min(len(al), aEnd+context)
	bTo := bEnd + (aTo - aEnd)

	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n", oldName, newName)
	fmt.Fprintf(&w, "@@ -%s +%s @@\n", hunkRange(from, aTo-from), hunkRange(from, bTo-from))
	for _, l := range al[from:p] {
		w.WriteString(" " + l + "\n")
	}
	for _, l := range al[p:aEnd] {
		w.WriteString("-" + l + "\n")
	}
	for _, l := range bl[p:bEnd] {
		w.WriteString("+" + l + "\n")
	}
	for _, l := range al[aEnd:aTo] {
		w.WriteString(" " + l + "\n")
	}
	return w.String()
}

// hunkRange formats "start,count" the way diff(1) does: an empty range names the line before it.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func diffLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
