// Package secretscan holds every rule by which r2r-mcp tells a secret: by name (Path: key
// files, env files, login state directories) and by content (Find: private-key PEM blocks,
// cloud service-account and service-principal files, and the token formats of well-known
// services). r2r-mcp applies both to every file before any byte of it is uploaded.
//
// A finding names its rule, never the matched text: secrets must not reach logs or
// errors. Each rule has literal keywords checked first (bytes.Contains is fast), so a file
// is only searched with a rule's regular expressions when a keyword occurs in it.
package secretscan

import (
	"bytes"
	"regexp"
	"sync"
)

// Finding is a secret found in a file: the rule that matched, e.g. "AWS access key".
type Finding struct {
	Rule string
}

type rule struct {
	name     string
	keywords []string         // one must occur for the rule to be tried
	all      []*regexp.Regexp // every one must match
	allow    []byte           // a match containing this is an example, not a secret
}

// re compiles a rule's expression; a bad one is a programming error caught by the tests.
func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// rules are compiled on first use, not at start-up: most serve processes never upload.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{name: "private key (PEM block)", keywords: []string{"PRIVATE KEY"},
			all: []*regexp.Regexp{re(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,300}?[A-Za-z0-9+/]{64}`)}},
		{name: "PuTTY private key", keywords: []string{"PuTTY-User-Key-File"},
			all: []*regexp.Regexp{re(`PuTTY-User-Key-File-\d+: `)}},
		{name: "Google Cloud service-account key", keywords: []string{"service_account"},
			all: []*regexp.Regexp{re(`"type"\s*:\s*"service_account"`), re(`"private_key"\s*:\s*"-----BEGIN`)}},
		{name: "Google OAuth client secret", keywords: []string{"GOCSPX-"},
			all: []*regexp.Regexp{re(`GOCSPX-[A-Za-z0-9_-]{28}`)}},
		{name: "Google API key", keywords: []string{"AIza"},
			all: []*regexp.Regexp{re(`\bAIza[0-9A-Za-z_-]{35}\b`)}},
		{name: "Azure service principal secret", keywords: []string{"clientSecret"},
			all: []*regexp.Regexp{re(`"clientSecret"\s*:\s*"[^"\s]{16,}"`), re(`"tenantId"\s*:`)}},
		{name: "Azure service principal password", keywords: []string{`"appId"`},
			all: []*regexp.Regexp{re(`"password"\s*:\s*"[^"\s]{16,}"`), re(`"tenant"\s*:`), re(`"appId"\s*:`)}},
		{name: "Azure storage account key", keywords: []string{"AccountKey="},
			all: []*regexp.Regexp{re(`AccountKey=[A-Za-z0-9+/]{80,}={0,2}`)}},
		{name: "AWS access key", keywords: []string{"AKIA", "ASIA"},
			all: []*regexp.Regexp{re(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)}, allow: []byte("EXAMPLE")},
		{name: "AWS secret access key", keywords: []string{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"},
			all: []*regexp.Regexp{re(`(?i)aws_secret_access_key["']?\s*[=:]\s*["']?[A-Za-z0-9/+]{40}\b`)}, allow: []byte("EXAMPLE")},
		{name: "GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			all: []*regexp.Regexp{re(`\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{80,})\b`)}},
		{name: "GitLab token", keywords: []string{"glpat-"},
			all: []*regexp.Regexp{re(`\bglpat-[A-Za-z0-9_-]{20,}`)}},
		{name: "Slack token", keywords: []string{"xox"},
			all: []*regexp.Regexp{re(`\bxox[abposr]-[0-9]{6,}-[A-Za-z0-9-]{10,}`)}},
		{name: "Slack webhook URL", keywords: []string{"hooks.slack.com/services/"},
			all: []*regexp.Regexp{re(`hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,}`)}},
		{name: "OpenAI API key", keywords: []string{"T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-"},
			all: []*regexp.Regexp{re(`\bsk-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{80,}`)}},
		{name: "Anthropic API key", keywords: []string{"sk-ant-"},
			all: []*regexp.Regexp{re(`\bsk-ant-[a-z]+\d\d-[A-Za-z0-9_-]{80,}`)}},
		{name: "Stripe live key", keywords: []string{"_live_"},
			all: []*regexp.Regexp{re(`\b(?:sk|rk)_live_[A-Za-z0-9]{20,}`)}},
		{name: "npm token", keywords: []string{"npm_"},
			all: []*regexp.Regexp{re(`\bnpm_[A-Za-z0-9]{36}\b`)}},
		{name: "PyPI token", keywords: []string{"pypi-AgEIcHlwaS5vcmc"},
			all: []*regexp.Regexp{re(`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`)}},
		{name: "Hugging Face token", keywords: []string{"hf_"},
			all: []*regexp.Regexp{re(`\bhf_[A-Za-z]{34}\b`)}},
	}
})

// Find reports the first secret in data, if any.
func Find(data []byte) (Finding, bool) {
	rs := rules()
	for i := range rs {
		if rs[i].matches(data) {
			return Finding{Rule: rs[i].name}, true
		}
	}
	return Finding{}, false
}

// Rules lists the names of the rules, for documentation and tests.
func Rules() []string {
	out := make([]string, len(rules()))
	for i, r := range rules() {
		out[i] = r.name
	}
	return out
}

func (r *rule) matches(data []byte) bool {
	found := false
	for _, k := range r.keywords {
		if bytes.Contains(data, []byte(k)) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	for i, x := range r.all {
		if i > 0 || r.allow == nil {
			if !x.Match(data) {
				return false
			}
			continue
		}
		// The first expression decides; with an allow-list, one non-example match suffices.
		ok := false
		for _, m := range x.FindAll(data, -1) {
			if !bytes.Contains(m, r.allow) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
