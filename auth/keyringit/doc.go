// Package keyringit holds the integration tests of login, serve, status and logout against
// a real OS keyring (a Secret Service on Linux). It is a package of its own so that no test
// in the same process switches go-keyring to its in-memory mock. Run them with
//
//	R2R_MCP_KEYRING_IT=1 auth/testdata/with-secret-service.sh go test -race -count=1 ./auth/keyringit/
//
// Without R2R_MCP_KEYRING_IT=1 they skip; with it, a missing keyring is a failure. The
// end-to-end harness they use (building and driving the binary, the credential-recording
// emulator) is server/servertest.
package keyringit
