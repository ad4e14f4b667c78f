package servertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	mainCalled atomic.Bool
	built      struct {
		once sync.Once
		dir  string
		path string
		err  error
	}
)

// Main runs the tests of m and exits with their code, first removing the binary Build
// made. Call it from the TestMain of every package that uses Build.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// BinaryEnv names a binary built ahead for every package's end-to-end tests (make test
// builds it once instead of once per package): go build [-race] -ldflags
// "-X github.com/r2r-mcp/r2r-mcp/cmd.version=e2e" of this module's root, a race build
// exactly when the tests run with -race.
const BinaryEnv = "R2R_MCP_E2E_BINARY"

// Build returns the path of r2r-mcp built from this module, building it on the first call
// in the test process (or $R2R_MCP_E2E_BINARY, see BinaryEnv). The binary is a race build
// when the tests run with -race, so races across the process boundary surface too, and
// reports version "e2e". It fails the test when the build fails or when the package's
// TestMain does not call Main.
func Build(t testing.TB) string {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("servertest.Build: call servertest.Main from the package's TestMain (it removes the binary)")
	}
	built.once.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			if _, err := os.Stat(p); err != nil {
				built.err = fmt.Errorf("%s: %v", BinaryEnv, err)
			}
			built.path = p
			return
		}
		built.dir, built.path, built.err = build()
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func build() (dir, path string, err error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", "", errors.New("servertest.Build: not inside the r2r-mcp module")
	}
	dir, err = os.MkdirTemp("", "r2r-mcp-e2e-")
	if err != nil {
		return "", "", err
	}
	name := "r2r-mcp"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	path = filepath.Join(dir, name)
	args := []string{"build"}
	if RaceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "-ldflags", "-X github.com/r2r-mcp/r2r-mcp/cmd.version=e2e", "-o", path, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Dir(gomod)
	if b, err := cmd.CombinedOutput(); err != nil {
		return dir, "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return dir, path, nil
}
