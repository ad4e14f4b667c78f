// Package servertest holds helpers to build the r2r-mcp binary and drive `r2r-mcp serve`
// over real stdio in tests: Build compiles the binary once per test process (with the
// race detector when the tests have it), Start runs it with a given environment, arguments
// and directory and fails the test when anything but JSON-RPC 2.0 reaches its stdout,
// RawConn writes and reads raw JSON-RPC lines, Serve connects mark3labs/mcp-go's stdio
// client, Run runs a one-shot command, and RecordingR2R with FindSecrets checks that no
// credential leaks into any output.
//
// It is for tests only: no production package may import it. A package that calls Build
// must call Main from its TestMain, which removes the binary when the tests end:
//
//	func TestMain(m *testing.M) { servertest.Main(m) }
package servertest
