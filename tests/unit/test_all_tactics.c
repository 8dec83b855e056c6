/*
 * test_all_tactics.c - one harness for every FP32 tactic of the CPU backend's list (backends/cpu/tactics.inc), in the
 * manner of ggml's test-backend-ops: for each op on the list, random cases (shapes with edge sizes 1, 15-17, 31-33,
 * broadcasts, attributes, constant or computed operands; QuantizeLinear / DequantizeLinear with int8 and uint8 codes,
 * MatMulInteger's int32 products)
 * are run by the reference kernel, then by every tactic of that
 * op that this CPU runs and that supports the case (its weights packed as a build packs them, outputs poisoned with
 * NaN first); outputs must match the reference within a per-op bound, NaN never passing for a finite reference. Each
 * such tactic must have run at least one case: a tactic the generators never reach fails the test, so a new tactic
 * on the list needs a case here. The INT8 / FP16 / BF16 tactics (which need the precision passes' attributes) and the
 * NCHW16c ones (which need the layout pass's) have their own tests.
 *
 * In a build with the CUDA backend, on a machine with a device (tests/gpu/run.sh), every case also runs every CUDA
 * tactic that supports it: inputs uploaded, outputs poisoned with NaN on the device, constant inputs also given in
 * host memory (host_in), the stream awaited, the output downloaded and held to the same bound; each CUDA tactic must
 * run a case too. Without a device the CUDA half says so and is skipped.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "core/cpu.h"
#include "elem_test_util.h"

#define MAX_CASE_IN 8
#define MAX_CASE_OUT 3

/* One generated case: an op, its attributes and inputs (which are constant), and its reference outputs. */
typedef struct tcase {
    const char *op;
    int64_t opset;
    tc__attr attrs[6];
    int n_attrs;
    int n_in;
    tc__tensor in[MAX_CASE_IN];
    bool present[MAX_CASE_IN];
    bool is_const[MAX_CASE_IN];
    double tol; /* relative to the reference's largest magnitude */
    int n_out;  /* outputs checked (0: 1; the CUDA half checks output 0) */
} tcase;

static etu_rng rng = {0x9E3779B97F4A7C15ull};
static int runs[512];          /* per tactic of the list: cases it ran */
static const tc__tactic *list[512];
static int n_list;
static const tc__backend *gpu; /* the CUDA backend when built and a device is here, else NULL */
static int gpu_runs[512];
static const tc__tactic *gpu_list[512];
static int n_gpu_list;

static int64_t pick(const int64_t *v, int n) { return v[etu_int(&rng, 0, n - 1, false)]; }
static const int64_t kEdge[] = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33};

static void add_in(tcase *c, tc__tensor t, bool is_const) {
    c->in[c->n_in] = t;
    c->present[c->n_in] = true;
    c->is_const[c->n_in++] = is_const;
}

static tc__tensor rand_t(int32_t rank, const int64_t *dims, double lo, double hi) {
    return etu_random(&rng, TC_DTYPE_FLOAT32, rank, dims, lo, hi);
}

/* A packed copy of constant input i for tactic t (as engine_tactics.c's pack_input), or the input itself. */
static bool pack_for(const tc__tactic *t, const tc__step_desc *d, int i, tc__tensor *out) {
    if (!d->in_const[i] || t->packs_input == NULL || !t->packs_input(d, i)) return false;
    const tc__tensor *src = d->in[i];
    const size_t bytes = t->packed_bytes ? t->packed_bytes(d, i) : src->nbytes;
    assert_true(bytes > 0 && bytes <= src->nbytes);
    *out = *src;
    out->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    out->nbytes = bytes;
    tc__err err = {0};
    if (t->pack(d, i, src->data, out->data, &err) != TC_STATUS_OK) fail_msg("%s: pack %d: %s", t->name, i, err.msg);
    return true;
}

/* got against want: the same bytes for non-float outputs; floats within lim, NaN only where the reference has one. */
static void check_output(const char *tactic, const char *op, const tc__tensor *got, const tc__tensor *want, double lim) {
    const int64_t n = tc__tensor_numel(want);
    if (want->dtype != TC_DTYPE_FLOAT32) {
        if (memcmp(got->data, want->data, want->nbytes) != 0) fail_msg("%s: %s output bytes differ", tactic, op);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const double g = ((const float *)got->data)[i], w = ((const float *)want->data)[i];
        const bool ok = isnan(w) ? isnan(g) : (!isnan(g) && fabs(g - w) <= lim);
        if (!ok)
            fail_msg("%s: %s output[%lld] = %g, reference %g (bound %g; output %lld elements, rank %d)", tactic, op,
                     (long long)i, g, w, lim, (long long)n, (int)want->rank);
    }
}

/* Device memory holding a copy of t's bytes (at least one byte). */
static void *to_device(const void *data, size_t n) {
    void *p = gpu->alloc(TC__MEM_DEVICE, n ? n : 1);
    assert_non_null(p);
    tc__err err = {0};
    if (n && gpu->copy(NULL, p, TC__MEM_DEVICE, data, TC__MEM_HOST, n, &err) != TC_STATUS_OK) fail_msg("%s", err.msg);
    return p;
}


/* Every CUDA tactic that supports case d, against the reference's output want. */
static void run_case_gpu(const tcase *c, const tc__step_desc *d, const tc__tensor *const *pin, const tc__tensor *want,
                         double lim) {
    const tc__epilogue none = tc__epilogue_none();
    for (int k = 0; k < n_gpu_list; k++) {
        const tc__tactic *t = gpu_list[k];
        if (strcmp(t->op_type, c->op) != 0 || (t->caps & ~gpu->caps()) != 0 || !t->supports(d)) continue;
        tc__tensor packed[MAX_CASE_IN], dev[MAX_CASE_IN], host[MAX_CASE_IN];
        const tc__tensor *rin[MAX_CASE_IN], *hin[MAX_CASE_IN];
        bool own[MAX_CASE_IN] = {false};
        for (int i = 0; i < c->n_in; i++) {
            rin[i] = hin[i] = NULL;
            if (!c->present[i]) continue;
            own[i] = pack_for(t, d, i, &packed[i]);
            const tc__tensor *src = own[i] ? &packed[i] : pin[i];
            dev[i] = *src;
            dev[i].data = to_device(src->data, src->nbytes);
            host[i] = *src;
            if (!c->is_const[i]) host[i].data = NULL;
            rin[i] = &dev[i];
            hin[i] = &host[i];
        }
        tc__tensor got = etu_tensor(want->dtype, want->rank, want->dims);
        memset(got.data, 0xff, got.nbytes); /* NaN poison on the device: every element must be written */
        tc__tensor dout = got;
        dout.data = to_device(got.data, got.nbytes);
        tc__tensor *pout[1] = {&dout};
        const size_t scratch_bytes = t->scratch_bytes ? t->scratch_bytes(d) + 4096 : 4096;
        tc__scratch scratch = {gpu->alloc(TC__MEM_DEVICE, scratch_bytes), scratch_bytes, 0};
        void *exec = NULL;
        tc__err err = {0};
        if (gpu->exec_create(0, &exec, &err) != TC_STATUS_OK) fail_msg("%s", err.msg);
        tc__kernel_ctx kc = {.node_name = "case", .op_type = c->op, .opset = c->opset, .attrs = d->attrs, .n_in = c->n_in,
                             .in = rin, .n_out = 1, .out = pout, .err = &err, .scratch = &scratch,
                             .epi = (t->flags & TC__TACTIC_FUSES_EPILOGUE) ? &none : NULL, .exec = exec, .host_in = hin};
        /* no configuration, then each one the tactic offers for the case (what the tuner may choose) */
        static unsigned char cfg[TC__TACTIC_MAX_CONFIGS * TC__TACTIC_CONFIG_MAX];
        const int n_cfg = t->configs != NULL && t->config_bytes > 0 ? t->configs(d, cfg, TC__TACTIC_MAX_CONFIGS) : 0;
        for (int j = -1; j < n_cfg; j++) {
            kc.config = j < 0 ? NULL : cfg + (size_t)j * t->config_bytes;
            if (j >= 0 && !t->check_config(kc.config, &err)) fail_msg("%s: configuration %d refused: %s", t->name, j, err.msg);
            memset(got.data, 0xff, got.nbytes);
            if (gpu->copy(exec, dout.data, TC__MEM_DEVICE, got.data, TC__MEM_HOST, got.nbytes, &err) != TC_STATUS_OK)
                fail_msg("%s", err.msg);
            if (t->run(&kc) != TC_STATUS_OK)
                fail_msg("%s (configuration %d) on a %s case it supports: %s", t->name, j, c->op, err.msg);
            /* a copy on the stream awaits the kernel and reports its faults */
            if (gpu->copy(exec, got.data, TC__MEM_HOST, dout.data, TC__MEM_DEVICE, got.nbytes, &err) != TC_STATUS_OK)
                fail_msg("%s on a %s case: %s", t->name, c->op, err.msg);
            char label[160];
            snprintf(label, sizeof label, j < 0 ? "%s" : "%s#%d", t->name, j);
            check_output(label, c->op, &got, want, lim);
        }
        gpu_runs[k]++;
        gpu->exec_destroy(exec);
        gpu->free(TC__MEM_DEVICE, scratch.base);
        gpu->free(TC__MEM_DEVICE, dout.data);
        tc__tensor_free(&got);
        for (int i = 0; i < c->n_in; i++) {
            if (c->present[i]) gpu->free(TC__MEM_DEVICE, dev[i].data);
            if (own[i]) free(packed[i].data);
        }
    }
}

static void run_case(tcase *c) {
    const tc__op_schema *sch = tc__op_schema_find(strncmp(c->op, "Tc", 2) == 0 ? TC__DOMAIN_INTERNAL : "", c->op);
    assert_non_null(sch);
    const etu_op op = {c->op, sch->infer, tc__ref_find(c->op)};
    const tc__tensor *pin[MAX_CASE_IN];
    for (int i = 0; i < c->n_in; i++) pin[i] = c->present[i] ? &c->in[i] : NULL;
    const int n_out = c->n_out > 0 ? c->n_out : 1;
    tc__tensor want[MAX_CASE_OUT];
    etu_run_ok(op, c->opset, c->attrs, c->n_attrs, c->n_in, pin, n_out, want);
    double peak = 0;
    for (int o = 0; o < n_out; o++) {
        const bool is_float = want[o].dtype == TC_DTYPE_FLOAT32;
        const int64_t n = tc__tensor_numel(&want[o]);
        for (int64_t i = 0; is_float && i < n; i++) peak = fmax(peak, fabs(((const float *)want[o].data)[i]));
    }
    const tc__epilogue none = tc__epilogue_none();
    const tc__attrs as = {c->n_attrs, c->attrs};
    const tc__tensor *dout[MAX_CASE_OUT];
    for (int o = 0; o < n_out; o++) dout[o] = &want[o];
    tc__step_desc d = {.op_type = c->op, .opset = c->opset, .attrs = &as, .n_in = c->n_in, .in = pin,
                       .in_const = c->is_const, .n_out = n_out, .out = dout, .epi = &none};
    const uint64_t isa = tc__cpu_get()->isa;
    for (int k = 0; k < n_list; k++) {
        const tc__tactic *t = list[k];
        /* (the fallback tactics are the reference kernels themselves) */
        if (strcmp(t->op_type, c->op) != 0 || (t->caps & ~isa) != 0 || (t->flags & TC__TACTIC_FALLBACK) ||
            !t->supports(&d))
            continue;
        tc__tensor packed[MAX_CASE_IN];
        const tc__tensor *rin[MAX_CASE_IN];
        bool own[MAX_CASE_IN] = {false};
        for (int i = 0; i < c->n_in; i++) {
            own[i] = c->present[i] && pack_for(t, &d, i, &packed[i]);
            rin[i] = own[i] ? &packed[i] : pin[i];
        }
        tc__tensor got[MAX_CASE_OUT];
        tc__tensor *pout[MAX_CASE_OUT];
        for (int o = 0; o < n_out; o++) {
            got[o] = etu_tensor(want[o].dtype, want[o].rank, want[o].dims);
            memset(got[o].data, 0xff, got[o].nbytes); /* NaN poison: every element must be written */
            pout[o] = &got[o];
        }
        const size_t scratch_bytes = t->scratch_bytes ? t->scratch_bytes(&d) + 4096 : 4096;
        tc__scratch scratch = {aligned_alloc(64, (scratch_bytes + 63) / 64 * 64), scratch_bytes, 0};
        tc__err err = {0};
        tc__kernel_ctx kc = {.node_name = "case", .op_type = c->op, .opset = c->opset, .attrs = &as, .n_in = c->n_in,
                             .in = rin, .n_out = n_out, .out = pout, .err = &err, .scratch = &scratch,
                             .epi = (t->flags & TC__TACTIC_FUSES_EPILOGUE) ? &none : NULL};
        if (t->run(&kc) != TC_STATUS_OK) fail_msg("%s on a %s case it supports: %s", t->name, c->op, err.msg);
        for (int o = 0; o < n_out; o++) check_output(t->name, c->op, &got[o], &want[o], c->tol * fmax(peak, 1e-6));
        runs[k]++;
        free(scratch.base);
        for (int o = 0; o < n_out; o++) tc__tensor_free(&got[o]);
        for (int i = 0; i < c->n_in; i++)
            if (own[i]) free(packed[i].data);
    }
    if (gpu) run_case_gpu(c, &d, pin, &want[0], c->tol * fmax(peak, 1e-6));
    for (int o = 0; o < n_out; o++) tc__tensor_free(&want[o]);
    for (int i = 0; i < c->n_in; i++)
        if (c->present[i]) tc__tensor_free(&c->in[i]);
}

/* Shapes: rank 1-4, dims from the edge sizes, at most ~20k elements. */
static int32_t rand_shape(int64_t *dims) {
    int32_t rank = (int32_t)etu_int(&rng, 1, 4, false);
    int64_t numel = 1;
    for (int32_t d = 0; d < rank; d++) {
        dims[d] = numel > 2000 ? 1 : pick(kEdge, 10);
        numel *= dims[d];
    }
    return rank;
}

static void unary_cases(void) {
    static const char *const ops[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "HardSwish", "HardSigmoid",
                                      "LeakyRelu", "Clip"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int r = 0; r < 6; r++) {
            tcase c = {.op = ops[o], .opset = strcmp(ops[o], "Gelu") == 0 ? 20 : 13, .tol = 2e-5};
            int64_t dims[4];
            int32_t rank = rand_shape(dims);
            add_in(&c, rand_t(rank, dims, -6, 6), false);
            if (strcmp(ops[o], "LeakyRelu") == 0) c.attrs[c.n_attrs++] = etu_attr_float("alpha", 0.07f);
            if (strcmp(ops[o], "Clip") == 0) {
                add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, -1.5), true);
                add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, 2.25), true);
            }
            run_case(&c);
        }
}

static void binary_cases(void) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    for (size_t o = 0; o < 4; o++)
        for (int r = 0; r < 10; r++) {
            tcase c = {.op = ops[o], .opset = 14, .tol = 1e-6};
            int64_t a[4], b[4];
            int32_t rank = rand_shape(a), brank = rank;
            memcpy(b, a, sizeof a);
            switch (r % 4) { /* same shape, a scalar, the last dim, a channel of [N, C, H, W] */
            case 1: brank = 0; break;
            case 2: brank = 1, b[0] = a[rank - 1]; break;
            case 3:
                for (int32_t d = 0; d < rank; d++) b[d] = d == 1 ? a[d] : 1;
                break;
            default: break;
            }
            add_in(&c, rand_t(rank, a, -3, 3), false);
            tc__tensor y = rand_t(brank, b, 0.5, 2); /* Div: away from zero */
            float *v = y.data;
            for (int64_t i = 0; i < tc__tensor_numel(&y); i++) v[i] *= etu_next(&rng) & 1 ? 1.0f : -1.0f;
            add_in(&c, y, r % 3 == 0);
            run_case(&c);
        }
}

static void softmax_cases(void) {
    static const char *const ops[] = {"Softmax", "LogSoftmax"};
    for (int o = 0; o < 2; o++)
        for (int r = 0; r < 8; r++) {
            tcase c = {.op = ops[o], .opset = 13, .tol = 1e-5};
            int64_t dims[4];
            int32_t rank = rand_shape(dims);
            if (r == 0) dims[rank - 1] = 257; /* a row longer than the register path's 256 */
            add_in(&c, rand_t(rank, dims, -8, 8), false);
            c.attrs[c.n_attrs++] = etu_attr_int("axis", -1);
            run_case(&c);
        }
}

static void layernorm_cases(void) {
    for (int r = 0; r < 8; r++) {
        tcase c = {.op = "LayerNormalization", .opset = 17, .tol = 2e-5};
        int64_t dims[3] = {pick(kEdge, 10), pick(kEdge, 10), r == 0 ? 768 : pick(kEdge, 10)};
        add_in(&c, rand_t(3, dims, -4, 4), false);
        add_in(&c, rand_t(1, &dims[2], 0.5, 1.5), true);
        add_in(&c, rand_t(1, &dims[2], -1, 1), true);
        c.attrs[c.n_attrs++] = etu_attr_int("axis", -1);
        c.attrs[c.n_attrs++] = etu_attr_float("epsilon", 1e-5f);
        run_case(&c);
    }
}

static void pool_cases(void) {
    static const char *const ops[] = {"MaxPool", "AveragePool", "GlobalAveragePool"};
    static int64_t ks[2], st[2], pads[4];
    for (int o = 0; o < 3; o++)
        for (int r = 0; r < 6; r++) {
            tcase c = {.op = ops[o], .opset = 13, .tol = 1e-5};
            int64_t dims[4] = {1 + r % 2, pick(kEdge, 10), 5 + r * 3, 4 + r * 2};
            add_in(&c, rand_t(4, dims, -5, 5), false);
            if (o < 2) {
                ks[0] = ks[1] = 2 + r % 2;
                st[0] = st[1] = 1 + r % 2;
                for (int p = 0; p < 4; p++) pads[p] = r % 3 == 0 ? 1 : 0;
                c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", ks, 2);
                c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
                c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, 4);
            }
            run_case(&c);
        }
}

static void dense_cases(void) {
    for (int r = 0; r < 12; r++) { /* MatMul: [M, K] or [B, M, K] by a constant or computed [K, N] */
        tcase c = {.op = "MatMul", .opset = 13, .tol = 2e-5};
        int64_t m = pick(kEdge, 10), k = r == 0 ? 130 : pick(kEdge, 10), n = r == 1 ? 100 : pick(kEdge, 10);
        int64_t a3[3] = {2, m, k}, b2[2] = {k, n};
        add_in(&c, rand_t(r % 3 == 2 ? 3 : 2, r % 3 == 2 ? a3 : a3 + 1, -1, 1), false);
        add_in(&c, rand_t(2, b2, -1, 1), r % 2 == 0);
        run_case(&c);
    }
    for (int r = 0; r < 8; r++) { /* Gemm: A [M, K], B [K, N] (transB: [N, K]), C [N] */
        tcase c = {.op = "Gemm", .opset = 13, .tol = 2e-5};
        int64_t m = pick(kEdge, 10), k = pick(kEdge, 10), n = pick(kEdge, 10);
        const bool tb = r % 2 == 1;
        int64_t a[2] = {m, k}, b[2] = {tb ? n : k, tb ? k : n};
        add_in(&c, rand_t(2, a, -1, 1), false);
        add_in(&c, rand_t(2, b, -1, 1), true);
        add_in(&c, rand_t(1, &n, -1, 1), true);
        if (tb) c.attrs[c.n_attrs++] = etu_attr_int("transB", 1);
        run_case(&c);
    }
}

static void conv_cases(void) {
    static int64_t ks[2], st[2], pads[4], dil[2];
    for (int r = 0; r < 14; r++) { /* dense (3x3, 1x1, strided, dilated) and depthwise convolutions with a bias */
        tcase c = {.op = "Conv", .opset = 11, .tol = 5e-5};
        const bool dw = r % 4 == 3;
        const int64_t cin = dw ? 16 + r : pick(kEdge, 10), cout = dw ? cin : pick(kEdge, 10), k = r % 3 == 1 ? 1 : 3;
        int64_t x[4] = {1, cin, 6 + r, 5 + 2 * r}, w[4] = {cout, dw ? 1 : cin, k, k};
        add_in(&c, rand_t(4, x, -1, 1), false);
        add_in(&c, rand_t(4, w, -1, 1), true);
        add_in(&c, rand_t(1, &cout, -1, 1), true);
        ks[0] = ks[1] = k;
        st[0] = st[1] = r % 5 == 4 ? 2 : 1;
        for (int p = 0; p < 4; p++) pads[p] = k == 3 && r % 2 == 0 ? 1 : 0;
        dil[0] = dil[1] = r == 6 ? 2 : 1;
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", ks, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, 4);
        c.attrs[c.n_attrs++] = etu_attr_ints("dilations", dil, 2);
        if (dw) c.attrs[c.n_attrs++] = etu_attr_int("group", cin);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) { /* ResNet-like shapes where Winograd and the wide tiles apply */
        tcase c = {.op = "Conv", .opset = 11, .tol = 1e-4};
        int64_t x[4] = {1, 16 * (r + 1), 14, 14}, w[4] = {32, 16 * (r + 1), 3, 3}, cout = 32;
        add_in(&c, rand_t(4, x, -1, 1), false);
        add_in(&c, rand_t(4, w, -1, 1), true);
        add_in(&c, rand_t(1, &cout, -1, 1), true);
        ks[0] = ks[1] = 3;
        st[0] = st[1] = 1;
        for (int p = 0; p < 4; p++) pads[p] = 1;
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", ks, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, 4);
        run_case(&c);
    }
}

static void movement_cases(void) {
    static int64_t perm[4];
    for (int r = 0; r < 6; r++) {
        tcase c = {.op = "Transpose", .opset = 13, .tol = 0};
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        for (int32_t d = 0; d < rank; d++) perm[d] = rank - 1 - d;
        if (rank > 2 && r % 2) perm[0] = 1, perm[1] = 0;
        if (rank > 2 && r % 2) for (int32_t d = 2; d < rank; d++) perm[d] = d;
        add_in(&c, rand_t(rank, dims, -1, 1), false);
        c.attrs[c.n_attrs++] = etu_attr_ints("perm", perm, (size_t)rank);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) {
        tcase c = {.op = "Where", .opset = 16, .tol = 0};
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        tc__tensor cond = etu_tensor(TC_DTYPE_BOOL, rank, dims);
        for (int64_t i = 0; i < tc__tensor_numel(&cond); i++) ((uint8_t *)cond.data)[i] = etu_next(&rng) & 1;
        add_in(&c, cond, false);
        add_in(&c, rand_t(rank, dims, -1, 1), false);
        add_in(&c, rand_t(rank, dims, -1, 1), false);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) {
        tcase c = {.op = "IsNaN", .opset = 13, .tol = 0};
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        tc__tensor x = rand_t(rank, dims, -1, 1);
        for (int64_t i = 0; i < tc__tensor_numel(&x); i += 3) ((float *)x.data)[i] = NAN;
        add_in(&c, x, false);
        run_case(&c);
    }
}

static void qdq_cases(void) {
    for (int r = 0; r < 8; r++) { /* per-tensor scales, int8 and uint8 codes with zero points */
        const bool u8 = r % 2 == 1;
        const tc_dtype qt = u8 ? TC_DTYPE_UINT8 : TC_DTYPE_INT8;
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        tcase q = {.op = "QuantizeLinear", .opset = 13, .tol = 0};
        add_in(&q, rand_t(rank, dims, -3, 3), false);
        add_in(&q, etu_scalar_f64(TC_DTYPE_FLOAT32, 0.0234), true);
        add_in(&q, etu_scalar_i64(qt, u8 ? 121 : -3), true);
        run_case(&q);
        tcase dq = {.op = "DequantizeLinear", .opset = 13, .tol = 1e-6};
        tc__tensor codes = etu_tensor(qt, rank, dims);
        for (int64_t i = 0; i < tc__tensor_numel(&codes); i++) ((uint8_t *)codes.data)[i] = (uint8_t)etu_next(&rng);
        add_in(&dq, codes, false);
        add_in(&dq, etu_scalar_f64(TC_DTYPE_FLOAT32, 0.0234), true);
        add_in(&dq, etu_scalar_i64(qt, u8 ? 121 : -3), true);
        run_case(&dq);
    }
}

#include "cases_cnn.h"   /* the CUDA CNN tactics' ops the generators above do not reach */
#include "cases_dense.h" /* the CUDA dense, normalisation and indexing tactics' */
#include "cases_fp16.h"  /* the FP16 (tc.fp16) tactics' */
#include "cases_convt.h" /* ConvTranspose */
#include "cases_resize.h" /* Resize */
#include "cases_attn.h"   /* Attention */
#include "cases_rnn.h"    /* LSTM, GRU */
#include "cases_mmi.h"    /* MatMulInteger */

static void test_all_fp32_tactics(void **state) {
    (void)state;
    n_list = 0;
    for (size_t i = 0; tc__backend_cpu.tactics[i] != NULL && n_list < 512; i++) list[n_list++] = tc__backend_cpu.tactics[i];
    tc__err gerr = {0};
    gpu = tc__backend_find("cuda", &gerr);
    if (gpu) {
        for (size_t i = 0; gpu->tactics[i] != NULL && n_gpu_list < 512; i++) gpu_list[n_gpu_list++] = gpu->tactics[i];
        print_message("CUDA tactics run too: %d on the list\n", n_gpu_list);
    } else {
        print_message("CUDA tactics not run: %s\n", gerr.msg);
    }
    unary_cases();
    binary_cases();
    softmax_cases();
    layernorm_cases();
    pool_cases();
    dense_cases();
    conv_cases();
    movement_cases();
    qdq_cases();
    cnn_cases();
    dense_extra_cases();
    fp16_cases();
    convt_cases();
    resize_cases();
    attn_cases();
    rnn_cases();
    mmi_cases();
    /* Every FP32 plain-layout tactic this CPU runs ran some case. */
    const uint64_t isa = tc__cpu_get()->isa;
    int ran = 0, missing = 0;
    for (int k = 0; k < n_list; k++) {
        const tc__tactic *t = list[k];
        if (t->precision != NULL || (t->flags & (TC__TACTIC_BLOCKED | TC__TACTIC_FALLBACK)) || (t->caps & ~isa) != 0)
            continue;
        if (runs[k] == 0) {
            print_message("tactic %s (%s) ran no generated case\n", t->name, t->op_type);
            missing++;
        }
        ran += runs[k] > 0;
    }
    print_message("%d FP32 tactics ran against the reference\n", ran);
    int gpu_ran = 0;
    for (int k = 0; gpu && k < n_gpu_list; k++) {
        /* FP32 and FP16 (cases_fp16.h gives them tc.fp16 cases) CUDA tactics */
        const char *prec = gpu_list[k]->precision;
        if ((prec != NULL && strcmp(prec, "fp16") != 0) || (gpu_list[k]->caps & ~gpu->caps()) != 0) continue;
        if (gpu_runs[k] == 0) {
            print_message("CUDA tactic %s (%s) ran no generated case\n", gpu_list[k]->name, gpu_list[k]->op_type);
            missing++;
        }
        gpu_ran += gpu_runs[k] > 0;
    }
    if (gpu) print_message("%d CUDA tactics ran against the reference\n", gpu_ran);
    assert_int_equal(missing, 0);
    assert_true(ran > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_all_fp32_tactics)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
