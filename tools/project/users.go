package project

import (
	"context"
	"fmt"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// User is the R2R user a credential acts as.
type User struct {
	ID    string
	Email string
}

// UserID returns the id of the R2R user c's credentials act as (see User).
func (p *Resolver) UserID(ctx context.Context, c *r2r.Client) (string, error) {
	u, err := p.User(ctx, c)
	return u.ID, err
}

// User returns the R2R user c's credentials act as (GET /v3/users/me; with
// authentication off in R2R, the default admin). It is asked once per R2R URL and
// account and remembered for the life of the resolver; failures are not
// remembered. Concurrent first calls share one request.
func (p *Resolver) User(ctx context.Context, c *r2r.Client) (User, error) {
	if err := loadAccount(ctx, c); err != nil {
		return User{}, err
	}
	key := c.BaseURL() + "\x00" + account(c)
	p.mu.Lock()
	u, ok := p.users[key]
	p.mu.Unlock()
	if ok {
		return u, nil
	}
	u, _, err := cache.Flight(ctx, &p.sf, "me\x00"+key, func(ctx context.Context) (User, error) {
		me, err := c.Me(ctx)
		if err != nil {
			return User{}, err
		}
		if strings.TrimSpace(me.ID) == "" {
			return User{}, &Error{msg: fmt.Sprintf("R2R at %s did not say which user the credentials belong to (GET /v3/users/me returned no id), so no document id can be derived. Check the R2R version and the credentials (`r2r-mcp doctor`).", c.BaseURL())}
		}
		u := User{ID: me.ID, Email: me.Email}
		p.mu.Lock()
		p.users[key] = u
		p.mu.Unlock()
		return u, nil
	})
	return u, err
}
