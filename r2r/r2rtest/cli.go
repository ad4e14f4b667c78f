package r2rtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Dev user created by the runnable emulator when --auth is given.
const (
	DevEmail    = "dev@example.com"
	DevPassword = "dev-password"
)

// CLIConfig is the configuration of the runnable emulator (r2r-emulator).
type CLIConfig struct {
	Addr    string
	SeedDir string
	// SeedCollection names the collection --seed puts the documents in ("" = the owner's
	// default collection).
	SeedCollection string
	Options        Options
}

// ParseFlags parses r2r-emulator's command line.
func ParseFlags(args []string, stderr io.Writer) (*CLIConfig, error) {
	fs := flag.NewFlagSet("r2r-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &CLIConfig{}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:7272", "listen address")
	fs.StringVar(&cfg.SeedDir, "seed", "", "ingest every file under `DIR` at start")
	fs.StringVar(&cfg.SeedCollection, "seed-collection", "", "put the --seed documents in the collection `NAME` (created if missing; default: the owner's default collection)")
	fs.BoolVar(&cfg.Options.RequireAuth, "auth", false, "require credentials (creates "+DevEmail+" / "+DevPassword+")")
	fs.DurationVar(&cfg.Options.Latency, "latency", 0, "latency added to every request")
	fs.Float64Var(&cfg.Options.FailRate, "fail-rate", 0, "fraction of requests answered 502/503/504")
	fs.DurationVar(&cfg.Options.TokenTTL, "token-ttl", 0, "access token lifetime (default 60m)")
	fs.DurationVar(&cfg.Options.IngestDelay, "ingest-delay", 0, "time per ingestion step (0 = synchronous)")
	fs.IntVar(&cfg.Options.RateLimit, "rate-limit", 0, "per-minute POST/DELETE limit for non-superusers (0 = off)")
	fs.StringVar(&cfg.Options.TimeFormat, "time-format", TimeFormatZ, "timestamp form: z (…123456Z), offset (…+00:00) or naive (no offset)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if cfg.Options.FailRate < 0 || cfg.Options.FailRate > 1 {
		return nil, fmt.Errorf("--fail-rate must be within 0..1, got %v", cfg.Options.FailRate)
	}
	if _, ok := timeLayouts[cfg.Options.TimeFormat]; !ok {
		return nil, fmt.Errorf("--time-format must be z, offset or naive, got %q", cfg.Options.TimeFormat)
	}
	return cfg, nil
}

// Setup builds the emulator a CLIConfig describes: with --auth it creates the dev user, and
// --seed ingests the directory as the dev user (with --auth) or the default superuser.
func Setup(cfg *CLIConfig, stderr io.Writer) (*Emulator, error) {
	opts := cfg.Options
	opts.Logger = stderr
	e := New(opts)
	owner := AdminEmail
	if opts.RequireAuth {
		e.CreateUser(DevEmail, DevPassword, false)
		owner = DevEmail
		fmt.Fprintf(stderr, "r2r-emulator: auth required; log in as %s / %s (superuser %s)\n", DevEmail, DevPassword, AdminEmail)
	}
	if cfg.SeedDir != "" {
		if err := e.SeedInto(owner, cfg.SeedDir, cfg.SeedCollection); err != nil {
			fmt.Fprintf(stderr, "r2r-emulator: seeding %s: %v\n", cfg.SeedDir, err)
		}
		into := "the default collection"
		if cfg.SeedCollection != "" {
			into = "collection " + cfg.SeedCollection
		}
		fmt.Fprintf(stderr, "r2r-emulator: seeded %d documents from %s as %s into %s\n", e.documentCount(), cfg.SeedDir, owner, into)
	}
	return e, nil
}

func (e *Emulator) documentCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.st.docs)
}

// Serve runs the emulator on ln until ctx is cancelled, then shuts down gracefully.
func Serve(ctx context.Context, e *Emulator, ln net.Listener, stderr io.Writer) error {
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "r2r-emulator: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		e.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	e.Close()
	if err2 := <-errc; err2 != nil && !errors.Is(err2, http.ErrServerClosed) && err == nil {
		err = err2
	}
	fmt.Fprintln(stderr, "r2r-emulator: stopped")
	return err
}

// Main is r2r-emulator's entry point; it returns the process exit code.
func Main(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, err := ParseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "r2r-emulator:", err)
		return 2
	}
	e, err := Setup(cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "r2r-emulator:", err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "r2r-emulator:", err)
		return 1
	}
	if err := Serve(ctx, e, ln, stderr); err != nil {
		fmt.Fprintln(stderr, "r2r-emulator:", err)
		return 1
	}
	return 0
}
