package argcheck

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

func qualTool() mcp.Tool {
	return mcp.NewTool("t_qual",
		mcp.WithBoolean("prune"),
		mcp.WithBoolean("dry_run"),
		mcp.WithString("document_id"),
		mcp.WithString("collection_id"),
		mcp.WithBoolean("include_sources"),
		mcp.WithBoolean("run_async"),
		mcp.WithInteger("max_tokens"),
		mcp.WithInteger("offset"),
		mcp.WithBoolean("skip_embedding"),
		mcp.WithString("search_mode", mcp.Enum("basic", "advanced")),
	)
}

// qualCall is one call of t_qual with the single argument name = value.
func qualCall(t *testing.T, name string, value any) mcp.CallToolRequest {
	t.Helper()
	raw, err := json.Marshal(map[string]any{name: value})
	if err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "t_qual"
	req.Params.RawArguments = raw
	if err := json.Unmarshal(raw, &req.Params.Arguments); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestForgiveNeverReadsAQualifiedName: a near miss that adds a word negating or qualifying
// an argument (no_prune, keep_document_id, exclude_collection_id, min_tokens, run_sync), or
// drops one the argument's name holds (embedding for skip_embedding), is read as nothing:
// the call is an unknown-argument error that says why, and suggests no opposite.
func TestForgiveNeverReadsAQualifiedName(t *testing.T) {
	v := New([]mcp.Tool{qualTool()}, nil, slog.New(slog.DiscardHandler))
	tests := []struct {
		got, near, word string
	}{
		{"no_prune", "prune", "no"},
		{"noPrune", "prune", "no"},
		{"NoPrune", "prune", "no"},
		{"no-prune", "prune", "no"},
		{"no prune", "prune", "no"},
		{"No Prune", "prune", "no"},
		{"noprune", "prune", "no"},
		{"NOPRUNE", "prune", "no"},
		{"--no-prune", "prune", "no"},
		{"prune_no", "prune", "no"},
		{"not_prune", "prune", "not"},
		{"prune_not", "prune", "not"},
		{"dont_prune", "prune", "dont"},
		{"dontPrune", "prune", "dont"},
		{"dontprune", "prune", "dont"},
		{"don't prune", "prune", "dont"},
		{"don’t_prune", "prune", "dont"},
		{"do_not_prune", "prune", "not"},
		{"doNotPrune", "prune", "not"},
		{"donotprune", "prune", "donot"},
		{"never_prune", "prune", "never"},
		{"skip_prune", "prune", "skip"},
		{"skipPrune", "prune", "skip"},
		{"skip-prune", "prune", "skip"},
		{"without_prune", "prune", "without"},
		{"withoutPrune", "prune", "without"},
		{"prune_disabled", "prune", "disabled"},
		{"pruneDisabled", "prune", "disabled"},
		{"prune-disabled", "prune", "disabled"},
		{"disable_prune", "prune", "disable"},
		{"prune_off", "prune", "off"},
		{"pruneOff", "prune", "off"},
		{"prune_false", "prune", "false"},
		{"unprune", "prune", "un"},
		{"non-prune", "prune", "non"},
		{"nonprune", "prune", "non"},
		{"ignore_prune", "prune", "ignore"},
		{"avoid_prune", "prune", "avoid"},
		{"remove_prune", "prune", "remove"},
		{"no_dry_run", "dry_run", "no"},
		{"noDryRun", "dry_run", "no"},
		{"dry_run_off", "dry_run", "off"},
		{"skip-dry-run", "dry_run", "skip"},
		{"keep_document_id", "document_id", "keep"},
		{"keepDocumentId", "document_id", "keep"},
		{"keep-document-id", "document_id", "keep"},
		{"keep document id", "document_id", "keep"},
		{"document_id_keep", "document_id", "keep"},
		{"exclude_collection_id", "collection_id", "exclude"},
		{"excludeCollectionId", "collection_id", "exclude"},
		{"except_collection_id", "collection_id", "except"},
		{"collection_id_except", "collection_id", "except"},
		{"without_collection_id", "collection_id", "without"},
		{"not-collection-id", "collection_id", "not"},
		{"no_include_sources", "include_sources", "no"},
		{"noIncludeSources", "include_sources", "no"},
		{"exclude_sources", "include_sources", "exclude"},
		{"excludeSources", "include_sources", "exclude"},
		{"include_sources_off", "include_sources", "off"},
		{"run_sync", "run_async", "sync"},
		{"runSync", "run_async", "sync"},
		{"runsync", "run_async", "sync"},
		{"min_tokens", "max_tokens", "min"},
		{"minTokens", "max_tokens", "min"},
		{"no_offset", "offset", "no"},
		{"offset_off", "offset", "off"},
		{"offsetOff", "offset", "off"},
		{"embedding", "skip_embedding", "skip"},
	}
	for _, tt := range tests {
		t.Run(tt.got, func(t *testing.T) {
			req, read := v.Forgive(qualCall(t, tt.got, true))
			if len(read) > 0 {
				t.Fatalf("read %v", read)
			}
			err := v.Check(req)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range []string{
				"unknown argument " + quote(tt.got) + " (not read as " + quote(tt.near) + ": the word " + quote(tt.word) + " changes its meaning",
				"Valid arguments: collection_id, document_id, dry_run,",
			} {
				if !strings.Contains(msg, w) {
					t.Errorf("%s\nlacks %s", msg, w)
				}
			}
			if strings.Contains(msg, "did you mean") {
				t.Errorf("%s suggests a name", msg)
			}
		})
	}
}

// The near misses read before stay read: other cases and separators, typos, a run of the
// argument's words, and a qualified name that is the argument's own.
func TestForgiveStillReadsHarmlessNearMisses(t *testing.T) {
	v := New([]mcp.Tool{qualTool()}, nil, slog.New(slog.DiscardHandler))
	for got, want := range map[string]string{
		"PRUNE": "prune", "Prune": "prune", "pruned": "prune", "prnue": "prune",
		"dryRun": "dry_run", "dry-run": "dry_run", "dry run": "dry_run", "DryRun": "dry_run", "dryrun": "dry_run",
		"--dry-run": "dry_run", "dry": "dry_run",
		"documentId": "document_id", "document": "document_id", "collection": "collection_id", "collectionId": "collection_id",
		"includeSources": "include_sources", "sources": "include_sources",
		"runAsync": "run_async", "async": "run_async", "run-async": "run_async",
		"tokens": "max_tokens", "maxTokens": "max_tokens", "max_token": "max_tokens", "maxtokens": "max_tokens",
		"offest": "offset", "ofset": "offset", "offsett": "offset", "Offset": "offset",
		"skipEmbedding": "skip_embedding", "skip-embedding": "skip_embedding", "skip_embeddings": "skip_embedding",
	} {
		value := any(true)
		switch want {
		case "document_id", "collection_id":
			value = "x"
		case "max_tokens", "offset":
			value = 3
		}
		req, read := v.Forgive(qualCall(t, got, value))
		if err := v.Check(req); err != nil {
			t.Errorf("%s: %v", got, err)
			continue
		}
		if len(read) != 1 || read[0].Argument != want || read[0].Given != got {
			t.Errorf("%s: read %v, want it as %s", got, read, want)
		}
	}
}

// hidden reports whether s holds a character that hides or reorders text, or a control
// character (a newline too: an echoed name is one line).
func hidden(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return cleantext.Changes(r) || r == '\n' || r == '\r' || r == '\t' })
}

// A name holding a control, invisible or BiDi character is no near miss of anything: it is
// rejected, and neither the rejection nor what was read carries the character.
func TestForgiveNeverReadsAHiddenName(t *testing.T) {
	v := New([]mcp.Tool{qualTool()}, nil, slog.New(slog.DiscardHandler))
	for _, got := range []string{
		"pru\u202ene", "\u202eprune", "prune\u200b", "pru\u200bne", "prune\n", "prune\x00", "prune\t", "prune\r",
		"prune\u2028", "prune\u2029", "prune\u00a0", "prune\x7f", "prune\u0085", "prune\ufeff", "prune\u2066",
		"prune\U000E0041", "prune\U000E0100", "prune\xff", "dry_run\u202e", "documentId\u200b", "search_mode\x00",
	} {
		req, read := v.Forgive(qualCall(t, got, true))
		if len(read) > 0 {
			t.Errorf("%q read as %v", got, read)
		}
		err := v.Check(req)
		if err == nil {
			t.Errorf("%q accepted", got)
			continue
		}
		if msg := err.Error(); hidden(msg) || !strings.Contains(msg, "unknown argument") {
			t.Errorf("%q: rejection %q", got, msg)
		}
	}
	// A value read in another case is echoed clean as well.
	req, read := v.Forgive(qualCall(t, "search_mode", "ADVANCED"))
	if v.Check(req) != nil || len(read) != 1 {
		t.Fatalf("search_mode ADVANCED: read %v", read)
	}
	// An enum value that is no value is quoted with its hidden characters escaped.
	req, _ = v.Forgive(qualCall(t, "search_mode", "basic\u202e\u0085\U000E0100"))
	if err := v.Check(req); err == nil || hidden(err.Error()) {
		t.Errorf("hidden enum value: %v", err)
	}
}

// Mapping.Given, which goes to the result's _meta as it is, never holds a hidden
// character or more than maxQuoted characters.
func TestMappingGivenIsClean(t *testing.T) {
	for _, m := range []Mapping{
		{Argument: "prune", Given: "pru\u202ene\n", Kind: "name"},
		{Argument: "search_mode", Given: strings.Repeat("\u200bx", 200), To: "basic", Kind: "value"},
	} {
		c := m.echo()
		b, _ := json.Marshal(c)
		if hidden(c.Given) || hidden(c.String()) || len([]rune(c.Given)) > maxQuoted || strings.Contains(string(b), `\u`) {
			t.Errorf("%q echoed as %q (%s)", m.Given, c.Given, b)
		}
	}
}
