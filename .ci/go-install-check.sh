#!/usr/bin/env bash
# go-install-check.sh — proves `go install github.com/r2r-mcp/r2r-mcp@VERSION` works for a user:
# the committed tree (HEAD) is served as a module version from a local file proxy (in the
# layout the Go module proxy protocol defines), every dependency comes from the usual proxy, and
# the installed binary must run `r2r-mcp version` and name the version it was installed at (no
# -ldflags: it reads the build info the toolchain records). Catches what a clone-and-build
# cannot: a replace directive, a file go's module zip rules reject, a main package that is not at the
# module root, a go.sum that lacks what a fresh module cache needs.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
module=$(sed -n 's/^module //p' go.mod)
version=v0.0.0-installcheck
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

proxy="$tmp/proxy/$module/@v"
mkdir -p "$proxy"
git archive --format=zip --prefix="$module@$version/" -o "$proxy/$version.zip" HEAD
cp go.mod "$proxy/$version.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$proxy/$version.info"
echo "$version" >"$proxy/list"

upstream=$($GO env GOPROXY)
export GOPROXY="file://$tmp/proxy,$upstream" GONOSUMDB="$module" GOFLAGS=-mod=mod \
	GOMODCACHE="$tmp/modcache" GOBIN="$tmp/bin" CGO_ENABLED=0
# The fresh module cache keeps this honest; GOCACHE stays shared so compiled dependencies are reused.
$GO install "$module@$version"
out=$("$tmp/bin/r2r-mcp" version)
case "$out" in
"r2r-mcp $version "*) echo "go-install-check: go install $module@$version works: $out" ;;
*) echo "go-install-check: the installed binary printed: $out" >&2; exit 1 ;;
esac
