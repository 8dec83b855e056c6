"""bert.py - a Hugging Face BertModel graph as torch.onnx (TorchScript exporter, opset 17) emits it.

Eager attention as in transformers 4.3x: embeddings (word + token type + position, the position ids
sliced from a buffer by the Shape-derived sequence length) -> LayerNormalization; the extended
attention mask (1 - mask) * float32 min; per layer Q/K/V MatMul + Add(bias, .), head split through
Shape/Gather/Unsqueeze/Concat -> Reshape -> Transpose, MatMul(Q, K^T) / sqrt(head_dim) + mask,
Softmax, MatMul(V), Transpose, Reshape, output dense, residual Add, LayerNormalization, FFN with the
Erf GELU (x * (Erf(x / sqrt2) + 1)) * 0.5, residual Add, LayerNormalization. Output
last_hidden_state [batch, sequence, hidden].

Weights come from a seeded numpy Generator: embeddings N(0, 0.02) like HF's init; the projections are
scaled by 1/sqrt(fan_in) (a little more for Q and K) so attention scores have a spread of a few units
and the softmax is neither uniform nor one-hot; LayerNorm gamma ~ N(1, 0.1), beta ~ N(0, 0.05).
"""

import math

import numpy as np
from onnx import TensorProto

from graph_builder import FLOAT, INT64, GraphBuilder

LN_EPS = 1e-12
F32_MIN = float(np.finfo(np.float32).min)  # -3.4028234663852886e38, as torch.finfo(float32).min


def bert(rng, opset=17, layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_positions=512,
         type_vocab=2, token_type_ids=False):
    if opset < 17:
        raise ValueError("the BERT generator needs opset >= 17 (LayerNormalization)")
    if hidden % heads:
        raise ValueError("--hidden must be a multiple of --heads")
    head_dim = hidden // heads
    b = GraphBuilder(opset)

    def normal(shape, sd, mean=0.0):
        a = rng.standard_normal(shape, dtype=np.float32)
        a *= np.float32(sd)
        if mean:
            a += np.float32(mean)
        return a

    def linear(x, scope, pname, fan_in, fan_out, sd):
        """torch Linear exported as MatMul by the transposed weight, then Add(bias, product)."""
        w = b.initializer("onnx::MatMul", normal((fan_in, fan_out), sd))
        bias = b.initializer(pname + ".bias", normal((fan_out,), 0.1))
        y = b.node("MatMul", [x, w], scope)
        return b.node("Add", [bias, y], scope)

    def layer_norm(x, scope, pname, n, outputs=None):
        g = b.initializer(pname + ".weight", normal((n,), 0.1, 1.0))
        be = b.initializer(pname + ".bias", normal((n,), 0.05))
        return b.node("LayerNormalization", [x, g, be], scope, outputs=outputs, axis=-1, epsilon=LN_EPS)

    def dim(x, index, scope):
        """x.size(index) as the exporter writes it: Shape -> Gather(scalar index)."""
        shp = b.node("Shape", [x], scope)
        return b.node("Gather", [shp, b.const(np.int64(index), scope)], scope, axis=0)

    # ----- inputs ---------------------------------------------------------------------------------
    ids = b.add_input("input_ids", INT64, ["batch", "sequence"])
    mask = b.add_input("attention_mask", INT64, ["batch", "sequence"])
    tt = b.add_input("token_type_ids", INT64, ["batch", "sequence"]) if token_type_ids else None
    b.add_output("last_hidden_state", FLOAT, ["batch", "sequence", hidden])

    # ----- BertModel.forward: token type ids from the buffer, extended attention mask ---------------
    batch = dim(ids, 0, "")
    seq = dim(ids, 1, "")
    if tt is None:
        buf = b.initializer("embeddings.token_type_ids", np.zeros((1, max_positions), np.int64))
        sl = b.node("Slice", [buf, b.const(np.array([0], np.int64)), b.unsqueeze(seq, [0]),
                              b.const(np.array([1], np.int64)), b.const(np.array([1], np.int64))])
        shape = b.node("Concat", [b.unsqueeze(batch, [0]), b.unsqueeze(seq, [0])], axis=0)
        tt = b.node("Expand", [sl, shape])
    m = b.unsqueeze(mask, [1])
    m = b.unsqueeze(m, [2])
    m = b.node("Cast", [m], to=TensorProto.FLOAT)
    m = b.node("Sub", [b.const(np.float32(1.0)), m])
    ext_mask = b.node("Mul", [m, b.const(np.float32(F32_MIN))])

    # ----- embeddings -----------------------------------------------------------------------------
    sc = "/embeddings"
    eseq = dim(ids, 1, sc)
    pos_buf = b.initializer("embeddings.position_ids", np.arange(max_positions, dtype=np.int64)[None, :])
    pos = b.node("Slice", [pos_buf, b.const(np.array([0], np.int64), sc), b.unsqueeze(eseq, [0], sc),
                           b.const(np.array([1], np.int64), sc), b.const(np.array([1], np.int64), sc)], sc)
    wemb = b.initializer("embeddings.word_embeddings.weight", normal((vocab, hidden), 0.02))
    pemb = b.initializer("embeddings.position_embeddings.weight", normal((max_positions, hidden), 0.02))
    temb = b.initializer("embeddings.token_type_embeddings.weight", normal((type_vocab, hidden), 0.02))
    x = b.node("Gather", [wemb, ids], sc + "/word_embeddings")
    t = b.node("Gather", [temb, tt], sc + "/token_type_embeddings")
    x = b.node("Add", [x, t], sc)
    p = b.node("Gather", [pemb, pos], sc + "/position_embeddings")
    x = b.node("Add", [x, p], sc)
    h = layer_norm(x, sc + "/LayerNorm", "embeddings.LayerNorm", hidden)

    # ----- encoder ----------------------------------------------------------------------------------
    qk_sd = 1.4 / math.sqrt(hidden)
    for li in range(layers):
        lsc = "/encoder/layer.%d" % li
        pre = "encoder.layer.%d" % li
        asc = lsc + "/attention/self"

        def split_heads(t, perm):
            n0 = b.unsqueeze(dim(t, 0, asc), [0], asc)
            n1 = b.unsqueeze(dim(t, 1, asc), [0], asc)
            shape = b.node("Concat", [n0, n1, b.const(np.array([heads], np.int64), asc),
                                      b.const(np.array([head_dim], np.int64), asc)], asc, axis=0)
            r = b.node("Reshape", [t, shape], asc, allowzero=0)
            return b.node("Transpose", [r], asc, perm=perm)

        q = linear(h, asc + "/query", pre + ".attention.self.query", hidden, hidden, qk_sd)
        k = linear(h, asc + "/key", pre + ".attention.self.key", hidden, hidden, qk_sd)
        kt = split_heads(k, [0, 2, 3, 1])  # transpose_for_scores then .transpose(-1, -2), fused
        v = linear(h, asc + "/value", pre + ".attention.self.value", hidden, hidden, 1.0 / math.sqrt(hidden))
        vt = split_heads(v, [0, 2, 1, 3])
        qt = split_heads(q, [0, 2, 1, 3])
        s = b.node("MatMul", [qt, kt], asc)
        s = b.node("Div", [s, b.const(np.float32(math.sqrt(head_dim)), asc)], asc)
        s = b.node("Add", [s, ext_mask], asc)
        pr = b.node("Softmax", [s], asc, axis=-1)
        c = b.node("MatMul", [pr, vt], asc)
        c = b.node("Transpose", [c], asc, perm=[0, 2, 1, 3])
        n0 = b.unsqueeze(dim(c, 0, asc), [0], asc)
        n1 = b.unsqueeze(dim(c, 1, asc), [0], asc)
        shape = b.node("Concat", [n0, n1, b.const(np.array([hidden], np.int64), asc)], asc, axis=0)
        c = b.node("Reshape", [c, shape], asc, allowzero=0)

        osc = lsc + "/attention/output"
        o = linear(c, osc + "/dense", pre + ".attention.output.dense", hidden, hidden, 1.0 / math.sqrt(hidden))
        o = b.node("Add", [o, h], osc)
        a = layer_norm(o, osc + "/LayerNorm", pre + ".attention.output.LayerNorm", hidden)

        isc = lsc + "/intermediate"
        f = linear(a, isc + "/dense", pre + ".intermediate.dense", hidden, ffn, 1.0 / math.sqrt(hidden))
        gsc = isc + "/intermediate_act_fn"
        g = b.node("Div", [f, b.const(np.float32(math.sqrt(2.0)), gsc)], gsc)
        g = b.node("Erf", [g], gsc)
        g = b.node("Add", [g, b.const(np.float32(1.0), gsc)], gsc)
        g = b.node("Mul", [f, g], gsc)
        g = b.node("Mul", [g, b.const(np.float32(0.5), gsc)], gsc)

        osc = lsc + "/output"
        o = linear(g, osc + "/dense", pre + ".output.dense", ffn, hidden, math.sqrt(2.0 / ffn))
        o = b.node("Add", [o, a], osc)
        last = li == layers - 1
        h = layer_norm(o, osc + "/LayerNorm", pre + ".output.LayerNorm", hidden,
                       outputs=["last_hidden_state"] if last else None)
    if layers == 0:
        b.node("Identity", [h], "", outputs=["last_hidden_state"])
    return b.finish()
