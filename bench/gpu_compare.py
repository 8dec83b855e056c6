#!/usr/bin/env python3
"""gpu_compare.py - a tailcut CUDA plan against PyTorch on the same GPU, interleaved in one process on the same
inputs: each request is end to end (host input -> H2D -> forward -> D2H -> the host sees the output), as a serving
process sees it. tailcut runs its plan through libtailcut (ctypes: tc_context_run, which stages through pinned
memory and replays one CUDA graph); PyTorch runs the same architecture (torchvision ResNet-50 or Hugging Face
BERT-base, random weights: speed only; accuracy is tests/models/run_model_tests.py's job) as a CUDA graph replayed
from pinned buffers, in FP32 and in FP16 (channels-last for CNNs), completion awaited by polling an event. Like
PyTorch's, tailcut's inputs and outputs live in pinned memory (tc_context_pinned_buffer: the context's own staging
buffers, filled once with the same inputs), so neither peer copies host memory per request; --pageable binds tailcut
to ordinary NumPy arrays instead (tc_context_run then copies them into its staging buffers on every run).

usage: gpu_compare.py PLAN --model resnet50|bert_base --tailcut-lib build/libtailcut.so
                      [--batch 1] [--seq 128] [--iterations 10000] [--warmup 200] [--json FILE] [--pageable]
                      [--inflight K [--rounds 3]] [--torch-compile MODE]

Prints per peer P50 / P99 / mean in ms and tailcut's ratios to each (above 1: tailcut slower), and, for batches,
throughput in samples/s. With --inflight K, also tailcut's throughput with K requests in flight (as trtexec overlaps
one request's transfers with another's compute, and Triton with two instances): K contexts (each its own stream) run
by K threads, alternated with sequential rounds of PyTorch's FP16 graph; medians. PyTorch with two graphs on two
streams in one process (captured by torch_peer twice) faulted with an illegal memory access on the H200 (2026-12-04,
not investigated), so its in-flight figure is not measured here.
"""
import argparse
import json
import sys
import time

import numpy as np

import compare  # this folder's ctypes binding of libtailcut
import plan_ab  # engine_inputs: the plan's inputs as seeded arrays


def torch_peer(model, arrays, dtype, channels_last, compile_mode=None):
    """A callable running one end-to-end request of a PyTorch CUDA graph of model on arrays (numpy, by name); with
    compile_mode, of torch.compile(model, mode=compile_mode) instead (its "reduce-overhead" mode replays CUDA graphs
    of its own)."""
    import torch

    dev = torch.device("cuda")
    m = model.to(dev).eval()
    if dtype == torch.float16:
        m = m.half()
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
    host_in, dev_in = {}, {}
    for name, a in arrays.items():
        t = torch.from_numpy(a)
        if t.is_floating_point():
            t = t.to(dtype)
        host_in[name] = t.pin_memory()
        d = host_in[name].to(dev)
        if channels_last and d.dim() == 4:
            d = d.contiguous(memory_format=torch.channels_last)
        dev_in[name] = d

    def forward():
        if len(dev_in) == 1:
            return m(next(iter(dev_in.values())))
        return m(**dev_in)

    def first_tensor(out):
        if isinstance(out, torch.Tensor):
            return out
        if hasattr(out, "last_hidden_state"):
            return out.last_hidden_state
        return out[0]

    if compile_mode is not None:
        return compiled_request(torch, m, host_in, dev_in, forward, first_tensor, compile_mode)
    stream = torch.cuda.Stream()
    with torch.no_grad():
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            dev_out = first_tensor(forward())
    host_out = torch.empty(dev_out.shape, dtype=dev_out.dtype, pin_memory=True)
    done = torch.cuda.Event()

    def request():
        with torch.cuda.stream(stream):
            for name, h in host_in.items():
                dev_in[name].copy_(h, non_blocking=True)
            graph.replay()
            host_out.copy_(dev_out, non_blocking=True)
            done.record(stream)
        while not done.query():
            pass
        return host_out

    return request


def compiled_request(torch, m, host_in, dev_in, forward, first_tensor, mode):
    """torch_peer's request for torch.compile (compiled and warmed up here, on the current stream)."""
    compiled = torch.compile(m, mode=mode)

    def run():
        if len(dev_in) == 1:
            return compiled(next(iter(dev_in.values())))
        return compiled(**dev_in)

    with torch.no_grad():
        for _ in range(5):
            out = first_tensor(run())
    torch.cuda.synchronize()
    host_out = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)
    done = torch.cuda.Event()

    def request():
        with torch.no_grad():
            for name, h in host_in.items():
                dev_in[name].copy_(h, non_blocking=True)
            o = first_tensor(run())
            host_out.copy_(o, non_blocking=True)
            done.record()
        while not done.query():
            pass
        return host_out

    return request


def throughput_tailcut(lib, plan, arrays, pageable, inflight, n, batch):
    """samples/s of `inflight` contexts of the plan run back to back by as many threads (ctypes releases the GIL:
    each context's H2D, graph and D2H overlap the others' on their own streams)."""
    import threading

    ctxs = []
    for _ in range(inflight):
        t = compare.Tailcut(lib)
        t.load(plan)
        t.bind(arrays)
        if not pageable:
            bind_pinned(lib, t, arrays)
        t.run()
        ctxs.append(t)
    go = threading.Barrier(inflight + 1)

    def work(t):
        go.wait()
        for _ in range(n):
            t.run()

    threads = [threading.Thread(target=work, args=(t,)) for t in ctxs]
    for th in threads:
        th.start()
    go.wait()
    t0 = time.perf_counter()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t0
    for t in ctxs:
        t.close()
    return batch * inflight * n / dt


def bind_pinned(lib, tc, arrays):
    """Binds every input and output of tc's context to its pinned staging buffer, the inputs filled with arrays."""
    c = compare.ctypes
    lib.tc_context_pinned_buffer.restype = c.c_int
    lib.tc_context_pinned_buffer.argtypes = [c.c_void_p, c.c_char_p, c.POINTER(c.c_void_p), c.POINTER(c.c_size_t)]
    names = list(arrays)
    for k in range(lib.tc_engine_num_outputs(tc.engine)):
        info = compare.TcIoInfo()
        tc._check(lib.tc_engine_output_info(tc.engine, k, c.byref(info)), "output info")
        names.append(info.name.decode())
    for name in names:
        ptr, cap = c.c_void_p(), c.c_size_t()
        tc._check(lib.tc_context_pinned_buffer(tc.ctx, name.encode(), c.byref(ptr), c.byref(cap)), f"'{name}' pinned")
        if name in arrays:
            a = np.ascontiguousarray(arrays[name])
            if a.nbytes > cap.value:
                raise compare.CompareError(f"input '{name}': {a.nbytes} bytes, pinned buffer {cap.value}")
            c.memmove(ptr.value, a.ctypes.data, a.nbytes)
            size = a.nbytes
        else:
            size = cap.value
        tc._check(lib.tc_context_set_tensor(tc.ctx, name.encode(), ptr, size), f"'{name}' bind")


def build_model(name):
    if name == "resnet50":
        import torchvision

        return torchvision.models.resnet50()
    if name == "bert_base":
        from transformers import BertConfig, BertModel

        return BertModel(BertConfig(), add_pooling_layer=False)
    raise SystemExit(f"gpu_compare: unknown model {name}")


def pct(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, int(p * len(s)))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--model", required=True, choices=("resnet50", "bert_base"))
    ap.add_argument("--tailcut-lib", required=True)
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-torch-fp32", action="store_true", help="leave out the PyTorch FP32 peer")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--pageable", action="store_true", help="bind tailcut to pageable NumPy arrays, not pinned buffers")
    ap.add_argument("--inflight", type=int, default=0,
                    help="also measure tailcut's throughput with this many requests in flight (contexts on threads), "
                         "--rounds rounds of --iterations each, alternated with sequential rounds of PyTorch's")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch-compile", metavar="MODE",
                    help="add a peer: torch.compile of the FP16 model in this mode (default, reduce-overhead, "
                         "max-autotune, ...); a compile that fails is reported and left out")
    args = ap.parse_args(argv)
    import torch

    lib = compare.load_library(args.tailcut_lib)
    tc = compare.Tailcut(lib)
    tc.load(args.plan)
    arrays = plan_ab.engine_inputs(lib, tc, args.seed)
    tc.bind(arrays)
    if not args.pageable:
        bind_pinned(lib, tc, arrays)
    batch = next(iter(arrays.values())).shape[0]
    peers = {"tailcut": tc.run}
    model = build_model(args.model)
    if not args.no_torch_fp32:
        peers["torch_fp32_graph"] = torch_peer(build_model(args.model), arrays, torch.float32, False)
    peers["torch_fp16_graph"] = torch_peer(model, arrays, torch.float16, args.model == "resnet50")
    if args.torch_compile:
        t0 = time.perf_counter()
        try:
            peers[f"torch_compile_{args.torch_compile}"] = torch_peer(
                build_model(args.model), arrays, torch.float16, args.model == "resnet50", args.torch_compile)
            print(f"torch.compile mode {args.torch_compile}: compiled in {time.perf_counter() - t0:.0f} s", flush=True)
        except Exception as e:  # noqa: BLE001 - any compiler failure: report it, measure the others
            print(f"torch.compile mode {args.torch_compile} failed after {time.perf_counter() - t0:.0f} s: "
                  f"{str(e).splitlines()[0][:300]}", flush=True)
    names = list(peers)
    for _ in range(args.warmup):
        for n in names:
            peers[n]()
    ms = {n: [] for n in names}
    for i in range(args.iterations):
        order = names[i % len(names):] + names[:i % len(names)]  # rotate who goes first
        for n in order:
            t0 = time.perf_counter_ns()
            peers[n]()
            ms[n].append((time.perf_counter_ns() - t0) / 1e6)
    tc.close()
    inflight = {}
    if args.inflight > 1:
        for r in range(args.rounds):  # a sequential round of the PyTorch FP16 graph between tailcut's rounds
            inflight.setdefault("tailcut", []).append(
                throughput_tailcut(lib, args.plan, arrays, args.pageable, args.inflight, args.iterations, batch))
            t0 = time.perf_counter()
            for _ in range(args.iterations):
                peers["torch_fp16_graph"]()
            inflight.setdefault("torch_fp16_graph (sequential)", []).append(
                batch * args.iterations / (time.perf_counter() - t0))
    gpu = torch.cuda.get_device_name(0)
    print(f"{args.model} batch {batch} on {gpu}: {args.iterations} interleaved end-to-end requests per peer after "
          f"{args.warmup} warm-up ones")
    print(f"{'peer':20s} {'P50 ms':>9s} {'P99 ms':>9s} {'mean ms':>9s} {'samples/s':>10s}")
    res = {"model": args.model, "batch": batch, "gpu": gpu, "iterations": args.iterations, "peers": {}}
    for n in names:
        v = ms[n]
        r = {"p50_ms": pct(v, 0.5), "p99_ms": pct(v, 0.99), "mean_ms": float(np.mean(v)),
             "samples_per_s": batch * 1000.0 / float(np.mean(v))}
        res["peers"][n] = r
        print(f"{n:20s} {r['p50_ms']:9.3f} {r['p99_ms']:9.3f} {r['mean_ms']:9.3f} {r['samples_per_s']:10.0f}")
    t = res["peers"]["tailcut"]
    for n in names[1:]:
        p = res["peers"][n]
        print(f"tailcut / {n}: P50 {t['p50_ms'] / p['p50_ms']:.3f}x  P99 {t['p99_ms'] / p['p99_ms']:.3f}x")
    if inflight:
        med = {n: float(np.median(v)) for n, v in inflight.items()}
        res["inflight"] = {"requests": args.inflight, "rounds": inflight, "median_samples_per_s": med}
        print(f"throughput with {args.inflight} requests in flight per peer ({args.rounds} alternated rounds of "
              f"{args.iterations} each): " + ", ".join(f"{n} {med[n]:.0f} samples/s (rounds "
                                                       f"{', '.join(f'{x:.0f}' for x in inflight[n])})" for n in med) +
              f"; tailcut / torch {med['tailcut'] / med['torch_fp16_graph (sequential)']:.3f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
