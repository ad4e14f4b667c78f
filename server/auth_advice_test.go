package server

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// describedKey is an API key that, like auth.LazyCredentials, says where it came from only
// as far as known now.
type describedKey struct {
	r2r.Credentials
	origin func() auth.Origin
}

func (d describedKey) Origin() auth.Origin { return d.origin() }

// TestAuthAdviceFollowsCredentials: when the credentials describe themselves (a credential
// read lazily from the keyring learns its source on first use), tool errors and r2r_status
// use what they say now, not the source serve saw at start-up.
func TestAuthAdviceFollowsCredentials(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	source, warning := auth.Source(auth.SourceKeyringPending), ""
	creds := describedKey{Credentials: r2r.APIKey("revoked-key"), origin: func() auth.Origin {
		o := auth.Origin{Source: source}
		if warning != "" {
			o.Warnings = []auth.Warning{{Kind: auth.WarnPlainTextFile, Text: warning}}
		}
		return o
	}}
	s, err := New(Config{R2RURL: emu.URL, Credentials: creds,
		WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: DefaultOptions()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func(name string) *mcp.CallToolResult {
		for _, tl := range s.Tools() {
			if tl.Def.Name == name {
				req := mcp.CallToolRequest{}
				req.Params.Name = name
				res, err := tl.Handler(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}

	source, warning = auth.FileSource("/home/u/.config/r2r-mcp/credentials.json"), "using the credential in a plain-text file: the keyring did not answer"
	res := call("r2r_list_collections")
	info, ok := toolerr.Of(res)
	if !ok || info.Code != toolerr.CodeAuth {
		t.Fatalf("%+v", res)
	}
	for _, w := range []string{"(from file /home/u/.config/r2r-mcp/credentials.json) (401)", "Run `r2r-mcp login`",
		"Credentials warning: using the credential in a plain-text file: the keyring did not answer."} {
		if !strings.Contains(info.Message, w) {
			t.Errorf("message %q lacks %q", info.Message, w)
		}
	}

	var st tools.StatusOutput
	if r := call("r2r_status"); r.IsError {
		t.Fatalf("r2r_status: %+v", r)
	} else {
		st = r.StructuredContent.(tools.StatusOutput)
	}
	if st.AuthSource != string(source) || st.Config["auth_warning"] != warning {
		t.Fatalf("r2r_status: auth_source %q, auth_warning %q", st.AuthSource, st.Config["auth_warning"])
	}
}
