package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxInitBytes bounds what one of r2r-mcp's packages allocates when the binary starts
// (package variables and init functions), whatever command runs: work a command may never
// need (a regexp table, a message catalogue) is done on first use instead.
const maxInitBytes = 16 << 10

// TestPackageInitIsLight reads the Go runtime's initialization trace of this test binary,
// which links every package of the command, and fails for a package of r2r-mcp whose
// initialization allocates more than maxInitBytes.
func TestPackageInitIsLight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @.*?, ([\d]+) bytes, \d+ allocs$`)
	seen := 0
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		if !strings.HasPrefix(m[1], "github.com/r2r-mcp/r2r-mcp/") {
			continue
		}
		seen++
		if n, _ := strconv.Atoi(m[2]); n > maxInitBytes {
			t.Errorf("initializing %s allocates %d bytes, more than %d", m[1], n, maxInitBytes)
		}
	}
	if seen == 0 {
		t.Fatalf("no initialization of an r2r-mcp package traced in:\n%.2000s", out)
	}
}
