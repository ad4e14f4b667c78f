// Package keyringit holds the integration tests of login, serve, status and logout against
// a real OS keyring (a Secret Service on Linux). It is a package of its own so that no test
// in the same process switches go-keyring to its in-memory mock. Run them with
//
//	R2R_MCP_KEYRING_IT=1 auth/testdata/with-secret-service.sh go test -race -count=1 ./auth/keyringit/
//
// Without R2R_MCP_KEYRING_IT=1 they skip; with it, a missing keyring is a failure.
//
// The package also exports the end-to-end harness those tests and cmd's auth end-to-end
// tests share (harness.go): building the binary, running it with a minimal environment,
// driving serve with mcp-go's stdio client, and an emulator that records every credential
// it issues or receives, for leak checks.
package keyringit
