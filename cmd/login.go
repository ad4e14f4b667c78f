package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

type loginOptions struct {
	Email           string
	PasswordStdin   bool
	APIKeyStdin     bool
	InsecureStorage bool

	r2rCmd
}

func newLoginCmd(deps Deps, runF func(*loginOptions) error) *cobra.Command {
	opts := &loginOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "login",
		Short: "Log in to R2R and keep the session in the OS keyring",
		Long: `Log in to an R2R instance once per machine.

With a password, login keeps the R2R session (access and refresh token; never the
password), which serve, sync and every command use and renew. A session costs R2R
milliseconds per request; an API key (--api-key-stdin, for service accounts and CI) costs
R2R 3.6.6 about half a second per request, as it checks the key with bcrypt each time.
The secret goes to the OS keyring; on a machine without any keyring (no Secret Service),
or with --insecure-storage, to a file only you can read in the user config directory. A keyring that is locked gets two minutes to be unlocked; if it does not answer,
login fails and stores nothing.

Prompts for what is missing when stdin is a terminal. For scripts:
  printf '%s' "$PASSWORD" | r2r-mcp login --url URL --email EMAIL --password-stdin
  printf '%s' "$KEY" | r2r-mcp login --url URL --api-key-stdin`,
		Args: cobra.NoArgs,
		RunE: runE(opts, func([]string) error { return opts.validate() }, runF, runLogin),
	}
	f := c.Flags()
	addURLFlag(f, &opts.URL)
	f.StringVar(&opts.Email, "email", "", "R2R account email")
	f.BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the password from stdin (needs --email; never prompts)")
	f.BoolVar(&opts.APIKeyStdin, "api-key-stdin", false, "read an existing R2R API key from stdin instead of logging in with a password")
	f.BoolVar(&opts.InsecureStorage, "insecure-storage", false, "store the secret in a plain-text file (mode 0600) instead of the OS keyring")
	return c
}

// validate refuses flag combinations and environments in which login cannot do what the
// user asked; it runs before anything is read or sent.
func (o *loginOptions) validate() error {
	if o.Deps.Getenv != nil && o.Deps.Getenv("R2R_API_KEY") != "" {
		return errors.New("R2R_API_KEY is set in this environment; it takes precedence over any stored " +
			"credential, so the result of a login would never be used. Unset it (unset R2R_API_KEY) and run r2r-mcp login again")
	}
	if o.PasswordStdin && o.APIKeyStdin {
		return errors.New("--password-stdin and --api-key-stdin cannot be used together: choose one secret to read from stdin")
	}
	if o.PasswordStdin && strings.TrimSpace(o.Email) == "" {
		return errors.New("--password-stdin needs --email (login does not prompt when the password comes from stdin)")
	}
	if o.APIKeyStdin && o.Email != "" {
		return errors.New("--email is not used with --api-key-stdin (the key already belongs to an account)")
	}
	return nil
}

func runLogin(o *loginOptions) error {
	ctx := o.ctx()
	deps := o.Deps
	in, errOut := deps.IO.In, deps.IO.ErrOut
	fd, interactive := terminalFd(in)
	interactive = interactive && !o.PasswordStdin && !o.APIKeyStdin
	if !interactive && !o.PasswordStdin && !o.APIKeyStdin {
		return errors.New("stdin is not a terminal, so login cannot prompt. Pipe the secret instead: " +
			"--email EMAIL --password-stdin, or --api-key-stdin")
	}
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	url, err := o.loginURL(dir, interactive)
	if err != nil {
		return err
	}
	// Read what is stored before anything is created on the server: the first keyring
	// call may wait for an unlock prompt, and a keyring that does not answer stops the
	// login here, with nothing to undo.
	keyringWait := o.Env.interactiveKeyringTimeout()
	vault := auth.NewVault(dir, o.Env.Keyring, keyringWait, o.InsecureStorage)
	old, _, _, oldErr := vault.Load(ctx, url)
	if errors.Is(oldErr, auth.ErrKeyringTimeout) {
		return keyringTimeoutError(keyringWait, loginKeyringAdvice+" Nothing was stored.")
	}
	if errors.Is(oldErr, auth.ErrCorruptFile) {
		to, err := vault.File.SetAside()
		if err != nil {
			return fmt.Errorf("%v. Nothing was stored", err)
		}
		fmt.Fprintf(errOut, "! %s was not valid JSON; moved it to %s (this login writes a new one)\n", vault.File.Path, to)
	}
	email, secret, err := o.credentials(fd)
	if err != nil {
		return err
	}
	client, err := o.Env.client(deps, url)
	if err != nil {
		return err
	}
	res, err := o.logIn(ctx, client, url, email, secret)
	if err != nil {
		return err
	}
	store, err := o.store(ctx, vault, client, url, res, keyringWait)
	if err != nil {
		return err
	}
	if err := auth.SaveURL(dir, url); err != nil {
		fmt.Fprintf(errOut, "! Could not save %s as the default R2R URL: %v\n", url, err)
	}
	// The previous key r2r-mcp created for this machine and URL is replaced: revoke it.
	if oldErr == nil && old.Kind == auth.KindAPIKey && old.KeyID != "" && old.KeyID != res.Secret.KeyID && old.Secret != res.Secret.Secret {
		revokePrevious(ctx, client, old, errOut)
	}
	who := cmp.Or(res.Secret.Email, res.Secret.UserID)
	fmt.Fprintf(errOut, "✓ Logged in to %s as %s; %s stored in %s\n", url, who, describeSecret(res.Secret), storageName(store))
	envNotes(errOut, deps.Getenv, url)
	return nil
}

// loginURL is --url, else the configured URL, which an interactive login offers as the
// prompt's default.
func (o *loginOptions) loginURL(dir string, interactive bool) (string, error) {
	if o.URL != "" {
		url, err := auth.NormalizeURL(o.URL)
		if err != nil {
			return "", fmt.Errorf("--url: %w", err)
		}
		return url, nil
	}
	def, _, err := auth.ResolveURL("", o.Deps.Getenv, dir)
	if err != nil || !interactive {
		return def, err
	}
	answer, err := prompt(o.Deps.IO.In, o.Deps.IO.ErrOut, "R2R URL", def)
	if err != nil {
		return "", err
	}
	return auth.NormalizeURL(answer)
}

// credentials reads the API key or password from stdin, or prompts for email and password
// on the terminal fd.
func (o *loginOptions) credentials(fd int) (email, secret string, err error) {
	in, errOut := o.Deps.IO.In, o.Deps.IO.ErrOut
	email = strings.TrimSpace(o.Email)
	switch {
	case o.APIKeyStdin:
		if secret, err = readSecretStdin(in, "API key"); err != nil {
			return "", "", err
		}
		if secret = strings.TrimSpace(secret); secret == "" {
			return "", "", errors.New("no API key on stdin")
		}
	case o.PasswordStdin:
		if secret, err = readSecretStdin(in, "password"); err != nil {
			return "", "", err
		}
	default:
		if email == "" {
			if email, err = prompt(in, errOut, "Email", ""); err != nil {
				return "", "", err
			}
			if email == "" {
				return "", "", errors.New("no email given. Nothing was stored")
			}
		}
		if secret, err = promptSecret(fd, errOut, "Password"); err != nil {
			return "", "", err
		}
		if secret == "" {
			return "", "", errors.New("no password given. Nothing was stored")
		}
	}
	return email, secret, nil
}

// logIn checks the API key, or logs in with the password for a session.
func (o *loginOptions) logIn(ctx context.Context, client *r2r.Client, url, email, secret string) (auth.LoginResult, error) {
	errOut := o.Deps.IO.ErrOut
	netCtx, cancel := context.WithTimeout(ctx, networkTimeout)
	defer cancel()
	var res auth.LoginResult
	var err error
	if o.APIKeyStdin {
		res, err = auth.APIKeyLogin(netCtx, client, secret)
	} else {
		fmt.Fprintf(errOut, "Logging in to %s as %s…\n", url, email)
		res, err = auth.PasswordLogin(netCtx, client, email, secret)
	}
	if err != nil {
		return res, explainLoginError(url, email, err)
	}
	return res, nil
}

// store saves the new credential; when it cannot be stored it is of no use, so it is
// revoked again (even when the user interrupted the save at the keyring prompt).
func (o *loginOptions) store(ctx context.Context, vault *auth.Vault, client *r2r.Client, url string, res auth.LoginResult,
	keyringWait time.Duration) (auth.Store, error) {
	errOut := o.Deps.IO.ErrOut
	store, warning, err := vault.Save(ctx, url, res.Secret)
	if err != nil {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), auth.CleanupTimeout)
		_, rerr := auth.Revoke(rctx, client, res.Secret)
		rcancel()
		undone := "Nothing was stored; the new " + describeSecret(res.Secret) + " was revoked."
		if rerr != nil && res.Secret.KeyID != "" {
			fmt.Fprintf(errOut, "! Could not revoke the new API key (id %s): %v\n", res.Secret.KeyID, rerr)
			undone = "Nothing was stored."
		}
		return store, storeError(err, keyringWait, undone)
	}
	if warning != "" {
		fmt.Fprintf(errOut, "! %s\n", warning)
	}
	return store, nil
}

// revokePrevious revokes the API key an earlier login on this machine created for the URL.
func revokePrevious(ctx context.Context, client *r2r.Client, old auth.Secret, errOut io.Writer) {
	rctx, rcancel := context.WithTimeout(ctx, auth.CleanupTimeout)
	_, err := auth.Revoke(rctx, client, old)
	rcancel()
	if err != nil {
		fmt.Fprintf(errOut, "! Could not revoke the previous API key %s (id %s): %v\n", auth.ShortKey(old.Secret), old.KeyID, err)
	} else {
		fmt.Fprintf(errOut, "Revoked this machine's previous API key %s\n", auth.ShortKey(old.Secret))
	}
}

// envNotes points out environment variables that will override what login just stored.
func envNotes(w io.Writer, getenv func(string) string, url string) {
	if getenv == nil {
		return
	}
	if getenv("R2R_EMAIL") != "" && getenv("R2R_PASSWORD") != "" {
		fmt.Fprintln(w, "Note: R2R_EMAIL and R2R_PASSWORD are set in this environment and take precedence over the stored credential.")
	}
	for _, name := range []string{"R2R_API_URL", "R2R_API_BASE"} {
		v := getenv(name)
		if strings.TrimSpace(v) == "" {
			continue
		}
		// Only the normalised form is shown: a value that does not normalise may carry a
		// secret (user info, ?api_key=).
		switch n, err := auth.NormalizeURL(v); {
		case err != nil:
			fmt.Fprintf(w, "Note: %s is set in this environment, but %v; serve will refuse to start until it is fixed or unset.\n", name, err)
		case n != url:
			fmt.Fprintf(w, "Note: %s is set to %s in this environment; serve will use that URL, not %s.\n", name, n, url)
		}
		return
	}
}
