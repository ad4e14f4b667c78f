package tools

import (
	"fmt"
	"slices"
	"strings"
)

// MarkdownTable renders the tools as the README's tools table: name, read/write, title
// and the parameters (required ones marked, with enums, bounds and defaults). The
// descriptions are written for the model (when to call the tool) and stay in the
// toolsnaps; the title says what the tool does for a reader.
func MarkdownTable(tools []Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | Kind | What it does | Parameters |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, t := range tools {
		kind := "read"
		if !t.ReadOnly {
			kind = "write"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", t.Def.Name, kind, mdCell(t.Def.Title), mdCell(paramList(t)))
	}
	return b.String()
}

func paramList(t Tool) string {
	props := t.Def.InputSchema.Properties
	if len(props) == 0 {
		return "—"
	}
	required := t.Def.InputSchema.Required
	names := slices.Clone(t.Def.InputSchema.PropertyOrder)
	if len(names) != len(props) {
		names = sortedKeys(props)
	}
	// Required parameters first, each group in declaration order.
	slices.SortStableFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(required, a), slices.Contains(required, b)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		parts = append(parts, paramText(n, p, slices.Contains(required, n)))
	}
	return strings.Join(parts, ", ")
}

func paramText(name string, p map[string]any, required bool) string {
	var notes []string
	if required {
		notes = append(notes, "required")
	}
	typ, _ := p["type"].(string)
	if enum, ok := p["enum"].([]string); ok {
		notes = append(notes, strings.Join(enum, "/"))
	} else {
		lo, hasLo := p["minimum"]
		hi, hasHi := p["maximum"]
		switch {
		case hasLo && hasHi:
			notes = append(notes, fmt.Sprintf("%s %v–%v", typ, lo, hi))
		case hasLo:
			notes = append(notes, fmt.Sprintf("%s ≥ %v", typ, lo))
		case typ != "" && typ != "string":
			notes = append(notes, typ)
		}
		if ml, ok := p["maxLength"]; ok && typ == "string" {
			switch minLen := fmt.Sprint(p["minLength"]); {
			case strings.HasSuffix(name, "_id") && fmt.Sprint(ml) == "36" && minLen == fmt.Sprint(minShortID):
				notes = append(notes, "UUID or a short id shown earlier")
			case strings.HasSuffix(name, "_id") && fmt.Sprint(ml) == "36":
				notes = append(notes, "UUID")
			default:
				notes = append(notes, fmt.Sprintf("≤ %v chars", ml))
			}
		}
	}
	if d, ok := p["default"]; ok {
		notes = append(notes, fmt.Sprintf("default %v", d))
	}
	if len(notes) == 0 {
		return "`" + name + "`"
	}
	return fmt.Sprintf("`%s` (%s)", name, strings.Join(notes, ", "))
}

// mdCell escapes what would break a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
