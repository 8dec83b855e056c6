/* tuner.c - times candidate tactics of one step on random inputs (see tuner.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "backends/backend.h"
#include "core/quant_attr.h"
#include "tactics/tuner.h"

#define MAX_IO 16

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Fills a tensor with seeded values in [-1, 1) (never all zero); integer tensors get small non-negative values. */
static void fill_random(tc__tensor *t, uint64_t seed) {
    int64_t n = tc__tensor_numel(t);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0;
        if (tc__dtype_is_float(t->dtype)) tc__tensor_set_f64(t, i, u * 2.0 - 1.0);
        else tc__tensor_set_i64(t, i, (int64_t)(u * 3.0));
    }
}

typedef struct bench_io {
    tc__tensor in[MAX_IO], out[MAX_IO], bias, residual;
    const tc__tensor *pin[MAX_IO];
    tc__tensor *pout[MAX_IO];
    tc__tensor *pres; /* the residual (NULL: none) */
    void *packed[MAX_IO];
} bench_io;

/* A zeroed tensor of like's dtype and dims with like's bytes when they are more than the dims need (a blocked tensor
 * whose channels are padded up to the block, core/layout.h). */
static tc_status alloc_like(tc__tensor *t, const tc__tensor *like, tc__err *err) {
    tc_status st = tc__tensor_alloc(t, like->dtype, like->rank, like->dims, err);
    if (st != TC_STATUS_OK || like->nbytes <= t->nbytes) return st;
    void *p = calloc(1, like->nbytes);
    if (p == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory allocating %zu bytes", like->nbytes);
    free(t->data);
    t->data = p;
    t->nbytes = like->nbytes;
    return TC_STATUS_OK;
}

static void io_free(bench_io *b, int n_in, int n_out) {
    for (int i = 0; i < n_in; i++) {
        if (b->packed[i] != NULL) free(b->packed[i]); /* b->in[i] only borrowed it */
        else if (b->in[i].data != NULL && b->pin[i] == &b->in[i]) tc__tensor_free(&b->in[i]);
    }
    for (int o = 0; o < n_out; o++) tc__tensor_free(&b->out[o]);
    tc__tensor_free(&b->residual);
}

/* The inputs of step d for tactic t: random non-constant inputs and residual (the same
 * values for every candidate), constant inputs packed for t (unless `packed`: d's are already), outputs allocated.
 * With `shared`, the non-constant inputs, residual and outputs are shared's (not freed with b). */
static tc_status io_setup(const tc__step_desc *d, const tc__tactic *t, bool packed, const bench_io *shared, bench_io *b,
                          tc__err *err) {
    memset(b, 0, sizeof *b);
    tc_status st = TC_STATUS_OK;
    if (shared != NULL) {
        memcpy(b->pin, shared->pin, sizeof b->pin);
        memcpy(b->pout, shared->pout, sizeof b->pout);
        b->pres = shared->pres;
    }
    for (int i = 0; i < d->n_in && st == TC_STATUS_OK; i++) {
        if (d->in[i] == NULL) {
            b->pin[i] = NULL;
            continue;
        }
        if (d->in_const[i]) {
            b->pin[i] = d->in[i];
            if (!packed && t->packs_input != NULL && t->packs_input(d, i)) {
                b->in[i] = *d->in[i];
                const size_t bytes = t->packed_bytes != NULL ? t->packed_bytes(d, i) : d->in[i]->nbytes;
                b->packed[i] = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
                if (b->packed[i] == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory tuning");
                st = t->pack(d, i, d->in[i]->data, b->packed[i], err);
                b->in[i].data = b->packed[i];
                b->in[i].nbytes = bytes; /* as the engine's packed tensor (tc__graph_add_packed) */
                b->pin[i] = &b->in[i];
            }
            continue;
        }
        if (shared != NULL) continue; /* (shared's, copied above) */
        st = alloc_like(&b->in[i], d->in[i], err);
        if (st == TC_STATUS_OK) fill_random(&b->in[i], (uint64_t)i + 1);
        b->pin[i] = &b->in[i];
    }
    if (shared != NULL) return st;
    for (int o = 0; o < d->n_out && st == TC_STATUS_OK; o++) {
        st = alloc_like(&b->out[o], d->out[o], err);
        b->pout[o] = &b->out[o];
    }
    if (st == TC_STATUS_OK && d->residual != NULL) {
        st = alloc_like(&b->residual, d->residual, err);
        if (st == TC_STATUS_OK) fill_random(&b->residual, 99);
        b->pres = &b->residual;
    }
    return st;
}

/* The kernel context that runs t on b's tensors. */
static tc__kernel_ctx io_ctx(const tc__step_desc *d, const tc__tactic *t, bench_io *b, void *pool, tc__scratch *scratch,
                             tc__err *kerr) {
    const bool fused = (t->flags & TC__TACTIC_FUSES_EPILOGUE) != 0;
    return (tc__kernel_ctx){.node_name = "tune",
                            .op_type = d->op_type,
                            .opset = d->opset,
                            .attrs = d->attrs,
                            .n_in = d->n_in,
                            .in = b->pin,
                            .n_out = d->n_out,
                            .out = b->pout,
                            .err = kerr,
                            .scratch = scratch,
                            .epi = fused ? d->epi : NULL,
                            .bias = fused ? d->bias : NULL,
                            .residual = fused ? b->pres : NULL,
                            .exec = pool};
}

/* Scratch bytes for t, as the engine sizes them (tc__step_scratch_bytes). */
static size_t scratch_for(const tc__step_desc *d, const tc__tactic *t) {
    return t->scratch_bytes != NULL ? t->scratch_bytes(d) + 4096 : 4096;
}

/* A candidate of a device backend (tc__backend.mem == TC__MEM_DEVICE) runs on device copies of its bench_io's host
 * tensors: the random inputs and residual, uploaded once by the first candidate and shared by the others (as on the
 * host), and so are its outputs and its upload of each constant input it does not pack; each candidate uploads the
 * constant inputs it packs. host_in views the same inputs in host memory: the constant ones with their (packed) data,
 * the others with data NULL (unknown before a run, as in an engine). */
typedef struct dev_io {
    tc__tensor in[MAX_IO], out[MAX_IO], residual, bias, host[MAX_IO];
    const tc__tensor *pin[MAX_IO], *phost[MAX_IO], *pbias;
    tc__tensor *pout[MAX_IO], *pres;
    bool own_in[MAX_IO], own_out[MAX_IO], own_res, own_bias; /* device memory of this candidate's, freed with it */
    void *scratch;                                             /* its device scratch */
} dev_io;

static void dev_io_free(const tc__backend *be, dev_io *v, int n_in, int n_out) {
    for (int i = 0; i < n_in; i++)
        if (v->own_in[i]) be->free(TC__MEM_DEVICE, v->in[i].data);
    for (int o = 0; o < n_out; o++)
        if (v->own_out[o]) be->free(TC__MEM_DEVICE, v->out[o].data);
    if (v->own_res) be->free(TC__MEM_DEVICE, v->residual.data);
    if (v->own_bias) be->free(TC__MEM_DEVICE, v->bias.data);
    be->free(TC__MEM_DEVICE, v->scratch);
}

/* *dst: a device tensor of src's shape (data allocated on be's device; uploaded from src unless upload is false). */
static tc_status dev_upload(const tc__backend *be, const tc__tensor *src, bool upload, tc__tensor *dst, tc__err *err) {
    *dst = *src;
    dst->data = be->alloc(TC__MEM_DEVICE, src->nbytes);
    if (dst->data == NULL)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of device memory for %zu bytes tuning", src->nbytes);
    if (!upload || src->nbytes == 0) return TC_STATUS_OK;
    return be->copy(NULL, dst->data, TC__MEM_DEVICE, src->data, TC__MEM_HOST, src->nbytes, err);
}

/* v: the device copies of b's tensors for step d (first: the first candidate's, whose shared tensors v borrows; NULL
 * when v is the first), with scratch_bytes of device scratch. */
static tc_status dev_setup(const tc__backend *be, const tc__step_desc *d, const bench_io *b, const bench_io *first_b,
                           const dev_io *first, size_t scratch_bytes, dev_io *v, tc__err *err) {
    memset(v, 0, sizeof *v);
    tc_status st = TC_STATUS_OK;
    for (int i = 0; i < d->n_in && st == TC_STATUS_OK; i++) {
        if (b->pin[i] == NULL) continue;
        v->host[i] = *b->pin[i];
        if (!d->in_const[i]) v->host[i].data = NULL;
        v->phost[i] = &v->host[i];
        /* the shared random inputs, and the first candidate's upload of a constant input neither packs */
        if (first != NULL && (!d->in_const[i] || (b->packed[i] == NULL && first_b->packed[i] == NULL))) {
            v->pin[i] = first->pin[i];
            continue;
        }
        st = dev_upload(be, b->pin[i], true, &v->in[i], err);
        v->own_in[i] = v->in[i].data != NULL;
        v->pin[i] = &v->in[i];
    }
    if (first != NULL) {
        memcpy(v->pout, first->pout, sizeof v->pout);
        v->pres = first->pres;
    }
    for (int o = 0; o < d->n_out && first == NULL && st == TC_STATUS_OK; o++) {
        if (b->pout[o] == NULL) continue;
        st = dev_upload(be, b->pout[o], false, &v->out[o], err);
        v->own_out[o] = v->out[o].data != NULL;
        v->pout[o] = &v->out[o];
    }
    if (first == NULL && b->pres != NULL && st == TC_STATUS_OK) {
        st = dev_upload(be, b->pres, true, &v->residual, err);
        v->own_res = v->residual.data != NULL;
        v->pres = &v->residual;
    }
    /* the bias: the device copy of the input it is (as in an engine, packed where the tactic packs it), else its own */
    if (d->bias != NULL && st == TC_STATUS_OK) {
        for (int i = 0; i < d->n_in && v->pbias == NULL; i++)
            if (d->in[i] == d->bias) v->pbias = v->pin[i];
        if (v->pbias == NULL) {
            st = dev_upload(be, d->bias, true, &v->bias, err);
            v->own_bias = v->bias.data != NULL;
            v->pbias = &v->bias;
        }
    }
    if (st == TC_STATUS_OK && (v->scratch = be->alloc(TC__MEM_DEVICE, scratch_bytes)) == NULL)
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of device memory for %zu bytes of scratch", scratch_bytes);
    return st;
}

/* The device memory the rotated copies of a candidate's constant inputs may take, and what is written before each
 * sample to push the previous sample's data out of the L2 (50 MiB on the H100/H200). */
#define TC__TUNE_ROT_BYTES ((size_t)256 << 20)
#define TC__TUNE_FLUSH_BYTES ((size_t)128 << 20)

/* One candidate being timed: its inputs, scratch and context, and its samples so far. Not moved once set up (the
 * context points into b). */
typedef struct cand_run {
    bench_io b;
    void *scratch_mem;
    tc__scratch scratch;
    tc__err kerr;
    tc__kernel_ctx kc;
    tc__kernel_fn fn;
    const tc__backend *be; /* whose clock times it: the tactic's backend */
    dev_io *dev;           /* a device backend's: the device copies c runs on (NULL on the host) */
    int reps;              /* launches per sample (a device backend's: chosen in the warm-up; 1 on the host) */
    void *captured;        /* a device backend's: its reps launches captured (tc__backend.capture_end), or NULL */
    tc__tensor *rot;       /* a device backend's: n_rot - 1 more device copies of its constant inputs ([copy][input]) */
    int n_rot, n_in;       /* the captured launches read copy r % n_rot (0: the inputs themselves) */
    int rot_cap;           /* copies rot has room for (its entries with data are freed with c) */
    void *flush;           /* a device backend's: TC__TUNE_FLUSH_BYTES written before each sample (shared), or NULL */
    const tc__step_desc *d;
    uint64_t *samples;
    uint64_t fastest; /* its fastest run so far, the warm-up included (for the cut-off; UINT64_MAX: none) */
    int done, slow;
    bool out; /* failed or cut off: not run again */
} cand_run;

/* Sets c up to time t on first's inputs, residual and outputs (NULL: c's own); c->out when it
 * cannot run. dev: the candidates' backend when its memory is the device's (then c runs on device copies), else NULL. */
static tc_status cand_setup(const tc__step_desc *d, const tc__tactic *t, int runs, void *pool, bool packed,
                            const tc__backend *dev, const cand_run *first, cand_run *c, tc__err *err) {
    memset(c, 0, sizeof *c);
    tc_status st = io_setup(d, t, packed, first ? &first->b : NULL, &c->b, err);
    const size_t scratch_bytes = scratch_for(d, t);
    if (st == TC_STATUS_OK && dev == NULL &&
        (c->scratch_mem = aligned_alloc(64, (scratch_bytes + 63) & ~(size_t)63)) == NULL)
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for %zu bytes of scratch", scratch_bytes);
    if (st == TC_STATUS_OK && (c->samples = calloc((size_t)runs + 1, sizeof *c->samples)) == NULL)
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (st == TC_STATUS_OK && dev != NULL && (c->dev = calloc(1, sizeof *c->dev)) == NULL)
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (st == TC_STATUS_OK && dev != NULL)
        st = dev_setup(dev, d, &c->b, first ? &first->b : NULL, first ? first->dev : NULL, scratch_bytes, c->dev, err);
    c->scratch = (tc__scratch){dev != NULL ? (c->dev ? c->dev->scratch : NULL) : c->scratch_mem, scratch_bytes, 0};
    c->kc = io_ctx(d, t, &c->b, pool, &c->scratch, &c->kerr);
    if (dev != NULL && c->dev != NULL) { /* the device copies, and the host view of the inputs */
        const bool fused = t->flags & TC__TACTIC_FUSES_EPILOGUE;
        c->kc.in = c->dev->pin;
        c->kc.out = c->dev->pout;
        c->kc.bias = fused ? c->dev->pbias : NULL;
        c->kc.residual = fused ? c->dev->pres : NULL;
        c->kc.host_in = c->dev->phost;
    }
    c->fn = t->run;
    c->d = d;
    c->be = dev != NULL ? dev : tc__backend_get(t->backend);
    if (st == TC_STATUS_OK && c->be == NULL)
        st = tc__fail(err, TC_STATUS_INTERNAL, "tactic %s: this build has no backend %u", t->name, t->backend);
    c->reps = 1;
    c->fastest = UINT64_MAX;
    c->out = st != TC_STATUS_OK;
    return st;
}

static void cand_free(const tc__step_desc *d, cand_run *c) {
    if (c->captured != NULL) c->be->capture_free(c->captured);
    for (int k = 0; c->rot != NULL && k < (c->rot_cap - 1) * c->n_in; k++)
        if (c->rot[k].data != NULL) c->be->free(TC__MEM_DEVICE, c->rot[k].data);
    free(c->rot);
    if (c->dev != NULL) dev_io_free(c->be, c->dev, d->n_in, d->n_out);
    free(c->dev);
    free(c->samples);
    free(c->scratch_mem);
    io_free(&c->b, d->n_in, d->n_out);
}

/* One run of c (a sample unless warm-up); a failure takes it out, and so does a second run slower than cutoff (once
 * could be a stall of the host). */
static void cand_run_once(cand_run *c, bool warm_up, uint64_t cutoff) {
    if (c->out) return;
    c->scratch.used = 0;
    tc__backend_timer timer;
    c->be->timer_start(c->kc.exec, &timer);
    const tc_status rs = c->fn(&c->kc);
    const uint64_t dt = c->be->timer_stop(c->kc.exec, &timer);
    if (rs != TC_STATUS_OK) {
        c->done = 0, c->fastest = UINT64_MAX, c->out = true;
        return;
    }
    if (!warm_up) c->samples[c->done++] = dt;
    if (dt < c->fastest) c->fastest = dt;
    if (dt > cutoff && ++c->slow == 2) c->out = true;
}

/* A device backend's sample: reps launches of c between two events on the stream, its time the elapsed over reps (one
 * launch alone is mostly launch latency and the events' resolution, about 0.5 us). false when a launch fails or the
 * device failed running them. */
static bool dev_sample(cand_run *c, int reps, uint64_t *dt) {
    if (c->flush != NULL) { /* (untimed; the data of the sample before leaves the L2) */
        tc__err err = {0};
        const size_t half = TC__TUNE_FLUSH_BYTES / 2;
        c->be->copy(c->kc.exec, (char *)c->flush + half, TC__MEM_DEVICE, c->flush, TC__MEM_DEVICE, half, &err);
    }
    tc__backend_timer timer;
    c->be->timer_start(c->kc.exec, &timer);
    bool ok = true;
    if (c->captured != NULL) { /* (reps is c->reps: what was captured) */
        ok = c->be->replay(c->kc.exec, c->captured);
    } else {
        for (int r = 0; r < reps && ok; r++) {
            c->scratch.used = 0;
            ok = c->fn(&c->kc) == TC_STATUS_OK;
        }
    }
    const uint64_t total = c->be->timer_stop(c->kc.exec, &timer);
    *dt = total / (uint64_t)reps;
    return ok && total != UINT64_MAX; /* (UINT64_MAX: the device failed running it) */
}

/* Up to reps copies in all of c's constant inputs on the device (c->rot: the first is the inputs themselves), as many
 * as TC__TUNE_ROT_BYTES holds: in an engine's run a step's weights come from memory, not from the L2 where its
 * previous launch left them (its activations do come from the L2: the step before just wrote them, and so they are
 * shared as they are). */
static void dev_rotation(cand_run *c, int reps) {
    const tc__step_desc *d = c->d;
    if (c->rot != NULL || reps < 2 || d == NULL || c->dev == NULL) return;
    size_t bytes = 0;
    for (int i = 0; i < d->n_in; i++)
        if (d->in_const[i] && c->dev->pin[i] != NULL) bytes += c->dev->pin[i]->nbytes;
    if (bytes == 0) return;
    int n = (int)(TC__TUNE_ROT_BYTES / bytes < (size_t)reps ? TC__TUNE_ROT_BYTES / bytes : (size_t)reps);
    if (n < 2 || (c->rot = calloc((size_t)(n - 1) * (size_t)d->n_in, sizeof *c->rot)) == NULL) return;
    c->rot_cap = n, c->n_in = d->n_in, c->n_rot = 1;
    tc__err err = {0};
    for (int k = 0; k < n - 1; k++) {
        for (int i = 0; i < d->n_in; i++) {
            const tc__tensor *src = c->dev->pin[i];
            if (!d->in_const[i] || src == NULL) continue;
            tc__tensor *t = &c->rot[k * d->n_in + i];
            *t = *src;
            t->data = c->be->alloc(TC__MEM_DEVICE, src->nbytes);
            if (t->data == NULL || c->be->copy(c->kc.exec, t->data, TC__MEM_DEVICE, src->data, TC__MEM_DEVICE,
                                               src->nbytes, &err) != TC_STATUS_OK)
                return; /* (the copies made so far rotate; this one's memory is freed with c) */
        }
        c->n_rot = k + 2;
    }
}

/* Captures reps launches of c into c->captured (the backend's graph) where the backend can, launch r reading copy
 * r % n_rot of the constant inputs; false when a launch failed (c->captured stays NULL when capturing is not
 * possible: samples are then plain launches). */
static bool dev_capture(cand_run *c, int reps) {
    if (c->captured != NULL) c->be->capture_free(c->captured);
    c->captured = NULL;
    if (c->be->capture_begin == NULL) return true;
    dev_rotation(c, reps);
    if (!c->be->capture_begin(c->kc.exec)) return true;
    bool ok = true;
    const tc__tensor *own[MAX_IO];
    memcpy(own, c->dev->pin, sizeof own);
    for (int r = 0; r < reps && ok; r++) {
        const int k = c->n_rot > 1 ? r % c->n_rot : 0;
        for (int i = 0; k > 0 && i < c->n_in; i++)
            if (c->rot[(k - 1) * c->n_in + i].data != NULL) c->dev->pin[i] = &c->rot[(k - 1) * c->n_in + i];
        c->scratch.used = 0;
        ok = c->fn(&c->kc) == TC_STATUS_OK;
        memcpy(c->dev->pin, own, sizeof own);
    }
    void *g = c->be->capture_end(c->kc.exec);
    if (!ok) {
        if (g != NULL) c->be->capture_free(g);
        return false;
    }
    c->captured = g;
    return true;
}

/* Launches per sample: enough for a sample of TC__DEV_SAMPLE_NS at one launch's time, at most TC__DEV_MAX_REPS. */
#define TC__DEV_SAMPLE_NS 20000u
#define TC__DEV_MAX_REPS 64
static int dev_reps(uint64_t one) {
    if (one >= TC__DEV_SAMPLE_NS) return 1;
    if (one == 0) return TC__DEV_MAX_REPS;
    const uint64_t r = (TC__DEV_SAMPLE_NS + one - 1) / one;
    return r > TC__DEV_MAX_REPS ? TC__DEV_MAX_REPS : (int)r;
}

/* cand_run_once on a device backend. The warm-up launches c once (the first launch loads its kernels and builds what
 * a library builds on first use), times one launch for a first count of launches per sample, then (when that is more
 * than one) that many, whose time per launch (with the launches queued back to back, as in a run) sets c->reps; a
 * sample is then c->reps launches. Where the backend captures launches (a CUDA graph, as an engine replays its run),
 * the samples are replays of captured launches: one launch is captured and replayed for the count, then c->reps of
 * them; the host's work per launch (descriptors, a library's heuristic: gone on an engine's replays) is not timed. */
static void dev_run_once(cand_run *c, bool warm_up, uint64_t cutoff) {
    if (c->out) return;
    uint64_t dt = 0;
    bool ok = true;
    if (warm_up) {
        ok = dev_sample(c, 1, &dt) && dev_sample(c, 1, &dt);
        if (ok && c->be->capture_begin != NULL) {
            ok = dev_capture(c, 1);
            if (ok && c->captured != NULL) ok = dev_sample(c, 1, &dt) && dev_sample(c, 1, &dt);
        }
        const int first = dev_reps(dt);
        if (ok && first > 1) {
            ok = dev_capture(c, first) && dev_sample(c, first, &dt);
        }
        if (ok) c->reps = dev_reps(dt);
        if (ok && c->captured != NULL) ok = dev_capture(c, c->reps);
    } else {
        ok = dev_sample(c, c->reps, &dt);
    }
    if (!ok) {
        c->done = 0, c->fastest = UINT64_MAX, c->out = true;
        return;
    }
    if (!warm_up) c->samples[c->done++] = dt;
    if (dt < c->fastest) c->fastest = dt;
    if (dt > cutoff && ++c->slow == 2) c->out = true;
}

/* c's min, median and max (UINT64_MAX when it has no sample). */
static void cand_result(cand_run *c, tc__tune_entry *e) {
    e->min_ns = e->median_ns = e->max_ns = UINT64_MAX;
    if (c->done == 0) return;
    qsort(c->samples, (size_t)c->done, sizeof *c->samples, cmp_u64);
    e->min_ns = c->samples[0];
    e->median_ns = c->samples[c->done / 2];
    e->max_ns = c->samples[c->done - 1];
}

/* Runs t once on b: *ran tells whether it succeeded. */
static tc_status run_once(const tc__step_desc *d, const tc__tactic *t, bench_io *b, void *pool, bool *ran, tc__err *err) {
    const size_t bytes = scratch_for(d, t);
    void *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (mem == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for %zu bytes of scratch", bytes);
    tc__scratch scratch = {mem, bytes, 0};
    tc__err kerr = {0};
    tc__kernel_ctx kc = io_ctx(d, t, b, pool, &scratch, &kerr);
    *ran = t->run(&kc) == TC_STATUS_OK;
    free(mem);
    return TC_STATUS_OK;
}

/* Element i of t as a float: of its float32 values, or (halves) of its bytes as BF16 values. */
static double out_value(const tc__tensor *t, size_t i, bool halves) {
    if (!halves) return ((const float *)t->data)[i];
    uint16_t h;
    memcpy(&h, (const uint8_t *)t->data + 2 * i, sizeof h);
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* True when a's float32 outputs (or BF16 halves) are within tol times b's largest magnitude of b's (NaN where b has
 * NaN); halves also allow an ulp of BF16 (a sum that rounds the other way). */
static bool outputs_close(const tc__tensor *a, const tc__tensor *b, float tol, bool halves) {
    const size_t n = a->nbytes / (halves ? 2 : 4);
    double peak = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double v = fabs(out_value(b, i, halves));
        if (v > peak && isfinite(v)) peak = v;
    }
    const double lim = (tol + (halves ? 1.0 / 128.0 : 0.0)) * peak;
    for (size_t i = 0; i < n; i++) {
        const double x = out_value(a, i, halves), y = out_value(b, i, halves);
        if (isnan(x) || isnan(y) ? !(isnan(x) && isnan(y)) : x != y && !(fabs(x - y) <= lim)) return false;
    }
    return true;
}

static tc_status proven(const tc__step_desc *d, const tc__tactic *t, bool packed, void *pool, bool *same, tc__err *err) {
    *same = true;
    if (t->proof == NULL) return TC_STATUS_OK;
    if (d->n_in > MAX_IO || d->n_out > MAX_IO) return tc__fail(err, TC_STATUS_UNSUPPORTED, "too many inputs to check");
    if (packed && (t->pack != t->proof->pack || t->packs_input != t->proof->packs_input))
        return tc__fail(err, TC_STATUS_INTERNAL, "%s and %s pack their inputs differently", t->name, t->proof->name);
    bench_io a, b;
    memset(&b, 0, sizeof b);
    bool ran_a = false, ran_b = false;
    tc_status st = io_setup(d, t, packed, NULL, &a, err);
    if (st == TC_STATUS_OK) st = io_setup(d, t->proof, packed, NULL, &b, err);
    if (st == TC_STATUS_OK) st = run_once(d, t, &a, pool, &ran_a, err);
    if (st == TC_STATUS_OK) st = run_once(d, t->proof, &b, pool, &ran_b, err);
    *same = ran_a && ran_b;
    const bool halves = d->attrs != NULL && tc__attr_has(d->attrs, TC__ATTR_HALF_OUT_IMAGE);
    for (int o = 0; o < d->n_out && *same; o++)
        *same = a.out[o].nbytes == b.out[o].nbytes &&
                (t->proof_tol > 0.0f ? outputs_close(&a.out[o], &b.out[o], t->proof_tol, halves)
                                     : memcmp(a.out[o].data, b.out[o].data, a.out[o].nbytes) == 0);
    io_free(&a, d->n_in, d->n_out);
    io_free(&b, d->n_in, d->n_out);
    return st;
}

tc_status tc__tactic_proven(const tc__step_desc *d, const tc__tactic *t, void *pool, bool *same, tc__err *err) {
    return proven(d, t, false, pool, same, err);
}

tc_status tc__tactic_proven_packed(const tc__step_desc *d, const tc__tactic *t, void *pool, bool *same, tc__err *err) {
    return proven(d, t, true, pool, same, err);
}

static tc_status tune(const tc__step_desc *d, const tc__tactic *const *cands, int n, int runs, const tc__backend *be,
                      void *pool, bool packed, tc__tune_result *out, tc__err *err) {
    memset(out, 0, sizeof *out);
    if (d->n_in > MAX_IO || d->n_out > MAX_IO) return tc__fail(err, TC_STATUS_UNSUPPORTED, "too many inputs to tune");
    out->winner = -1;
    const tc__backend *dev = be != NULL && be->mem == TC__MEM_DEVICE ? be : NULL;
    if (dev != NULL) { /* device memory: every candidate the backend's, run on its exec */
        if (pool == NULL)
            return tc__fail(err, TC_STATUS_INTERNAL, "tuning %s on the %s backend: no execution handle", d->op_type,
                            dev->name);
        for (int k = 0; k < n; k++)
            if (cands[k]->backend != dev->id)
                return tc__fail(err, TC_STATUS_INTERNAL, "tuning %s: tactic %s is not the %s backend's", d->op_type,
                                cands[k]->name, dev->name);
    }
    /* The candidates: each tactic, or each of its configurations (tactic.h; the default first) */
    const tc__tactic *ct[TC__TUNE_MAX_CANDIDATES];
    int cfg_of[TC__TUNE_MAX_CANDIDATES];
    /* (the candidates' configurations, then room for one tactic's list) */
    unsigned char *cfg = calloc(TC__TUNE_MAX_CANDIDATES + TC__TACTIC_MAX_CONFIGS, TC__TACTIC_CONFIG_MAX);
    unsigned char *some = cfg ? cfg + (size_t)TC__TUNE_MAX_CANDIDATES * TC__TACTIC_CONFIG_MAX : NULL;
    cand_run *c = calloc(TC__TUNE_MAX_CANDIDATES, sizeof *c);
    if (c == NULL || cfg == NULL) {
        free(c), free(cfg);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory tuning");
    }
    tc_status st = TC_STATUS_OK;
    int total = 0;
    for (int k = 0; k < n && total < TC__TUNE_MAX_CANDIDATES && st == TC_STATUS_OK; k++) {
        const tc__tactic *t = cands[k];
        if (t->configs == NULL || t->config_bytes == 0) {
            ct[total] = t, cfg_of[total++] = -1;
            continue;
        }
        const int m = t->config_bytes <= TC__TACTIC_CONFIG_MAX ? t->configs(d, some, TC__TACTIC_MAX_CONFIGS) : -1;
        if (m < 0)
            st = tc__fail(err, TC_STATUS_INTERNAL, "tactic %s: %u-byte configurations (at most %u)", t->name,
                          t->config_bytes, TC__TACTIC_CONFIG_MAX);
        for (int j = 0; j < m && j < TC__TACTIC_MAX_CONFIGS && total < TC__TUNE_MAX_CANDIDATES; j++) {
            memcpy(cfg + (size_t)total * TC__TACTIC_CONFIG_MAX, some + (size_t)j * t->config_bytes, t->config_bytes);
            ct[total] = t, cfg_of[total++] = j;
        }
    }
    /* (a device's: written before each sample, so that a sample does not find the one before's data in the L2) */
    void *flush = dev != NULL && dev->capture_begin != NULL ? dev->alloc(TC__MEM_DEVICE, TC__TUNE_FLUSH_BYTES) : NULL;
    int set = 0;
    for (; set < total && st == TC_STATUS_OK; set++) {
        st = cand_setup(d, ct[set], runs, pool, packed, dev, set > 0 ? &c[0] : NULL, &c[set], err);
        c[set].flush = flush;
        if (cfg_of[set] >= 0) c[set].kc.config = cfg + (size_t)set * TC__TACTIC_CONFIG_MAX;
    }
    /* Rounds of one run of each candidate (a warm-up round first), not each candidate's runs in a row: a slow spell of
     * the host (another process on a core) then slows every candidate alike, instead of all the runs of whichever it
     * fell on; it once made a build choose the single-threaded reference over a 2-thread tactic. The candidates share
     * the inputs and outputs, which are then in the caches as a step's are in an engine (with an own copy each, every
     * run found them evicted by the others': BERT's attention MatMuls chose FP32 over BF16). The cut-off: 4x the best
     * time so far of another candidate. */
    for (int r = -1; r < runs && st == TC_STATUS_OK; r++)
        for (int k = 0; k < total; k++) {
            uint64_t best = UINT64_MAX;
            for (int o = 0; o < total; o++)
                if (o != k && c[o].fastest < best) best = c[o].fastest;
            const uint64_t cutoff = best > UINT64_MAX / 4 ? UINT64_MAX : best * 4;
            if (dev != NULL) dev_run_once(&c[k], r < 0, cutoff);
            else cand_run_once(&c[k], r < 0, cutoff);
        }
    uint64_t best = UINT64_MAX;
    for (int k = set - 1; k >= 0; k--) { /* (candidate 0 last: the others borrow its tensors) */
        tc__tune_entry *e = &out->cand[k];
        snprintf(e->name, sizeof e->name, "%s", ct[k]->name);
        e->config = cfg_of[k];
        cand_result(&c[k], e);
        if (e->min_ns <= best) best = e->min_ns, out->winner = k;
        cand_free(d, &c[k]);
    }
    out->n = set;
    if (flush != NULL) dev->free(TC__MEM_DEVICE, flush);
    free(c);
    free(cfg);
    if (st != TC_STATUS_OK) return st;
    if (out->winner < 0) return tc__fail(err, TC_STATUS_INTERNAL, "no candidate of %s ran", d->op_type);
    return TC_STATUS_OK;
}

tc_status tc__tune_step(const tc__step_desc *d, const tc__tactic *const *cands, int n, int runs, const tc__backend *be,
                        void *pool, tc__tune_result *out, tc__err *err) {
    return tune(d, cands, n, runs, be, pool, false, out, err);
}

tc_status tc__tune_step_packed(const tc__step_desc *d, const tc__tactic *const *cands, int n, int runs,
                               const tc__backend *be, void *pool, tc__tune_result *out, tc__err *err) {
    for (int k = 1; k < n; k++)
        if (cands[k]->pack != cands[0]->pack || cands[k]->packs_input != cands[0]->packs_input)
            return tc__fail(err, TC_STATUS_INTERNAL, "tuning packed inputs: %s and %s pack them differently",
                            cands[0]->name, cands[k]->name);
    return tune(d, cands, n, runs, be, pool, true, out, err);
}
