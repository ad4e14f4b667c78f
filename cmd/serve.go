package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/server"
)

func init() { register(func(d Deps) *cobra.Command { return newServeCmd(d, nil) }) }

type serveOptions struct {
	R2RURL     string
	ReadOnly   bool
	ProjectDir string
	LogFile    string
	LogLevel   string

	// Env is where credentials are looked up; tests replace the keyring and config dir.
	Env authEnv
}

// newServeCmd builds "serve". runF, when set, receives the resolved configuration instead
// of running the server (tests).
func newServeCmd(deps Deps, runF func(context.Context, server.Config) error) *cobra.Command {
	opts := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the MCP server over stdio (started by your MCP client)",
		Long: `Run r2r-mcp as a stdio MCP server. Your MCP client starts it; stdout carries only
JSON-RPC, logs go to stderr or --log-file.

The R2R URL comes from --r2r-url, then R2R_API_URL, then R2R_API_BASE, then the URL saved
by "r2r-mcp login", then http://localhost:7272. Credentials come from R2R_API_KEY (or
R2R_EMAIL and R2R_PASSWORD), then the OS keyring; without any, requests go unauthenticated
(fine for an R2R with authentication off). serve never prompts: when R2R is unreachable or
rejects the credentials, the tools say so and what to do.`,
		Example: `  claude mcp add r2r -- r2r-mcp serve
  r2r-mcp serve --read-only --log-file ~/.r2r-mcp.log --log-level debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			logger, closeLog, err := server.OpenLogger(opts.LogFile, opts.LogLevel, deps.IO.ErrOut)
			if err != nil {
				return err
			}
			defer closeLog()
			cfg, err := serveConfig(ctx, deps, opts, logger)
			if err != nil {
				if opts.LogFile != "" { // stderr gets the error from Execute anyway
					logger.Error("cannot start", "error", err)
				}
				return err
			}
			if runF != nil {
				return runF(ctx, cfg)
			}
			out := deps.IO.Out
			if f, ok := out.(*os.File); ok && f == os.Stdout {
				// The protocol owns the real stdout. Anything else that writes to
				// os.Stdout from here on (a stray print in a dependency) lands on stderr
				// instead of corrupting the JSON-RPC stream.
				os.Stdout = os.Stderr
			}
			return server.Run(ctx, cfg, deps.IO.In, out)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.R2RURL, "r2r-url", "", "R2R base URL (default: $R2R_API_URL, $R2R_API_BASE, saved login, http://localhost:7272)")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "offer only tools that do not change the knowledge base")
	f.StringVar(&opts.ProjectDir, "project-dir", "", "directory used to infer the project when the client gives no roots (default: the working directory)")
	f.StringVar(&opts.LogFile, "log-file", "", "append logs to this file (created with mode 0600) instead of stderr")
	f.StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	return c
}

// serveConfig turns flags, environment and stored credentials into the server
// configuration. It never prompts and does no network I/O: a password or refresh-token
// credential logs in on the first tool call.
func serveConfig(ctx context.Context, deps Deps, opts *serveOptions, logger *slog.Logger) (server.Config, error) {
	dir := opts.ProjectDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return server.Config{}, fmt.Errorf("find the working directory: %w (pass --project-dir)", err)
		}
		dir = wd
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return server.Config{}, fmt.Errorf("--project-dir %s is not a directory", dir)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	configDir, err := opts.Env.configDir(deps.Getenv)
	if err != nil {
		return server.Config{}, err
	}
	res, err := auth.Resolve(ctx, auth.Options{
		URLFlag:        opts.R2RURL,
		Getenv:         deps.Getenv,
		Keyring:        opts.Env.Keyring,
		KeyringTimeout: opts.Env.KeyringTimeout,
		ConfigDir:      configDir,
		HTTPClient:     opts.Env.HTTPClient,
		UserAgent:      "r2r-mcp/" + deps.Build.Version,
		Logger:         logger.With("component", "auth"),
	})
	if err != nil {
		if strings.HasPrefix(err.Error(), auth.URLSourceFlag) {
			err = errors.New("--r2r-url" + strings.TrimPrefix(err.Error(), auth.URLSourceFlag))
		}
		return server.Config{}, err
	}
	urlSource := res.URLSource
	if urlSource == auth.URLSourceFlag {
		urlSource = "flag --r2r-url"
	}
	settings := map[string]string{"config_dir": configDir}
	if res.Kind != "" {
		settings["credential_kind"] = res.Kind
	}
	if res.Email != "" {
		settings["account"] = res.Email
	}
	return server.Config{
		R2RURL:      res.URL,
		URLSource:   urlSource,
		Credentials: res.Credentials,
		AuthSource:  res.Source,
		AuthWarning: res.Warning,
		ReadOnly:    opts.ReadOnly,
		Logger:      logger,
		LogFile:     opts.LogFile,
		LogLevel:    opts.LogLevel,
		Stderr:      deps.IO.ErrOut,
		WorkDir:     dir,
		ConfigDir:   configDir,
		Version:     deps.Build.Version,
		Commit:      deps.Build.Commit,
		Settings:    settings,
		HTTPClient:  opts.Env.HTTPClient,
	}, nil
}
