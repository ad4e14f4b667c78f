// Package conformance holds the conformance suite of r2r-mcp's R2R client and emulator: one
// set of Go tests, run through the typed r2r.Client against the in-process emulator
// (r2rtest) always and against a live R2R 3.6.6 when R2R_CONFORMANCE_URL is set.
//
// The checks cover every R2R call r2r-mcp makes and assert what r2r-mcp relies on —
// envelopes, status codes, error body shapes, ids, pagination totals, timestamps,
// ingestion status, filter semantics, citations — never scores. Where the emulator or the
// client once differed from the real server, the test that settled it is named in the
// comment at the code it changed.
//
// Run against a live R2R with authentication on (the credentials are its superuser's):
//
//	R2R_CONFORMANCE_URL=http://127.0.0.1:7272 \
//	R2R_CONFORMANCE_EMAIL=admin@example.com \
//	R2R_CONFORMANCE_PASSWORD=change_me_immediately \
//	go test -run TestLive -v ./r2r/conformance/
//
// TestEmulatorNoAuth and TestLiveNoAuth check an R2R with authentication off (anonymous
// requests act as the default superuser; credentials sent must still be valid); the live
// one runs when R2R_CONFORMANCE_NOAUTH_URL names such a server.
//
// R2R_CONFORMANCE_RAG_MODEL names the model sent with the RAG check that sets one (default
// openai/fixture-chat, the model double's name in testdata's R2R config). Every run uses
// fresh names and removes what it created.
package conformance
