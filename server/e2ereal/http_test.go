package e2ereal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// realHTTP is serve --http in-process against the real R2R r.
func realHTTP(t *testing.T, r realR2R) *httpserve.Handler {
	t.Helper()
	opts := server.DefaultOptions()
	base, err := server.New(server.Config{R2RURL: r.URL, Remote: true, ConfigDir: t.TempDir(), WorkDir: t.TempDir(), Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(base.Close)
	h, err := httpserve.New(base, httpserve.Options{HTTPOptions: opts.HTTP})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// invokeHTTP calls tool through h's REST gateway with cred as the Bearer credential.
func invokeHTTP(t *testing.T, h http.Handler, cred, tool string, args map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"tool": tool, "arguments": args})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cred)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Body)
	return rec.Code, string(out)
}

// TestRealHTTPRefusesRefreshToken: the real R2R answers users/me with a refresh token (the
// conformance suite's auth/me_with_refresh_token_accepted), and serve --http refuses it as
// a credential while the access token of the same session works.
func TestRealHTTPRefusesRefreshToken(t *testing.T) {
	r := liveR2R(t)
	c, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(t.Context(), r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WithCredentials(r2r.Bearer(pair.RefreshToken.Token)).Me(t.Context()); err != nil {
		t.Fatalf("the real R2R no longer takes a refresh token on users/me (%v): the premise of this test is gone", err)
	}
	h := realHTTP(t, r)
	status, out := invokeHTTP(t, h, pair.RefreshToken.Token, "r2r_list_collections", nil)
	if status != http.StatusUnauthorized || !strings.Contains(out, "refresh token") || strings.Contains(out, pair.RefreshToken.Token) {
		t.Errorf("the refresh token over HTTP: %d %s", status, out)
	}
	if status, out := invokeHTTP(t, h, pair.AccessToken.Token, "r2r_list_collections", nil); status != http.StatusOK {
		t.Errorf("the access token over HTTP: %d %s", status, out)
	}
}

// TestRealHTTPDeleteInTheCallersCollection: over serve --http against the real R2R,
// r2r_delete_document deletes a document of the request's collection (X-R2R-Collection)
// and R2R no longer has it; without any collection the call is a 400 naming the header.
func TestRealHTTPDeleteInTheCallersCollection(t *testing.T) {
	r := liveR2R(t)
	ctx := t.Context()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	admin := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	coll, err := admin.CreateCollection(ctx, "http-delete-"+unique(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteCollection(context.WithoutCancel(ctx), coll.ID) })
	res, err := admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: "The payout queue is drained by the heron worker " + unique(t) + ".",
		CollectionIDs: []string{coll.ID}, Metadata: map[string]any{"title": "heron.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		d, err := admin.GetDocument(ctx, res.DocumentID)
		if err == nil && (d.IngestionStatus == r2r.IngestionSuccess || d.IngestionStatus == r2r.IngestionFailed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ingested: %v", err)
		}
	}
	h := realHTTP(t, r)
	if status, out := invokeHTTP(t, h, pair.AccessToken.Token, "r2r_delete_document", map[string]any{"document_id": res.DocumentID}); status != http.StatusBadRequest ||
		!strings.Contains(out, httpserve.CollectionHeader) {
		t.Errorf("delete without a collection: %d %s", status, out)
	}
	body, _ := json.Marshal(map[string]any{"tool": "r2r_delete_document", "arguments": map[string]any{"document_id": res.DocumentID}})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+pair.AccessToken.Token)
	req.Header.Set(httpserve.CollectionHeader, coll.ID)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Deleted document") {
		t.Fatalf("delete in the request's collection: %d %s", rec.Code, rec.Body)
	}
	if _, err := admin.GetDocument(ctx, res.DocumentID); !errors.Is(err, r2r.ErrNotFound) {
		t.Errorf("R2R still has the deleted document: %v", err)
	}
}
