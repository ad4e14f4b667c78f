#!/usr/bin/env bash
# deadcode-check.sh — the linker must be able to drop unused methods. When a reflective
# method call (text/template's, through cobra's version or usage templates, for one) is
# reachable, the linker keeps every exported method of every type that is ever put in an
# interface: go-redis alone then adds 4 MB, and every start of serve pages through it.
set -euo pipefail
cd "$(dirname "$0")/.."
dump=$(mktemp); trap 'rm -f "$dump"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w -dumpdep' -o /dev/null . 2>"$dump"
if grep -q '<ReflectMethod>' "$dump"; then
	echo "deadcode-check: a reflective method call is reachable, so the linker keeps every exported method:" >&2
	grep '<ReflectMethod>' "$dump" | head -5 >&2
	exit 1
fi
bin=$(mktemp); trap 'rm -f "$dump" "$bin"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin" .
echo "deadcode-check: no reflective method call is reachable; stripped binary $(stat -c %s "$bin") bytes"
