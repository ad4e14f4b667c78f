package secretscan

import "testing"

func TestPathRules(t *testing.T) {
	for _, tt := range []struct {
		rel    string
		secret bool
	}{
		{".config/gcloud/application_default_credentials.json", true},
		{"backup/application_default_credentials.json", true},
		{".config/gcloud/configurations/config_default", true},
		{"home/.config/gh/hosts.yml", true},
		{".terraform.d/credentials.tfrc.json", true},
		{".docker/config.json", true},
		{".kube/config", true},
		{".ssh/notes.md", true},
		{".gnupg/readme.txt", true},
		{".aws/config", true},
		{"credentials.json", true},
		{"credentials-prod.json", true},
		{"gcp_credentials.json", true},
		{"app-secrets.yaml", true},
		{"db_secret.json", true},
		{"k8s/secret.yml", true},
		{"oauth_token.json", true},
		{"token.json", true},
		{".git-credentials", true},
		{".pypirc", true},
		{".env.production", true},
		{".claude.json", true},
		{".claude/.credentials.json", true},
		{"backup/.credentials.json", true},
		{".codex/auth.json", true},
		{"vendor/composer/auth.json", true},
		{".gemini/oauth_creds.json", true},
		{".config/github-copilot/apps.json", true},
		{"firebase/serviceAccountKey.json", true},
		{"gcp/service_account.json", true},
		{".local/share/keyrings/login.keyring", true},
		{".password-store/bank.gpg", true},
		{"secrets.json", true},
		{"config/secrets.yaml", true},
		{"secrets.yml", true},
		{"secrets.env", true},
		{"secrets.txt", true},
		{"secrets.ini", true},
		{"secrets.properties", true},
		{"secrets", true},
		{"Secrets.TOML", true},
		// Source code named secrets is code (Python's own secrets module); its content is
		// scanned like any file's.
		{"lib/secrets.py", false},
		{"secrets.go", false},
		{"src/secrets.ts", false},
		{"secrets.rs", false},
		{"secrets.md", false},
		// Documentation about secrets is not a secret.
		{"docs/secrets-management.md", false},
		{"docs/credentials.md", false},
		{"docs/token-rotation.md", false},
		{".config/nvim/init.md", false},
		{"gh/notes.md", false},
		{"config/gcloud-setup.md", false},
		{"README.md", false},
	} {
		why := Path(tt.rel)
		if (why != "") != tt.secret {
			t.Errorf("Path(%q) = %q, want secret=%v", tt.rel, why, tt.secret)
		}
	}
}
