#!/usr/bin/env bash
# restart-r2r.sh — kill the R2R that up.sh started with SIGKILL, as a crash would, and start it
# again on the same Postgres data (same port and credentials); returns once it answers
# /v3/health. Postgres and the model double keep running. For tests of what a crash leaves
# behind (server/e2ereal TestRealIngestionCrash); test.sh runs those after the other tests,
# which would fail while R2R is down.
#
# Environment: R2R_REAL_RUN, as for up.sh.
set -euo pipefail
RUN=${R2R_REAL_RUN:-${TMPDIR:-/tmp}/r2r-mcp-real-$(id -u)}
say() { printf 'restart-r2r: %s\n' "$*" >&2; }
[ -x "$RUN/r2r-start.sh" ] && [ -f "$RUN/env" ] ||
	{ say "no R2R started by up.sh in $RUN (run up.sh first)"; exit 1; }
url=$(sed -n 's/^R2R_API_URL=\([^ ]*\).*/\1/p' "$RUN/env")

pid=$(cat "$RUN/r2r.pid" 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- r2r.serve; then
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	say "killed R2R (pid $pid)"
fi
# The port is free once the killed process is gone; a listener left over would answer health.
for _ in $(seq 1 100); do
	curl -fsS --max-time 1 "$url/v3/health" >/dev/null 2>&1 || break
	sleep 0.1
done

"$RUN/r2r-start.sh" &
echo $! >"$RUN/r2r.pid"
for _ in $(seq 1 1800); do
	curl -fsS --max-time 2 "$url/v3/health" >/dev/null 2>&1 && { say "R2R healthy again at $url"; exit 0; }
	kill -0 "$(cat "$RUN/r2r.pid")" 2>/dev/null || { say "R2R exited; last lines of $RUN/r2r.log:"; tail -n 20 "$RUN/r2r.log" >&2; exit 1; }
	sleep 0.1
done
say "R2R did not answer $url/v3/health within 180 s"
exit 1
