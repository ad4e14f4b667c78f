package r2r_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func newEmulator(t *testing.T, opts r2rtest.Options) (*r2rtest.Server, *r2r.Client) {
	t.Helper()
	srv := r2rtest.NewServer(t, opts)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL + "/v3/", UserAgent: "r2r-mcp/test"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// wantErr asserts err is an *r2r.Error with the status and R2R's own message (a prefix
// when the message ends in "…", i.e. the rest is variable).
func wantErr(t *testing.T, err error, status int, msg string, sentinel error) *r2r.Error {
	t.Helper()
	e, ok := errors.AsType[*r2r.Error](err)
	if !ok {
		t.Fatalf("error %T %v is not *r2r.Error", err, err)
	}
	if e.StatusCode != status {
		t.Fatalf("status %d (%q), want %d", e.StatusCode, e.Message, status)
	}
	if p, prefix := strings.CutSuffix(msg, "…"); prefix {
		if !strings.HasPrefix(e.Message, p) {
			t.Fatalf("message %q, want prefix %q", e.Message, p)
		}
	} else if e.Message != msg {
		t.Fatalf("message %q, want %q", e.Message, msg)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %v) = false", err, sentinel)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func TestEmulatorHealthAndAnonymousMe(t *testing.T) {
	srv, c := newEmulator(t, r2rtest.Options{})
	if err := c.Health(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ua := srv.LastRequest("GET /v3/health").Header.Get("User-Agent"); ua != "r2r-mcp/test" {
		t.Fatalf("User-Agent %q", ua)
	}
	me, err := c.Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if me.Email != r2rtest.AdminEmail || !me.IsSuperuser || me.ID == "" || me.CreatedAt.IsZero() {
		t.Fatalf("anonymous Me in no-auth mode = %+v", me)
	}
}

func TestEmulatorLoginRefreshAndAPIKeys(t *testing.T) {
	srv, anon := newEmulator(t, r2rtest.Options{RequireAuth: true})
	ctx := t.Context()

	_, err := anon.Me(ctx)
	wantErr(t, err, 401, "No credentials provided…", r2r.ErrUnauthorized)
	_, err = anon.Login(ctx, r2rtest.AdminEmail, "wrong")
	wantErr(t, err, 401, "Incorrect email or password", r2r.ErrUnauthorized)
	_, err = anon.Login(ctx, "nobody@example.com", "x")
	wantErr(t, err, 404, "User not found", r2r.ErrNotFound)

	pair, err := anon.Login(ctx, strings.ToUpper(r2rtest.AdminEmail), r2rtest.AdminPassword)
	if err != nil {
		t.Fatal(err)
	}
	login := srv.LastRequest("POST /v3/users/login")
	if login.ContentType != "application/x-www-form-urlencoded" ||
		!equalForm(login.Form, url.Values{"username": {strings.ToUpper(r2rtest.AdminEmail)}, "password": {r2rtest.AdminPassword}}) {
		t.Fatalf("login request %s %v", login.ContentType, login.Form)
	}
	if pair.AccessToken.TokenType != "access" || pair.RefreshToken.TokenType != "refresh" || pair.AccessToken.Token == "" {
		t.Fatalf("token pair %+v", pair)
	}
	admin := anon.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	me, err := admin.Me(ctx)
	if err != nil || me.Email != r2rtest.AdminEmail {
		t.Fatalf("Me with bearer = %+v, %v", me, err)
	}

	// Refresh tokens rotate: the new pair works, the old refresh token is rejected.
	pair2, err := anon.RefreshToken(ctx, pair.RefreshToken.Token)
	if err != nil {
		t.Fatal(err)
	}
	ref := srv.LastRequest("POST /v3/users/refresh-token")
	if ref.ContentType != "application/json" || string(ref.Body) != mustJSON(t, pair.RefreshToken.Token) {
		t.Fatalf("refresh request %s %s", ref.ContentType, ref.Body)
	}
	if pair2.RefreshToken.Token == pair.RefreshToken.Token || pair2.AccessToken.Token == pair.AccessToken.Token {
		t.Fatal("refresh must return new tokens")
	}
	_, err = anon.RefreshToken(ctx, pair.RefreshToken.Token)
	wantErr(t, err, 401, "Token has been invalidated", r2r.ErrUnauthorized)
	if _, err := anon.WithCredentials(r2r.Bearer(pair2.AccessToken.Token)).Me(ctx); err != nil {
		t.Fatal(err)
	}

	// API keys: create, use, list, delete, then the key is rejected.
	created, err := admin.CreateAPIKey(ctx, me.ID, "laptop", "r2r-mcp on laptop")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := srv.LastRequest("POST /v3/users/{id}/api-keys").JSON(&body); err != nil ||
		body["name"] != "laptop" || body["description"] != "r2r-mcp on laptop" {
		t.Fatalf("create key body %v, %v", body, err)
	}
	if !strings.HasPrefix(created.APIKey, created.PublicKey+".") || created.KeyID == "" {
		t.Fatalf("created key %+v", created)
	}
	keyed := anon.WithCredentials(r2r.APIKey(created.APIKey))
	if me2, err := keyed.Me(ctx); err != nil || me2.ID != me.ID {
		t.Fatalf("Me with API key = %+v, %v", me2, err)
	}
	if got := srv.LastRequest("GET /v3/users/me").Header.Get("X-API-Key"); got != created.APIKey {
		t.Fatal("API key not sent as X-API-Key")
	}
	keys, err := keyed.ListAPIKeys(ctx, me.ID)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(keys, func(k r2r.APIKeyInfo) bool { return k.KeyID == created.KeyID }); i < 0 ||
		keys[i].Name != "laptop" || keys[i].PublicKey != created.PublicKey {
		t.Fatalf("key list %+v", keys)
	}
	if err := admin.DeleteAPIKey(ctx, me.ID, created.KeyID); err != nil {
		t.Fatal(err)
	}
	_, err = keyed.Me(ctx)
	wantErr(t, err, 401, "Invalid token or API key", r2r.ErrUnauthorized)
	err = admin.DeleteAPIKey(ctx, me.ID, created.KeyID)
	wantErr(t, err, 404, "API key not found", r2r.ErrNotFound)

	// A normal user cannot manage someone else's keys.
	srv.CreateUser("dev@example.com", "pw-dev-1", false)
	devPair, err := anon.Login(ctx, "dev@example.com", "pw-dev-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = anon.WithCredentials(r2r.Bearer(devPair.AccessToken.Token)).ListAPIKeys(ctx, me.ID)
	wantErr(t, err, 403, "Only the user themselves or a superuser can …", r2r.ErrForbidden)
}

// tokenSource is a minimal refresh-token credential: Bearer access token, renewed through
// RefreshToken (which rotates both tokens).
type tokenSource struct {
	c       *r2r.Client
	mu      sync.Mutex
	access  string
	refresh string
}

func (s *tokenSource) Apply(_ context.Context, h http.Header) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Set("Authorization", "Bearer "+s.access)
	return nil
}

func (s *tokenSource) Identity() string { return "test-token-source" }

func (s *tokenSource) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.c.RefreshToken(ctx, s.refresh)
	if err != nil {
		return err
	}
	s.access, s.refresh = p.AccessToken.Token, p.RefreshToken.Token
	return nil
}

func TestEmulatorRefresherRetriesAfterExpiry(t *testing.T) {
	srv, anon := newEmulator(t, r2rtest.Options{RequireAuth: true})
	ctx := t.Context()
	pair, err := anon.Login(ctx, r2rtest.AdminEmail, r2rtest.AdminPassword)
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenSource{c: anon, access: pair.AccessToken.Token, refresh: pair.RefreshToken.Token}
	c := anon.WithCredentials(ts)
	if _, err := c.Me(ctx); err != nil {
		t.Fatal(err)
	}
	srv.ResetCounts()
	srv.ExpireTokens()
	res, err := c.Search(ctx, r2r.SearchRequest{Query: "anything"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ChunkSearchResults == nil && res.GraphSearchResults == nil {
		t.Fatal("empty search result envelope")
	}
	if n := srv.Count("POST /v3/users/refresh-token"); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	if n := srv.Count("POST /v3/retrieval/search"); n != 2 {
		t.Fatalf("%d search requests, want 2 (401, then replay)", n)
	}
	if body := string(srv.LastRequest("POST /v3/retrieval/search").Body); body != `{"query":"anything"}` {
		t.Fatalf("replayed body %s", body)
	}
	// The refresh token was rotated, so the original one is now dead.
	_, err = anon.RefreshToken(ctx, pair.RefreshToken.Token)
	wantErr(t, err, 401, "Token has been invalidated", r2r.ErrUnauthorized)
}

func TestEmulatorDocuments(t *testing.T) {
	srv, c := newEmulator(t, r2rtest.Options{})
	ctx := t.Context()
	col, err := c.CreateCollection(ctx, "claude-code-demo", "demo project")
	if err != nil {
		t.Fatal(err)
	}

	const docID = "4d1b5f6e-9a3c-5e2f-8b7d-0c1a2b3c4d5e"
	content := []byte("# Retry policy\n\nThe client retries idempotent calls on 429, 502, 503 and 504.\n")
	ing, err := c.CreateDocument(ctx, r2r.DocumentCreate{
		FileName: "docs/naïve retry.md", File: content, ID: docID,
		Metadata:      map[string]any{"path": "docs/naïve retry.md", "project": "demo"},
		CollectionIDs: []string{col.ID}, IngestionMode: "fast",
		IngestionConfig:      map[string]any{"chunk_size": 512},
		RunWithOrchestration: ptr(false),
	})
	if err != nil {
		t.Fatal(err)
	}
	if ing.DocumentID != docID || ing.Message != "Document created and ingested successfully." {
		t.Fatalf("ingestion response %+v", ing)
	}
	rec := srv.LastRequest("POST /v3/documents")
	if rec.ContentType != "multipart/form-data" || string(rec.File) != string(content) || rec.FileContentType != "application/octet-stream" {
		t.Fatalf("file part: type %s ctype %q bytes %q", rec.ContentType, rec.FileContentType, rec.File)
	}
	// R2R sees the whole name, directories included (its ids replace "/" with "_"), so
	// check the raw Content-Disposition rather than RecordedRequest.FileName.
	if name := rawFileName(t, rec); name != "docs/naïve retry.md" {
		t.Fatalf("file part filename %q", name)
	}
	wantForm := url.Values{
		"id":                     {docID},
		"metadata":               {`{"path":"docs/naïve retry.md","project":"demo"}`},
		"collection_ids":         {`["` + col.ID + `"]`},
		"ingestion_mode":         {"fast"},
		"ingestion_config":       {`{"chunk_size":512}`},
		"run_with_orchestration": {"false"},
	}
	if !equalForm(rec.Form, wantForm) {
		t.Fatalf("form fields\n got %v\nwant %v", rec.Form, wantForm)
	}

	doc, err := c.GetDocument(ctx, docID)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ID != docID || doc.IngestionStatus != r2r.IngestionSuccess || doc.Metadata["project"] != "demo" ||
		doc.Metadata["version"] != "v0" || !slices.Contains(doc.CollectionIDs, col.ID) || doc.DocumentType != "md" ||
		doc.SizeInBytes == nil || *doc.SizeInBytes != int64(len(content)) {
		t.Fatalf("document %+v", doc)
	}

	_, err = c.CreateDocument(ctx, r2r.DocumentCreate{FileName: "again.md", File: content, ID: docID})
	wantErr(t, err, 409, "Document "+docID+" already exists. Submit a DELETE request to `/documents/{document_id}` to delete this document and allow for re-ingestion.", r2r.ErrConflict)

	// Raw text: only raw_text is sent.
	raw, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: "a plain note about circuit breakers"})
	if err != nil {
		t.Fatal(err)
	}
	rec = srv.LastRequest("POST /v3/documents")
	if rec.FileName != "" || rec.File != nil || !equalForm(rec.Form, url.Values{"raw_text": {"a plain note about circuit breakers"}}) {
		t.Fatalf("raw text request: file %q form %v", rec.FileName, rec.Form)
	}
	_, err = c.CreateDocument(ctx, r2r.DocumentCreate{RawText: "a plain note about circuit breakers"})
	wantErr(t, err, 409, "Document "+raw.DocumentID+" already exists…", r2r.ErrConflict)

	chunks, err := c.ListDocumentChunks(ctx, docID, r2r.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ch := range chunks.Items {
		if ch.DocumentID != docID {
			t.Fatalf("chunk of another document: %+v", ch)
		}
		text.WriteString(ch.Text)
	}
	if len(chunks.Items) == 0 || chunks.Total != len(chunks.Items) || !strings.Contains(text.String(), "retries idempotent calls") {
		t.Fatalf("chunks total %d items %d text %q", chunks.Total, len(chunks.Items), text.String())
	}
	one, err := c.ListDocumentChunks(ctx, docID, r2r.ListParams{Limit: 1})
	if err != nil || len(one.Items) != 1 || one.Total != chunks.Total {
		t.Fatalf("chunks limit 1: %+v, %v", one, err)
	}

	dl, err := c.DownloadDocument(ctx, docID)
	if err != nil {
		t.Fatal(err)
	}
	// The refused duplicate above replaced the stored file's name (same bytes), as in R2R
	// (conformance test TestLive/documents/duplicate_409_still_replaces_stored_file).
	if string(dl.Body) != string(content) || dl.FileName != "again.md" {
		t.Fatalf("download name %q type %q body %q", dl.FileName, dl.ContentType, dl.Body)
	}

	patched, err := c.PatchDocumentMetadata(ctx, docID, []map[string]any{{"reviewed": true}, {"project": "demo2"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(srv.LastRequest("PATCH /v3/documents/{id}/metadata").Body) != `[{"reviewed":true},{"project":"demo2"}]` {
		t.Fatalf("patch body %s", srv.LastRequest("PATCH /v3/documents/{id}/metadata").Body)
	}
	if patched.Metadata["reviewed"] != true || patched.Metadata["project"] != "demo2" || patched.Metadata["path"] != "docs/naïve retry.md" {
		t.Fatalf("patched metadata %v", patched.Metadata)
	}

	if err := c.DeleteDocument(ctx, docID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetDocument(ctx, docID)
	wantErr(t, err, 404, "Document not found.", r2r.ErrNotFound)
	err = c.DeleteDocument(ctx, docID)
	wantErr(t, err, 404, "Document not found", r2r.ErrNotFound)
	_, err = c.DownloadDocument(ctx, docID)
	wantErr(t, err, 404, "Document not found.", r2r.ErrNotFound)
	_, err = c.PatchDocumentMetadata(ctx, docID, nil)
	wantErr(t, err, 404, "Document not found.", r2r.ErrNotFound)
	_, err = c.ListDocumentChunks(ctx, docID, r2r.ListParams{})
	wantErr(t, err, 404, "No chunks found for the given document ID.", r2r.ErrNotFound)

	// FastAPI's 422 list shape.
	_, err = c.GetDocument(ctx, "not-a-uuid")
	e := wantErr(t, err, 422, "path.id: Input should be a valid UUID…", nil)
	if e.Retryable() {
		t.Fatal("422 must not be retryable")
	}
}

func TestEmulatorPagination(t *testing.T) {
	_, c := newEmulator(t, r2rtest.Options{})
	ctx := t.Context()
	var ids []string
	for i := range 5 {
		ing, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: fmt.Sprintf("note number %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ing.DocumentID)
	}
	all, err := c.ListDocuments(ctx, r2r.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 5 || len(all.Items) != 5 || all.Items[0].ID != ids[4] {
		t.Fatalf("all: total %d items %d (newest first expected)", all.Total, len(all.Items))
	}
	pg, err := c.ListDocuments(ctx, r2r.ListParams{Offset: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Total != 5 || len(pg.Items) != 2 || pg.Items[0].ID != all.Items[1].ID || pg.Items[1].ID != all.Items[2].ID {
		t.Fatalf("offset 1 limit 2: total %d items %+v", pg.Total, pg.Items)
	}
	last, err := c.ListDocuments(ctx, r2r.ListParams{Offset: 4, Limit: 10})
	if err != nil || last.Total != 5 || len(last.Items) != 1 {
		t.Fatalf("last page: %+v, %v", last, err)
	}
	byID, err := c.ListDocuments(ctx, r2r.ListParams{IDs: []string{ids[0], ids[3]}})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, d := range byID.Items {
		got = append(got, d.ID)
	}
	slices.Sort(got)
	want := []string{ids[0], ids[3]}
	slices.Sort(want)
	if !slices.Equal(got, want) || byID.Total != 2 {
		t.Fatalf("ids filter: %v (total %d), want %v", got, byID.Total, want)
	}
	_, err = c.ListDocuments(ctx, r2r.ListParams{Limit: 5000})
	wantErr(t, err, 422, "query.limit: …", nil)
}

func TestEmulatorCollections(t *testing.T) {
	srv, c := newEmulator(t, r2rtest.Options{})
	ctx := t.Context()
	col, err := c.CreateCollection(ctx, "claude-code-r2r mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := srv.LastRequest("POST /v3/collections").JSON(&body); err != nil || len(body) != 1 || body["name"] != "claude-code-r2r mcp" {
		t.Fatalf("create body %v %v", body, err)
	}
	if col.ID == "" || col.Name != "claude-code-r2r mcp" || col.Description != nil {
		t.Fatalf("created %+v", col)
	}
	_, err = c.CreateCollection(ctx, "claude-code-r2r mcp", "")
	wantErr(t, err, 409, "…", r2r.ErrConflict)

	got, err := c.GetCollection(ctx, col.ID)
	if err != nil || got.ID != col.ID {
		t.Fatalf("get %+v %v", got, err)
	}
	byName, err := c.GetCollectionByName(ctx, "claude-code-r2r mcp")
	if err != nil || byName.ID != col.ID {
		t.Fatalf("by name %+v %v", byName, err)
	}
	_, err = c.GetCollectionByName(ctx, "no such collection")
	wantErr(t, err, 404, "No collection found with the specified name", r2r.ErrNotFound)
	_, err = c.GetCollection(ctx, "00000000-0000-4000-8000-000000000000")
	wantErr(t, err, 404, "The specified collection does not exist.", r2r.ErrNotFound)

	ing, err := c.CreateDocument(ctx, r2r.DocumentCreate{FileName: "a.txt", File: []byte("alpha beta gamma")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddDocumentToCollection(ctx, col.ID, ing.DocumentID); err != nil {
		t.Fatal(err)
	}
	err = c.AddDocumentToCollection(ctx, col.ID, ing.DocumentID)
	wantErr(t, err, 409, "Document is already assigned to the collection", r2r.ErrConflict)
	docs, err := c.ListCollectionDocuments(ctx, col.ID, r2r.ListParams{Limit: 10})
	if err != nil || docs.Total != 1 || len(docs.Items) != 1 || docs.Items[0].ID != ing.DocumentID {
		t.Fatalf("collection documents %+v %v", docs, err)
	}
	if q := srv.LastRequest("GET /v3/collections/{id}/documents").Query; q.Encode() != "limit=10" {
		t.Fatalf("query %v", q)
	}

	cols, err := c.ListCollections(ctx, r2r.ListParams{})
	if err != nil || cols.Total < 2 {
		t.Fatalf("collections %+v %v", cols, err)
	}
	one, err := c.ListCollections(ctx, r2r.ListParams{IDs: []string{col.ID}, Limit: 1})
	if err != nil || len(one.Items) != 1 || one.Items[0].ID != col.ID || one.Items[0].DocumentCount != 1 {
		t.Fatalf("collections by id %+v %v", one, err)
	}
	if q := srv.LastRequest("GET /v3/collections").Query; q.Encode() != "ids="+col.ID+"&limit=1" {
		t.Fatalf("query %v", q)
	}

	if err := c.RemoveDocumentFromCollection(ctx, col.ID, ing.DocumentID); err != nil {
		t.Fatal(err)
	}
	err = c.RemoveDocumentFromCollection(ctx, col.ID, ing.DocumentID)
	wantErr(t, err, 404, "Document not found in the specified collection", r2r.ErrNotFound)
	docs, err = c.ListCollectionDocuments(ctx, col.ID, r2r.ListParams{})
	if err != nil || docs.Total != 0 || docs.Items == nil {
		t.Fatalf("after remove %+v %v", docs, err)
	}
}

func TestEmulatorRetrieval(t *testing.T) {
	srv, c := newEmulator(t, r2rtest.Options{})
	ctx := t.Context()
	col, err := c.CreateCollection(ctx, "kb", "")
	if err != nil {
		t.Fatal(err)
	}
	ing, err := c.CreateDocument(ctx, r2r.DocumentCreate{FileName: "breaker.md", CollectionIDs: []string{col.ID},
		File: []byte("The circuit breaker opens after five consecutive failures and half-opens after sixty seconds.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDocument(ctx, r2r.DocumentCreate{FileName: "cache.md",
		File: []byte("Ristretto caches search results for five minutes.")}); err != nil {
		t.Fatal(err)
	}

	req := r2r.SearchRequest{Query: "circuit breaker failures", SearchMode: r2r.SearchModeCustom,
		SearchSettings: &r2r.SearchSettings{
			UseSemanticSearch: ptr(true), Limit: ptr(5),
			Filters: map[string]any{"collection_ids": map[string]any{"$overlap": []string{col.ID}}},
		}}
	res, err := c.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ChunkSearchResults) == 0 || res.ChunkSearchResults[0].DocumentID != ing.DocumentID || res.GraphSearchResults == nil {
		t.Fatalf("search results %+v", res)
	}
	for _, h := range res.ChunkSearchResults {
		if h.DocumentID != ing.DocumentID {
			t.Fatalf("filter ignored: hit from %s", h.DocumentID)
		}
	}
	var sent map[string]any
	if err := srv.LastRequest("POST /v3/retrieval/search").JSON(&sent); err != nil {
		t.Fatal(err)
	}
	settings, _ := sent["search_settings"].(map[string]any)
	keys := []string{}
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if fmt.Sprint(keys) != "[filters limit use_semantic_search]" || sent["search_mode"] != "custom" {
		t.Fatalf("sent settings keys %v mode %v", keys, sent["search_mode"])
	}

	ans, err := c.RAG(ctx, r2r.RAGRequest{Query: "When does the circuit breaker open?", SearchSettings: req.SearchSettings,
		RAGGenerationConfig: &r2r.GenerationConfig{Temperature: ptr(0.7), MaxTokensToSample: ptr(500)}})
	if err != nil {
		t.Fatal(err)
	}
	if ans.GeneratedAnswer == "" || len(ans.SearchResults.ChunkSearchResults) == 0 {
		t.Fatalf("rag %+v", ans)
	}
	if len(ans.Citations) == 0 {
		t.Fatalf("rag answer without citations: %q", ans.GeneratedAnswer)
	}
	for _, cit := range ans.Citations {
		if cit.Payload == nil || !strings.HasPrefix(cit.Payload.ID, cit.ID[:7]) || !strings.Contains(ans.GeneratedAnswer, "["+cit.ID+"]") {
			t.Fatalf("citation %+v does not match answer %q", cit, ans.GeneratedAnswer)
		}
	}
	var ragBody map[string]any
	if err := srv.LastRequest("POST /v3/retrieval/rag").JSON(&ragBody); err != nil {
		t.Fatal(err)
	}
	if g, _ := ragBody["rag_generation_config"].(map[string]any); len(g) != 2 || fmt.Sprint(g["max_tokens_to_sample"]) != "500" || fmt.Sprint(g["temperature"]) != "0.7" {
		t.Fatalf("rag_generation_config sent %v", ragBody["rag_generation_config"])
	}
}

// TestEmulatorFaults covers the error shapes the emulator produces for forced statuses,
// the down mode and a caller deadline.
func TestEmulatorFaults(t *testing.T) {
	srv, c := newEmulator(t, r2rtest.Options{})
	ctx := t.Context()
	search := func() error { _, err := c.Search(ctx, r2r.SearchRequest{Query: "q"}); return err }
	tests := []struct {
		status    int
		msg       string
		sentinel  error
		retryable bool
	}{
		{429, "Global per-minute rate limit exceeded", r2r.ErrRateLimited, true},
		{502, "Bad Gateway", r2r.ErrUnavailable, true},
		{503, "Service Unavailable", r2r.ErrUnavailable, true},
		{504, "Gateway Timeout", r2r.ErrUnavailable, true},
		{500, "An error 'forced failure' occurred during emulator", nil, false},
		{403, "Forbidden", r2r.ErrForbidden, false},
	}
	for _, tt := range tests {
		srv.ForceStatus("POST /v3/retrieval/search", tt.status, 1)
		e := wantErr(t, search(), tt.status, tt.msg, tt.sentinel)
		if e.Retryable() != tt.retryable {
			t.Errorf("%d: Retryable() = %v", tt.status, e.Retryable())
		}
	}
	if err := search(); err != nil {
		t.Fatalf("after forced statuses: %v", err)
	}

	srv.Down(true)
	err := c.Health(ctx)
	e, ok := errors.AsType[*r2r.Error](err)
	if !ok || e.StatusCode != 0 || !errors.Is(err, r2r.ErrUnavailable) || !e.Retryable() {
		t.Fatalf("down: %#v", err)
	}
	srv.Down(false)
	if err := c.Health(ctx); err != nil {
		t.Fatalf("back up: %v", err)
	}

	srv.Configure(func(o *r2rtest.Options) { o.Latency = 5 * time.Second })
	dctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	err = c.Health(dctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if e, _ := errors.AsType[*r2r.Error](err); e == nil || e.Retryable() {
		t.Fatalf("deadline must be a non-retryable *Error: %v", err)
	}
}

// rawFileName returns the filename parameter of the recorded request's "file" part as sent.
func rawFileName(t *testing.T, rec *r2rtest.RecordedRequest) string {
	t.Helper()
	_, params, err := mime.ParseMediaType(rec.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(rec.Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no file part: %v", err)
		}
		if p.FormName() == "file" {
			_, dp, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
			if err != nil {
				t.Fatal(err)
			}
			return dp["filename"]
		}
	}
}

func equalForm(got, want url.Values) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			return false
		}
	}
	return true
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEmulatorTimestampForms decodes every timestamp-bearing type from an R2R that writes
// timestamps with Z, with +00:00 and without any offset.
func TestEmulatorTimestampForms(t *testing.T) {
	for _, format := range []string{r2rtest.TimeFormatZ, r2rtest.TimeFormatOffset, r2rtest.TimeFormatNaive} {
		t.Run(format, func(t *testing.T) {
			_, c := newEmulator(t, r2rtest.Options{TimeFormat: format})
			ctx := t.Context()
			before := time.Now().UTC().Truncate(time.Microsecond)
			me, err := c.Me(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ing, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: "timestamps in " + format})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := c.GetDocument(ctx, ing.DocumentID)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := c.ListDocuments(ctx, r2r.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			col, err := c.CreateCollection(ctx, "times", "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateAPIKey(ctx, me.ID, "k", ""); err != nil {
				t.Fatal(err)
			}
			keys, err := c.ListAPIKeys(ctx, me.ID)
			if err != nil {
				t.Fatal(err)
			}
			after := time.Now().UTC()
			if len(docs.Items) != 1 || len(keys) != 1 {
				t.Fatalf("%d documents, %d keys", len(docs.Items), len(keys))
			}
			stamps := map[string]r2r.Time{
				"document created_at": doc.CreatedAt, "document updated_at": doc.UpdatedAt,
				"listed document created_at": docs.Items[0].CreatedAt,
				"collection created_at":      col.CreatedAt, "collection updated_at": col.UpdatedAt,
				"key updated_at": keys[0].UpdatedAt,
			}
			for what, ts := range stamps {
				// Naive timestamps are UTC (TestParseTime pins that independently of the
				// machine's zone).
				if ts.Before(before) || ts.After(after) {
					t.Errorf("%s = %v, want within [%v, %v]", what, ts, before, after)
				}
			}
			if me.CreatedAt.IsZero() || me.CreatedAt.After(after) {
				t.Errorf("user created_at %v", me.CreatedAt)
			}
			if !docs.Items[0].CreatedAt.Equal(doc.CreatedAt.Time) {
				t.Errorf("list and get disagree: %v vs %v", docs.Items[0].CreatedAt, doc.CreatedAt)
			}
		})
	}
}
