package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary run as the command itself, so that the test below checks
// the real main: its signal handling and exit code.
func TestMain(m *testing.M) {
	if os.Getenv("MODEL_DOUBLE_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestCommandServesAndStopsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MODEL_DOUBLE_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v", err)
	}
	url := strings.TrimSpace(line)
	resp, err := http.Post(url+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"content":"Hello."`) {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "model-double: stopped") {
		t.Errorf("stderr lacks the stop line:\n%s", stderr.String())
	}
}
