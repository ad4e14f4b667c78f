// Package e2ereal_test drives the built r2r-mcp against a real R2R 3.6.6 (the one
// `make r2r-real` brings up): the official MCP TypeScript SDK through a whole ingest → search
// → read → RAG → list flow, and login / status / doctor / logout with authentication on.
//
// The tests run when R2R_CONFORMANCE_URL, R2R_CONFORMANCE_EMAIL and R2R_CONFORMANCE_PASSWORD
// name a real R2R's admin (`make test-real` sets them); otherwise they skip with that note.
package e2ereal_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest/minipdf"
)

func TestMain(m *testing.M) { servertest.Main(m) }

// realR2R is the admin of the real R2R under test.
type realR2R struct{ URL, Email, Password string }

// liveR2R returns the real R2R named by R2R_CONFORMANCE_*, or skips the test without one.
func liveR2R(t *testing.T) realR2R {
	t.Helper()
	r := realR2R{os.Getenv("R2R_CONFORMANCE_URL"), os.Getenv("R2R_CONFORMANCE_EMAIL"), os.Getenv("R2R_CONFORMANCE_PASSWORD")}
	if r.URL == "" || r.Email == "" || r.Password == "" {
		t.Skip("no real R2R: set R2R_CONFORMANCE_URL/EMAIL/PASSWORD, or run make test-real")
	}
	return r
}

// unique is a short random suffix that keeps project (and so collection) names apart
// between runs against the same long-lived R2R.
func unique(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

const (
	mdPath   = "docs/payout-backlog.md"
	mdPhrase = "payout queue backlog triage"
	mdText   = "# Payout queue backlog\n\n" +
		"When the payout queue backs up, start the payout queue backlog triage: page the payments " +
		"on-call engineer, pause new payout batches and drain the oldest batches first.\n\n" +
		"Check the settlement worker dashboard before restarting any worker.\n"
	pdfPath   = "docs/settlement-runbook.pdf"
	pdfPhrase = "ledger reconciliation drift"
	question  = "What do we do when the payout queue backs up?"
)

var pdfLines = []string{
	"Settlement runbook",
	"If the nightly ledger reconciliation drift exceeds forty basis points,",
	"freeze settlement exports and open a finance incident.",
	"Reconcile each merchant account against the bank statement before resuming.",
}

// TestRealTypeScriptClient runs testdata/ts-client/real.mjs: the official MCP TypeScript
// SDK drives the built binary against the real R2R with the admin's credentials from the
// environment.
func TestRealTypeScriptClient(t *testing.T) {
	r := liveR2R(t)
	node, err := exec.LookPath("node")
	dir, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "ts-client"))
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		t.Fatalf("a real R2R is configured but the TypeScript client is not ready (node, npm ci in testdata/ts-client): %v", err)
	}
	proj := servertest.GitProject(t, "real-"+unique(t), map[string]string{
		mdPath:  mdText,
		pdfPath: string(minimalPDF(pdfLines)),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "real.mjs")
	cmd.Dir = dir
	cmd.Env = servertest.Env(t, r.URL,
		"R2R_EMAIL="+r.Email, "R2R_PASSWORD="+r.Password,
		"R2R_MCP_BIN="+servertest.Build(t), "R2R_MCP_PROJECT="+proj,
		"R2R_MCP_MD="+mdPath, "R2R_MCP_MD_PHRASE="+mdPhrase,
		"R2R_MCP_PDF="+pdfPath, "R2R_MCP_PDF_PHRASE="+pdfPhrase,
		"R2R_MCP_QUESTION="+question,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node real.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("TypeScript SDK against the real R2R: %v", err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatal("real.mjs did not finish")
	}
	if strings.Contains(string(out), r.Password) {
		t.Error("the admin password appears in the client's or server's output")
	}
}

// TestRealAuthCommands is a new user's terminal session against a real R2R with
// authentication on: login stores an R2R session (in the 0600 file here: no Secret
// Service), status and doctor pass with it, serve searches with it, logout ends it.
func TestRealAuthCommands(t *testing.T) {
	r := liveR2R(t)
	env := servertest.MinimalEnv(t,
		"DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"),
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	proj := servertest.GitProject(t, "auth-"+unique(t), map[string]string{mdPath: mdText})
	run := func(stdin string, args ...string) servertest.Result {
		t.Helper()
		res := servertest.Run(t, proj, env, stdin, args...)
		for _, s := range []string{res.Stdout, res.Stderr} {
			if strings.Contains(s, r.Password) {
				t.Fatalf("r2r-mcp %s printed the password", args[0])
			}
		}
		return res
	}

	if res := run(r.Password+"\n", "login", "--url", r.URL, "--email", r.Email, "--password-stdin"); res.Code != 0 {
		t.Fatalf("login exited %d:\n%s", res.Code, res.Stderr)
	}
	env = append(env, "R2R_API_URL="+r.URL)

	res := run("", "status", "--json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil || res.Code != 0 {
		t.Fatalf("status --json exited %d (%v):\n%s%s", res.Code, err, res.Stdout, res.Stderr)
	}
	t.Logf("status: %s", res.Stdout)

	if res := run("", "doctor"); res.Code != 0 {
		t.Fatalf("doctor exited %d:\n%s%s", res.Code, res.Stdout, res.Stderr)
	} else {
		t.Logf("doctor:\n%s%s", res.Stdout, res.Stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, t, proj, env)
	ing, err := s.Call(ctx, "r2r_ingest_document", map[string]any{"file_path": mdPath})
	if err != nil || ing.IsError {
		t.Fatalf("ingest with the stored session: %v %s\n%s", err, ing.Text, s.Stderr())
	}
	found, err := s.Call(ctx, "r2r_search", map[string]any{"query": mdPhrase, "limit": 3})
	if err != nil || found.IsError || !strings.Contains(found.Text, mdPath) {
		t.Fatalf("search with the stored session: %v %s\n%s", err, found.Text, s.Stderr())
	}
	s.Close()

	if res := run("", "logout"); res.Code != 0 {
		t.Fatalf("logout exited %d:\n%s", res.Code, res.Stderr)
	}
	if res := run("", "status"); res.Code == 0 {
		t.Fatalf("status after logout still reports usable credentials:\n%s", res.Stdout)
	}
}

// minimalPDF is a one-page PDF 1.4 with lines of Helvetica text: enough for R2R's PDF
// parser to extract them, and small enough to build here instead of committing a binary.
func minimalPDF(lines []string) []byte {
	var content bytes.Buffer
	content.WriteString("BT /F1 12 Tf 72 720 Td 16 TL\n")
	for _, l := range lines {
		esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(&content, "(%s) Tj T*\n", esc)
	}
	content.WriteString("ET")
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	return minipdf.Assemble(objects...)
}

// TestMinimalPDF checks the generated PDF's cross-reference table points at its objects,
// so a parsing failure in R2R cannot be the fixture's fault.
func TestMinimalPDF(t *testing.T) {
	pdf := minimalPDF(pdfLines)
	s := string(pdf)
	if !strings.HasPrefix(s, "%PDF-1.4\n") || !strings.HasSuffix(s, "%%EOF\n") {
		t.Fatalf("bad PDF envelope:\n%s", s)
	}
	xrefAt := strings.Index(s, "\nxref\n") + 1
	var start int
	if _, err := fmt.Sscanf(s[strings.LastIndex(s, "startxref\n")+len("startxref\n"):], "%d", &start); err != nil || start != xrefAt {
		t.Fatalf("startxref %d, xref table at %d (%v)", start, xrefAt, err)
	}
	rows := strings.Split(s[xrefAt:], "\n")[3:8]
	for i, row := range rows {
		var off int
		fmt.Sscanf(row, "%d", &off)
		if want := fmt.Sprintf("%d 0 obj", i+1); !strings.HasPrefix(s[off:], want) {
			t.Errorf("xref row %d points at %q, want %q", i+1, s[off:off+10], want)
		}
	}
	for _, l := range pdfLines {
		if !strings.Contains(s, "("+l+") Tj") {
			t.Errorf("PDF lacks the line %q", l)
		}
	}
}
