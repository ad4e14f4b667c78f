#!/usr/bin/env bash
# The retrieval-quality benchmark (testdata/quality/README.md): run the harness on the R2R
# emulator and on the real R2R 3.6.6 (started here with testdata/r2r-real/up.sh unless
# R2R_API_URL points at one already up, and stopped again).
#
#   testdata/quality/run.sh full   # make bench-quality: every question, both backends
#   testdata/quality/run.sh ci     # make bench-quality-ci: the click/docs/ subset with a sanity floor
#   testdata/quality/run.sh repo   # make bench-quality: the repository benchmark (repo/README.md),
#                                  # its corpus fetched from the registries by repo/fetch.sh
#   testdata/quality/run.sh repo-ci  # make bench-quality-ci: its qs/ subset with a sanity floor
#
# The real R2R embeds with all-MiniLM-L6-v2 (R2R_REAL_EMBED=minilm, testdata/r2r-real/README.md);
# QUALITY_EMBED=hash runs it on the model double's hash embeddings instead.
# QUALITY_BACKENDS (default "emulator real") picks the backends; QUALITY_FLAGS adds harness
# flags (e.g. "-limit 5 -n 20"); QUALITY_OUT (default testdata/quality/out) gets one directory
# per backend with questions.json, summary.json and summary.md; QUALITY_BASELINE=DIR (an
# earlier QUALITY_OUT) compares each backend's run with the one there.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SET=${1:-full}
BACKENDS=${QUALITY_BACKENDS:-emulator real}
EMBED=${QUALITY_EMBED:-minilm}
OUT=${QUALITY_OUT:-$ROOT/testdata/quality/out}
case "$SET" in
full) FLAGS=() ;;
ci) FLAGS=(-only click/docs/ -min-hit10 0.5) ;;
repo) FLAGS=(-corpus "$(testdata/quality/repo/fetch.sh)" -questions testdata/quality/repo/questions.json) ;;
repo-ci) FLAGS=(-corpus "$(testdata/quality/repo/fetch.sh)" -questions testdata/quality/repo/questions.json -only qs/ -min-hit10 0.5) ;;
*) echo "usage: $0 full|ci|repo|repo-ci" >&2; exit 2 ;;
esac
# shellcheck disable=SC2206
FLAGS+=(${QUALITY_FLAGS:-})

WORK=$(mktemp -d)
STARTED=""
cleanup() {
	[ -z "$STARTED" ] || R2R_REAL_RUN=$STARTED testdata/r2r-real/down.sh >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
go build -o "$WORK/r2r-mcp" .
go build -o "$WORK/quality" ./testdata/quality

status=0
DIRS=()
for b in $BACKENDS; do
	BASE=()
	[ -z "${QUALITY_BASELINE:-}" ] || BASE=(-baseline "$QUALITY_BASELINE/$SET-$b")
	rm -rf "${OUT:?}/$SET-$b" && mkdir -p "$OUT/$SET-$b"
	t0=$(date +%s)
	case "$b" in
	emulator)
		"$WORK/quality" -backend emulator -r2r-mcp "$WORK/r2r-mcp" -label "emulator ($SET)" -out "$OUT/$SET-$b" "${FLAGS[@]}" "${BASE[@]}" || status=1
		;;
	real)
		if [ -n "${R2R_API_URL:-}" ]; then
			line="R2R_API_URL=$R2R_API_URL R2R_EMAIL=${R2R_EMAIL:-} R2R_PASSWORD=${R2R_PASSWORD:-}"
		else
			STARTED=${TMPDIR:-/tmp}/r2r-mcp-quality-$$
			line=$(R2R_REAL_RUN=$STARTED R2R_REAL_EMBED=$EMBED testdata/r2r-real/up.sh | tail -n 1)
		fi
		value() { printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
		R2R_EMAIL=$(value R2R_EMAIL) R2R_PASSWORD=$(value R2R_PASSWORD) \
			"$WORK/quality" -backend url -r2r-url "$(value R2R_API_URL)" -r2r-mcp "$WORK/r2r-mcp" \
			-label "real R2R 3.6.6, $EMBED embeddings ($SET)" -out "$OUT/$SET-$b" "${FLAGS[@]}" "${BASE[@]}" || status=1
		if [ -n "$STARTED" ]; then
			R2R_REAL_RUN=$STARTED testdata/r2r-real/down.sh >/dev/null 2>&1 || true
			STARTED=""
		fi
		;;
	*) echo "unknown backend $b (emulator, real)" >&2; exit 2 ;;
	esac
	echo "bench-quality: $b ($SET) took $(($(date +%s) - t0)) s" >&2
	[ ! -f "$OUT/$SET-$b/summary.json" ] || DIRS+=("$OUT/$SET-$b")
done
if [ ${#DIRS[@]} -gt 1 ]; then
	echo
	"$WORK/quality" -table "${DIRS[@]}" | tee "$OUT/$SET-summary.md"
fi
exit "$status"
