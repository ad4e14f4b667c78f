"""Checks and measures the MiniLM encoders (minilm.py); exits non-zero when a check fails.

    python check.py [--engines onnx,numpy] [--chunks N] [--corpus FILE]
    python check.py --server [--chunks N] [--corpus FILE] [-- server.py arguments]

- reference: the cosine similarities sentence-transformers prints for this model in its
  semantic-search example, to 4 decimals;
- properties: a paraphrase is closer than an unrelated sentence, vectors are unit length;
- agreement: every engine against the numpy reference (cosine similarity of the outputs);
- determinism: a text gives the same bits alone, twice, and after other texts;
- throughput: chunks/s on N chunks of 1,024 characters (R2R's chunk_size) cut from FILE
  (default: Go's language specification, or this directory's sources if it is missing).

With --server it runs server.py instead and measures what R2R sees: start-up, chunks/s in
requests of 128 texts, RSS, and the same bits for a text inside the first request, alone, and
inside another request (run without a cache for that: every vector is computed); with
--cache-dir among the server's arguments, also a repeated request answered from the cache.
"""

import argparse
import os
import resource
import sys
import time

import numpy as np

import minilm

PAIRS = [
    # (anchor, paraphrase, unrelated)
    ("How do I cancel a running HTTP request?", "Aborting an in-flight web request before it finishes", "The recipe needs two cups of flour and an egg."),
    ("The database connection pool is exhausted.", "All connections in the DB pool are in use.", "My cat likes to sleep in the sun."),
    ("Set the environment variable to change the port.", "You can configure which port it listens on through an env var.", "Photosynthesis converts light into chemical energy."),
]

def check_server(chunks, server_args):
    import base64
    import json
    import subprocess
    import urllib.request

    cached = "--cache-dir" in server_args
    here = os.path.dirname(os.path.abspath(__file__))
    t = time.monotonic()
    p = subprocess.Popen([sys.executable, "-B", os.path.join(here, "server.py"), "--addr", "127.0.0.1:0"] + server_args, stdout=subprocess.PIPE)
    try:
        url = p.stdout.readline().decode().strip()
        if not url:
            print("BAD the server did not start")
            return False
        print(f"server {server_args}: answering {time.monotonic() - t:.1f} s after launch")

        def post(texts):
            body = json.dumps({"model": minilm.MODEL_ID, "input": texts, "encoding_format": "base64"}).encode()
            req = urllib.request.Request(url + "/embeddings", body, {"Content-Type": "application/json"})
            data = json.load(urllib.request.urlopen(req, timeout=3600))["data"]
            return [np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in data]

        def status(key):
            for line in open(f"/proc/{p.pid}/status"):
                if line.startswith(key):
                    return int(line.split()[1]) // 1024

        chunks = [f"{c} #{i}" for i, c in enumerate(chunks)]  # all distinct: nothing from the cache
        t = time.monotonic()
        vecs = []
        for i in range(0, len(chunks), 128):
            vecs += post(chunks[i : i + 128])
        dt = time.monotonic() - t
        print(f"server: {len(chunks) / dt:.2f} chunks/s ({len(chunks)} chunks in {dt:.1f} s); RSS {status('VmRSS')} MiB, peak {status('VmHWM')} MiB")
        alone = post([chunks[1]])[0]
        mixed = post(["another text", chunks[1]])[1]
        same = alone.tobytes() == mixed.tobytes() == vecs[1].tobytes()
        print(f"server: {'ok ' if same else 'BAD'} same bits in the first request, alone and inside another{' (from the cache)' if cached else ''}")
        if cached:
            t = time.monotonic()
            post(chunks[:128])
            print(f"server: {min(128, len(chunks))} texts again in {time.monotonic() - t:.2f} s (cache)")
        print("server: stats", urllib.request.urlopen(url + "/stats").read().decode())
        return same
    finally:
        p.terminate()
        p.wait()


def corpus_chunks(path, n, size=1024):
    text = open(path, encoding="utf-8", errors="replace").read()
    chunks = [text[i : i + size] for i in range(0, len(text) - size, size)]
    while len(chunks) < n:
        chunks += chunks
    return chunks[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default="onnx,numpy")
    ap.add_argument("--chunks", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--corpus", default="")
    ap.add_argument("--server", action="store_true", help="measure server.py instead of the encoders")
    ap.add_argument("server_args", nargs="*", help="after --: arguments for server.py")
    a = ap.parse_args()
    corpus = a.corpus
    if not corpus:
        goroot = os.popen("go env GOROOT 2>/dev/null").read().strip()
        spec = os.path.join(goroot, "doc", "go_spec.html")
        corpus = spec if os.path.exists(spec) else os.path.join(os.path.dirname(__file__), "minilm.py")
    if a.server:
        ok = check_server(corpus_chunks(corpus, a.chunks), a.server_args)
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    t = time.monotonic()
    st, tj = minilm.load_files()
    tok = minilm.load_tokenizer(tj)
    w = minilm.load_weights(st)
    print(f"load: {time.monotonic() - t:.2f} s")
    encoders = {}
    for e in a.engines.split(","):
        t = time.monotonic()
        encoders[e] = minilm.NumpyEncoder(w) if e == "numpy" else minilm.OnnxEncoder(minilm.build_onnx(w).SerializeToString(), a.threads)
        print(f"{e}: ready in {time.monotonic() - t:.2f} s")
    ok = True
    chunks = corpus_chunks(corpus, a.chunks)
    ids = [x.ids for x in tok.encode_batch(chunks)]
    print(f"corpus {corpus}: {len(chunks)} chunks, {np.mean([len(i) for i in ids]):.0f} tokens each on average")
    ref = None
    for name, enc in encoders.items():
        emb = lambda s: enc.encode_ids(tok.encode(s).ids)
        bad = minilm.self_check(emb)
        ok &= not bad
        print(f"{name}: {'BAD' if bad else 'ok '} the {len(minilm.REFERENCE)} reference similarities {bad or ''}")
        for anchor, para, other in PAIRS:
            va, vp, vo = emb(anchor), emb(para), emb(other)
            good = float(va @ vp) > float(va @ vo) + 0.2
            ok &= good
            print(f"{name}: {'ok ' if good else 'BAD'} cos(paraphrase)={va @ vp:.3f} cos(unrelated)={va @ vo:.3f}  {anchor!r}")
        alone = emb(PAIRS[0][0])
        for s in chunks[:3]:
            emb(s)
        again = emb(PAIRS[0][0])
        same = alone.tobytes() == again.tobytes() and abs(float(np.linalg.norm(alone)) - 1) < 1e-5
        ok &= same
        print(f"{name}: {'ok ' if same else 'BAD'} same bits before and after other texts, unit length")
        t, c = time.monotonic(), time.process_time()
        out = np.stack([enc.encode_ids(i) for i in ids])
        dt, dc = time.monotonic() - t, time.process_time() - c
        print(f"{name}: {len(ids) / dt:.2f} chunks/s ({len(ids)} chunks in {dt:.1f} s, {a.threads} thread(s); {1000 * dc / len(ids):.0f} ms CPU per chunk)")
        if name == "numpy":
            ref = out
        encoders[name] = out
    if ref is not None:
        for name, out in encoders.items():
            if name != "numpy":
                cos = (out * ref).sum(1)
                good = cos.min() > 0.999
                ok &= good
                print(f"{name} vs numpy: {'ok ' if good else 'BAD'} cosine min {cos.min():.6f} mean {cos.mean():.6f}")
    print(f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
