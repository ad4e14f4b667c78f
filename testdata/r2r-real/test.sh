#!/usr/bin/env bash
# test.sh — the real-R2R suite (`make test-real`): bring up the real R2R (authentication on)
# and a second one with authentication off unless they are already up, run the conformance
# suite, the end-to-end tests and R2R's own JS SDK against them, then stop what this script
# started. Exit status: non-zero when anything failed or an R2R did not come up.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUN=${R2R_REAL_RUN:-${TMPDIR:-/tmp}/r2r-mcp-real-$(id -u)}
GO=${GO:-go}

NOAUTH_RUN=$RUN-authoff
up() { # up RUNDIR AUTH: start unless up; prints the env line; records what it started
	local run=$1
	if ! { [ -f "$run/env" ] && curl -fsS --max-time 2 "$(sed -n 's/^R2R_API_URL=\([^ ]*\).*/\1/p' "$run/env")/v3/health" >/dev/null 2>&1; }; then
		echo "$run" >>"$started"
	fi
	R2R_REAL_RUN=$run R2R_REAL_AUTH=$2 "$HERE/up.sh" | tail -n 1
}
started=$(mktemp)
trap 'while read -r run; do R2R_REAL_RUN=$run "$HERE/down.sh"; done <"$started"; rm -f "$started"' EXIT
line=$(up "$RUN" on)
noauth=$(up "$NOAUTH_RUN" off)
value() { printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
export R2R_CONFORMANCE_NOAUTH_URL
R2R_CONFORMANCE_NOAUTH_URL=$(printf '%s\n' "$noauth" | tr ' ' '\n' | sed -n "s/^R2R_API_URL=//p")
export R2R_CONFORMANCE_URL R2R_CONFORMANCE_EMAIL R2R_CONFORMANCE_PASSWORD
R2R_CONFORMANCE_URL=$(value R2R_API_URL)
R2R_CONFORMANCE_EMAIL=$(value R2R_EMAIL)
R2R_CONFORMANCE_PASSWORD=$(value R2R_PASSWORD)
[ -n "$R2R_CONFORMANCE_EMAIL" ] || { echo "test-real: needs R2R with authentication on (R2R_REAL_AUTH=on)" >&2; exit 1; }
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
export R2R_CONFORMANCE_EMBED=${R2R_REAL_EMBED:-hash} # what up.sh started R2R with

cd "$ROOT"
log=$(mktemp)
status=0
echo "test-real: conformance suite and end-to-end tests against $R2R_CONFORMANCE_URL (and $R2R_CONFORMANCE_NOAUTH_URL, authentication off)" >&2
$GO test -race -count=1 -v -skip 'TestRealIngestionCrash' ./r2r/conformance/ ./server/e2ereal/ ./tools/upload/ >"$log" 2>&1 || status=1
# The team flow through the binary: three users, one repository, one team collection; a
# teammate's skill in another's serve and Claude Code; analytics' index lag.
$GO test -race -count=1 -v -run 'TestTeamFlowReal|TestTeamSkillsReal|TestAnalyticsIndexLagReal' ./cmd/ >>"$log" 2>&1 || status=1
# Last, alone: it kills R2R in the middle of an ingestion and starts it again.
R2R_REAL_RUN=$RUN R2R_CONFORMANCE_RESTART=$HERE/restart-r2r.sh \
	$GO test -race -count=1 -v -run 'TestRealIngestionCrash' ./server/e2ereal/ >>"$log" 2>&1 || status=1
grep -E '^(--- FAIL|FAIL|ok|panic)|^\s+--- FAIL' "$log" || true
if [ "$status" -ne 0 ]; then
	echo "test-real: failures; the whole log follows" >&2
	cat "$log"
fi
pass=$(grep -cE '^\s*--- PASS' "$log" || true)
fail=$(grep -cE '^\s*--- FAIL' "$log" || true)
skip=$(grep -cE '^\s*--- SKIP' "$log" || true)
rm -f "$log"

echo "test-real: R2R's JS SDK (testdata/r2r-js) against $R2R_CONFORMANCE_URL" >&2
if [ -d testdata/r2r-js/node_modules/r2r-js ]; then
	(cd testdata/r2r-js && R2R_API_BASE=$R2R_CONFORMANCE_URL R2R_API_KEY= R2R_EMAIL=$R2R_CONFORMANCE_EMAIL \
		R2R_PASSWORD=$R2R_CONFORMANCE_PASSWORD node --test) >"$RUN/js-sdk.log" 2>&1 && js=pass || { js=fail; status=1; cat "$RUN/js-sdk.log"; }
	grep -E '^# (tests|pass|fail)' "$RUN/js-sdk.log" >&2 || true
else
	echo "test-real: testdata/r2r-js/node_modules is missing (npm ci --prefix testdata/r2r-js)" >&2
	js=missing
	status=1
fi
echo "test-real: go $pass passed, $fail failed, $skip skipped; JS SDK $js"
exit "$status"
