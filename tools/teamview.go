package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// viewTTL is how long a team project's private collection and its paths are trusted: a
// sync from another process writes them without telling this one.
const viewTTL = 30 * time.Second

// maxShadow bounds the paths of a private collection a view reads (a filter names each).
const maxShadow = 2000

// teamViews remembers, per team collection, the caller's private collection and the paths
// in it.
type teamViews struct {
	mu sync.Mutex
	m  map[string]teamView
}

type teamView struct {
	private string
	shadow  []string
	at      time.Time
}

// teamView completes the scope of a read in a team project (see r2r.View): the caller's
// private collection and the paths of the files in it. A lookup that fails leaves the scope
// as it was: the read then shows the team's version only, which is not wrong, just not the
// caller's own.
func (sc *scoper) teamView(ctx context.Context, s *scope) {
	if s.ID == "" || s.Project == nil || s.Project.CollectionID == "" || s.Explicit {
		return
	}
	key := sc.client().BaseURL() + "\x00" + sc.client().Identity() + "\x00" + s.ID
	now := sc.now()
	sc.views.mu.Lock()
	v, ok := sc.views.m[key]
	sc.views.mu.Unlock()
	if !ok || now.Sub(v.at) >= viewTTL {
		var err error
		if v, err = sc.loadTeamView(ctx, s.ID); err != nil {
			sc.logger().Debug("reading the private collection of a team project", "collection", s.ID, "err", err)
			return
		}
		v.at = now
		sc.views.mu.Lock()
		if sc.views.m == nil {
			sc.views.m = map[string]teamView{}
		}
		sc.views.m[key] = v
		sc.views.mu.Unlock()
	}
	s.Private, s.Shadow = v.private, v.shadow
}

func (sc *scoper) loadTeamView(ctx context.Context, teamID string) (teamView, error) {
	col, err := sc.client().GetCollectionByName(ctx, team.PrivateCollectionName(teamID))
	if errors.Is(err, r2r.ErrNotFound) {
		return teamView{}, nil
	}
	if err != nil {
		return teamView{}, err
	}
	v := teamView{private: col.ID}
	for off := 0; len(v.shadow) < maxShadow; off += 1000 {
		page, err := sc.client().ListCollectionDocuments(ctx, col.ID, r2r.ListParams{Offset: off, Limit: 1000})
		if err != nil {
			return teamView{}, err
		}
		for _, doc := range page.Items {
			if p, _ := doc.Metadata[kbsync.MetaSourcePath].(string); p != "" && !slices.Contains(v.shadow, p) && len(v.shadow) < maxShadow {
				v.shadow = append(v.shadow, p)
			}
		}
		if len(page.Items) < 1000 || off+len(page.Items) >= page.Total {
			break
		}
	}
	slices.Sort(v.shadow)
	return v, nil
}

// forgetTeamViews drops what is remembered of private collections (after a write).
func (sc *scoper) forgetTeamViews() {
	sc.views.mu.Lock()
	sc.views.m = nil
	sc.views.mu.Unlock()
}

// view is what a read of s searches.
func (s *scope) view() r2r.View {
	return r2r.View{Team: s.ID, Private: s.Private, Shadow: s.Shadow}
}

// viewKey is the part of a cache key that tells views of one collection apart ("" outside
// team projects).
func (s *scope) viewKey() string {
	if s.Private == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(s.Private))
	for _, p := range s.Shadow {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// teamJoinAdvice is team.JoinAdvice when the current project is a team project (its
// .r2r-mcp.json names the collection by id) and the caller is not a member of that
// collection; "" otherwise. Tool errors add it to R2R's 403, so a non-member learns whom to
// ask and what to run whichever tool met the refusal.
func (d *Deps) teamJoinAdvice(ctx context.Context) string {
	if d.Projects.Remote() {
		return ""
	}
	pr, err := d.Projects.Project(ctx)
	if err != nil || pr.CollectionID == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, statusCheckTimeout)
	defer cancel()
	t, err := team.Describe(ctx, d.Client, pr.CollectionID, pr.TeamOwner)
	if err != nil || t.Access != team.AccessNone {
		return ""
	}
	return team.JoinAdvice(t)
}
