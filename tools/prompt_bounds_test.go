package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestPromptsKeepToolBounds: a number a prompt (or the plugin command rendered from it)
// tells the model to pass for an integer parameter is one the tool accepts: the model
// follows the text, and a value outside the schema is refused.
func TestPromptsKeepToolBounds(t *testing.T) {
	e := newEnv(t)
	type bound struct {
		tool    string
		min     float64
		max     float64
		hasMax  bool
		pattern *regexp.Regexp
	}
	var bounds []bound
	for _, tl := range e.list {
		for name, raw := range tl.Def.InputSchema.Properties {
			prop, _ := raw.(map[string]any)
			if prop["type"] != "integer" && prop["type"] != "number" {
				continue
			}
			b := bound{tool: tl.Def.Name, pattern: regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `"?\s*:?\s*(\d+)`)}
			b.min, _ = number(prop["minimum"])
			b.max, b.hasMax = number(prop["maximum"])
			bounds = append(bounds, b)
		}
	}
	texts := map[string]string{}
	for _, p := range e.deps.promptDefs(false) {
		args := map[string]string{}
		for _, a := range p.prompt.Arguments {
			if a.Required {
				args[a.Name] = "x"
			}
		}
		text, err := p.render(context.Background(), args)
		if err != nil {
			t.Fatalf("%s: %v", p.prompt.Name, err)
		}
		texts["prompt "+p.prompt.Name] = text
		file := filepath.Join(pluginDir, "commands", p.prompt.Name+".md")
		if b, err := os.ReadFile(file); err == nil {
			texts[file] = string(b)
		}
	}
	checked := 0
	for where, text := range texts {
		for _, b := range bounds {
			for _, m := range b.pattern.FindAllStringSubmatch(text, -1) {
				checked++
				n, _ := strconv.ParseFloat(m[1], 64)
				if n < b.min || (b.hasMax && n > b.max) {
					t.Errorf("%s asks for %q, but %s accepts %v to %v", where, m[0], b.tool, b.min, b.max)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no prompt names a numeric parameter: the pattern no longer matches the prompts' wording")
	}
}
