/*
 * backend_cuda.c - the CUDA backend (backend.h): device 0 of this process (CUDA_VISIBLE_DEVICES selects it) as the
 * target, the tactics of tactics.inc, device memory for activations and weights, pinned host memory for staging,
 * one non-blocking stream per context as the execution handle, and the run of a step list: plain launches on the
 * first run of a launch list (one input-shape tuple of the context: select), then the whole list (uploads, kernels,
 * downloads) captured into one CUDA graph and replayed (plain launches for good if capture fails); a context keeps
 * the graphs of its last 8 shape tuples, so that a dynamic batcher's batch sizes do not capture again. Kernels that find bad input data (an index out of range) report
 * it in a device word (cuda_exec.h) that each run downloads with its outputs: the run then fails naming the step.
 * Completion is awaited by spinning on the stream (the lowest
 * latency; TAILCUT_CUDA_WAIT=yield|block trades it for CPU time).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <cuda_runtime_api.h>

#include "backends/backend.h"
#include "backends/cuda/cuda_exec.h"
#include "backends/cuda/cuda_target.h"

#ifndef TC_CUDA_MIN_CC
#define TC_CUDA_MIN_CC 90 /* (CMake defines it from TC_CUDA_ARCHITECTURES) */
#endif

#define TC_TACTIC(op, name) extern const tc__tactic tc__tactic_##name;
#include "backends/cuda/tactics.inc"
#undef TC_TACTIC

static const tc__tactic *const kCudaTactics[] = {
#define TC_TACTIC(op, name) &tc__tactic_##name,
#include "backends/cuda/tactics.inc"
#undef TC_TACTIC
    NULL,
};

/* Capability bits (tc__tactic.caps) by compute capability. */
enum { TC__CUDA_SM80 = 1u << 0, TC__CUDA_SM90 = 1u << 1 };

typedef enum wait_mode { WAIT_SPIN = 0, WAIT_YIELD = 1, WAIT_BLOCK = 2 } wait_mode;

/* The part of a context's exec that only this file sees. */
/* The captured graph of one launch list (one input-shape tuple of a context). */
/* The longest select key a slot keeps (backend.h: the context's input shapes; 28 inputs of rank 4). */
#define SELECT_KEY_MAX 1024

typedef struct graph_slot {
    unsigned char key[SELECT_KEY_MAX]; /* the context's key of the launch list (backend.h: select), compared whole */
    size_t key_len;
    cudaGraphExec_t graph; /* the captured launch list, or NULL */
    int runs;              /* runs of this launch list: 0 = warm up with plain launches, then capture */
    bool no_capture;       /* capture failed for this launch list: plain launches */
    uint64_t used;         /* when it was last selected (the least recent one is replaced) */
} graph_slot;

/* Graphs kept per context: a dynamic batcher's few batch sizes each keep theirs. */
#define GRAPH_SLOTS 8

typedef struct cuda_priv {
    graph_slot slots[GRAPH_SLOTS];
    int cur;               /* the slot of the current launch list */
    uint64_t clock;        /* selections so far */
    cudaEvent_t ev[2];     /* the tuner's timer */
    cudaEvent_t *step_ev;  /* profiling: an event after each step (grown outside run) */
    int n_step_ev;
    wait_mode wait;
    unsigned int *host_err; /* pinned: the error word as downloaded at the end of each run */
} cuda_priv;

/* The device's properties, read once. */
typedef struct device_info {
    bool ok;
    char why[400];
    struct cudaDeviceProp prop;
    int runtime, driver;
} device_info;

static device_info g_dev;
static pthread_once_t g_dev_once = PTHREAD_ONCE_INIT;

static void read_device(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        snprintf(g_dev.why, sizeof g_dev.why, "no CUDA device (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "the runtime reports none");
        cudaGetLastError();
        return;
    }
    e = cudaGetDeviceProperties(&g_dev.prop, 0);
    if (e != cudaSuccess) {
        snprintf(g_dev.why, sizeof g_dev.why, "cannot read CUDA device 0 (%s)", cudaGetErrorString(e));
        cudaGetLastError();
        return;
    }
    cudaRuntimeGetVersion(&g_dev.runtime);
    cudaDriverGetVersion(&g_dev.driver);
    if (g_dev.prop.major * 10 + g_dev.prop.minor < TC_CUDA_MIN_CC) {
        snprintf(g_dev.why, sizeof g_dev.why, "CUDA device 0 (%.96s) has compute capability %d.%d; this build's CUDA "
                 "kernels are compiled for %d.%d and newer (rebuild with -DTC_CUDA_ARCHITECTURES=\"%d%d;90\")",
                 g_dev.prop.name, g_dev.prop.major, g_dev.prop.minor, TC_CUDA_MIN_CC / 10, TC_CUDA_MIN_CC % 10,
                 g_dev.prop.major, g_dev.prop.minor);
        return;
    }
    g_dev.ok = true;
}

static const device_info *dev(void) {
    pthread_once(&g_dev_once, read_device);
    return &g_dev;
}

static tc_status cuda_probe(tc__err *err) {
    const device_info *d = dev();
    if (!d->ok) return tc__fail(err, TC_STATUS_UNSUPPORTED_HARDWARE, "%s", d->why);
    return TC_STATUS_OK;
}

static uint64_t cuda_caps(void) {
    const device_info *d = dev();
    if (!d->ok) return 0;
    int cc = d->prop.major * 10 + d->prop.minor;
    return (cc >= 80 ? TC__CUDA_SM80 : 0) | (cc >= 90 ? TC__CUDA_SM90 : 0);
}

static void cuda_caps_describe(uint64_t caps, char *buf, size_t size) {
    snprintf(buf, size, "%s%s%s", caps == 0 ? "baseline" : "", (caps & TC__CUDA_SM80) ? "sm80" : "",
             (caps & TC__CUDA_SM90) ? ",sm90" : "");
}

static tc__cuda_target target_here(void) {
    const device_info *d = dev();
    tc__cuda_target t;
    memset(&t, 0, sizeof t);
    memcpy(t.name, d->prop.name, strnlen(d->prop.name, sizeof t.name - 1));
    t.cc_major = (uint32_t)d->prop.major;
    t.cc_minor = (uint32_t)d->prop.minor;
    t.n_sm = (uint32_t)d->prop.multiProcessorCount;
    t.kernel_rev = TC__CUDA_KERNEL_REV;
    t.total_mem = (uint64_t)d->prop.totalGlobalMem;
    t.runtime_version = d->runtime;
    t.driver_version = d->driver;
    return t;
}

static size_t cuda_target_record(void *rec, size_t cap) {
    tc__cuda_target t = target_here();
    if (cap < sizeof t) return 0;
    memcpy(rec, &t, sizeof t);
    return sizeof t;
}

static tc_status read_record(const void *rec, size_t size, tc__cuda_target *t, tc__err *err) {
    if (rec == NULL || size != sizeof *t)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan CUDA target record is %zu bytes, expected %zu", size, sizeof *t);
    memcpy(t, rec, sizeof *t);
    if (t->reserved != 0 || memchr(t->name, '\0', sizeof t->name) == NULL)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan CUDA target record is malformed");
    for (size_t i = 0; t->name[i]; i++)
        if ((unsigned char)t->name[i] < 0x20 || (unsigned char)t->name[i] > 0x7e) t->name[i] = '?';
    return TC_STATUS_OK;
}

static void cuda_target_describe(const void *rec, size_t size, char *buf, size_t cap) {
    tc__cuda_target t;
    tc__err err = {0};
    if (read_record(rec, size, &t, &err) != TC_STATUS_OK) {
        snprintf(buf, cap, "%s", err.msg);
        return;
    }
    snprintf(buf, cap, "%s, compute capability %u.%u, %u SMs, %.1f GiB, CUDA runtime %d, driver %d, kernel revision %u",
             t.name, t.cc_major, t.cc_minor, t.n_sm, (double)t.total_mem / (1024.0 * 1024.0 * 1024.0),
             t.runtime_version, t.driver_version, t.kernel_rev);
}

static tc_status cuda_check_target(const void *rec, size_t size, uint64_t required, tc__err *err) {
    tc__cuda_target t;
    tc_status st = read_record(rec, size, &t, err);
    if (st) return st;
    if (t.kernel_rev != TC__CUDA_KERNEL_REV)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan written for CUDA kernel revision %u, this build runs revision "
                        "%u: rebuild the plan", t.kernel_rev, TC__CUDA_KERNEL_REV);
    st = cuda_probe(err);
    if (st) return st;
    tc__cuda_target h = target_here();
    if (h.cc_major != t.cc_major || h.cc_minor != t.cc_minor || (required & ~cuda_caps()) != 0)
        return tc__fail(err, TC_STATUS_UNSUPPORTED_HARDWARE, "plan was built for %s (compute capability %u.%u); this "
                        "device is %s (compute capability %u.%u): rebuild the plan on this device", t.name, t.cc_major,
                        t.cc_minor, h.name, h.cc_major, h.cc_minor);
    return TC_STATUS_OK;
}

/* The timing cache's key: the device model, its compute capability and SM count, and the kernel revision. */
static uint64_t cuda_fingerprint(void) {
    tc__cuda_target t = target_here();
    t.total_mem = 0, t.driver_version = 0, t.runtime_version = 0;
    return XXH3_64bits(&t, sizeof t);
}

static uint32_t cuda_layouts(bool int8_layers, bool fixed) {
    (void)int8_layers, (void)fixed;
    return TC__LAYOUT_PLAIN;
}

static void *cuda_alloc(tc__mem_kind kind, size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 256;
    switch (kind) {
    case TC__MEM_DEVICE:
        if (cudaMalloc(&p, bytes) != cudaSuccess) p = NULL, cudaGetLastError();
        return p;
    case TC__MEM_PINNED:
        if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) p = NULL, cudaGetLastError();
        return p;
    case TC__MEM_HOST: {
        size_t sz = (bytes + 255) & ~(size_t)255;
        return sz < bytes ? NULL : aligned_alloc(256, sz);
    }
    }
    return NULL;
}

static void cuda_free(tc__mem_kind kind, void *p) {
    if (p == NULL) return;
    if (kind == TC__MEM_DEVICE) cudaFree(p);
    else if (kind == TC__MEM_PINNED) cudaFreeHost(p);
    else free(p);
}

/* exec NULL: a synchronous copy (weights at load); else on exec's stream, awaited before returning. */
static tc_status cuda_copy(void *exec, void *dst, tc__mem_kind dst_kind, const void *src, tc__mem_kind src_kind,
                           size_t n, tc__err *err) {
    (void)dst_kind, (void)src_kind;
    if (n == 0) return TC_STATUS_OK;
    cudaError_t e;
    if (exec == NULL) {
        e = cudaMemcpy(dst, src, n, cudaMemcpyDefault);
    } else {
        cudaStream_t s = ((tc__cuda_exec *)exec)->stream;
        e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    }
    return tc__cuda_fail(e, err, "copying to or from the device");
}

static wait_mode wait_setting(void) {
    const char *w = getenv("TAILCUT_CUDA_WAIT");
    if (w && strcmp(w, "yield") == 0) return WAIT_YIELD;
    if (w && strcmp(w, "block") == 0) return WAIT_BLOCK;
    return WAIT_SPIN;
}

static void cuda_exec_destroy(void *exec);

static tc_status cuda_exec_create(int threads, void **out, tc__err *err) {
    (void)threads;
    *out = NULL;
    tc_status st = cuda_probe(err);
    if (st) return st;
    tc__cuda_exec *x = calloc(1, sizeof *x);
    cuda_priv *p = calloc(1, sizeof *p);
    if (x == NULL || p == NULL) {
        free(x), free(p);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    x->priv = p;
    x->device = 0;
    x->sm = dev()->prop.major * 10 + dev()->prop.minor;
    x->n_sm = dev()->prop.multiProcessorCount;
    p->wait = wait_setting();
    cudaError_t e = cudaSetDevice(0);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreate(&p->ev[0]);
    if (e == cudaSuccess) e = cudaEventCreate(&p->ev[1]);
    if (e == cudaSuccess) e = cudaMalloc((void **)&x->err_word, sizeof *x->err_word);
    if (e == cudaSuccess) e = cudaMemset(x->err_word, 0, sizeof *x->err_word);
    if (e == cudaSuccess) e = cudaHostAlloc((void **)&p->host_err, sizeof *p->host_err, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        cuda_exec_destroy(x);
        return tc__cuda_fail(e, err, "creating a CUDA stream");
    }
    *out = x;
    return TC_STATUS_OK;
}

static void drop_graph(graph_slot *g) {
    if (g->graph) cudaGraphExecDestroy(g->graph);
    *g = (graph_slot){0};
}

static void cuda_exec_destroy(void *exec) {
    tc__cuda_exec *x = exec;
    if (x == NULL) return;
    cuda_priv *p = x->priv;
    if (x->stream) cudaStreamSynchronize(x->stream);
    if (p) {
        for (int i = 0; i < GRAPH_SLOTS; i++) drop_graph(&p->slots[i]);
        if (p->ev[0]) cudaEventDestroy(p->ev[0]);
        if (p->ev[1]) cudaEventDestroy(p->ev[1]);
        for (int i = 0; i < p->n_step_ev; i++) cudaEventDestroy(p->step_ev[i]);
        free(p->step_ev);
        if (p->host_err) cudaFreeHost(p->host_err);
        free(p);
    }
    if (x->err_word) cudaFree(x->err_word);
    if (x->stream) cudaStreamDestroy(x->stream);
    free(x);
}

static int cuda_exec_threads(void *exec) {
    (void)exec;
    return 1;
}

static void cuda_select(void *exec, const void *key, size_t key_bytes) {
    tc__cuda_exec *x = exec;
    if (x == NULL) return;
    cuda_priv *p = x->priv;
    p->clock++;
    int lru = 0;
    for (int i = 0; i < GRAPH_SLOTS; i++) {
        const graph_slot *s = &p->slots[i];
        if (s->used != 0 && key_bytes <= SELECT_KEY_MAX && s->key_len == key_bytes && memcmp(s->key, key, key_bytes) == 0) {
            p->cur = i;
            p->slots[i].used = p->clock;
            return;
        }
        if (s->used < p->slots[lru].used) lru = i;
    }
    graph_slot *s = &p->slots[lru];
    drop_graph(s);
    if (key_bytes <= SELECT_KEY_MAX) {
        memcpy(s->key, key, key_bytes);
        s->key_len = key_bytes;
    } else { /* a key too long to keep: never matched again, its launch list never captured */
        s->key_len = SIZE_MAX;
        s->no_capture = true;
    }
    s->used = p->clock;
    p->cur = lru;
}

/* Waits for the stream: spinning on cudaStreamQuery (or yielding between queries, or blocking). */
static cudaError_t await(tc__cuda_exec *x) {
    cuda_priv *p = x->priv;
    if (p->wait == WAIT_BLOCK) return cudaStreamSynchronize(x->stream);
    for (;;) {
        cudaError_t e = cudaStreamQuery(x->stream);
        if (e != cudaErrorNotReady) return e;
        if (p->wait == WAIT_YIELD) sched_yield();
    }
}

/* Records a profiling event: an external record node when the stream is capturing, a plain record otherwise. */
static cudaError_t record_step_event(cudaEvent_t ev, cudaStream_t stream) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &cs) == cudaSuccess && cs == cudaStreamCaptureStatusActive)
        return cudaEventRecordWithFlags(ev, stream, cudaEventRecordExternal);
    return cudaEventRecord(ev, stream);
}

/* Issues every step on the stream; *failed and kc->err on a failure (err_code set for each). */
static tc_status issue_steps(tc__cuda_exec *x, const tc__launch *steps, int n, cudaEvent_t *after, int *failed) {
    for (int k = 0; k < n; k++) {
        const tc__launch *l = &steps[k];
        tc_status st = TC_STATUS_OK;
        x->err_code = (unsigned int)k + 1;
        if (l->fn == NULL) {
            cudaError_t e = l->copy_bytes ? cudaMemcpyAsync(l->copy_dst, l->copy_src, l->copy_bytes, cudaMemcpyDefault,
                                                            x->stream)
                                          : cudaSuccess;
            if (e != cudaSuccess) st = tc__cuda_fail(e, l->kc ? l->kc->err : NULL, "staging a copy");
        } else {
            tc__kernel_ctx *kc = l->kc;
            if (kc->scratch) kc->scratch->used = 0;
            memset(kc->err, 0, sizeof *kc->err);
            st = l->post != NULL ? tc__fail(kc->err, TC_STATUS_INTERNAL, "a CUDA step cannot take a host epilogue")
                                 : l->fn(kc);
        }
        if (st == TC_STATUS_OK && after) {
            /* under capture an external record node of the graph, else a plain record (the driver refuses the
             * external flag outside a capture) */
            cudaError_t e = record_step_event(after[k], x->stream);
            if (e != cudaSuccess) st = tc__fail(l->kc ? l->kc->err : NULL, TC_STATUS_INTERNAL,
                                                "recording a profiling event: %s", cudaGetErrorString(e));
        }
        if (st != TC_STATUS_OK) {
            *failed = k;
            return st;
        }
    }
    return TC_STATUS_OK;
}

/* Issues every step on the stream, then the download of the error word; *failed and kc->err on a failure. */
static tc_status issue(tc__cuda_exec *x, const tc__launch *steps, int n, cudaEvent_t *after, int *failed) {
    tc_status st = issue_steps(x, steps, n, after, failed);
    x->err_code = 0;
    if (st) return st;
    cuda_priv *p = x->priv;
    cudaError_t e = cudaMemcpyAsync(p->host_err, x->err_word, sizeof *p->host_err, cudaMemcpyDeviceToHost, x->stream);
    if (e == cudaSuccess) return TC_STATUS_OK;
    *failed = n - 1;
    return tc__cuda_fail(e, n > 0 && steps[n - 1].kc ? steps[n - 1].kc->err : NULL, "reading the device's error word");
}

/* After a run completed: a data error a kernel reported fails it, naming the step (the word is then cleared). */
static tc_status data_error(tc__cuda_exec *x, const tc__launch *steps, int n, int *failed) {
    cuda_priv *p = x->priv;
    const unsigned int w = *p->host_err;
    if (w == 0) return TC_STATUS_OK;
    *p->host_err = 0;
    cudaMemsetAsync(x->err_word, 0, sizeof *x->err_word, x->stream);
    cudaStreamSynchronize(x->stream);
    const int k = (int)(w & TC__CUDA_REPORT_STEP_MASK) - 1;
    *failed = k >= 0 && k < n ? k : n - 1;
    tc__err *err = steps[*failed].kc ? steps[*failed].kc->err : NULL;
    if ((w >> 24) == TC__CUDA_BAD_INDEX)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "an index is out of range for the axis it indexes (ONNX "
                        "allows [-size, size-1]); the outputs are not valid");
    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "a kernel found invalid input data (reason %u)", w >> 24);
}

/* An error of the stream after the work was issued (a kernel fault): it is sticky, nothing more runs on this device
 * in this process; say so. */
static tc_status device_fault(cudaError_t e, const tc__launch *steps, int n, int *failed) {
    *failed = n > 0 ? n - 1 : 0;
    for (int k = n - 1; k >= 0; k--)
        if (steps[k].kc && steps[k].kc->err) {
            *failed = k;
            tc__fail(steps[k].kc->err, TC_STATUS_INTERNAL, "the device failed while running the plan (the failing step "
                     "is not known; rerun with CUDA_LAUNCH_BLOCKING=1 to find it): CUDA error %d (%s): %s", (int)e,
                     cudaGetErrorName(e), cudaGetErrorString(e));
            break;
        }
    return TC_STATUS_INTERNAL;
}

/* Profiling: an event after each step, created here (outside the timed runs' hot path, on the first profiled run). */
static bool step_events(cuda_priv *p, int n) {
    if (p->n_step_ev >= n + 1) return true;
    cudaEvent_t *ev = realloc(p->step_ev, sizeof *ev * (size_t)(n + 1));
    if (ev == NULL) return false;
    p->step_ev = ev;
    while (p->n_step_ev < n + 1) {
        if (cudaEventCreate(&p->step_ev[p->n_step_ev]) != cudaSuccess) return false;
        p->n_step_ev++;
    }
    return true;
}

static tc_status cuda_run(void *exec, const tc__launch *steps, int n, uint64_t *step_ns, int *failed) {
    tc__cuda_exec *x = exec;
    cuda_priv *p = x->priv;
    *failed = -1;
    if (step_ns != NULL) {
        /* per-step GPU times: an event after each step, the run captured into a graph and replayed once (as a
         * context runs), so a step's host work at launch (a library's descriptors) does not count as its time; plain
         * launches where the capture fails */
        if (!step_events(p, n)) {
            *failed = 0;
            return steps[0].kc ? tc__fail(steps[0].kc->err, TC_STATUS_OUT_OF_MEMORY, "cannot create CUDA events")
                               : TC_STATUS_OUT_OF_MEMORY;
        }
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        /* captured only once the list has run plainly (a library's lazy set-up, cudnnCreate's allocations, cannot run
         * under capture), as a context's runs are */
        graph_slot *ps = &p->slots[p->cur];
        const bool capture = ps->runs >= 1 && !ps->no_capture &&
                             cudaStreamBeginCapture(x->stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        if (ps->runs < INT32_MAX) ps->runs++;
        record_step_event(p->step_ev[0], x->stream);
        tc_status st = issue(x, steps, n, p->step_ev + 1, failed);
        if (capture) {
            cudaError_t ce = cudaStreamEndCapture(x->stream, &g);
            if (st == TC_STATUS_OK && ce == cudaSuccess && g != NULL) ce = cudaGraphInstantiate(&ge, g, 0);
            if (g != NULL) cudaGraphDestroy(g);
            if (st != TC_STATUS_OK || ce != cudaSuccess || ge == NULL) {
                /* plain launches after all: a step that cannot be captured (its error, if real, repeats below) */
                cudaGetLastError();
                if (ge != NULL) cudaGraphExecDestroy(ge);
                ge = NULL;
                *failed = -1;
                record_step_event(p->step_ev[0], x->stream);
                st = issue(x, steps, n, p->step_ev + 1, failed);
            }
        }
        if (st) {
            if (ge != NULL) cudaGraphExecDestroy(ge);
            return st;
        }
        cudaError_t e = ge != NULL ? cudaGraphLaunch(ge, x->stream) : cudaSuccess;
        if (e == cudaSuccess) e = await(x);
        if (ge != NULL) cudaGraphExecDestroy(ge);
        if (e != cudaSuccess) return device_fault(e, steps, n, failed);
        st = data_error(x, steps, n, failed);
        if (st) return st;
        for (int k = 0; k < n; k++) {
            float ms = 0;
            cudaEventElapsedTime(&ms, p->step_ev[k], p->step_ev[k + 1]);
            step_ns[k] = (uint64_t)(ms * 1e6f);
        }
        return TC_STATUS_OK;
    }
    graph_slot *gs = &p->slots[p->cur];
    if (gs->graph == NULL && gs->runs >= 1 && !gs->no_capture) {
        /* capture the list once it has run plainly (lazy initialisation inside kernels and libraries is done) */
        cudaGraph_t g = NULL;
        cudaError_t e = cudaStreamBeginCapture(x->stream, cudaStreamCaptureModeThreadLocal);
        tc_status st = TC_STATUS_OK;
        if (e == cudaSuccess) {
            st = issue(x, steps, n, NULL, failed);
            e = cudaStreamEndCapture(x->stream, &g);
        }
        if (st != TC_STATUS_OK) {
            if (g) cudaGraphDestroy(g);
            cudaGetLastError();
            return st;
        }
        if (e == cudaSuccess && g != NULL) e = cudaGraphInstantiate(&gs->graph, g, 0);
        if (g) cudaGraphDestroy(g);
        if (e != cudaSuccess || gs->graph == NULL) {
            gs->graph = NULL;
            gs->no_capture = true;
            cudaGetLastError();
        }
    }
    if (gs->runs < INT32_MAX) gs->runs++;
    if (gs->graph != NULL) {
        cudaError_t e = cudaGraphLaunch(gs->graph, x->stream);
        if (e == cudaSuccess) e = await(x);
        if (e != cudaSuccess) return device_fault(e, steps, n, failed);
        return data_error(x, steps, n, failed);
    }
    tc_status st = issue(x, steps, n, NULL, failed);
    if (st) {
        cudaStreamSynchronize(x->stream);
        return st;
    }
    cudaError_t e = await(x);
    if (e != cudaSuccess) return device_fault(e, steps, n, failed);
    return data_error(x, steps, n, failed);
}

static void cuda_timer_start(void *exec, tc__backend_timer *t) {
    tc__cuda_exec *x = exec;
    cuda_priv *p = x->priv;
    t->events[0] = p->ev[0];
    t->events[1] = p->ev[1];
    cudaEventRecord(p->ev[0], x->stream);
}

/* UINT64_MAX when the work between the events failed (a kernel fault), rather than a time of 0 that would win. */
static uint64_t cuda_timer_stop(void *exec, tc__backend_timer *t) {
    tc__cuda_exec *x = exec;
    float ms = 0;
    cudaError_t e = cudaEventRecord((cudaEvent_t)t->events[1], x->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize((cudaEvent_t)t->events[1]);
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, (cudaEvent_t)t->events[0], (cudaEvent_t)t->events[1]);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return UINT64_MAX;
    }
    return (uint64_t)(ms * 1e6f);
}

static bool cuda_capture_begin(void *exec) {
    tc__cuda_exec *x = exec;
    return cudaStreamBeginCapture(x->stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
}

static void *cuda_capture_end(void *exec) {
    tc__cuda_exec *x = exec;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    cudaError_t e = cudaStreamEndCapture(x->stream, &g);
    if (e == cudaSuccess && g != NULL) e = cudaGraphInstantiate(&ge, g, 0);
    if (g != NULL) cudaGraphDestroy(g);
    if (e != cudaSuccess || ge == NULL) {
        cudaGetLastError();
        return NULL;
    }
    return ge;
}

static bool cuda_replay(void *exec, void *captured) {
    tc__cuda_exec *x = exec;
    return cudaGraphLaunch((cudaGraphExec_t)captured, x->stream) == cudaSuccess;
}

static void cuda_capture_free(void *captured) {
    if (captured != NULL) cudaGraphExecDestroy((cudaGraphExec_t)captured);
}

const tc__backend tc__backend_cuda = {
    .id = TC__BACKEND_CUDA,
    .name = "cuda",
    .tactics = kCudaTactics,
    .probe = cuda_probe,
    .caps = cuda_caps,
    .caps_describe = cuda_caps_describe,
    .target_record = cuda_target_record,
    .target_describe = cuda_target_describe,
    .fingerprint = cuda_fingerprint,
    .check_target = cuda_check_target,
    .layouts = cuda_layouts,
    .mem = TC__MEM_DEVICE,
    .arena_align = 256,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .exec_create = cuda_exec_create,
    .exec_destroy = cuda_exec_destroy,
    .exec_threads = cuda_exec_threads,
    .run = cuda_run,
    .select = cuda_select,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .replay = cuda_replay,
    .capture_free = cuda_capture_free,
};
