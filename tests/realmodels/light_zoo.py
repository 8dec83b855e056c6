"""light_zoo.py - run_realmodels.py's cases on the onnx package's light zoo models (onnx/backend/test/data/light).

Those files are the ONNX model zoo's classic CNNs (AlexNet, ZFNet-512 and GoogLeNet with LRN; VGG-19, ResNet-50,
Inception v2, DenseNet-121, ShuffleNet, SqueezeNet; opset 9) with every float initializer replaced by a
ConstantOfShape filled with 0.02. With such weights every class gets the same logit and a comparison proves little,
so each ConstantOfShape that makes a weight becomes a seeded random initializer of its shape, scaled by what reads it
(He-normal convolution and Gemm weights, BatchNormalization scale/bias/mean/variance and the Mul/Add scale-shift pairs
near 1 and 0, small biases): activations stay O(1) and the softmax is far from uniform.

The batch dim is then made dynamic: the input's and outputs' dim 0 become symbolic and a Reshape of activations whose
target starts with a literal 1 (the exporter's batch) gets 0 (copy the input's dim) there. Every model is built with
the profile batch 1..3 (opt 2), run at batch 1, 2 and 3 against onnxruntime on the same file (max rel 1e-3, cosine
0.9999, argmax agreement 0.99: FP32 against FP32; a Softmax's input is compared too, its output may saturate), and
batch 4 must be refused. The three largest (VGG-19,
ResNet-50, DenseNet-121: 4-20 GFLOP an image) run at batch 1 and 2 only, to keep the suite short.
"""

import importlib.util
import os

import numpy as np

MODELS = ["bvlc_alexnet", "zfnet512", "inception_v1", "inception_v2", "squeezenet", "shufflenet", "resnet50",
          "densenet121", "vgg19"]
HEAVY = {"vgg19", "resnet50", "densenet121"}


def _light_dir(rm):
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise rm.Skip("the onnx package is not installed")
    d = os.path.join(list(spec.submodule_search_locations)[0], "backend", "test", "data", "light")
    if not os.path.isdir(d):
        raise rm.Skip(f"{d} is missing from this onnx version")
    return d


def _readers(graph):
    out = {}
    for n in graph.node:
        for i, name in enumerate(n.input):
            out.setdefault(name, []).append((n, i))
    return out


def _role(readers, name, depth=0):
    """(op, input index, node) of the first reader of name that is not a Unsqueeze/Reshape in between."""
    for node, i in readers.get(name, []):
        if node.op_type in ("Unsqueeze", "Reshape") and i == 0 and depth < 4:
            return _role(readers, node.output[0], depth + 1)
        return node.op_type, i, node
    return None, None, None


def _uniform(rng, lo, hi, shape):
    return (rng.random(shape, dtype=np.float32) * np.float32(hi - lo) + np.float32(lo)).astype(np.float32)


def _random_weights(rm, m, seed):
    """Replaces every ConstantOfShape whose shape is an initializer by a seeded random initializer (see the top)."""
    from onnx import numpy_helper

    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in g.initializer}
    readers = _readers(g)
    keep, replaced = [], 0
    for n in g.node:
        if n.op_type != "ConstantOfShape" or n.input[0] not in inits:
            keep.append(n)
            continue
        shape = [int(v) for v in numpy_helper.to_array(inits[n.input[0]])]
        op, idx, reader = _role(readers, n.output[0])
        if (op == "Conv" and idx == 1) or (op == "Gemm" and idx == 1):
            trans_b = op == "Gemm" and any(a.name == "transB" and a.i for a in reader.attribute)
            fan_in = int(np.prod(shape[1:])) if (op == "Conv" or trans_b) else shape[0]
            w = rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))
        elif op == "BatchNormalization" and idx in (1, 4):
            w = _uniform(rng, 0.8, 1.3, shape)  # scale, variance
        elif op == "Mul":
            w = _uniform(rng, 0.8, 1.2, shape)
        elif op in ("BatchNormalization", "Add", "Sum", "Conv", "Gemm"):
            w = _uniform(rng, -0.1, 0.1, shape)  # shifts, means, biases
        else:
            raise rm.Failure(f"ConstantOfShape {n.output[0]} feeds {op} input {idx}: no rule for its values")
        g.initializer.append(numpy_helper.from_array(w, n.output[0]))
        replaced += 1
    del g.node[:]
    g.node.extend(keep)
    used = {x for nd in g.node for x in nd.input}
    for name in [i.name for i in g.initializer if i.name not in used]:
        g.initializer.remove(inits[name])
    # IR 3 lists every initializer among the graph inputs; from IR 4 on they are constants that need not be.
    m.ir_version = max(m.ir_version, 4)
    names = {i.name for i in g.initializer}
    kept = [v for v in g.input if v.name not in names and v.name not in inits]
    del g.input[:]
    g.input.extend(kept)
    return replaced


def _dynamic_batch(m):
    """Input and outputs' dim 0 -> 'N'; Reshape targets of activations [1, ...] -> [0, ...]. Returns the count."""
    from onnx import numpy_helper

    g = m.graph
    inits = {i.name: i for i in g.initializer}
    consts = set(inits)
    for n in g.node:  # values computed from constants only (a weight's Reshape) keep their literal dims
        if n.input and all(x in consts for x in n.input if x):
            consts.update(n.output)
    changed = 0
    for n in g.node:
        if n.op_type == "Reshape" and n.input[0] not in consts and n.input[1] in inits:
            t = numpy_helper.to_array(inits[n.input[1]]).copy()
            if t.size and t[0] == 1:
                t[0] = 0
                inits[n.input[1]].CopyFrom(numpy_helper.from_array(t, n.input[1]))
                changed += 1
    for v in list(g.input[:1]) + list(g.output):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    del g.value_info[:]
    return changed


def _expose_logits(m):
    """A Softmax's probabilities can saturate to one-hot, which hides an error in the logits: the input of every
    Softmax that makes a graph output becomes an output too. Returns how many."""
    from onnx import TensorProto, helper

    g = m.graph
    outs = {o.name for o in g.output}
    added = 0
    for n in g.node:
        if n.op_type == "Softmax" and n.output[0] in outs and n.input[0] not in outs:
            g.output.append(helper.make_tensor_value_info(n.input[0], TensorProto.FLOAT, None))
            added += 1
    return added


def case_light(rm, lib, threads, work, name):
    import onnx

    src = os.path.join(_light_dir(rm), f"light_{name}.onnx")
    if not os.path.isfile(src):
        raise rm.Skip(f"{src} is missing")
    m = onnx.load(src)
    n_w = _random_weights(rm, m, seed=sum(map(ord, name)))
    n_r = _dynamic_batch(m)
    n_l = _expose_logits(m)
    path = os.path.join(work, f"light_{name}.onnx")
    onnx.save(m, path)
    inp = m.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim][1:]
    print(f"    {n_w} weights randomised, {n_r} Reshape target(s) given a copied batch dim, {n_l} logits exposed")
    sess = rm.ort_session(path, threads)
    eng = rm.Engine(lib)
    try:
        eng.build_profile(path, {inp.name: ([1, *shape], [2, *shape], [3, *shape])}, threads,
                          os.path.join(work, f"light_{name}.plan"))
        rng = np.random.default_rng(70)
        for b in (1, 2) if name in HEAVY else (1, 2, 3):
            x = rng.standard_normal((b, *shape)).astype(np.float32)
            ref = sess.run(None, {inp.name: x})
            got = eng.infer({inp.name: x})
            for o, r in zip(sess.get_outputs(), ref):
                if float(np.max(r) - np.min(r)) < 1e-3 * max(1.0, float(np.max(np.abs(r)))):
                    raise rm.Failure(f"{o.name}: onnxruntime's output is flat; the weights did not take")
                rm.check(f"batch {b}: {o.name[:28]}", r, got[o.name])
        rm.expect_refusal(eng, {inp.name: np.ones((4, *shape), np.float32)}, [f"'{inp.name}'", "outside the profile"])
    finally:
        eng.close()


def cases(rm):
    """The (name, fn(lib, threads, work)) pairs for run_realmodels.py; rm is that module (its helpers)."""
    return [(f"light_{n}", (lambda n: lambda lib, t, w: case_light(rm, lib, t, w, n))(n)) for n in MODELS]
