# r2r-mcp — developer tasks. `make test` is the project's test command (CI runs it).
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X github.com/r2r-mcp/r2r-mcp/cmd.version=$(VERSION) \
             -X github.com/r2r-mcp/r2r-mcp/cmd.commit=$(COMMIT) \
             -X github.com/r2r-mcp/r2r-mcp/cmd.date=$(DATE)

.PHONY: build test test-unit test-keyring vet fmt-check bench bench-smoke bench-rss bench-scale cover emulator

## build: bin/r2r-mcp (release flags) and bin/r2r-emulator (the R2R emulator of the try-it steps).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/r2r-mcp .
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/r2r-emulator ./r2r/r2rtest/r2r-emulator

## test: formatting, vet, unit and end-to-end tests with the race detector, then the tests
## that were skipped and why, then "N passed, N failed, N skipped". End-to-end tests mostly
## wait on child processes, so more of them run at once than there are CPUs; they share one
## race build of r2r-mcp; the keyring tests run beside them and are counted with them (they
## skip in the main run and run in the keyring one, so they are not listed as skipped).
## GORACE's exit pause is 10 ms, not the default 1 s that every race-built test binary and
## child process would wait. Benchmarks are make bench-smoke.
test: fmt-check vet
	@kr=$$(mktemp); rc=$$(mktemp); krc=$$(mktemp); bin=$$(mktemp -d); trap 'rm -rf "$$kr" "$$rc" "$$krc" "$$bin"' EXIT; \
	$(GO) build -race -ldflags '-X github.com/r2r-mcp/r2r-mcp/cmd.version=e2e' -o "$$bin/r2r-mcp" . || exit 1; \
	export R2R_MCP_E2E_BINARY="$$bin/r2r-mcp" GORACE="$${GORACE:-atexit_sleep_ms=10}"; \
	{ $(MAKE) --no-print-directory test-keyring KEYRING_TESTFLAGS=-json > "$$kr" 2>&1 & krpid=$$!; \
	  $(GO) test -race -count=1 -parallel 8 -json ./... 2>&1; echo $$? > "$$rc"; \
	  wait $$krpid; echo $$? > "$$krc"; grep -v 'Failed to set fd limit' "$$kr"; } | \
	awk -f .ci/test-summary.awk; sum=$$?; \
	[ "$$(cat "$$rc")" = 0 ] && [ $$sum = 0 ] && [ "$$(cat "$$krc")" = 0 ]

## test-keyring: login/serve/logout against a real Secret Service (gnome-keyring in a private
## D-Bus session). Skipped with a note when those are not installed, except under CI=true.
## KEYRING_TESTFLAGS are further go test flags (make test passes -json).
test-keyring:
	@if command -v dbus-run-session >/dev/null 2>&1 && command -v gnome-keyring-daemon >/dev/null 2>&1; then \
		R2R_MCP_KEYRING_IT=1 auth/testdata/with-secret-service.sh $(GO) test -race -count=1 $(KEYRING_TESTFLAGS) ./auth/keyringit/; \
	elif [ "$$CI" = true ]; then \
		echo "test-keyring: dbus-run-session and gnome-keyring-daemon are required under CI (apt-get install gnome-keyring dbus dbus-x11)"; exit 1; \
	else \
		echo "test-keyring: skipped (no dbus-run-session/gnome-keyring-daemon; apt-get install gnome-keyring dbus dbus-x11)"; \
	fi

test-unit:
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

cover:
	$(GO) test -cover ./r2r/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-smoke: each benchmark once, without -race (with -bench, go test runs packages one at
## a time: apart from make test, which runs them side by side). CI runs it.
bench-smoke:
	@rc=$$(mktemp); trap 'rm -f "$$rc"' EXIT; \
	{ $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -json ./... 2>&1; echo $$? > "$$rc"; } | \
	awk -f .ci/test-summary.awk && [ "$$(cat "$$rc")" = 0 ]

## bench-rss: peak memory under the hostile loads, without -race (make test skips it: under
## -race it would measure the detector's shadow memory). Each load runs once.
bench-rss:
	$(GO) test -run '^$$' -bench PeakRSS -benchtime 1x ./server

## bench-scale: sync ~3,000 .go files of $(go env GOROOT)/src into a real R2R 3.6.6 (started
## with r2r-real unless R2R_API_URL/R2R_EMAIL/R2R_PASSWORD are set), with files/s and R2R
## requests per file, then search p50/p95 through r2r-mcp and straight to R2R, before and
## after r2r-mcp index create. Tens of minutes; not in CI (go test ./testdata/scale is its smoke test).
bench-scale:
	testdata/scale/run.sh $(FILES) $(SEARCHES)

## emulator: the R2R emulator on 127.0.0.1:7272 with testdata/docs synced into this clone's
## collection by r2r-mcp itself (so a later sync of the clone finds them current); Ctrl-C stops it.
emulator: build
	@bin/r2r-emulator --addr 127.0.0.1:7272 & pid=$$!; trap 'kill $$pid 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 50); do curl -fsS -o /dev/null http://127.0.0.1:7272/v3/health 2>/dev/null && break; sleep 0.1; done; \
	R2R_API_URL=http://127.0.0.1:7272 bin/r2r-mcp sync testdata/docs && wait $$pid

# GoReleaser pin: v2.16.0 is the newest release that installs here with Go 1.26.8
# (v2.18.2 needs go >= 1.27.1; v2.17.0 pulls go.digitalxero.dev/go-msix, a module host outside
# this environment's proxy allowlist — on an open network v2.17.0 would also work).
GORELEASER_VERSION ?= v2.16.0
GOBIN_DIR  := $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)
GORELEASER := $(GOBIN_DIR)/goreleaser

.PHONY: release-check
## release-check: validate .goreleaser.yaml and build the six release binaries into dist/ (publishes nothing).
release-check:
	@if ! $(GORELEASER) --version 2>/dev/null | grep -q 'GitVersion: *$(GORELEASER_VERSION)$$'; then \
		echo "== installing goreleaser $(GORELEASER_VERSION) into $(GOBIN_DIR)"; \
		$(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION); \
	fi
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --skip=publish --clean
	@n=$$(ls dist/*/r2r-mcp dist/*/r2r-mcp.exe 2>/dev/null | wc -l); \
	if [ "$$n" -ne 6 ]; then echo "release-check: expected 6 binaries in dist/, found $$n"; exit 1; fi
	@cd dist && sha256sum -c --quiet checksums.txt && echo "release-check: checksums.txt verifies"
	@for a in dist/*.tar.gz; do tar -tzf "$$a" | grep -qx README.md && tar -tzf "$$a" | grep -qx LICENSE || \
		{ echo "release-check: $$a lacks README.md or LICENSE"; exit 1; }; done
	@for a in dist/*.zip; do unzip -l "$$a" | grep -q " README.md$$" && unzip -l "$$a" | grep -q " LICENSE$$" || \
		{ echo "release-check: $$a lacks README.md or LICENSE"; exit 1; }; done
	@n=$$(ls dist/*.tar.gz dist/*.zip | wc -l); [ "$$n" -eq 6 ] || { echo "release-check: expected 6 archives, found $$n"; exit 1; }; \
	echo "release-check: 6 archives with README.md and LICENSE"
	@v=$$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json); \
	out=$$(dist/r2r-mcp_linux_amd64_v1/r2r-mcp version); echo "$$out"; \
	case "$$out" in "r2r-mcp $$v "*) ;; *) echo "release-check: binary does not report version $$v"; exit 1;; esac

# The real R2R 3.6.6 (testdata/r2r-real): PyPI venv in a cache dir, Postgres + pgvector from a
# wheel, our model double. See README "Testing against a real R2R".
R2R_REAL_DIR := testdata/r2r-real
.PHONY: r2r-real r2r-real-down test-real bench-quality bench-quality-ci
## r2r-real: start a real R2R in the background; the last line is R2R_API_URL=... R2R_EMAIL=... R2R_PASSWORD=...
r2r-real:
	@$(R2R_REAL_DIR)/up.sh
## r2r-real-down: stop it and delete its data.
r2r-real-down:
	@$(R2R_REAL_DIR)/down.sh
## test-real: conformance suite, end-to-end tests and R2R's JS SDK against the real R2R (started and stopped if not up).
test-real:
	@GO=$(GO) $(R2R_REAL_DIR)/test.sh
## bench-quality: the retrieval-quality benchmarks (testdata/quality): the prose set and the repository set
## (testdata/quality/repo), every question on the emulator and on the real R2R; tables on stdout,
## per-question JSON in testdata/quality/out.
bench-quality:
	$(GO) test -count=1 ./testdata/quality/
	@testdata/quality/run.sh full
	@testdata/quality/run.sh repo
## bench-quality-ci: the click/docs/ subset (37 files, 18 questions) and the repository set's qs/ subset (17 files, 27 questions) on both backends, failing only below a sanity floor. CI runs it.
bench-quality-ci:
	$(GO) test -count=1 ./testdata/quality/
	@testdata/quality/run.sh ci
	@testdata/quality/run.sh repo-ci
