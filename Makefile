# r2r-mcp — developer tasks. `make test` is the project's test command (CI runs it).
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X github.com/r2r-mcp/r2r-mcp/cmd.version=$(VERSION) \
             -X github.com/r2r-mcp/r2r-mcp/cmd.commit=$(COMMIT) \
             -X github.com/r2r-mcp/r2r-mcp/cmd.date=$(DATE)

.PHONY: build test test-unit vet fmt-check bench cover emulator

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/r2r-mcp .

## test: everything CI checks — formatting, vet, unit and end-to-end tests with the race detector.
test: fmt-check vet
	$(GO) test -race -count=1 ./...

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

emulator:
	$(GO) run ./r2r/r2rtest/r2r-emulator --addr 127.0.0.1:7272 --seed testdata/docs
