package r2rtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestJSSDK runs R2R's official JS SDK (testdata/r2r-js, r2r-js pinned in package.json)
// against the emulator with authentication required, as `r2r-emulator --auth` serves it.
// Locally it skips when node or node_modules are missing; under CI=true that is a failure
// (CI runs `npm ci` in testdata/r2r-js first).
func TestJSSDK(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "r2r-js"))
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "r2r-js", "package.json"))
	if nodeErr != nil || modErr != nil {
		msg := "JS SDK check needs node and `npm ci` in testdata/r2r-js"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (node: %v, node_modules: %v)", msg, nodeErr, modErr)
		}
		t.Skip(msg)
	}

	base, stderr := startCLI(t, "--auth")

	runCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, node, "--test")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "R2R_API_BASE="+base, "R2R_API_KEY=",
		"R2R_EMAIL="+DevEmail, "R2R_PASSWORD="+DevPassword,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s\nemulator log:\n%s", err, out, stderr.String())
	}
	t.Logf("node --test:\n%s", out)
}
