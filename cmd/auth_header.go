package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
)

type authHeaderOptions struct {
	Format string

	r2rCmd
}

// Formats of `auth header`.
const (
	headerFormatJSON = "json" // {"Authorization": "Bearer …"}: what Claude Code's headersHelper reads
	headerFormatLine = "line" // Authorization: Bearer …  (curl -H)
)

func newAuthCmd(deps Deps, runF func(*authHeaderOptions) error) *cobra.Command {
	c := &cobra.Command{
		Use:   "auth",
		Short: "Credentials for clients of a shared r2r-mcp serve --http",
		Args:  cobra.NoArgs,
	}
	opts := &authHeaderOptions{r2rCmd: r2rCmd{Deps: deps}}
	h := &cobra.Command{
		Use:   "header",
		Short: "Print a fresh Authorization header from this machine's R2R session",
		Long: `Print an Authorization header carrying a fresh access token of the R2R session
r2r-mcp login keeps, for a client of a team's serve --http. The token is checked with R2R
first and renewed when it is due or R2R refuses it (a logout elsewhere ends an access token
before it expires); a credential R2R refuses is never printed.
The token goes to stdout only; nothing is logged. By default the header is printed as a JSON
object, the form Claude Code's headersHelper reads (it runs the command again after a 401):

  "headersHelper": "r2r-mcp auth header --url https://r2r.example.com"

--format line prints "Authorization: Bearer …" instead (for curl -H). With an API key
(R2R_API_KEY, login --api-key-stdin) the key is printed, with a note on stderr: R2R checks a
key with bcrypt on every request, a session's token in milliseconds.`,
		Args: cobra.NoArgs,
		RunE: runE(opts, func([]string) error {
			if opts.Format != headerFormatJSON && opts.Format != headerFormatLine {
				return fmt.Errorf("--format %q: want %s or %s", opts.Format, headerFormatJSON, headerFormatLine)
			}
			return nil
		}, runF, runAuthHeader),
	}
	f := h.Flags()
	addURLFlag(f, &opts.URL)
	f.StringVar(&opts.Format, "format", headerFormatJSON, "json (for headersHelper) or line (Authorization: Bearer …)")
	c.AddCommand(h)
	return c
}

func runAuthHeader(o *authHeaderOptions) error {
	ctx := o.ctx()
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	res, err := auth.Resolve(ctx, authOptions(o.Deps, o.Env, dir, o.URL, auth.DefaultURLFlagName, nil))
	if err != nil {
		return err
	}
	origin := res.Origin()
	if origin.Source == auth.SourceNone {
		msg := "not logged in to " + res.URL + ": run r2r-mcp login"
		if w := origin.Warning(); w != "" {
			msg += " (" + w + ")"
		}
		return errors.New(msg)
	}
	actx, cancel := context.WithTimeout(ctx, networkTimeout)
	defer cancel()
	// R2R is asked first: a token can be refused before its exp (a logout elsewhere
	// blacklists it), and the client renews a refused session once and asks again.
	client, err := r2r.New(r2r.Options{BaseURL: res.URL, Credentials: res.Credentials, HTTPClient: o.Env.HTTPClient,
		UserAgent: "r2r-mcp/" + o.Deps.Build.Version})
	if err != nil {
		return err
	}
	if a := diagnose.CheckAccount(actx, client, networkTimeout); a.Verdict != diagnose.Accepted {
		described := credentialText(res.Kind, "", res.Email) + " (from " + string(origin.Source) + ")"
		return errors.New("no token printed: " + diagnose.Sentence(a.Problem(described, origin.Source, res.Email)))
	}
	h := http.Header{}
	if err := res.Credentials.Apply(actx, h); err != nil {
		return fmt.Errorf("no fresh token for %s: %w", res.URL, err)
	}
	value := h.Get("Authorization")
	if key := h.Get("X-API-Key"); value == "" && key != "" {
		value = "Bearer " + key
		fmt.Fprintf(o.Deps.IO.ErrOut, "Note: this is an R2R API key (from %s); R2R checks it with bcrypt on every request. "+
			"r2r-mcp login keeps a session whose tokens cost R2R milliseconds.\n", origin.Source)
	}
	if !strings.HasPrefix(value, "Bearer ") {
		return fmt.Errorf("the credential from %s gives no bearer token", origin.Source)
	}
	if o.Format == headerFormatLine {
		_, err = fmt.Fprintln(o.Deps.IO.Out, "Authorization: "+value)
		return err
	}
	return json.NewEncoder(o.Deps.IO.Out).Encode(map[string]string{"Authorization": value})
}
