/*
 * backend_cpu.c - the CPU backend (backend.h): this machine's CPU (core/cpu.h) as the target, the tactics
 * of tactics.inc, host memory, a thread pool (core/thread_pool.h) per context as the execution handle, the steps run in order
 * on the calling thread (kernels split their work over the pool) and the monotonic clock for the tuner.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "core/thread_pool.h"

#include "backends/backend.h"
#include "backends/cpu/cpu_target.h"
#include "backends/cpu/tactics.h"
#include "backends/epilogue.h"
#include "backends/kernel.h"
#include "backends/cpu/pool_pin.h"
#include "core/cpu_budget.h"

/* tactics.inc, then the reference kernels (backends/ref/tactics.c): every op's last tactic. */
static const tc__tactic *const kCpuTactics[] = {
#define TC_TACTIC(op, name) &tc__tactic_##name,
#include "backends/cpu/tactics.inc"
#undef TC_TACTIC
#define TC_OP(op) &tc__tactic_ref_##op,
#include "core/ops.inc"
#undef TC_OP
    NULL,
};

static void add(XXH3_state_t *s, const void *p, size_t n) { XXH3_64bits_update(s, p, n); }
static void add_i64(XXH3_state_t *s, int64_t v) { add(s, &v, sizeof v); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

tc__cpu_target tc__cpu_target_of(const tc__cpu *c) {
    tc__cpu_target t;
    memset(&t, 0, sizeof t);
    memcpy(t.vendor, c->vendor, strnlen(c->vendor, sizeof t.vendor - 1));
    t.family = c->family;
    t.model = c->model;
    t.stepping = c->stepping;
    t.kernel_rev = TC__CPU_KERNEL_REV;
    t.isa = c->isa;
    memcpy(t.brand, c->brand, strnlen(c->brand, sizeof t.brand - 1));
    return t;
}

/* Copies a NUL-padded record field as printable text (at most n bytes). */
static void text_of(const char *v, size_t n, char *out) {
    size_t i = 0;
    for (; i < n && v[i] != '\0'; i++) out[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
    out[i] = '\0';
}

static tc_status read_record(const void *rec, size_t size, tc__cpu_target *t, tc__err *err) {
    if (rec == NULL || size != sizeof *t)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan CPU target record is %zu bytes, expected %zu", size,
                        sizeof *t);
    memcpy(t, rec, sizeof *t);
    if (t->reserved != 0) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan CPU target record has reserved bits set");
    return TC_STATUS_OK;
}

tc_status tc__cpu_check_target(const tc__cpu *here, const void *rec, size_t size, uint64_t required, tc__err *err) {
    tc__cpu_target t;
    tc_status st = read_record(rec, size, &t, err);
    if (st) return st;
    if (t.kernel_rev != TC__CPU_KERNEL_REV)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan written for CPU kernel revision %u, this build runs revision "
                        "%u: rebuild the plan", t.kernel_rev, TC__CPU_KERNEL_REV);
    char here_vendor[16];
    memset(here_vendor, 0, sizeof here_vendor);
    memcpy(here_vendor, here->vendor, strnlen(here->vendor, sizeof here_vendor - 1));
    bool same_cpu = memcmp(here_vendor, t.vendor, sizeof here_vendor) == 0 && t.family == here->family &&
                    t.model == here->model;
    uint64_t missing = required & ~here->isa;
    if (same_cpu && missing == 0) return TC_STATUS_OK;
    char pv[17], need[256], have[256], miss[256];
    text_of(t.vendor, sizeof t.vendor, pv);
    tc__isa_format(required, need, sizeof need);
    tc__isa_format(here->isa, have, sizeof have);
    tc__isa_format(missing, miss, sizeof miss);
    return tc__fail(err, TC_STATUS_UNSUPPORTED_HARDWARE,
                    "plan was built for %s family %u model %u with %s; this machine is %s family %u model %u with %s "
                    "(%s%s%s%s): rebuild the plan on this machine",
                    pv, t.family, t.model, need, here->vendor, here->family, here->model, have,
                    same_cpu ? "" : "a different CPU", !same_cpu && missing ? "; " : "", missing ? "missing " : "",
                    missing ? miss : "");
}

static tc_status cpu_probe(tc__err *err) {
    (void)err;
    return TC_STATUS_OK;
}

static uint64_t cpu_caps(void) { return tc__cpu_get()->isa; }
static void cpu_caps_describe(uint64_t caps, char *buf, size_t size) { tc__isa_format(caps, buf, size); }

static size_t cpu_target_record(void *rec, size_t cap) {
    tc__cpu_target t = tc__cpu_target_of(tc__cpu_get());
    if (cap < sizeof t) return 0;
    memcpy(rec, &t, sizeof t);
    return sizeof t;
}

static void cpu_target_describe(const void *rec, size_t size, char *buf, size_t cap) {
    tc__cpu_target t;
    tc__err err = {0};
    if (read_record(rec, size, &t, &err) != TC_STATUS_OK) {
        snprintf(buf, cap, "%s", err.msg);
        return;
    }
    char vendor[17], brand[65], isa[256];
    text_of(t.vendor, sizeof t.vendor, vendor);
    text_of(t.brand, sizeof t.brand, brand);
    snprintf(buf, cap, "%s family %u model %u stepping %u%s%s%s, kernel revision %u, ISA %s", vendor, t.family,
             t.model, t.stepping, brand[0] ? " (" : "", brand, brand[0] ? ")" : "", t.kernel_rev,
             tc__isa_format(t.isa, isa, sizeof isa));
}

static tc_status cpu_check_target(const void *rec, size_t size, uint64_t required, tc__err *err) {
    return tc__cpu_check_target(tc__cpu_get(), rec, size, required, err);
}

/* Blocked NCHW16c only where the AVX-512 kernels run, NCHW8c where AVX2 is the widest; without timing, not for INT8 layers on an AVX-512 CPU without
 * VNNI (Skylake-SP, or TAILCUT_MAX_ISA=avx512): its INT8 kernels, the AVX2 ones, take plain layouts only, so in
 * NCHW16c hardly a layer could be INT8. */
static uint32_t cpu_layouts(bool int8_layers, bool fixed) {
    const uint64_t isa = tc__cpu_get()->isa;
    const bool int8_plain_only = int8_layers && !(isa & TC__ISA_AVX512VNNI);
    if ((isa & TC__ISA_AVX512F) && !(fixed && int8_plain_only)) return TC__LAYOUT_PLAIN | TC__LAYOUT_NCHW16C;
    /* AVX2 without AVX-512: the NCHW8c kernels, FP32 only (the INT8 AVX2 kernels take plain layouts). */
    const uint64_t avx2 = TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA;
    if ((isa & avx2) == avx2 && !(isa & TC__ISA_AVX512F) && !int8_layers) return TC__LAYOUT_PLAIN | TC__LAYOUT_NCHW8C;
    return TC__LAYOUT_PLAIN;
}

static void *cpu_alloc(tc__mem_kind kind, size_t bytes) {
    if (kind != TC__MEM_HOST) return NULL;
    size_t sz = (bytes + 63) & ~(size_t)63;
    if (sz < bytes) return NULL;
    return aligned_alloc(64, sz ? sz : 64);
}

static void cpu_free(tc__mem_kind kind, void *p) {
    (void)kind;
    free(p);
}

static tc_status cpu_copy(void *exec, void *dst, tc__mem_kind dst_kind, const void *src, tc__mem_kind src_kind,
                          size_t n, tc__err *err) {
    (void)exec;
    if (dst_kind != TC__MEM_HOST || src_kind != TC__MEM_HOST)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the CPU backend copies host memory only");
    if (n) memmove(dst, src, n);
    return TC_STATUS_OK;
}

/* threads <= 0: the process's CPU budget (core/cpu_budget.h: affinity, cgroup quota), not the machine's CPUs. The
 * workers are pinned one per allowed CPU with TAILCUT_PIN_THREADS=1 (pool_pin.h). */
static tc_status cpu_exec_create(int threads, void **exec, tc__err *err) {
    if (threads <= 0) threads = tc__cpu_budget_get()->cpus;
    *exec = tc__pool_create((size_t)threads);
    if (*exec == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "cannot create a thread pool of %d threads", threads);
    if (threads > 1 && tc__pool_pin_wanted()) tc__pool_pin_workers((tc__pool_t)*exec);
    return TC_STATUS_OK;
}

static void cpu_exec_destroy(void *exec) {
    if (exec) tc__pool_destroy((tc__pool_t)exec);
}

static int cpu_exec_threads(void *exec) { return exec ? (int)tc__pool_get_threads_count((tc__pool_t)exec) : 1; }

static void park_noop(void *ctx, size_t i) {
    (void)ctx;
    (void)i;
}

/* The pool's workers spin for a while after each parallel call; one empty call with YIELD_WORKERS
 * puts them to sleep at once, so no core keeps burning after a run returns (servers, other contexts). */
static void park_workers(tc__pool_t pool) {
    size_t n = pool ? tc__pool_get_threads_count(pool) : 0;
    if (n > 1) tc__pool_parallelize_1d(pool, park_noop, NULL, n, TC__POOL_FLAG_YIELD_WORKERS);
}

static tc_status cpu_run(void *exec, const tc__launch *steps, int n, uint64_t *step_ns, int *failed) {
    for (int k = 0; k < n; k++) {
        const tc__launch *l = &steps[k];
        uint64_t t0 = step_ns ? now_ns() : 0;
        tc__kernel_ctx *kc = l->kc;
        if (kc->scratch) kc->scratch->used = 0;
        memset(kc->err, 0, sizeof *kc->err);
        if (l->guard != NULL && (l->guard->nbytes == 0 || l->guard->data == NULL)) {
            *failed = k;
            return tc__fail(kc->err, TC_STATUS_INTERNAL, "its If branch's run flag is empty");
        }
        if (l->guard != NULL && ((const uint8_t *)l->guard->data)[0] == 0) { /* its If branch is not taken */
            if (step_ns) step_ns[k] = 0;
            continue;
        }
        if (l->unrunnable) {
            *failed = k;
            return tc__fail(kc->err, TC_STATUS_UNSUPPORTED, "its If branch is taken, but its shapes do not infer at "
                            "these input shapes (or exceed what the profile planned)");
        }
        tc_status st = l->fn(kc);
        if (st == TC_STATUS_OK && l->post)
            st = tc__epilogue_apply(l->post, kc->out[0], l->post_bias, l->post_residual, kc->err);
        if (st != TC_STATUS_OK) {
            *failed = k;
            return st;
        }
        if (step_ns) step_ns[k] = now_ns() - t0;
    }
    park_workers((tc__pool_t)exec);
    return TC_STATUS_OK;
}

static void cpu_timer_start(void *exec, tc__backend_timer *t) {
    (void)exec;
    t->t0 = now_ns();
}

static uint64_t cpu_timer_stop(void *exec, tc__backend_timer *t) {
    (void)exec;
    return now_ns() - t->t0;
}

/* The timing cache's key: vendor, family, model, stepping, usable ISA and CPU count (the hash of earlier builds, so
 * their caches stay valid). */
static uint64_t cpu_fingerprint(void) {
    const tc__cpu *c = tc__cpu_get();
    XXH3_state_t *s = XXH3_createState();
    if (s == NULL) return 0;
    XXH3_64bits_reset(s);
    add(s, c->vendor, sizeof c->vendor);
    add_i64(s, c->family);
    add_i64(s, c->model);
    add_i64(s, c->stepping);
    add_i64(s, (int64_t)c->isa);
    add_i64(s, c->logical_cpus);
    uint64_t h = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return h;
}

const tc__backend tc__backend_cpu = {
    .id = TC__BACKEND_CPU,
    .name = "cpu",
    .tactics = kCpuTactics,
    .probe = cpu_probe,
    .caps = cpu_caps,
    .caps_describe = cpu_caps_describe,
    .target_record = cpu_target_record,
    .target_describe = cpu_target_describe,
    .fingerprint = cpu_fingerprint,
    .check_target = cpu_check_target,
    .layouts = cpu_layouts,
    .mem = TC__MEM_HOST,
    .arena_align = 64,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .exec_create = cpu_exec_create,
    .exec_destroy = cpu_exec_destroy,
    .exec_threads = cpu_exec_threads,
    .run = cpu_run,
    .timer_start = cpu_timer_start,
    .timer_stop = cpu_timer_stop,
};
