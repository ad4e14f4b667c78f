#!/bin/sh
# with-secret-service.sh CMD [ARG...]
#
# Runs CMD inside a private D-Bus session with a fresh, unlocked gnome-keyring Secret Service,
# so the keyring integration test can talk to a real Secret Service on a headless machine:
#
#   R2R_MCP_KEYRING_IT=1 auth/testdata/with-secret-service.sh go test -run Integration ./auth/
#
# Needs dbus-run-session and gnome-keyring-daemon (Debian: apt-get install gnome-keyring dbus
# dbus-x11). The keyring lives in a temporary XDG_DATA_HOME, so the user's own keyring is never
# touched and every run starts empty. Its password is a throwaway: gnome-keyring creates and
# unlocks the "login" collection (the one go-keyring writes to) only for a non-empty password.
set -eu
if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARG...]" >&2
	exit 2
fi
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$0: $tool not found (apt-get install -y gnome-keyring dbus dbus-x11)" >&2
		exit 127
	fi
done
data=$(mktemp -d "${TMPDIR:-/tmp}/r2r-mcp-keyring.XXXXXX")
trap 'rm -rf "$data"' EXIT INT TERM
# dbus-daemon's own stderr goes to a log shown only on failure: as root it warns on every run
# that it cannot raise its file limit ("Failed to set fd limit"), which is noise here.
daemon=$(command -v dbus-daemon)
printf '#!/bin/sh\nexec %s "$@" 2>>%s/dbus-daemon.log\n' "$daemon" "$data" >"$data/dbus-daemon"
chmod +x "$data/dbus-daemon"
status=0
XDG_DATA_HOME=$data dbus-run-session --dbus-daemon="$data/dbus-daemon" -- sh -c '
	eval "$(printf "%s" "r2r-mcp-test" | gnome-keyring-daemon --unlock --components=secrets)"
	export GNOME_KEYRING_CONTROL
	# The daemon claims its bus name a moment after it returns; a request before that would
	# D-Bus-activate a second daemon racing the first over the half-written keyring file.
	i=0
	until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
		grep -q "boolean true"; do
		i=$((i + 1))
		if [ "$i" -gt 100 ]; then
			echo "with-secret-service.sh: Secret Service did not start" >&2
			exit 1
		fi
		sleep 0.05
	done
	"$@"
' with-secret-service "$@" || status=$?
if [ "$status" -ne 0 ] && [ -s "$data/dbus-daemon.log" ]; then
	echo "with-secret-service.sh: dbus-daemon said:" >&2
	cat "$data/dbus-daemon.log" >&2
fi
exit "$status"
