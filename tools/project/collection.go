package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// VerifyTTL is how long R2R's confirmation that a collection exists is trusted.
const VerifyTTL = 60 * time.Second

// cacheKey keys a project's mapping by R2R URL, account and project root.
func cacheKey(ctx context.Context, c *r2r.Client, root string) string {
	h := sha256.Sum256([]byte(c.BaseURL() + "\x00" + account(c) + "\x00" + root))
	return hex.EncodeToString(h[:16])
}

// account is the identity of the account c's credential acts as (after loadAccount).
func account(c *r2r.Client) string { return c.Credentials().Identity() }

// loadAccount reads a credential that is read from the store on first use (serve's)
// before its identity keys anything: until then its identity stands for whoever is logged
// in, which a login as someone else changes, so a mapping cached under it would send the
// new account to the old one's collection. A failed read is the error a request would get.
func loadAccount(ctx context.Context, c *r2r.Client) error {
	cr := c.Credentials()
	l, ok := cr.(interface{ Load(context.Context) error })
	if !ok {
		return nil
	}
	if err := l.Load(ctx); err != nil {
		return &r2r.Error{Op: "read the stored credential", Err: &r2r.CredentialError{Identity: cr.Identity(), Err: err}}
	}
	return nil
}

// Collection resolves the project's collection. With create, a missing collection is
// created (only a configured or default name can be created; a configured id must exist).
func (p *Resolver) Collection(ctx context.Context, c *r2r.Client, create bool) (*Collection, error) {
	pr, err := p.Project(ctx)
	if err != nil {
		return nil, err
	}
	return p.CollectionOf(ctx, c, pr, create)
}

// CollectionOf is Collection for a project already resolved.
func (p *Resolver) CollectionOf(ctx context.Context, c *r2r.Client, pr Project, create bool) (*Collection, error) {
	if err := loadAccount(ctx, c); err != nil {
		return nil, err
	}
	key := cacheKey(ctx, c, pr.Root)
	if m, ok := p.lookup(ctx, c, key, pr); ok {
		return &Collection{Project: pr, ID: m.CollectionID, Name: m.CollectionName}, nil
	}
	sfKey := key
	if create {
		sfKey += "/create"
	}
	v, _, err := cache.Flight(ctx, &p.sf, sfKey, func(ctx context.Context) (*Collection, error) {
		return p.resolve(ctx, c, key, pr, create)
	})
	if err != nil {
		return nil, err
	}
	pc := *v
	return &pc, nil
}

// lookup returns a cached mapping that still matches the project's configuration. A disk
// entry is checked against R2R once per process.
func (p *Resolver) lookup(ctx context.Context, c *r2r.Client, key string, pr Project) (cachedMapping, bool) {
	p.mu.Lock()
	if m, ok := p.mem[key]; ok && mappingMatches(m, pr) {
		p.mu.Unlock()
		return m, true
	}
	validated := p.validated[key]
	p.mu.Unlock()
	m, ok := p.disk.get(key)
	if !ok || validated || !mappingMatches(m, pr) {
		return cachedMapping{}, false
	}

	// Concurrent first calls share one check.
	coll, _, err := cache.Flight(ctx, &p.sf, "validate/"+key, func(ctx context.Context) (*r2r.Collection, error) {
		return c.GetCollection(ctx, m.CollectionID)
	})
	verified := collectionKey(ctx, c, m.CollectionID)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.validated[key] = true
	switch {
	case err == nil && (pr.CollectionID != "" || coll.Name == pr.CollectionName):
		p.mem[key] = m
		p.verified[verified] = p.clock()
		return m, true
	case err == nil || errors.Is(err, r2r.ErrNotFound):
		p.disk.drop(key)
	}
	return cachedMapping{}, false
}

func mappingMatches(m cachedMapping, pr Project) bool {
	if m.ProjectRoot != pr.Root {
		return false
	}
	if pr.CollectionID != "" {
		return m.CollectionID == pr.CollectionID
	}
	return m.CollectionName == pr.CollectionName
}

// resolve asks R2R for the project's collection (creating it with create) and remembers it.
func (p *Resolver) resolve(ctx context.Context, c *r2r.Client, key string, pr Project, create bool) (*Collection, error) {
	var coll *r2r.Collection
	var err error
	if pr.CollectionID != "" {
		coll, err = c.GetCollection(ctx, pr.CollectionID)
		if errors.Is(err, r2r.ErrNotFound) {
			return nil, &Error{msg: fmt.Sprintf("Collection %s configured in %s does not exist in R2R at %s (or is not visible to this account). Fix the id, or use a collection name there to have it created.", pr.CollectionID, pr.ConfigFile, c.BaseURL())}
		}
		if err != nil {
			return nil, err
		}
	} else {
		coll, err = c.GetCollectionByName(ctx, pr.CollectionName)
		if errors.Is(err, r2r.ErrNotFound) {
			if !create {
				return &Collection{Project: pr, Name: pr.CollectionName}, nil
			}
			coll, err = c.CreateCollection(ctx, pr.CollectionName,
				fmt.Sprintf("Documents of the project %s, ingested by r2r-mcp.", pr.Name))
			if errors.Is(err, r2r.ErrConflict) { // created concurrently by another process
				coll, err = c.GetCollectionByName(ctx, pr.CollectionName)
			}
			if err != nil {
				return nil, err
			}
			p.remember(ctx, c, key, pr, coll)
			return &Collection{Project: pr, ID: coll.ID, Name: coll.Name, Created: true}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	p.remember(ctx, c, key, pr, coll)
	return &Collection{Project: pr, ID: coll.ID, Name: coll.Name}, nil
}

// remember records the mapping of pr to coll in memory and on disk.
func (p *Resolver) remember(ctx context.Context, c *r2r.Client, key string, pr Project, coll *r2r.Collection) {
	name := coll.Name
	if pr.CollectionID == "" {
		name = pr.CollectionName
	}
	m := cachedMapping{CollectionID: coll.ID, CollectionName: name, ProjectRoot: pr.Root, R2RURL: c.BaseURL(), UpdatedAt: time.Now().UTC()}
	verified := collectionKey(ctx, c, coll.ID)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mem[key] = m
	p.validated[key] = true
	p.verified[verified] = p.clock()
	p.disk.put(key, m)
}

// Forget drops the cached mapping of the current project (after R2R answered 404 for its
// collection), so the next call resolves it again.
func (p *Resolver) Forget(ctx context.Context, c *r2r.Client) {
	pr, err := p.Project(ctx)
	if err != nil {
		return
	}
	key, acct := cacheKey(ctx, c, pr.Root), account(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.mem[key]; ok {
		delete(p.verified, c.BaseURL()+"\x00"+acct+"\x00"+m.CollectionID) // collectionKey, without a read under p.mu
	}
	delete(p.mem, key)
	p.disk.drop(key)
}

func collectionKey(ctx context.Context, c *r2r.Client, id string) string {
	return c.BaseURL() + "\x00" + account(c) + "\x00" + id
}

// Verify checks that collection id exists in R2R for c's credentials, asking R2R at most
// once per VerifyTTL (resolving the project's collection counts as a check; failures are
// not remembered). R2R's error is returned as is: errors.Is(err, r2r.ErrNotFound) means the
// collection is gone, and the caller should Forget the mapping when it was the project's.
// Concurrent checks of one collection share one request.
func (p *Resolver) Verify(ctx context.Context, c *r2r.Client, id string) error {
	key := collectionKey(ctx, c, id)
	p.mu.Lock()
	at, ok := p.verified[key]
	p.mu.Unlock()
	if ok && p.clock().Sub(at) < VerifyTTL {
		return nil
	}
	_, _, err := cache.Flight(ctx, &p.sf, "verify\x00"+key, func(ctx context.Context) (struct{}, error) {
		_, err := c.GetCollection(ctx, id)
		if err == nil {
			p.mu.Lock()
			p.verified[key] = p.clock()
			p.mu.Unlock()
		}
		return struct{}{}, err
	})
	if err != nil {
		p.mu.Lock()
		delete(p.verified, key)
		p.mu.Unlock()
	}
	return err
}
