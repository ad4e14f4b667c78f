#!/usr/bin/env bash
# Load figures of serve --http on the loopback (issue 14): the R2R emulator, Redis, three
# replicas behind nginx, and one replica alone for comparison; 50 users making cache-hit
# r2r_search calls. Needs go, redis-server and nginx (Debian packages redis-server, nginx).
# Everything listens on 127.0.0.1 only, and only the processes this script started are
# stopped at the end.
#
#   testdata/load/run.sh [DURATION] [RATE]      # defaults: 10s, unbounded
set -eu
DUR=${1:-10s}
RATE=${2:-0}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	[ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() { for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; exit 1; }

cd "$ROOT"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$WORK/r2r-mcp" .
go build -o "$WORK/r2r-emulator" ./r2r/r2rtest/r2r-emulator
go build -o "$WORK/load" ./testdata/load

R2R=$(port); REDIS=$(port); NGINX=$(port)
"$WORK/r2r-emulator" --addr "127.0.0.1:$R2R" --auth 2>"$WORK/emulator.log" & PIDS="$PIDS $!"
redis-server --port "$REDIS" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" >"$WORK/redis.log" & PIDS="$PIDS $!"
wait_port "$R2R"; wait_port "$REDIS"

serve() { # serve PORT [more flags]: one replica, logs at warn (an access line per call costs throughput)
	p=$1; shift
	"$WORK/r2r-mcp" serve --http "127.0.0.1:$p" --url "http://127.0.0.1:$R2R" --rate-limit 0 --rag-rate-limit 0 \
		--log-level warn "$@" 2>"$WORK/replica-$p.log" & PIDS="$PIDS $!"
	wait_port "$p"
}

SINGLE=$(port)
serve "$SINGLE"
UP=""
for _ in 1 2 3; do
	p=$(port)
	R2R_MCP_REDIS_URL="redis://127.0.0.1:$REDIS/0" serve "$p"
	UP="$UP        server 127.0.0.1:$p;
"
done
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx-body;
    proxy_temp_path $WORK/nginx-proxy;
    fastcgi_temp_path $WORK/nginx-fastcgi;
    uwsgi_temp_path $WORK/nginx-uwsgi;
    scgi_temp_path $WORK/nginx-scgi;
    upstream r2r_mcp {
$UP        keepalive 64;
    }
    server {
        listen 127.0.0.1:$NGINX;
        location / {
            proxy_pass http://r2r_mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host localhost;
            proxy_buffering off;
            proxy_read_timeout 120s;
        }
    }
}
EOF
nginx -c "$WORK/nginx.conf" -p "$WORK"
wait_port "$NGINX"

echo "== one replica, no Redis"
"$WORK/load" -r2r "http://127.0.0.1:$R2R" -target "http://127.0.0.1:$SINGLE" -users 50 -concurrency 50 -rate "$RATE" -duration "$DUR" -prefix single
echo "== three replicas behind nginx, Redis"
"$WORK/load" -r2r "http://127.0.0.1:$R2R" -target "http://127.0.0.1:$NGINX" -users 50 -concurrency 50 -rate "$RATE" -duration "$DUR" -prefix team -warm 3
echo "== /metrics of one replica behind nginx (tool calls, cache lookups by layer)"
curl -s "http://127.0.0.1:$(echo "$UP" | sed -n 's/.*127.0.0.1:\([0-9]*\);.*/\1/p' | head -1)/metrics" |
	grep -E '^r2r_mcp_(tool_calls_total|cache_lookups_total|redis_errors_total)' || true
