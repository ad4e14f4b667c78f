package memory

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// KindSkill is a team skill: a SKILL.md as Claude Code reads it (front matter with name and
// description, then Markdown), kept whole as the memory's body with its name as the title.
const KindSkill = "skill"

// Skill bounds, as Claude Code sets them for a SKILL.md's front matter, and of its text.
const (
	MaxSkillNameChars = 64
	MaxSkillDescChars = 1024
	MaxSkillBytes     = 16 << 10
)

// Metadata keys of a skill.
const (
	MetaDescription = "r2r_mcp_description"
	MetaVersion     = "r2r_mcp_version"
)

var skillName = lazyRE(`^[a-z0-9][a-z0-9-]*$`)

// SkillFile is what a SKILL.md says.
type SkillFile struct {
	Name, Description string
	Body              string // the Markdown after the front matter
}

// ParseSkill reads a SKILL.md: a front matter between "---" lines with at least name and
// description (one-line values, quoted or not), then the body.
func ParseSkill(md string) (SkillFile, error) {
	md = text(md)
	rest, ok := strings.CutPrefix(md, "---\n")
	if !ok {
		return SkillFile{}, &Error{Field: "body", Msg: `must be a SKILL.md: front matter between "---" lines with name and description, then Markdown`}
	}
	front, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return SkillFile{}, &Error{Field: "body", Msg: `has no "---" line closing the SKILL.md front matter`}
	}
	var sf SkillFile
	for _, l := range strings.Split(front, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		} else if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		switch strings.TrimSpace(k) {
		case "name":
			sf.Name = oneLine(v)
		case "description":
			sf.Description = oneLine(v)
		}
	}
	if _, after, ok := strings.Cut(body, "\n"); ok { // the rest of the closing line goes
		sf.Body = strings.TrimSpace(after)
	}
	switch {
	case !skillName().MatchString(sf.Name) || utf8.RuneCountInString(sf.Name) > MaxSkillNameChars:
		return SkillFile{}, &Error{Field: "name", Msg: fmt.Sprintf("of a skill must be lowercase letters, digits and hyphens, at most %d characters (front matter name:)", MaxSkillNameChars)}
	case sf.Description == "":
		return SkillFile{}, &Error{Field: "description", Msg: "of a skill must not be blank (front matter description:)"}
	case utf8.RuneCountInString(sf.Description) > MaxSkillDescChars:
		return SkillFile{}, &Error{Field: "description", Msg: fmt.Sprintf("of a skill is longer than %d characters", MaxSkillDescChars)}
	case sf.Body == "":
		return SkillFile{}, &Error{Field: "body", Msg: "of the SKILL.md is blank: after the front matter comes what the skill says to do"}
	}
	return sf, nil
}

// normaliseSkill checks a skill draft (text already normalised): its body is a SKILL.md,
// and its title is the skill's name (taken from the front matter when blank).
func normaliseSkill(d Draft) (Draft, error) {
	switch {
	case len(d.Body) > MaxSkillBytes:
		return Draft{}, &Error{Field: "body", Msg: fmt.Sprintf("is %d bytes; a skill holds at most %d", len(d.Body), MaxSkillBytes)}
	case d.Error != "":
		return Draft{}, &Error{Field: "error", Msg: "is for kind fix only (the error text the fix resolves)"}
	}
	sf, err := ParseSkill(d.Body)
	if err != nil {
		return Draft{}, err
	}
	if d.Title != "" && d.Title != sf.Name {
		return Draft{}, &Error{Field: "title", Msg: fmt.Sprintf("of a skill must be its name %q (the front matter's name:)", sf.Name)}
	}
	d.Title = sf.Name
	return d, nil
}

// skillMetadata adds what a skill's listing needs without its body: description, version.
func skillMetadata(d Draft, md map[string]any) {
	if sf, err := ParseSkill(d.Body); err == nil {
		md[MetaDescription] = sf.Description
		md[MetaExcerpt] = clip(sf.Description, excerptChars)
	}
	md[MetaVersion] = max(d.Version, 1)
}

// Skills returns the project's skills newest first, one per name (the newest, when two
// teammates saved one of the same name without one superseding the other).
func (s *Store) Skills(ctx context.Context) ([]Memory, bool, error) {
	l, err := s.List(ctx, Query{Kinds: []string{KindSkill}}, -1)
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	var out []Memory
	for _, m := range l.Memories {
		if !seen[m.Title] {
			seen[m.Title] = true
			out = append(out, m)
		}
	}
	return out, l.Truncated, nil
}

// Skill returns the project's skill named name; ok is false when there is none.
func (s *Store) Skill(ctx context.Context, name string) (m Memory, ok bool, err error) {
	skills, _, err := s.Skills(ctx)
	if err != nil {
		return Memory{}, false, err
	}
	for _, m := range skills {
		if m.Title == name {
			return m, true, nil
		}
	}
	return Memory{}, false, nil
}

// SaveSkill saves the normalised skill draft d: the same content as the skill of its name
// is Already; a changed one supersedes it with the next version, whoever saved it.
func (s *Store) SaveSkill(ctx context.Context, d Draft, st Stamp) (Saved, int, error) {
	if d.Kind != KindSkill {
		return Saved{}, 0, &Error{Field: "kind", Msg: "must be skill"}
	}
	old, found, err := s.Skill(ctx, d.Title)
	if err != nil {
		return Saved{}, 0, err
	}
	d.Version = 1
	if found {
		if old.SHA == ContentSHA(d) {
			return Saved{ID: old.ID, Already: true}, max(old.Version, 1), nil
		}
		d.Supersedes, d.Version = old.ID, max(old.Version, 1)+1
	}
	saved, err := s.Remember(ctx, d, st)
	return saved, d.Version, err
}

// RemoveSkill deletes the skill named name (see Forget); r2r.ErrNotFound when there is none.
func (s *Store) RemoveSkill(ctx context.Context, name string) (Memory, error) {
	m, found, err := s.Skill(ctx, name)
	if err != nil {
		return Memory{}, err
	}
	if !found {
		return Memory{}, fmt.Errorf("no skill named %q in the project's collection: %w", name, r2r.ErrNotFound)
	}
	return s.Forget(ctx, m.ID)
}
