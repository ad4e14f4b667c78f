package modeldouble

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

// Main is the model-double command's entry point: it parses args, listens, prints the base
// URL for OpenAI clients (http://HOST:PORT/v1) as one line on stdout once it accepts
// connections, logs to stderr, and serves until ctx is cancelled. It returns the process
// exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("model-double", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen `address` (port 0 picks a free port)")
	var opts Options
	fs.IntVar(&opts.Dimensions, "dimensions", DefaultDimensions, "embedding size when a request does not ask for one")
	fs.StringVar(&opts.ChatModel, "chat-model", DefaultChatModel, "chat model `name` listed by /v1/models")
	fs.StringVar(&opts.EmbeddingModel, "embedding-model", DefaultEmbeddingModel, "embedding model `name` listed by /v1/models")
	fs.StringVar(&opts.EmbeddingsUpstream, "embeddings-upstream", "", "base `URL` (http://HOST:PORT/v1) of an OpenAI-compatible server that answers embeddings instead of the hashed bag of words")
	quiet := fs.Bool("quiet", false, "do not log requests")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "model-double: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if opts.Dimensions < 1 || opts.Dimensions > MaxDimensions {
		fmt.Fprintf(stderr, "model-double: --dimensions must be between 1 and %d, got %d\n", MaxDimensions, opts.Dimensions)
		return 2
	}
	if opts.EmbeddingsUpstream != "" {
		if _, err := parseUpstream(opts.EmbeddingsUpstream); err != nil {
			fmt.Fprintln(stderr, "model-double: --embeddings-upstream:", err)
			return 2
		}
	}
	if !*quiet {
		opts.Logger = stderr
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "model-double:", err)
		return 1
	}
	srv := &http.Server{Handler: New(opts), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/v1"
	fmt.Fprintf(stderr, "model-double: listening on %s (chat %s, embeddings %s, %d dimensions by default)\n", url, opts.ChatModel, opts.EmbeddingModel, opts.Dimensions)
	fmt.Fprintln(stdout, url)
	select {
	case err := <-errc:
		fmt.Fprintln(stderr, "model-double:", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintln(stderr, "model-double: shutdown:", err)
		return 1
	}
	fmt.Fprintln(stderr, "model-double: stopped")
	return 0
}
