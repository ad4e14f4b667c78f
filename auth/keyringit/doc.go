// Package keyringit holds the integration test of login and logout against a real OS
// keyring (a Secret Service on Linux). It is a package of its own so that no test in the
// same process switches go-keyring to its in-memory mock. Run it with
//
//	R2R_MCP_KEYRING_IT=1 auth/testdata/with-secret-service.sh go test -count=1 ./auth/keyringit/
//
// Without R2R_MCP_KEYRING_IT=1 the test skips; with it, a missing keyring is a failure.
package keyringit
