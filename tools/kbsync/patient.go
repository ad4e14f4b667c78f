package kbsync

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// WaitOutRateLimits wraps api so that a call R2R's rate limit refuses (429) is sent again
// after a wait: first at first (0 = 5 s), doubling up to a minute, for at most 15 minutes
// (or until ctx ends). R2R counts a non-superuser's POST and DELETE requests per minute and
// refuses the excess, and then the reads too, before doing anything, so the call can be
// sent again; a sync of many files then goes at R2R's pace instead of failing. Tool calls
// do not use it: they cannot wait that long.
func WaitOutRateLimits(api API, first time.Duration) API {
	if first <= 0 {
		first = 5 * time.Second
	}
	return &patientAPI{api: api, first: first}
}

type patientAPI struct {
	api   API
	first time.Duration
}

func (p *patientAPI) retry(ctx context.Context, call func() error) error {
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(p.first), backoff.WithMaxInterval(time.Minute),
		backoff.WithMaxElapsedTime(15*time.Minute), backoff.WithRandomizationFactor(0.2))
	return backoff.Retry(func() error {
		err := call()
		if err != nil && !errors.Is(err, r2r.ErrRateLimited) {
			return backoff.Permanent(err)
		}
		return err
	}, backoff.WithContext(b, ctx))
}

func (p *patientAPI) CreateDocument(ctx context.Context, in r2r.DocumentCreate) (out *r2r.IngestionResponse, err error) {
	err = p.retry(ctx, func() error { out, err = p.api.CreateDocument(ctx, in); return err })
	return out, err
}

func (p *patientAPI) GetDocument(ctx context.Context, id string) (out *r2r.Document, err error) {
	err = p.retry(ctx, func() error { out, err = p.api.GetDocument(ctx, id); return err })
	return out, err
}

func (p *patientAPI) DeleteDocument(ctx context.Context, id string) error {
	return p.retry(ctx, func() error { return p.api.DeleteDocument(ctx, id) })
}

func (p *patientAPI) ListCollectionDocuments(ctx context.Context, collectionID string, lp r2r.ListParams) (out *r2r.Page[r2r.Document], err error) {
	err = p.retry(ctx, func() error { out, err = p.api.ListCollectionDocuments(ctx, collectionID, lp); return err })
	return out, err
}

func (p *patientAPI) AddDocumentToCollection(ctx context.Context, collectionID, documentID string) error {
	return p.retry(ctx, func() error { return p.api.AddDocumentToCollection(ctx, collectionID, documentID) })
}

func (p *patientAPI) RemoveDocumentFromCollection(ctx context.Context, collectionID, documentID string) error {
	return p.retry(ctx, func() error { return p.api.RemoveDocumentFromCollection(ctx, collectionID, documentID) })
}

// SystemStatus asks the API's R2R when it started, when the API can (see StartReporter).
func (p *patientAPI) SystemStatus(ctx context.Context) (out *r2r.SystemStatus, err error) {
	sr, ok := p.api.(StartReporter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	err = p.retry(ctx, func() error { out, err = sr.SystemStatus(ctx); return err })
	return out, err
}
