package kbsync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// scriptedAPI answers GetDocument from a script, one answer a call, the last repeating.
type scriptedAPI struct {
	API
	answers []scriptedAnswer
	calls   int
}

type scriptedAnswer struct {
	status string // a document in this ingestion status, unless err is set
	err    error
}

func (a *scriptedAPI) GetDocument(ctx context.Context, id string) (*r2r.Document, error) {
	ans := a.answers[min(a.calls, len(a.answers)-1)]
	a.calls++
	if ans.err != nil {
		return nil, ans.err
	}
	return &r2r.Document{ID: id, IngestionStatus: ans.status}, nil
}

func TestWaitIngested(t *testing.T) {
	errDown := errors.New("connection refused")
	notFound := scriptedAnswer{err: r2r.ErrNotFound}
	pending := scriptedAnswer{status: r2r.IngestionPending}
	tests := []struct {
		name       string
		answers    []scriptedAnswer
		limit      time.Duration
		done       func(*r2r.Document) bool
		cancelled  bool
		wantStatus string // "" = no document
		wantErr    error
		wantCalls  int
	}{
		{name: "not found, then pending, then success", limit: time.Minute,
			answers:    []scriptedAnswer{notFound, pending, {status: r2r.IngestionSuccess}},
			wantStatus: r2r.IngestionSuccess, wantCalls: 3},
		{name: "failed is finished too", limit: time.Minute,
			answers:    []scriptedAnswer{{status: r2r.IngestionFailed}},
			wantStatus: r2r.IngestionFailed, wantCalls: 1},
		{name: "another error ends the wait with the last state", limit: time.Minute,
			answers:    []scriptedAnswer{pending, {err: errDown}},
			wantStatus: r2r.IngestionPending, wantErr: errDown, wantCalls: 2},
		{name: "done decides when to stop", limit: time.Minute,
			answers:    []scriptedAnswer{{status: r2r.IngestionParsing}, {status: r2r.IngestionEmbedding}},
			done:       func(d *r2r.Document) bool { return d.IngestionStatus == r2r.IngestionEmbedding },
			wantStatus: r2r.IngestionEmbedding, wantCalls: 2},
		{name: "out of time: the last state, no error", limit: 0,
			answers:    []scriptedAnswer{pending},
			wantStatus: r2r.IngestionPending, wantCalls: 1},
		{name: "out of time before R2R knows the document", limit: 0,
			answers: []scriptedAnswer{notFound}, wantCalls: 1},
		{name: "a cancelled context ends the wait with its error", limit: time.Minute, cancelled: true,
			answers: []scriptedAnswer{notFound}, wantErr: context.Canceled, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			api := &scriptedAPI{answers: tt.answers}
			doc, err := WaitIngested(ctx, api, "doc-1", tt.limit, time.Nanosecond, tt.done)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			status := ""
			if doc != nil {
				status = doc.IngestionStatus
			}
			if status != tt.wantStatus || api.calls != tt.wantCalls {
				t.Errorf("status %q after %d calls, want %q after %d", status, api.calls, tt.wantStatus, tt.wantCalls)
			}
		})
	}
}

// addAPI answers AddDocumentToCollection with err and counts the calls.
type addAPI struct {
	API
	err   error
	calls int
}

func (a *addAPI) AddDocumentToCollection(ctx context.Context, collectionID, documentID string) error {
	a.calls++
	return a.err
}

func TestEnsureMember(t *testing.T) {
	errDown := errors.New("connection refused")
	tests := []struct {
		name      string
		member    bool
		addErr    error
		wantAdded bool
		wantErr   error
		wantCalls int
	}{
		{name: "already a member: nothing asked", member: true},
		{name: "added", wantAdded: true, wantCalls: 1},
		{name: "a conflict means it is a member", addErr: r2r.ErrConflict, wantAdded: true, wantCalls: 1},
		{name: "another error is returned", addErr: errDown, wantAdded: true, wantErr: errDown, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &r2r.Document{ID: "doc-1", CollectionIDs: []string{"other"}}
			if tt.member {
				doc.CollectionIDs = append(doc.CollectionIDs, "coll")
			}
			api := &addAPI{err: tt.addErr}
			added, err := EnsureMember(context.Background(), api, "coll", doc)
			if added != tt.wantAdded || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) || api.calls != tt.wantCalls {
				t.Errorf("added %v, error %v after %d calls; want %v, %v after %d", added, err, api.calls, tt.wantAdded, tt.wantErr, tt.wantCalls)
			}
		})
	}
}
