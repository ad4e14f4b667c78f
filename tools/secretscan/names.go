package secretscan

// The rules by name: files and directories that hold credentials whatever their content.

import (
	"path"
	"slices"
	"strings"
)

// secretNames are base names (glob patterns, case-insensitive) never uploaded.
var secretNames = []string{
	".env", ".env.*", "*.env",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.asc", "*.gpg",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", ".htpasswd",
	"credentials", "credentials*.json", "*_credentials.json", "application_default_credentials.json",
	"client_secret*.json", "service-account*.json",
	"*secret*.json", "*secret*.yaml", "*secret*.yml", "*secret*.toml",
	// data files named secrets; source code named so (secrets.py, secrets.go) is read, its
	// content scanned like any other file's
	"secrets", "secrets.txt", "secrets.ini", "secrets.cfg", "secrets.conf", "secrets.properties",
	"secrets.xml", "secrets.csv", "secrets.tsv", "secrets.json5", "secrets.jsonc", "secrets.tfvars",
	"secrets.enc", "secrets.bak", "secrets.dat", "secrets.db", "secrets.sqlite", "secrets.kdb",
	"*token*.json", "auth.json", "oauth_creds.json", "*serviceaccount*.json", "*service_account*.json",
	// coding agents' own login state (Claude Code keeps an API key in ~/.claude.json)
	".claude.json", ".credentials.json",
	"*.tfstate", "*.tfstate.*",
	// service-account keys under their download names: key.json, and gcloud's
	// <project>-<12 hex digits of the key id>.json
	"key.json", "*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].json",
	"token.txt", "local.settings.json",
}

// secretFiles are directory/name pairs never uploaded: editors' and agents' MCP server
// configuration, which holds the servers' API keys.
var secretFiles = []string{".cursor/mcp.json", ".vscode/mcp.json"}

// secretDirs are directory names whose contents are never uploaded, wherever they are.
var secretDirs = []string{".git", ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".terraform.d",
	".claude", ".codex", ".gemini", ".password-store"}

// secretDirPaths are runs of directories whose contents are never uploaded (CLI login
// state: gcloud's application default credentials, gh's OAuth token).
var secretDirPaths = []string{".config/gcloud", ".config/gh", ".config/github-copilot", ".local/share/keyrings"}

// Path reports why a file at root-relative path rel (forward slashes) counts as a secret
// by its name or the directories it is in, as a clause such as "its name matches *.pem";
// "" when it does not.
func Path(rel string) string {
	parts := strings.Split(rel, "/")
	dirs := parts[:len(parts)-1]
	for _, dir := range dirs {
		for _, d := range secretDirs {
			if strings.EqualFold(dir, d) {
				return "it is inside " + d + "/"
			}
		}
	}
	for _, dp := range secretDirPaths {
		want := strings.Split(dp, "/")
		for i := 0; i+len(want) <= len(dirs); i++ {
			if slices.EqualFunc(dirs[i:i+len(want)], want, strings.EqualFold) {
				return "it is inside " + dp + "/"
			}
		}
	}
	base := strings.ToLower(parts[len(parts)-1])
	for _, sf := range secretFiles {
		if len(parts) >= 2 && strings.EqualFold(parts[len(parts)-2]+"/"+base, sf) {
			return "it is " + sf + ", which holds MCP servers' credentials"
		}
	}
	for _, pat := range secretNames {
		if ok, _ := path.Match(pat, base); ok {
			return "its name matches " + pat
		}
	}
	return ""
}
