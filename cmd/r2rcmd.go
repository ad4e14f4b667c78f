package cmd

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// r2rCmd is what the options of every command that reaches R2R or the stored credential
// share: the R2R URL flag, the command's context, what the constructor received and the
// auth environment that tests replace.
type r2rCmd struct {
	URL  string // --url; "" = resolved as serve does
	Ctx  context.Context
	Deps Deps
	// Env is where credentials are looked up; tests replace the keyring and config dir.
	Env authEnv

	// asked is what resolve resolved: the R2R the command talks to and its credential,
	// which explain words a failed call with.
	asked auth.Resolved
}

func (c *r2rCmd) setContext(ctx context.Context) { c.Ctx = ctx }

// ctx is the command's context; Background when a test runs the command without cobra.
func (c *r2rCmd) ctx() context.Context { return cmp.Or(c.Ctx, context.Background()) }

// configDir is the config dir of the environment (auth.DefaultConfigDir).
func (c *r2rCmd) configDir() (string, error) { return c.Env.configDir(c.Deps.getenv()) }

// resolve resolves the R2R URL and credential as serve does, reading the keyring at once,
// and returns a client that uses them.
func (c *r2rCmd) resolve(ctx context.Context, configDir string) (auth.Resolved, *r2r.Client, error) {
	res, client, err := resolveR2R(ctx, c.Deps, c.Env, configDir, c.URL)
	if err == nil {
		c.asked = res
	}
	return res, client, err
}

// explain words err, when it is the failure of a call to the R2R the command resolved, as
// the tools word it (tools.CommandError): the cause and the next step, not a transport
// error or R2R's bare status. Other errors are returned as they are.
func (c *r2rCmd) explain(err error) error {
	var w worded
	if err == nil || c.asked.URL == "" || errors.As(err, &w) {
		return err
	}
	msg, ok := tools.CommandError(c.ctx(), err, c.asked.URL, c.asked.Origin())
	if !ok {
		return err
	}
	return &explained{msg: msg, err: err}
}

// worded marks an R2R failure a command has worded for itself, with its own next step;
// explain leaves it as it is.
type worded struct{ error }

func (w worded) Unwrap() error { return w.error }

// explained is an error worded for the user that still matches what it explains.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// open is the start of a command that works on R2R: a client with the URL and credential
// resolved in the environment's config dir.
func (c *r2rCmd) open(ctx context.Context) (*r2r.Client, error) {
	configDir, err := c.configDir()
	if err != nil {
		return nil, err
	}
	_, client, err := c.resolve(ctx, configDir)
	return client, err
}

// runE is the RunE of a command with options o: o gets the command's context, prepare
// (nil = nothing to do) checks the flags and takes the arguments, then runF runs when
// given (a test's stand-in for run), else run; a failed R2R call is worded by the
// options' explain (r2rCmd.explain) when they have one.
func runE[O interface{ setContext(context.Context) }](o O, prepare func(args []string) error, runF, run func(O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		o.setContext(cmd.Context())
		if prepare != nil {
			if err := prepare(args); err != nil {
				return err
			}
		}
		f := run
		if runF != nil {
			f = runF
		}
		err := f(o)
		if ex, ok := any(o).(interface{ explain(error) error }); ok {
			err = ex.explain(err)
		}
		return err
	}
}

// positiveTimeout is the prepare step of a command whose --timeout must be positive.
func positiveTimeout(d *time.Duration) func([]string) error {
	return func([]string) error {
		if *d <= 0 {
			return errors.New("--timeout must be positive")
		}
		return nil
	}
}
