// Command quality is the retrieval-quality benchmark (make bench-quality): it syncs a corpus
// of real documentation into an R2R collection through `r2r-mcp sync`, asks each question of
// questions.json through `r2r-mcp serve` (mcp-go's client over stdio: r2r_search and
// r2r_rag_query) and straight to R2R (the search r2r-mcp sends, same limit and settings),
// and reports whether the answering document and the answer phrase reached the caller, and
// at what size. It writes every question's measures as JSON and a Markdown summary.
//
//	go run ./testdata/quality -backend emulator
//	go run ./testdata/quality -backend url -r2r-url http://127.0.0.1:PORT   # R2R_EMAIL, R2R_PASSWORD
//
// The R2R it talks to must be on 127.0.0.1: the benchmark writes a collection into it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

type config struct {
	backend, r2rURL, email, password string
	corpus, questions, only, bin     string
	label, out, mode                 string
	n, limit, concurrency            int
	rag                              bool
	minHit10                         float64
	baseline, collection             string
}

func main() {
	var c config
	flag.StringVar(&c.backend, "backend", "emulator", `"emulator" (r2r-mcp's R2R emulator, started in this process) or "url" (the R2R at -r2r-url)`)
	flag.StringVar(&c.r2rURL, "r2r-url", os.Getenv("R2R_API_URL"), "with -backend url: the R2R (127.0.0.1 only); credentials from R2R_EMAIL and R2R_PASSWORD")
	flag.StringVar(&c.corpus, "corpus", "testdata/quality/corpus", "corpus directory")
	flag.StringVar(&c.questions, "questions", "testdata/quality/questions.json", "question file")
	flag.StringVar(&c.only, "only", "", "use only the corpus files and questions under this path prefix (e.g. click/)")
	flag.IntVar(&c.n, "n", 0, "ask only the first N questions (0 = all)")
	flag.IntVar(&c.limit, "limit", 10, "results per search (1-100)")
	flag.StringVar(&c.mode, "mode", "advanced", "search_mode of r2r_search and of R2R's raw search: basic, advanced or custom")
	flag.BoolVar(&c.rag, "rag", true, "also ask r2r_rag_query")
	flag.StringVar(&c.bin, "r2r-mcp", "", "the r2r-mcp binary (default: go build it from this checkout)")
	flag.IntVar(&c.concurrency, "sync-concurrency", 4, "r2r-mcp sync --concurrency")
	flag.StringVar(&c.label, "label", "", "run label in the report (default: the backend)")
	flag.StringVar(&c.out, "out", "", "directory for questions.json (per question), summary.json and summary.md (default: a new temporary directory)")
	flag.Float64Var(&c.minHit10, "min-hit10", 0, "exit 1 when document hit@10 of r2r_search is below this fraction (a sanity floor for CI, not a target)")
	flag.StringVar(&c.baseline, "baseline", "", "a run directory of an earlier run (same questions) to compare with: prints both tables side by side and the questions whose answer came into or dropped out of view")
	flag.StringVar(&c.collection, "collection", "", "ask the questions of this collection, synced from the same corpus by an earlier run (its name is in that run's log), instead of syncing a new one")
	table := flag.Bool("table", false, "print one table of the run directories given as arguments (e.g. the emulator's and the real R2R's) and exit")
	flag.Parse()
	if *table {
		runs, err := readSummaries(flag.Args())
		if err != nil || len(runs) == 0 {
			fail("-table needs run directories with a summary.json: %v", err)
		}
		fmt.Print(markdown(runs))
		return
	}
	c.email, c.password = os.Getenv("R2R_EMAIL"), os.Getenv("R2R_PASSWORD")
	if c.label == "" {
		c.label = c.backend
	}
	if c.limit < 1 || c.limit > 100 {
		fail("-limit must be within 1..100")
	}
	if err := run(context.Background(), c); err != nil {
		fail("%v", err)
	}
}

func run(ctx context.Context, c config) error {
	qs, err := loadQuestions(c.questions, c.corpus)
	if err != nil {
		return err
	}
	qs = selectQuestions(qs, c.only, c.n)
	files, err := corpusFiles(c.corpus, c.only)
	if err != nil {
		return err
	}
	if len(qs) == 0 || len(files) == 0 {
		return fmt.Errorf("no questions or no corpus files under %q", c.only)
	}
	work, err := os.MkdirTemp("", "r2r-mcp-quality-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if c.out == "" {
		if c.out, err = os.MkdirTemp("", "r2r-mcp-quality-out-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if c.bin == "" {
		c.bin = filepath.Join(work, "r2r-mcp")
		if out, err := exec.Command("go", "build", "-o", c.bin, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	stop, err := backend(ctx, &c)
	if err != nil {
		return err
	}
	defer stop()

	collection := c.collection
	if collection == "" {
		collection = fmt.Sprintf("quality-%d", time.Now().UnixNano())
	}
	proj, err := project(work, c.corpus, files, collection)
	if err != nil {
		return err
	}
	env := childEnv(work, c)
	var notIngested, refused []string
	var syncTime time.Duration
	if c.collection == "" {
		fmt.Fprintf(os.Stderr, "quality: %s: syncing %d files into %s\n", c.label, len(files), collection)
		t0 := time.Now()
		if notIngested, refused, err = syncCorpus(ctx, c, proj, env); err != nil {
			return err
		}
		syncTime = time.Since(t0)
	}
	fmt.Fprintf(os.Stderr, "quality: %s: synced in %s; asking %d questions\n", c.label, syncTime.Round(time.Second), len(qs))
	t1 := time.Now()
	recs, err := ask(ctx, c, proj, env, collection, qs)
	if err != nil {
		return err
	}
	grep, err := newGrepIndex(c.corpus, files)
	if err != nil {
		return err
	}
	for i := range recs {
		g := grep.rank(recs[i].Question.Question, c.limit)
		recs[i].Grep = GrepMeasure{FileRank: fileRank(g, recs[i].File), Files: g}
	}
	s := summarize(c, recs, len(files), corpusBytes(c.corpus, files), syncTime, time.Since(t1))
	s.NotIngested, s.Refused = notIngested, refused
	if err := writeReport(c.out, recs, s); err != nil {
		return err
	}
	fmt.Println(markdown([]Summary{s}))
	if c.baseline != "" {
		if err := compare(c.baseline, s, recs); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "quality: per-question results and summary in %s\n", c.out)
	if s.Errors > 0 {
		return fmt.Errorf("%d calls failed (see %s/questions.json)", s.Errors, c.out)
	}
	if s.All.Search.Hit10 < c.minHit10 {
		return fmt.Errorf("document hit@10 %.0f%% is below the floor %.0f%%: the pipeline is broken", 100*s.All.Search.Hit10, 100*c.minHit10)
	}
	return nil
}

// backend starts the emulator (-backend emulator) or checks the R2R URL (-backend url), and
// sets c.r2rURL and the credentials.
func backend(ctx context.Context, c *config) (stop func(), err error) {
	switch c.backend {
	case "emulator":
		e, err := r2rtest.Setup(&r2rtest.CLIConfig{Options: r2rtest.Options{RequireAuth: true}}, discard{})
		if err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = r2rtest.Serve(ctx, e, ln, discard{})
		}()
		c.r2rURL = "http://" + ln.Addr().String()
		c.email, c.password = r2rtest.DevEmail, r2rtest.DevPassword
		return func() { cancel(); <-done }, nil
	case "url":
		u, err := url.Parse(c.r2rURL)
		if err != nil || u.Hostname() != "127.0.0.1" {
			return nil, fmt.Errorf("-r2r-url must be http://127.0.0.1:PORT, got %q", c.r2rURL)
		}
		return func() {}, nil
	}
	return nil, fmt.Errorf("-backend must be emulator or url, not %q", c.backend)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// project copies the corpus files into a fresh project directory mapped to collection.
func project(work, corpus string, files []string, collection string) (string, error) {
	dir := filepath.Join(work, "project")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return "", err
		}
	}
	cfg, _ := json.Marshal(map[string]any{"collection": collection, "exclude": []string{".r2r-mcp.json"}})
	return dir, os.WriteFile(filepath.Join(dir, ".r2r-mcp.json"), cfg, 0o644)
}

// childEnv is the environment of r2r-mcp's processes: a private home (no saved login, no
// keyring, no caches of other runs), the R2R URL and credentials.
func childEnv(work string, c config) []string {
	home := filepath.Join(work, "home")
	_ = os.MkdirAll(home, 0o700)
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"PATH=" + os.Getenv("PATH"), "R2R_API_URL=" + c.r2rURL, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}
	if c.email != "" {
		env = append(env, "R2R_EMAIL="+c.email, "R2R_PASSWORD="+c.password)
	}
	return env
}

// syncCorpus runs r2r-mcp sync on the project and returns the files R2R failed to ingest
// and those r2r-mcp refused to upload (e.g. reStructuredText its secret scan cannot read):
// those stay out of the collection and count as misses; any other failure stops the run.
func syncCorpus(ctx context.Context, c config, proj string, env []string) (notIngested, refused []string, err error) {
	cmd := exec.CommandContext(ctx, c.bin, "sync", proj, "--json", "--concurrency", fmt.Sprint(c.concurrency))
	cmd.Dir, cmd.Env = proj, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var sum struct {
		Failed []struct {
			Path   string `json:"path"`
			Kind   string `json:"kind"`
			Reason string `json:"reason"`
		} `json:"failed"`
		Refused []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"refused"`
	}
	if jerr := json.Unmarshal(out, &sum); jerr != nil || (err != nil && len(sum.Failed)+len(sum.Refused) == 0) {
		return nil, nil, fmt.Errorf("r2r-mcp sync: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	for _, f := range sum.Failed {
		if f.Kind != "ingestion_failed" {
			return nil, nil, fmt.Errorf("r2r-mcp sync: %s: %s: %s", f.Path, f.Kind, f.Reason)
		}
		fmt.Fprintf(os.Stderr, "quality: R2R did not ingest %s: %.200s\n", f.Path, f.Reason)
		notIngested = append(notIngested, f.Path)
	}
	for _, f := range sum.Refused {
		fmt.Fprintf(os.Stderr, "quality: r2r-mcp refused %s: %.200s\n", f.Path, f.Reason)
		refused = append(refused, f.Path)
	}
	return notIngested, refused, nil
}

func corpusBytes(corpus string, files []string) int64 {
	var n int64
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(corpus, filepath.FromSlash(f))); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "quality: "+format+"\n", a...)
	os.Exit(1)
}
