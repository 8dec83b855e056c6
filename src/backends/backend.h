/*
 * backend.h - the backend contract: what the engine asks of a backend (CPU today, CUDA next), as a
 * small vtable in the manner of ggml's ggml-backend-impl.h and ONNX Runtime's execution providers.
 * A backend is a folder under src/backends/ plus one line in backends.inc. Everything the engine,
 * the tuner and the plan need to know about a machine goes through here: nothing above
 * src/backends/ reads CPUID, creates a thread pool or calls a GPU runtime itself.
 *
 * Lifetimes: backends are immutable process-wide tables; the handles they create (exec, memory)
 * belong to whoever created them (a context, the tuner) and go back through the same backend.
 */
#ifndef TC_BACKENDS_BACKEND_H
#define TC_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/kernel.h"
#include "backends/tactic.h"

/* Target records (a plan's TARGET section, the backend's own bytes) are at most this long. */
#define TC__TARGET_RECORD_MAX 256u

/* Kinds of memory a backend hands out: plain host memory (the CPU's arena), device memory and
 * page-locked host memory for staging (a GPU backend's). */
typedef enum tc__mem_kind {
    TC__MEM_HOST = 0,
    TC__MEM_DEVICE = 1,
    TC__MEM_PINNED = 2,
} tc__mem_kind;

/* Activation layouts a build may try (tc__backend.layouts): each is tuned and the faster kept. */
enum {
    TC__LAYOUT_PLAIN = 1u << 0,   /* the model's own layout (NCHW) */
    TC__LAYOUT_NCHW16C = 1u << 1, /* the layout pass's blocked NCHW16c between blocked kernels */
    TC__LAYOUT_NCHW8C = 1u << 2,  /* the same with blocks of 8 channels (AVX2) */
};

/* A timer of the tuner: the backend's clock around a candidate's runs (the CPU's monotonic clock; a GPU
 * backend records events on its stream). */
typedef struct tc__backend_timer {
    uint64_t t0;
    void *events[2];
} tc__backend_timer;

/* One compute step as a backend's run sees it: the kernel, its arguments, and the engine's reference
 * epilogue to apply after it when the kernel does not fuse it (post != NULL; host backends only). With fn NULL it
 * is a copy of copy_bytes from copy_src to copy_dst (a device backend's input upload and output download, between
 * its pinned staging and device memory), in the same stream of work as the kernels. */
typedef struct tc__launch {
    tc__kernel_fn fn;
    tc__kernel_ctx *kc;
    const tc__epilogue *post;
    const tc__tensor *post_bias, *post_residual;
    void *copy_dst;
    const void *copy_src;
    size_t copy_bytes;
    /* A step of an If branch decided at run time (host backends only): it runs only when the first byte of guard's
     * data (a one-element bool computed by an earlier launch) is nonzero; when it would run but unrunnable is set (its
     * shapes did not infer at the current input shapes), the run fails at it. NULL: always runs. */
    const tc__tensor *guard;
    bool unrunnable;
} tc__launch;

typedef struct tc__backend {
    uint32_t id;                      /* TC__BACKEND_*: stored in plans, never renumbered */
    const char *name;                 /* "cpu": --backend, plans, inspect */
    const tc__tactic *const *tactics; /* its fast tactics, NULL-terminated, best first within an op (tactics.inc) */

    /* Whether this process can run the backend here (TC_STATUS_UNSUPPORTED_HARDWARE with a message if not). */
    tc_status (*probe)(tc__err *err);
    /* The capability bits usable here (tc__tactic.caps of the tactics it may offer), and bits in words ("avx2,fma"). */
    uint64_t (*caps)(void);
    void (*caps_describe)(uint64_t caps, char *buf, size_t size);
    /* This machine's target record into rec (at most cap bytes); returns its size. */
    size_t (*target_record)(void *rec, size_t cap);
    /* A target record (of a plan) in words: "AuthenticAMD family 26 model 2 (AMD EPYC ...): avx2,...". */
    void (*target_describe)(const void *rec, size_t size, char *buf, size_t cap);
    /* A hash of what makes timings comparable here (the timing cache's key). */
    uint64_t (*fingerprint)(void);
    /* Whether a plan built for target rec whose steps need the capability bits `required` runs here;
     * else TC_STATUS_UNSUPPORTED_HARDWARE (or TC_STATUS_CORRUPT_FILE for a malformed record) and why. */
    tc_status (*check_target)(const void *rec, size_t size, uint64_t required, tc__err *err);
    /* The layouts (TC__LAYOUT_*) a build tries for a graph (int8_layers: it has INT8 layers; fixed: no timing,
     * --tactics-fixed, where the build takes a blocked layout when one is offered, else the plain one). */
    uint32_t (*layouts)(bool int8_layers, bool fixed);

    /* The memory its kernels read and write (TC__MEM_HOST, or TC__MEM_DEVICE: then contexts keep activations and the
     * engine its weights in device memory, stage inputs and outputs through pinned buffers, and no reference kernel
     * or reference epilogue runs a compute step). */
    tc__mem_kind mem;
    /* Memory: arena_align-aligned blocks of a kind (NULL when out of memory or the kind is not the
     * backend's); free takes NULL. copy moves n bytes between kinds on exec's queue (synchronous on CPUs). */
    size_t arena_align;
    void *(*alloc)(tc__mem_kind kind, size_t bytes);
    void (*free)(tc__mem_kind kind, void *p);
    tc_status (*copy)(void *exec, void *dst, tc__mem_kind dst_kind, const void *src, tc__mem_kind src_kind,
                      size_t n, tc__err *err);

    /* An execution handle for a context or the tuner (a thread pool of `threads`, 0 = all; a stream). */
    tc_status (*exec_create)(int threads, void **exec, tc__err *err);
    void (*exec_destroy)(void *exec);
    int (*exec_threads)(void *exec);
    /* Runs n steps in order on exec (a GPU backend may capture them as one graph). step_ns: per step time,
     * or NULL. On failure *failed is the step's index and kc->err holds the kernel's message. Allocates
     * nothing, takes no lock, never logs. */
    tc_status (*run)(void *exec, const tc__launch *steps, int n, uint64_t *step_ns, int *failed);
    /* Optional: the launch list given to run on exec from now on is the one the context calls `key` (key_bytes bytes:
     * its input shapes, whole, not a hash: the same key, the same kernels and arguments); what the backend keeps of an
     * earlier run of it (a captured graph) serves again, and that of other keys may be kept for when they come back
     * (CUDA: up to 8). A backend compares keys whole; one it cannot keep (too long) it runs without keeping. */
    void (*select)(void *exec, const void *key, size_t key_bytes);

    /* The tuner's clock around runs on exec. */
    void (*timer_start)(void *exec, tc__backend_timer *t);
    uint64_t (*timer_stop)(void *exec, tc__backend_timer *t); /* ns since timer_start (UINT64_MAX: the work failed) */
    /* Optional (a GPU backend): the tuner's samples as replays of captured launches, as an engine runs them (a CUDA
     * graph), so that a tactic's host work per launch (a library's descriptors and heuristics) is not timed.
     * capture_begin starts recording the work issued on exec (false: cannot); capture_end stops it and returns a
     * replayable handle (NULL: the capture failed, nothing kept); replay enqueues it on exec (false: failed);
     * capture_free frees a handle. */
    bool (*capture_begin)(void *exec);
    void *(*capture_end)(void *exec);
    bool (*replay)(void *exec, void *captured);
    void (*capture_free)(void *captured);
} tc__backend;

/* Every backend this build has, from backends.inc: `extern const tc__backend tc__backend_<name>;`. */
#define TC_BACKEND(name, id) extern const tc__backend tc__backend_##name;
#include "backends/backends.inc"
#undef TC_BACKEND

/* The backend of an id, or NULL when this build has none of that id. */
const tc__backend *tc__backend_get(uint32_t id);
/* The backend named name ("cpu", "cuda"), probed: usable in this process. Else NULL and the reason in err
 * (an unknown name, "this build has no CUDA backend", or the probe's message). */
const tc__backend *tc__backend_find(const char *name, tc__err *err);
/* The name of a backend id, whether built in or not ("cpu", "cuda"); "unknown" otherwise. */
const char *tc__backend_name(uint32_t id);

/*
 * The tactics of backend be for op_type usable with capability bits caps, in list order (best first, the fallback
 * ones, TC__TACTIC_FALLBACK, last). Fills out[0..cap) and returns the count.
 */
int tc__tactics_for(const tc__backend *be, const char *op_type, uint64_t caps, const tc__tactic **out, int cap);
/* The first TC__TACTIC_FALLBACK tactic of be for op_type (the CPU's reference kernel), or NULL (a device backend has
 * none): what runs a step whose shapes are unknown at build, and the host's shape arithmetic. */
const tc__tactic *tc__tactic_fallback(const tc__backend *be, const char *op_type);
/* The tactic of that name on any backend's list (tactic names are unique across backends), or NULL. */
const tc__tactic *tc__tactic_named(const char *name);
/* Looks a tactic of backend be up by name (plans store names); NULL when this build has none. */
const tc__tactic *tc__tactic_find(const tc__backend *be, const char *name, const char *op_type);

#endif
