package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func (e *env) troubleshoot(args map[string]any) TroubleshootOutput {
	e.t.Helper()
	res := e.ok("r2r_troubleshoot", args)
	validateStructured(e.t, e.tools["r2r_troubleshoot"], res)
	var o TroubleshootOutput
	structured(e.t, res, &o)
	if text(res) == "" || !strings.Contains(text(res), o.Message) {
		e.t.Fatalf("text %q lacks the message %q", text(res), o.Message)
	}
	return o
}

// TestTroubleshootFindsTheFixFirst: among a dozen fixes that share words with it, the fix
// of an error is first for each variant of that error (other pid, line numbers and temp
// dir, a stack trace around it), matched by signature; a runbook passage that mentions it
// follows, cited; an error nobody fixed says so and how to remember the fix.
func TestTroubleshootFindsTheFixFirst(t *testing.T) {
	e := newEnv(t)
	const target = "panic: open /tmp/build-4412/cache.db: too many open files (pid 4242) at store.go:88"
	fix := e.remember(map[string]any{"kind": "fix", "title": "Raise the open-file limit for the cache",
		"body": "ulimit -n 65536 before starting; the cache opens one file per shard.", "error": target})
	for i := range 12 { // fixes that share words (open, files, cache, store, pid)
		e.remember(map[string]any{"kind": "fix", "title": fmt.Sprintf("Cache store fix %d", i),
			"body":  fmt.Sprintf("Open the store file %d once; the cache shares it.", i),
			"error": fmt.Sprintf("open /tmp/build-%d/cache.db: store file %d is locked by pid %d (cache files shared)", i, i, 100+i)})
	}
	if _, err := e.client.CreateDocument(context.Background(), r2r.DocumentCreate{RawText: "# Runbook\n\n## Too many open files\n\n" +
		"When the cache fails with too many open files, raise the open-file limit (ulimit -n).\n",
		Metadata: map[string]any{"title": "runbook.md"}, CollectionIDs: []string{fix.CollectionID}}); err != nil {
		t.Fatal(err)
	}
	for name, variant := range map[string]string{
		"as saved":     target,
		"other pid":    strings.Replace(target, "4242", "977", 1),
		"other lines":  strings.Replace(strings.Replace(target, ":88", ":131", 1), "build-4412", "build-19", 1),
		"stack traced": "goroutine 1 [running]:\n" + strings.Replace(target, "4242", "31337", 1) + "\n\tmain.open()\n\t\t/src/store.go:91 +0x1f\n\tmain.main()\n\t\t/src/main.go:12 +0x2a\nexit status 2",
	} {
		t.Run(name, func(t *testing.T) {
			o := e.troubleshoot(map[string]any{"error": variant, "doing": "starting the cache"})
			if len(o.Fixes) == 0 || o.Fixes[0].ID != shortID(fix.ID) || o.Fixes[0].Match != matchSignature {
				t.Fatalf("fixes = %+v, want %s first as same_error", o.Fixes, shortID(fix.ID))
			}
			for _, f := range o.Fixes[1:] {
				if f.Match == matchSignature {
					t.Errorf("%s (%s) matched the signature %q", f.ID, f.Title, o.Signature)
				}
			}
			if len(o.Passages) == 0 || !strings.Contains(o.Passages[0].Title+o.Passages[0].Text, "open files") {
				t.Errorf("passages = %+v", o.Passages)
			}
		})
	}
	o := e.troubleshoot(map[string]any{"error": "zqxj: flux capacitor desynchronised"})
	for _, f := range o.Fixes {
		if f.Match == matchSignature {
			t.Fatalf("an unknown error matched %+v", f)
		}
	}
	if len(o.Fixes) == 0 && len(o.Passages) == 0 && !strings.Contains(o.Message, "r2r_remember") {
		t.Fatalf("message %q does not say how to remember the fix", o.Message)
	}
}
