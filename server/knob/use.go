package knob

import (
	"fmt"
	"strings"
)

// ApplyEnv sets every knob whose flag was not given (given reports that) from its
// environment twin; the flag wins over the environment, which wins over the default.
// An invalid value is an error naming the variable and its flag.
func ApplyEnv(rows []Row, given func(name string) bool, getenv func(string) string) error {
	for _, r := range rows {
		if given(r.Name) {
			continue
		}
		v := strings.TrimSpace(getenv(r.Env))
		if v == "" {
			continue
		}
		if err := r.v.Set(v); err != nil {
			shown := fmt.Sprintf("%q", v)
			if r.Secret() {
				shown = "…"
			}
			return fmt.Errorf("invalid %s=%s (the environment twin of --%s): %v", r.Env, shown, r.Name, err)
		}
	}
	return nil
}

// Settings are the knobs' current values for r2r_status, keyed by name with
// underscores. A knob that applies only with another is left out while that one is unset.
func Settings(rows []Row) map[string]string {
	on := map[string]bool{}
	for _, r := range rows {
		on[r.Name] = !r.v.isZero()
	}
	out := map[string]string{}
	for _, r := range rows {
		if r.With != "" && !on[r.With] {
			continue
		}
		if k, v, ok := r.Setting(); ok {
			out[k] = v
		}
	}
	return out
}

// Markdown is the README's table of rows: flag, environment twin, default, bounds and
// meaning.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| flag | env | default | bounds | meaning |\n|---|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, r := range rows {
		meta := r.meta
		if meta == "" {
			meta = map[string]string{"duration": "D", "int": "N", "float": "R", "bytes": "SIZE", "strings": "A,...", "string": "S"}[r.v.Type()]
		}
		bounds := r.bounds(func(s string) string { return "`" + s + "`" })
		fmt.Fprintf(&b, "| `--%s %s` | `%s` | %s | %s | %s |\n", r.Name, meta, r.Env, cell(r.Default()), cell(bounds), cell(r.Help))
	}
	return b.String()
}
