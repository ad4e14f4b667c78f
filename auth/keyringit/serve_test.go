package keyringit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

func TestMain(m *testing.M) { servertest.Main(m) }

const (
	guideText = "# Payout guide\n\nThe quasar ledger reconciles payouts every night at 02:00 UTC.\n" +
		"If the quasar ledger falls behind, page the payments on-call.\n"
	guideQuery = "quasar ledger reconciles payouts"
)

// TestBinaryWithRealKeyring drives the real binary through a whole session against a real
// Secret Service: login stores an API key (not the password) in the keyring; serve, with
// no credential anywhere in its environment, reads it and searches a document it ingested;
// status reports the keyring as the source; logout revokes the key and deletes the entry.
func TestBinaryWithRealKeyring(t *testing.T) {
	if os.Getenv(Gate) != "1" {
		t.Skipf("set %s=1 to run against the real OS keyring (on Linux: under auth/testdata/with-secret-service.sh)", Gate)
	}
	bus := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if bus == "" {
		t.Fatal("DBUS_SESSION_BUS_ADDRESS is not set; run under auth/testdata/with-secret-service.sh")
	}
	srv := servertest.NewRecordingR2R(t, r2rtest.Options{RequireAuth: true})
	srv.CreateUser(email, password, false)
	t.Cleanup(func() { _ = keyring.Delete(auth.KeyringService, srv.URL) })

	env := servertest.MinimalEnv(t, "DBUS_SESSION_BUS_ADDRESS="+bus)
	configDir := filepath.Join(servertest.EnvValue(env, "XDG_CONFIG_HOME"), "r2r-mcp")
	proj := servertest.GitProject(t, "payouts", map[string]string{"docs/guide.md": guideText})
	var outputs = map[string]string{}

	// 1. login: an R2R session goes to the keyring, nothing to the file.
	r := servertest.Run(t, proj, env, password+"\n", "login", "--url", srv.URL, "--email", email, "--password-stdin")
	outputs["login stdout"], outputs["login stderr"] = r.Stdout, r.Stderr
	if r.Code != 0 || !strings.Contains(r.Stderr, "stored in the system keyring") {
		t.Fatalf("login exited %d: %s", r.Code, r.Stderr)
	}
	sec := storedSession(t, srv.URL)
	if _, err := os.Stat(filepath.Join(configDir, auth.CredentialsFileName)); !os.IsNotExist(err) {
		t.Errorf("plain-text credentials file written although the keyring works (%v)", err)
	}

	// 2. serve with no credential (and no URL) in its environment.
	for _, kv := range env {
		if strings.HasPrefix(kv, "R2R_") {
			t.Fatalf("serve environment carries %s", strings.SplitN(kv, "=", 2)[0])
		}
	}
	srv.ResetCounts()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, t, proj, env)
	ing, err := s.Call(ctx, "r2r_ingest_document", map[string]any{"file_path": "docs/guide.md"})
	if err != nil || ing.IsError {
		t.Fatalf("ingest: %v %s\nstderr:\n%s", err, ing.Text, s.Stderr())
	}
	docID, _ := ing.Structured["document_id"].(string)
	found, err := s.Call(ctx, "r2r_search", map[string]any{"query": guideQuery, "limit": 5})
	if err != nil || found.IsError {
		t.Fatalf("search: %v %s", err, found.Text)
	}
	hits, _ := found.Structured["results"].([]any)
	hit := false
	for _, h := range hits {
		if m, ok := h.(map[string]any); ok && m["document_id"] == docID && strings.Contains(fmt.Sprint(m["text"]), "quasar ledger") {
			hit = true
		}
	}
	if docID == "" || !hit {
		t.Errorf("search did not find the ingested document %q:\n%s", docID, found.Text)
	}
	if lr := srv.LastRequest("POST /v3/retrieval/search"); lr == nil || lr.Header.Get("Authorization") != "Bearer "+sec.AccessToken {
		t.Errorf("search was not authenticated with the session's access token from the keyring")
	}
	outputs["serve stdout"], outputs["serve stderr"] = s.Close()

	// 3. status names the keyring as the source.
	r = servertest.Run(t, proj, env, "", "status", "--json")
	outputs["status stdout"], outputs["status stderr"] = r.Stdout, r.Stderr
	var rep struct {
		Usable     bool `json:"usable"`
		Credential struct {
			Source, Kind, Key string
		} `json:"credential"`
		User *struct{ Email string } `json:"user"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("status --json (exit %d): %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if r.Code != 0 || !rep.Usable || rep.Credential.Source != auth.SourceKeyring || rep.Credential.Kind != auth.KindRefreshToken ||
		rep.Credential.Key != "" || rep.User == nil || rep.User.Email != email {
		t.Errorf("status exit %d: %s", r.Code, r.Stdout)
	}
	r = servertest.Run(t, proj, env, "", "status")
	outputs["status text"] = r.Stdout + r.Stderr
	if r.Code != 0 || !strings.Contains(r.Stdout, "(keyring)") {
		t.Errorf("status exit %d:\n%s", r.Code, r.Stdout)
	}
	t.Logf("status output:\n%s", r.Stdout)

	// 4. logout ends the session on the server and deletes the entry.
	r = servertest.Run(t, proj, env, "", "logout")
	outputs["logout stdout"], outputs["logout stderr"] = r.Stdout, r.Stderr
	if r.Code != 0 || !strings.Contains(r.Stderr, "R2R session ended on the server") || !strings.Contains(r.Stderr, "removed from the system keyring") {
		t.Errorf("logout exited %d: %s", r.Code, r.Stderr)
	}
	if _, err := keyring.Get(auth.KeyringService, srv.URL); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring entry still there after logout: %v", err)
	}
	// logout also forgot the URL login saved, so status is told which R2R to ask: on its own
	// it would ask R2R's default address, where the quick start's emulator may be running.
	r = servertest.Run(t, proj, env, "", "status", "--json", "--url", srv.URL)
	if r.Code != 1 || !strings.Contains(r.Stdout, `"source": "none"`) {
		t.Errorf("status after logout exited %d: %s", r.Code, r.Stdout)
	}

	for _, leak := range servertest.FindSecrets(outputs, append(srv.Credentials(), password, sec.Secret, sec.AccessToken)) {
		t.Error(leak)
	}
}
