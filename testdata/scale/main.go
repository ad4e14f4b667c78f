// Command scale is the harness of make bench-scale (testdata/scale/run.sh): it writes a
// corpus of real files, counts the requests a sync sends to R2R, and times searches through
// r2r-mcp and straight to R2R.
//
//	scale corpus -out DIR -files 3000           # every k-th .go file of $(go env GOROOT)/src
//	scale proxy -listen 127.0.0.1:0 -target URL -counts FILE   # until SIGINT/SIGTERM
//	scale search -r2r URL -bin r2r-mcp -dir DIR -n 40   # R2R_EMAIL/R2R_PASSWORD from the env
//
// It refuses any R2R address that is not on 127.0.0.1: it is a load generator.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: scale corpus|proxy|search [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fl := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	switch os.Args[1] {
	case "corpus":
		out := fl.String("out", "", "directory to create")
		files := fl.Int("files", 3000, "at most this many files (1..100000)")
		_ = fl.Parse(os.Args[2:])
		if *out == "" || *files < 1 || *files > 100000 {
			fail("corpus: -out is required and 1 ≤ -files ≤ 100000")
		}
		st, err := writeCorpus(runtime.GOROOT(), *out, *files)
		if err != nil {
			fail("corpus: %v", err)
		}
		fmt.Printf("corpus: %d files, %.1f MB of %s/src (%s)\n", st.Files, float64(st.Bytes)/1e6, runtime.GOROOT(), st.Go)
	case "proxy":
		listen := fl.String("listen", "127.0.0.1:0", "address to listen on")
		target := fl.String("target", "", "R2R base URL")
		counts := fl.String("counts", "", "file the request counts are written to on exit (JSON)")
		_ = fl.Parse(os.Args[2:])
		if err := runProxy(ctx, *listen, loopback(*target), *counts); err != nil {
			fail("proxy: %v", err)
		}
	case "search":
		r2rURL := fl.String("r2r", "", "R2R base URL")
		bin := fl.String("bin", "", "r2r-mcp binary")
		dir := fl.String("dir", "", "the synced directory (its project's collection is searched)")
		n := fl.Int("n", 40, "searches each way (1..1000)")
		_ = fl.Parse(os.Args[2:])
		if *bin == "" || *dir == "" || *n < 1 || *n > 1000 {
			fail("search: -bin and -dir are required and 1 ≤ -n ≤ 1000")
		}
		cfg := searchConfig{R2R: loopback(*r2rURL), Bin: *bin, Dir: *dir, N: *n,
			Email: os.Getenv("R2R_EMAIL"), Password: os.Getenv("R2R_PASSWORD")}
		res, err := runSearch(ctx, cfg)
		if err != nil {
			fail("search: %v", err)
		}
		fmt.Println(res)
	default:
		fail("unknown subcommand %q", os.Args[1])
	}
}

func loopback(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() != "127.0.0.1" {
		fail("only http://127.0.0.1:PORT addresses are allowed, got %q", raw)
	}
	return raw
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", args...)
	os.Exit(1)
}

// counter is a reverse proxy to one R2R that counts requests by route (see routeOf).
type counter struct {
	rp     *httputil.ReverseProxy
	mu     sync.Mutex
	counts map[string]int
}

func newCounter(target string) (*counter, error) {
	tu, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	return &counter{rp: httputil.NewSingleHostReverseProxy(tu), counts: map[string]int{}}, nil
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.counts[routeOf(r)]++
	c.mu.Unlock()
	c.rp.ServeHTTP(w, r)
}

// Counts returns a copy of the counts so far.
func (c *counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// runProxy serves a counter until ctx ends, printing its address on stdout first, then
// writes the counts (JSON) to countsFile, or stdout when it is "".
func runProxy(ctx context.Context, listen, target, countsFile string) error {
	c, err := newCounter(target)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: c}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	b, _ := json.MarshalIndent(c.Counts(), "", "  ")
	if countsFile == "" {
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(countsFile, append(b, '\n'), 0o644)
}

// routeOf names a request by method and path with UUID segments folded into {id}.
func routeOf(r *http.Request) string {
	segs := strings.Split(r.URL.Path, "/")
	for i, s := range segs {
		if len(s) == 36 && s[8] == '-' && s[13] == '-' {
			segs[i] = "{id}"
		}
	}
	return r.Method + " " + strings.Join(segs, "/")
}

// remarshal converts a decoded JSON value (structuredContent) into out.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
