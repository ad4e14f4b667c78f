package secretscan

import (
	"strings"
	"testing"
)

// Fake credentials, assembled so that no literal token sits in the repository.
func rep(s string, n int) string { return strings.Repeat(s, n) }

var pemBody = rep("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 4)

var findTests = []struct {
	name, data, want string // want "" = no finding
}{
	{"RSA key", "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "\n-----END RSA PRIVATE KEY-----\n", "private key (PEM block)"},
	{"PKCS8 key", "x\n-----BEGIN PRIVATE KEY-----\n" + pemBody + "\n", "private key (PEM block)"},
	{"OpenSSH key", "-----BEGIN OPENSSH PRIVATE KEY-----\r\n" + pemBody + "\r\n", "private key (PEM block)"},
	{"encrypted RSA key with headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0011\n\n" + pemBody, "private key (PEM block)"},
	{"PGP key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + pemBody, "private key (PEM block)"},
	{"PEM in docs without a body", "Paste your key (it starts with -----BEGIN RSA PRIVATE KEY-----) here.", ""},
	{"PuTTY key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n", "PuTTY private key"},
	{"public key", "-----BEGIN PUBLIC KEY-----\n" + pemBody, ""},
	{"GCP service account", `{"type": "service_account", "project_id": "p", "private_key_id": "1", "private_key": "-----BEGIN PRIVATE KEY-----\n` + pemBody + `"}`, "private key (PEM block)"},
	{"GCP service account, escaped newlines", `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nAB\\n"}`, "Google Cloud service-account key"},
	{"service_account mentioned", `Set "type" to "service_account" in the config.`, ""},
	{"Google OAuth client", `{"installed":{"client_secret":"GOCSPX-` + rep("aB3_", 7) + `"}}`, "Google OAuth client secret"},
	{"Google API key", "key=AIza" + rep("Sy1_", 8) + "abc", "Google API key"},
	{"Azure SP auth file", `{"clientId":"x","clientSecret":"` + rep("s3cr", 5) + `","tenantId":"t"}`, "Azure service principal secret"},
	{"az ad sp output", `{"appId":"a","displayName":"d","password":"` + rep("p4ss", 5) + `","tenant":"t"}`, "Azure service principal password"},
	{"Azure storage", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + rep("Ab12", 22) + "==;", "Azure storage account key"},
	{"AWS access key", "aws_access_key_id = AKIA" + rep("Z7Q2", 4) + "\n", "AWS access key"},
	{"AWS example key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n", ""},
	{"AWS secret", "aws_secret_access_key = " + rep("wJal", 10) + "\n", "AWS secret access key"},
	{"AWS example secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", ""},
	{"GitHub PAT", "token: ghp_" + rep("a1B2", 9), "GitHub token"},
	{"GitHub fine-grained", "github_pat_" + rep("11AB_cd", 12), "GitHub token"},
	{"ghp_ prose", "tokens start with ghp_ followed by 36 characters", ""},
	{"GitLab", "glpat-" + rep("x_Y-", 5), "GitLab token"},
	{"Slack bot", "xoxb-123456789012-" + rep("aB1-", 6), "Slack token"},
	{"Slack webhook", "https://hooks.slack.com/services/T0ABC/B0DEF/" + rep("aB1c", 6), "Slack webhook URL"},
	{"OpenAI legacy", "sk-" + rep("aB1c", 5) + "T3BlbkFJ" + rep("dE2f", 5), "OpenAI API key"},
	{"OpenAI project", "OPENAI_API_KEY=sk-proj-" + rep("aB1_", 40), "OpenAI API key"},
	{"Anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-" + rep("aB1-", 25), "Anthropic API key"},
	{"Stripe live", "sk_live_" + rep("aB1c", 6), "Stripe live key"},
	{"Stripe test", "sk_test_" + rep("aB1c", 6), ""},
	{"npm", "//registry.npmjs.org/:_authToken=npm_" + rep("aB1c", 9), "npm token"},
	{"PyPI", "password = pypi-AgEIcHlwaS5vcmc" + rep("aB1c", 15), "PyPI token"},
	{"Hugging Face", "hf_" + rep("abCD", 8) + "ef", "Hugging Face token"},
	{"plain docs", "# Runbook\nRotate the key with `aws iam create-access-key`.\n", ""},
	{"binary", string([]byte{0, 1, 2, 0xff, 0xfe}), ""},
}

func TestFind(t *testing.T) {
	for _, tt := range findTests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Find([]byte(tt.data))
			if ok != (tt.want != "") || f.Rule != tt.want {
				t.Errorf("Find = %q, %v; want %q", f.Rule, ok, tt.want)
			}
		})
	}
}

// TestEveryRuleTested: every rule is the finding of at least one case of TestFind.
func TestEveryRuleTested(t *testing.T) {
	tested := map[string]bool{}
	for _, tt := range findTests {
		tested[tt.want] = true
	}
	for _, name := range Rules() {
		if !tested[name] {
			t.Errorf("rule %q has no case in TestFind", name)
		}
	}
}

func BenchmarkFindPlain(b *testing.B) {
	data := []byte(rep("Plain documentation text without any credentials in it. ", 500_000)) // ~28 MB
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, ok := Find(data); ok {
			b.Fatal("false positive")
		}
	}
}
