package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// The --http flags are checked before anything starts; a Redis password is refused in argv.
func TestServeHTTPFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(server.HTTPOptions) bool
		wantErr string
	}{
		{name: "stdio", check: func(h server.HTTPOptions) bool {
			return h.Addr == "" && h.AuthMode == "user" && h.KeyTTL == time.Minute
		}},
		{name: "http", args: []string{"--http", "127.0.0.1:0", "--allowed-hosts", "mcp.example.com,10.0.0.5", "--redis-url", "redis://127.0.0.1:6379/0",
			"--key-ttl", "30s", "--collection", "c1", "--allowed-origins", "https://app.example.com"},
			check: func(h server.HTTPOptions) bool {
				return h.Addr == "127.0.0.1:0" && strings.Join(h.AllowedHosts, " ") == "mcp.example.com 10.0.0.5" &&
					h.RedisURL == "redis://127.0.0.1:6379/0" && h.KeyTTL == 30*time.Second && h.Collection == "c1" &&
					h.AllowedOrigins[0] == "https://app.example.com"
			}},
		{name: "environment", env: map[string]string{"R2R_MCP_HTTP": "127.0.0.1:0", "R2R_MCP_ALLOWED_HOSTS": "a.example.com"},
			check: func(h server.HTTPOptions) bool {
				return h.Addr == "127.0.0.1:0" && h.AllowedHosts[0] == "a.example.com"
			}},
		{name: "shared read-only", args: []string{"--http", "127.0.0.1:0", "--auth-mode", "shared", "--read-only"}},
		{name: "password in the environment", args: []string{"--http", "127.0.0.1:0"}, env: map[string]string{"R2R_MCP_REDIS_URL": "redis://:secret@127.0.0.1:6379"}},
		{name: "shared needs read-only", args: []string{"--http", "127.0.0.1:0", "--auth-mode", "shared"}, wantErr: "--read-only"},
		{name: "unknown mode", args: []string{"--http", "127.0.0.1:0", "--auth-mode", "none"}, wantErr: "--auth-mode"},
		{name: "address", args: []string{"--http", "8080"}, wantErr: "--http"},
		{name: "http-only flag without --http", args: []string{"--redis-url", "redis://x:6379"}, wantErr: "--redis-url applies only with --http"},
		{name: "password in argv", args: []string{"--http", "127.0.0.1:0", "--redis-url", "redis://:secret@127.0.0.1:6379"}, wantErr: "R2R_MCP_REDIS_URL"},
		{name: "key ttl", args: []string{"--http", "127.0.0.1:0", "--key-ttl", "2h"}, wantErr: "--key-ttl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{auth.ConfigDirEnv: t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			ran := false
			var got server.Config
			deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
				Getenv: func(k string) string { return env[k] }}
			c := newServeCmd(deps, func(_ context.Context, cfg server.Config) error { got, ran = cfg, true; return nil })
			c.SetArgs(append([]string{"--project-dir", t.TempDir()}, tt.args...))
			c.SetOut(&bytes.Buffer{})
			c.SetErr(&bytes.Buffer{})
			err := c.Execute()
			if tt.wantErr == "" {
				if err != nil || !ran {
					t.Fatalf("err = %v, ran %v", err, ran)
				}
				if tt.check != nil && !tt.check(got.Options.HTTP) {
					t.Fatalf("HTTP options %+v", got.Options.HTTP)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ran || strings.Contains(err.Error(), "secret") {
				t.Fatalf("err = %v (ran %v), want an error naming %s", err, ran, tt.wantErr)
			}
		})
	}
}
