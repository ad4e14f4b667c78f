#!/usr/bin/env bash
# make bench-scale: sync a few thousand real files into a real R2R 3.6.6 and time it, then
# time searches through r2r-mcp and straight to R2R before and after `r2r-mcp index create`.
# The corpus is every k-th .go file of $(go env GOROOT)/src (no testdata, no vendor), so the
# same Go release gives the same corpus offline on every machine.
#
#   testdata/scale/run.sh [FILES] [SEARCHES]     # defaults: 3000 files, 40 searches each way
#
# R2R: when R2R_API_URL, R2R_EMAIL and R2R_PASSWORD are set they are used (a superuser's),
# else one is started with make r2r-real in R2R_REAL_RUN (default: a temporary directory)
# and stopped at the end. Only processes this script started are stopped.
set -eu
FILES=${1:-3000}
N=${2:-40}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
PIDS=""
STARTED_R2R=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	if [ -n "$STARTED_R2R" ]; then (cd "$ROOT" && R2R_REAL_RUN="$STARTED_R2R" make --no-print-directory r2r-real-down >/dev/null 2>&1 || true); fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

cd "$ROOT"
CGO_ENABLED=0 go build -trimpath -o "$WORK/r2r-mcp" .
go build -o "$WORK/scale" ./testdata/scale

if [ -z "${R2R_API_URL:-}" ] || [ -z "${R2R_EMAIL:-}" ] || [ -z "${R2R_PASSWORD:-}" ]; then
	STARTED_R2R=${R2R_REAL_RUN:-$WORK/r2r}
	line=$(R2R_REAL_RUN="$STARTED_R2R" make --no-print-directory r2r-real | tail -1)
	eval "export $line"
fi

"$WORK/scale" corpus -out "$WORK/gosrc" -files "$FILES"
"$WORK/scale" proxy -target "$R2R_API_URL" -counts "$WORK/counts.json" >"$WORK/proxy.url" & PIDS="$PIDS $!"
for _ in $(seq 50); do [ -s "$WORK/proxy.url" ] && break; sleep 0.1; done
PROXY=$(cat "$WORK/proxy.url")

start=$(date +%s.%N)
rc=0
(cd "$WORK/gosrc" && "$WORK/r2r-mcp" sync --url "$PROXY" --json . >"$WORK/sync.json" 2>"$WORK/sync.err") || rc=$?
end=$(date +%s.%N)
kill "${PIDS##* }"; wait "${PIDS##* }" 2>/dev/null || true
python3 - "$WORK/sync.json" "$WORK/counts.json" "$start" "$end" "$rc" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
secs = float(sys.argv[4]) - float(sys.argv[3])
up = len(s.get("uploaded") or []) + len(s.get("replaced") or [])
reqs = sum(c.values())
print(f"sync: exit {sys.argv[5]}, {up} files uploaded, {len(s.get('failed') or [])} failed ({len(s.get('refused') or [])} refused), in {secs:.0f} s = {up/secs:.2f} files/s; "
      f"{reqs} R2R requests = {reqs/max(up,1):.2f} per uploaded file")
for k in sorted(c): print(f"  {c[k]:6d} {k}")
PY

"$WORK/scale" search -r2r "$R2R_API_URL" -bin "$WORK/r2r-mcp" -dir "$WORK/gosrc" -n "$N" | sed 's/^/before the index: /'
"$WORK/r2r-mcp" index create --url "$R2R_API_URL"
"$WORK/scale" search -r2r "$R2R_API_URL" -bin "$WORK/r2r-mcp" -dir "$WORK/gosrc" -n "$N" | sed 's/^/after the index:  /'
