"""The embedding sidecar: POST /v1/embeddings (OpenAI-compatible) answered with all-MiniLM-L6-v2
vectors (minilm.py), for the real R2R of up.sh, behind the model double.

    python server.py --addr 127.0.0.1:PORT --cache-dir DIR [--engine onnx|numpy] [--workers N]

It prints its base URL (http://HOST:PORT/v1) as one line on stdout once it accepts connections
and logs one line per request to stderr. Before listening it checks the model against the
similarities sentence-transformers publishes for it (minilm.REFERENCE) and exits if they
differ. Vectors are kept in DIR/embed-cache.sqlite keyed by (engine, minilm.fingerprint(),
exact text): the model is deterministic, so a text embedded once is never embedded again; the
file is bounded (--cache-mb), the oldest rows go first.
"""

import argparse
import base64
import concurrent.futures
import hashlib
import http.server
import json
import os
import signal
import sqlite3
import sys
import threading
import time

import numpy as np

import minilm

MAX_BODY = 32 << 20
MAX_INPUTS = 2048


def log(msg):
    print(f"minilm-embed: {msg}", file=sys.stderr, flush=True)


class Cache:
    """An SQLite map from sha256(key + text) to a float32 vector, bounded in rows."""

    def __init__(self, path, max_rows):
        self.max_rows = max_rows
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (h BLOB PRIMARY KEY, v BLOB NOT NULL)")
        self.rows = self.db.execute("SELECT count(*) FROM vec").fetchone()[0]

    # A cache that fails (another sidecar holds the lock too long, a full disk) only costs
    # time: the texts are embedded again, the error is logged.
    def get_many(self, hashes):
        out = {}
        try:
            with self.lock:
                for i in range(0, len(hashes), 500):
                    part = hashes[i : i + 500]
                    q = "SELECT h, v FROM vec WHERE h IN (%s)" % ",".join("?" * len(part))
                    for h, v in self.db.execute(q, part):
                        out[bytes(h)] = np.frombuffer(v, np.float32)
        except sqlite3.Error as e:
            log(f"cache read failed: {e}")
        return out

    def put_many(self, items):
        try:
            with self.lock:
                with self.db:
                    self.db.executemany("INSERT OR REPLACE INTO vec (h, v) VALUES (?, ?)", [(h, v.tobytes()) for h, v in items])
                self.rows += len(items)
                if self.rows > self.max_rows:
                    drop = self.rows - self.max_rows * 9 // 10
                    with self.db:
                        self.db.execute("DELETE FROM vec WHERE rowid IN (SELECT rowid FROM vec ORDER BY rowid LIMIT ?)", (drop,))
                    self.rows = self.db.execute("SELECT count(*) FROM vec").fetchone()[0]
        except sqlite3.Error as e:
            log(f"cache write failed: {e}")


class Embedder:
    """Tokenizes, looks up the cache, and runs the uncached texts on a pool of workers."""

    def __init__(self, engine, workers, threads, cache, model_dir):
        t = time.monotonic()
        self.tok = minilm.load_tokenizer(minilm.load_tokenizer_json())
        # One encoder serves every worker: ONNX Runtime runs concurrent calls of one session, each
        # on its caller's thread (1 intra-op thread), and one session holds one copy of the weights.
        if engine == "numpy":
            self.encoder = minilm.NumpyEncoder(minilm.load_weights(minilm.load_files()[0]))
        elif model_dir:
            self.encoder = minilm.OnnxEncoder(minilm.cached_onnx(model_dir), threads)
        else:
            self.encoder = minilm.OnnxEncoder(minilm.build_onnx(minilm.load_weights(minilm.load_files()[0])).SerializeToString(), threads)
        bad = minilm.self_check(lambda s: self.encoder.encode_ids(self.tok.encode(s).ids))
        if bad:
            raise SystemExit(f"minilm-embed: the model disagrees with sentence-transformers' reference similarities: {bad}")
        self.pool = concurrent.futures.ThreadPoolExecutor(workers)
        self.key = f"{minilm.MODEL_ID}/{engine}/{minilm.fingerprint()}/".encode()
        self.cache = cache
        self.engine = engine
        # busy_seconds: wall time during which at least one text was being encoded, so that
        # texts / busy_seconds is the throughput however requests overlap.
        self.stats = {"texts": 0, "cached": 0, "busy_seconds": 0.0}
        self.stats_lock = threading.Lock()
        self.active = 0
        self.busy_since = 0.0
        log(f"engine {engine}, {workers} worker(s) x {threads} thread(s), loaded in {time.monotonic() - t:.1f} s")

    def _encode(self, ids):
        with self.stats_lock:
            if self.active == 0:
                self.busy_since = time.monotonic()
            self.active += 1
        try:
            return self.encoder.encode_ids(ids)
        finally:
            with self.stats_lock:
                self.active -= 1
                if self.active == 0:
                    self.stats["busy_seconds"] += time.monotonic() - self.busy_since

    def embed(self, texts):
        """Returns (vectors, token count) for texts, in order."""
        encs = self.tok.encode_batch(texts, add_special_tokens=True)
        hashes = [hashlib.sha256(self.key + t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        found = self.cache.get_many(list(set(hashes))) if self.cache else {}
        todo = {}
        for i, h in enumerate(hashes):
            if h not in found and h not in todo:
                todo[h] = encs[i].ids
        # Longest first, so that the last task to finish is a short one.
        order = sorted(todo, key=lambda h: -len(todo[h]))
        vecs = dict(zip(order, self.pool.map(lambda h: self._encode(todo[h]), order)))
        if self.cache and vecs:
            self.cache.put_many(list(vecs.items()))
        with self.stats_lock:
            self.stats["texts"] += len(vecs)
            self.stats["cached"] += len(texts) - len(vecs)
        found.update(vecs)
        return [found[h] for h in hashes], sum(len(e.ids) for e in encs)


def parse_input(raw):
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(x, str) for x in raw):
        if len(raw) > MAX_INPUTS:
            raise ValueError(f"'input' has {len(raw)} texts; at most {MAX_INPUTS} per request")
        return raw
    raise ValueError("'input' must be a string or a non-empty array of strings (token arrays are not accepted: this model has its own tokenizer)")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    embedder = None

    def log_message(self, fmt, *args):
        pass

    def _send(self, status, obj):
        body = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status, msg, param=None):
        self._send(status, {"error": {"message": msg, "type": "invalid_request_error", "param": param, "code": None}})

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": minilm.MODEL_ID, "object": "model", "owned_by": "local"}]})
        elif self.path.rstrip("/") in ("/v1/stats", "/stats"):
            with self.embedder.stats_lock:
                s = dict(self.embedder.stats)
            s["chunks_per_second"] = round(s["texts"] / s["busy_seconds"], 2) if s["busy_seconds"] else None
            self._send(200, s)
        else:
            self._error(404, f"Invalid URL (GET {self.path})")

    def do_POST(self):
        t = time.monotonic()
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._error(404, f"Invalid URL (POST {self.path})")
            return
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            self._error(413, f"request body over {MAX_BODY} bytes")
            self.close_connection = True
            return
        try:
            req = json.loads(self.rfile.read(n))
            texts = parse_input(req.get("input"))
        except (ValueError, AttributeError) as e:
            self._error(400, str(e), "input")
            return
        dim = req.get("dimensions")
        if dim is not None and dim != minilm.DIMENSIONS:
            self._error(400, f"'dimensions' must be {minilm.DIMENSIONS} for {minilm.MODEL_ID}, got {dim}", "dimensions")
            return
        fmt = req.get("encoding_format") or "float"
        if fmt not in ("float", "base64"):
            self._error(400, f"'encoding_format' must be 'float' or 'base64', got {fmt!r}", "encoding_format")
            return
        try:
            vecs, tokens = self.embedder.embed(texts)
        except Exception as e:  # answered, so that the client sees why rather than a closed connection
            log(f"POST {self.path} failed: {e!r}")
            self._send(500, {"error": {"message": f"embedding failed: {e}", "type": "server_error", "param": None, "code": None}})
            return
        data = []
        for i, v in enumerate(vecs):
            e = base64.b64encode(v.astype("<f4").tobytes()).decode() if fmt == "base64" else v.tolist()
            data.append({"object": "embedding", "index": i, "embedding": e})
        self._send(200, {"object": "list", "model": req.get("model") or minilm.MODEL_ID, "data": data, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
        log(f"POST {self.path} {len(texts)} text(s) {time.monotonic() - t:.3f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--addr", default="127.0.0.1:0")
    ap.add_argument("--engine", choices=["onnx", "numpy"], default="onnx")
    ap.add_argument("--workers", type=int, default=2, help="texts embedded at once")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per worker (onnx)")
    ap.add_argument("--cache-dir", help="directory of embed-cache.sqlite and of the built ONNX model; none: no cache")
    ap.add_argument("--cache-mb", type=int, default=512, help="bound of the cache file")
    a = ap.parse_args()
    cache = None
    if a.cache_dir:
        os.makedirs(a.cache_dir, exist_ok=True)
        cache = Cache(os.path.join(a.cache_dir, "embed-cache.sqlite"), max(1, a.cache_mb * (1 << 20) // 1700))
    Handler.embedder = Embedder(a.engine, a.workers, a.threads, cache, a.cache_dir)
    host, port = a.addr.rsplit(":", 1)
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    print(f"http://{host}:{srv.server_address[1]}/v1", flush=True)
    log(f"listening on http://{host}:{srv.server_address[1]}/v1")
    srv.serve_forever()
    log("stopped")


if __name__ == "__main__":
    main()
