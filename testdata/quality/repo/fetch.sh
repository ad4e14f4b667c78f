#!/usr/bin/env bash
# fetch.sh — lay out the repository benchmark's corpus (testdata/quality/repo/README.md): three
# real projects, whole as their registries publish them (source, tests, docs), each pinned to an
# exact version and checked against its sha256. Prints the corpus directory on stdout.
#
#   testdata/quality/repo/fetch.sh        # -> ~/.cache/r2r-mcp/quality-repo/corpus-<hash>
#
# QUALITY_REPO_CACHE picks the cache directory. A corpus laid out once is reused.
set -euo pipefail
CACHE=${QUALITY_REPO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/r2r-mcp/quality-repo}
PY_NAME=cachetools PY_VERSION=5.5.2
PY_SHA=1a661caa9175d26759571b2e19580f9d6393969e5dfca11fdb1f947a23e640d4
NPM_NAME=qs NPM_VERSION=6.13.0
NPM_SHA=abffeabbdedc8e466c1bd75227e14ceb76e77f61be475dfcee0d3bbe6dd608fd
GO_MOD=github.com/go-chi/chi/v5 GO_VERSION=v5.1.0
GO_SHA=fa8a5399419187b3b29218067214d5e3fdfe23e2bb4ad1390df51c3e8741d7aa
KEY=$(printf '%s\n' "$PY_SHA" "$NPM_SHA" "$GO_SHA" | sha256sum | cut -c1-12)
OUT=$CACHE/corpus-$KEY
if [ -f "$OUT.complete" ]; then
	echo "$OUT"
	exit 0
fi
say() { printf 'quality-repo: %s\n' "$*" >&2; }
check() { # file sha256
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] || { say "$1: sha256 $got, want $2"; exit 1; }
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/corpus"

say "$PY_NAME $PY_VERSION (PyPI sdist)"
pip download --quiet --no-deps --no-binary :all: -d "$TMP/py" "$PY_NAME==$PY_VERSION" >&2
check "$TMP/py/$PY_NAME-$PY_VERSION.tar.gz" "$PY_SHA"
mkdir -p "$TMP/corpus/$PY_NAME"
tar xzf "$TMP/py/$PY_NAME-$PY_VERSION.tar.gz" -C "$TMP/corpus/$PY_NAME" --strip-components=1

say "$NPM_NAME $NPM_VERSION (npm tarball)"
mkdir -p "$TMP/npm" "$TMP/corpus/$NPM_NAME"
(cd "$TMP/npm" && npm pack --silent "$NPM_NAME@$NPM_VERSION" >/dev/null)
check "$TMP/npm/$NPM_NAME-$NPM_VERSION.tgz" "$NPM_SHA"
tar xzf "$TMP/npm/$NPM_NAME-$NPM_VERSION.tgz" -C "$TMP/corpus/$NPM_NAME" --strip-components=1

say "$GO_MOD $GO_VERSION (Go module proxy)"
zip=$(cd "$TMP" && GOFLAGS=-mod=mod GO111MODULE=on go mod download -json "$GO_MOD@$GO_VERSION" |
	sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p')
check "$zip" "$GO_SHA"
mkdir -p "$TMP/go"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$TMP/go"
mv "$TMP/go/$GO_MOD@$GO_VERSION" "$TMP/corpus/chi"

# Files the benchmark cannot use: generated packaging metadata, images, a generated bundle.
find "$TMP/corpus" \( -name '*.egg-info' -o -name PKG-INFO \) -prune -exec rm -rf {} +
find "$TMP/corpus" -name '*.svg' -delete
rm -rf "$TMP/corpus/$NPM_NAME/dist" # a browserify bundle of lib/
chmod -R u+w "$TMP/corpus"
mkdir -p "$CACHE"
rm -rf "$OUT"
mv "$TMP/corpus" "$OUT"
touch "$OUT.complete"
echo "$OUT"
