package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

type logoutOptions struct {
	r2rCmd
}

func newLogoutCmd(deps Deps, runF func(*logoutOptions) error) *cobra.Command {
	opts := &logoutOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "logout",
		Short: "End this machine's R2R session and delete the stored credential",
		Long: `End the R2R session r2r-mcp login stored: on R2R (when it is reachable) its refresh
token is used up and its access tokens are logged out; then the session is deleted from the
OS keyring and the fallback file, and the R2R URL login saved for it is forgotten.

A stored API key (login --api-key-stdin) is deleted locally and stays valid on the server,
since you supplied it; one an older r2r-mcp login created is revoked on R2R as well.
R2R_API_KEY or R2R_EMAIL/R2R_PASSWORD set in the environment are not touched and keep being
used. Running logout when not logged in is not an error.`,
		Args: cobra.NoArgs,
		RunE: runE(opts, nil, runF, runLogout),
	}
	addURLFlag(c.Flags(), &opts.URL)
	return c
}

func runLogout(o *logoutOptions) error {
	ctx := o.ctx()
	deps := o.Deps
	errOut := deps.IO.ErrOut
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	url, _, err := auth.ResolveURL(o.URL, deps.Getenv, dir)
	if err != nil {
		return err
	}
	keyringWait := o.Env.interactiveKeyringTimeout()
	vault := auth.NewVault(dir, o.Env.Keyring, keyringWait, false)
	sec, _, warning, loadErr := vault.Load(ctx, url)
	if errors.Is(loadErr, auth.ErrNoCredential) && errors.Is(loadErr, auth.ErrKeyringTimeout) {
		// "Not logged in" would be a guess: the keyring may well hold the credential.
		return keyringTimeoutError(keyringWait, "Unlock it and run r2r-mcp logout again. Nothing was revoked or removed.")
	}
	if warning != "" {
		fmt.Fprintf(errOut, "! %s\n", warning)
	}
	if errors.Is(loadErr, auth.ErrNoCredential) {
		fmt.Fprintf(errOut, "Not logged in to %s.\n", url)
		forgetLoginURL(errOut, dir, url, deps.Getenv)
		return nil
	}

	var notes []string
	if loadErr != nil {
		// Unreadable entry: nothing to revoke, but it must still go.
		notes = append(notes, fmt.Sprintf("the stored entry was unusable (%v)", loadErr))
	} else {
		client, err := o.Env.client(deps, url)
		if err != nil {
			return err
		}
		if note := revokeStored(ctx, client, sec, errOut); note != "" {
			notes = append(notes, note)
		}
	}
	note, err := deleteStored(ctx, vault, url, errOut)
	if err != nil {
		return err
	}
	if note != "" {
		notes = append(notes, note)
	}
	who := ""
	if sec.Email != "" {
		who = " (" + sec.Email + ")"
	}
	fmt.Fprintf(errOut, "✓ Logged out of %s%s: %s\n", url, who, strings.Join(notes, "; "))
	forgetLoginURL(errOut, dir, url, deps.Getenv)
	return nil
}

// forgetLoginURL forgets url as the default R2R URL when login saved it, and notes an
// R2R_API_KEY that keeps being used. The URL a login saved goes with the login: a later
// doctor must not keep trying an R2R that may be gone.
func forgetLoginURL(errOut io.Writer, dir, url string, getenv func(string) string) {
	if cleared, err := auth.ClearURL(dir, url); err != nil {
		fmt.Fprintf(errOut, "! Could not forget the saved R2R URL: %v\n", err)
	} else if cleared {
		fmt.Fprintf(errOut, "Forgot %s as the default R2R URL (saved by login).\n", url)
	}
	if getenv != nil && getenv("R2R_API_KEY") != "" {
		fmt.Fprintln(errOut, "Note: R2R_API_KEY is still set in this environment and will keep being used; unset it to stop.")
	}
}

// deleteStored deletes url's stored credential wherever the vault keeps it and returns where
// it was removed from ("" = nowhere).
func deleteStored(ctx context.Context, vault *auth.Vault, url string, errOut io.Writer) (string, error) {
	removed, warning, err := vault.Delete(ctx, url)
	if warning != "" {
		fmt.Fprintf(errOut, "! %s\n", warning)
	}
	if err != nil {
		return "", fmt.Errorf("delete the stored credential for %s: %w", url, err)
	}
	places := make([]string, 0, len(removed))
	for _, src := range removed {
		if path, ok := src.File(); ok {
			places = append(places, path)
		} else {
			places = append(places, "the system keyring")
		}
	}
	if len(places) == 0 {
		return "", nil
	}
	return "removed from " + strings.Join(places, " and "), nil
}

// revokeStored revokes the stored API key, or invalidates the stored refresh token, on the
// server. It returns what to report as done, or "" when a failure was already reported.
func revokeStored(ctx context.Context, client *r2r.Client, sec auth.Secret, errOut io.Writer) string {
	netCtx, cancel := context.WithTimeout(ctx, networkTimeout)
	outcome, err := auth.Revoke(netCtx, client, sec)
	cancel()
	switch {
	case err != nil && sec.Kind == auth.KindAPIKey:
		fmt.Fprintf(errOut, "! Could not revoke %s on the server (%v); it stays valid until you delete it in R2R (key id %s).\n",
			describeSecret(sec), err, sec.KeyID)
	case err != nil:
		fmt.Fprintf(errOut, "! Could not end the R2R session on the server (%v); it expires on its own.\n", err)
	case outcome == auth.RevokedKey:
		return describeSecret(sec) + " revoked on the server"
	case outcome == auth.RevokedToken:
		return "R2R session ended on the server"
	case outcome == auth.NotRevocable:
		return describeSecret(sec) + " was supplied by you and stays valid on the server"
	}
	return ""
}
