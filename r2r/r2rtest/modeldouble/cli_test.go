package modeldouble

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestMainServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr syncLog
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, []string{"--addr", "127.0.0.1:0", "--dimensions", "8"}, outW, &stderr)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (stderr: %s)", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("stdout line %q is not the /v1 URL", line)
	}
	status, body := post(t, url+"/embeddings", map[string]any{"model": "text-embedding-3-small", "input": "hi"})
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	_, vecs, _ := embeddingsReply(t, body)
	if len(vecs) != 1 || len(vecs[0]) != 8 {
		t.Errorf("--dimensions 8 not applied: %v", vecs)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit code %d, stderr: %s", c, stderr.String())
	}
	if rest, _ := io.ReadAll(outR); len(rest) != 0 {
		t.Errorf("stdout has more than the URL line: %q", rest)
	}
	log := stderr.String()
	for _, want := range []string{"listening on " + url, "POST /v1/embeddings 200", "stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
}

func TestMainFlagErrors(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"-h"}, 0, "-addr"},
		{[]string{"--dimensions", "0"}, 2, "--dimensions must be between"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"--embeddings-upstream", "localhost:1"}, 2, "--embeddings-upstream:"},
		{[]string{"extra"}, 2, "unexpected arguments"},
		{[]string{"--addr", "256.0.0.1:1"}, 1, "model-double:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr syncLog
			if c := Main(context.Background(), tt.args, &stdout, &stderr); c != tt.code {
				t.Errorf("exit code %d, want %d", c, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantErr)
			}
			if stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestQuietLogsNoRequests(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	var stderr syncLog
	code := make(chan int, 1)
	go func() { code <- Main(ctx, []string{"--quiet", "--chat-model", "chat-z"}, outW, &stderr); outW.Close() }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(strings.TrimSpace(line) + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	cancel()
	<-code
	if len(list.Data) != 2 || list.Data[0].ID != "chat-z" {
		t.Errorf("models = %+v, want chat-z and the default embedding model", list.Data)
	}
	if strings.Contains(stderr.String(), "GET /v1/models") {
		t.Errorf("--quiet still logs requests:\n%s", stderr.String())
	}
}
