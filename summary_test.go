package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// make test's summary (.ci/test-summary.awk) ends with "N passed, N failed, N skipped" and
// counts the keyring run appended after the main one: a test the main run skips and the
// keyring run runs counts as passed and is not listed as skipped.
func TestTestSummaryCountsEveryRun(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("awk is required under CI")
		}
		t.Skip("no awk")
	}
	const kr = "github.com/r2r-mcp/r2r-mcp/auth/keyringit"
	const other = "github.com/r2r-mcp/r2r-mcp/tools"
	event := func(action, pkg, test, output string) string {
		s := `{"Action":"` + action + `","Package":"` + pkg + `"`
		if test != "" {
			s += `,"Test":"` + test + `"`
		}
		if output != "" {
			s += `,"Output":"` + output + `"`
		}
		return s + `,"Elapsed":0.5}`
	}
	input := strings.Join([]string{
		// The main run: keyringit skips (no Secret Service asked for), tools passes two,
		// fails one (with a subtest), skips one.
		event("run", kr, "TestLoginServeLogout", ""),
		event("output", kr, "TestLoginServeLogout", `    keyring_test.go:20: set R2R_MCP_KEYRING_IT=1\n`),
		event("skip", kr, "TestLoginServeLogout", ""),
		event("pass", kr, "", ""),
		event("pass", other, "TestA", ""),
		event("pass", other, "TestB/sub", ""),
		event("pass", other, "TestB", ""),
		event("output", other, "TestC", `    c_test.go:9: broken\n`),
		event("fail", other, "TestC", ""),
		event("output", other, "TestD", `    d_test.go:5: needs redis-server\n`),
		event("skip", other, "TestD", ""),
		event("fail", other, "", ""),
		// The keyring run, appended: the test runs and passes.
		"some line the keyring script printed",
		event("run", kr, "TestLoginServeLogout", ""),
		event("pass", kr, "TestLoginServeLogout", ""),
		event("pass", kr, "", ""),
	}, "\n") + "\n"
	cmd := exec.Command(awk, "-f", ".ci/test-summary.awk")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1 (a test failed)", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "4 passed, 1 failed, 1 skipped" {
		t.Errorf("last line %q, want %q\n%s", last, "4 passed, 1 failed, 1 skipped", out)
	}
	for _, want := range []string{"c_test.go:9: broken", "FAIL\t" + other, "Skipped (1):", other + ".TestD: d_test.go:5: needs redis-server",
		"some line the keyring script printed", "ok  \t" + kr} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "TestLoginServeLogout:") {
		t.Errorf("the keyring test that ran is listed as skipped:\n%s", out)
	}
}
