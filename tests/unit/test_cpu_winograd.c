/*
 * test_cpu_winograd.c - the Winograd F(4x4, 3x3) Conv tactic (conv_winograd_f32_avx512, when this CPU
 * has AVX-512) against the reference Conv plus tc__epilogue_apply: spatial sizes 1 to 56, odd
 * channel counts, pads 0, 1 and asymmetric (and auto_pad), batches, with and without the conv bias,
 * fused activations and residuals; 1 and 2 threads give identical bits; scratch as announced; the
 * error stays within 1e-4 of the output's magnitude (the maximum is printed); supports() rejects
 * strides, dilations, groups, other kernels and a fused bias.
 */
#include <math.h>
#include "core/thread_pool.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/gemm.h"
#include "core/cpu.h"
#include "dense_test_util.h"
#include "backends/cpu/tactics.h"
#include "tactics/tuner.h"

static const tc__tactic *const kWino = &tc__tactic_conv_winograd_f32_avx512;
static double g_max_rel_err; /* over every checked case: max |got - want| / max |want| */

static bool cpu_has(const tc__tactic *t) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    return (t->caps & ~cpu.isa) == 0;
}

typedef struct wcase {
    int64_t n, cin, cout, h, w;
    int64_t kh, kw, stride, dil, group;
    int64_t pads[4]; /* top, left, bottom, right */
    const char *auto_pad;
    bool bias;
} wcase;

typedef struct built {
    tc__attr attrs[5];
    int na;
    int64_t strides[2], dilations[2], pads[4]; /* the attributes point here */
    tc__tensor x, w, b;
    const tc__tensor *in[3];
    int n_in;
    bool in_const[3];
} built;

static void build(const wcase *c, dtu_rng *r, built *bt) {
    const int64_t xd[4] = {c->n, c->cin, c->h, c->w}, wd[4] = {c->cout, c->cin / c->group, c->kh, c->kw};
    for (int i = 0; i < 2; i++) {
        bt->strides[i] = c->stride;
        bt->dilations[i] = c->dil;
    }
    for (int i = 0; i < 4; i++)
        bt->pads[i] = c->pads[i];
    bt->na = 0;
    bt->attrs[bt->na++] = dtu_attr_int("group", c->group);
    bt->attrs[bt->na++] = dtu_attr_ints("strides", bt->strides, 2);
    bt->attrs[bt->na++] = dtu_attr_ints("dilations", bt->dilations, 2);
    if (c->auto_pad)
        bt->attrs[bt->na++] = dtu_attr_string("auto_pad", c->auto_pad);
    else
        bt->attrs[bt->na++] = dtu_attr_ints("pads", bt->pads, 4);
    bt->x = dtu_random(r, TC_DTYPE_FLOAT32, 4, xd);
    bt->w = dtu_random(r, TC_DTYPE_FLOAT32, 4, wd);
    bt->b = dtu_random(r, TC_DTYPE_FLOAT32, 1, &c->cout);
    bt->n_in = c->bias ? 3 : 2;
    bt->in[0] = &bt->x;
    bt->in[1] = &bt->w;
    bt->in[2] = c->bias ? &bt->b : NULL;
    bt->in_const[0] = false;
    bt->in_const[1] = bt->in_const[2] = true;
}

static void unbuild(built *bt) {
    tc__tensor_free(&bt->x);
    tc__tensor_free(&bt->w);
    tc__tensor_free(&bt->b);
}

static tc__epilogue make_epi(tc__act act, bool residual, int first_slot) {
    tc__epilogue e = tc__epilogue_none();
    e.act = (uint8_t)act;
    if (residual) e.residual_input = (int8_t)first_slot;
    if (act == TC__ACT_CLIP) e.alpha = -0.5f, e.beta = 1.5f;
    if (act == TC__ACT_HARDSIGMOID) e.alpha = 0.2f, e.beta = 0.5f;
    if (act == TC__ACT_LEAKY_RELU) e.alpha = 0.1f;
    return e;
}

static tc__step_desc desc_of(const built *bt, const tc__attrs *attrs, const tc__tensor *const *outs,
                             const tc__epilogue *epi, const tc__tensor *bias, const tc__tensor *res) {
    return (tc__step_desc){.op_type = "Conv",
                           .opset = 13,
                           .attrs = attrs,
                           .n_in = bt->n_in,
                           .in = bt->in,
                           .in_const = bt->in_const,
                           .n_out = 1,
                           .out = outs,
                           .epi = epi,
                           .bias = bias,
                           .residual = res};
}

static void run_once(const tc__step_desc *d, const built *bt, const tc__epilogue *epi, const tc__tensor *res,
                     tc__tensor *y, tc__pool_t pool) {
    const size_t bytes = kWino->scratch_bytes(d);
    tc__scratch scratch = {malloc(bytes ? bytes : 1), bytes, 0};
    assert_non_null(scratch.base);
    float *yd = y->data;
    for (int64_t i = 0; i < tc__tensor_numel(y); i++)
        yd[i] = NAN; /* every element must be written */
    tc__err err = {0};
    tc__tensor *outs[1] = {y};
    tc__kernel_ctx kc = {.node_name = "test",
                         .op_type = "Conv",
                         .opset = 13,
                         .attrs = d->attrs,
                         .n_in = bt->n_in,
                         .in = bt->in,
                         .n_out = 1,
                         .out = outs,
                         .err = &err,
                         .scratch = &scratch,
                         .epi = epi,
                         .residual = res,
                         .exec = pool};
    const tc_status st = kWino->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed (%d): %s", kWino->name, (int)st, err.msg);
    if (scratch.used != 0) fail_msg("%s left %zu bytes of scratch in use", kWino->name, scratch.used);
    free(scratch.base);
}

/* Checks the tactic on case c with each epilogue variant, with and without the pool. */
static void check_case(const wcase *c, dtu_rng *r, tc__pool_t pool) {
    built bt;
    build(c, r, &bt);
    tc__attrs attrs = {bt.na, bt.attrs};
    tc__tensor ref[1];
    dtu_run_ok(DTU_OP(Conv), 13, bt.attrs, bt.na, bt.n_in, bt.in, 1, ref);
    tc__tensor res = dtu_random(r, TC_DTYPE_FLOAT32, ref[0].rank, ref[0].dims);
    static const tc__act kActs[] = {TC__ACT_NONE, TC__ACT_RELU, TC__ACT_CLIP, TC__ACT_HARDSWISH, TC__ACT_SIGMOID};
    for (size_t v = 0; v < 2 * sizeof kActs / sizeof kActs[0]; v++) {
        const tc__act act = kActs[v / 2];
        const bool use_res = v & 1;
        const tc__epilogue epi = make_epi(act, use_res, bt.n_in);
        const tc__tensor *resp = use_res ? &res : NULL;
        tc__tensor want = dtu_tensor(TC_DTYPE_FLOAT32, ref[0].rank, ref[0].dims);
        memcpy(want.data, ref[0].data, ref[0].nbytes);
        tc__err err = {0};
        if (tc__epilogue_apply(&epi, &want, NULL, resp, &err) != TC_STATUS_OK)
            fail_msg("reference epilogue: %s", err.msg);
        const tc__tensor *outs[1] = {&want};
        const tc__step_desc d = desc_of(&bt, &attrs, outs, &epi, NULL, resp);
        if (!kWino->supports(&d)) fail_msg("%s does not support a case it should", kWino->name);
        tc__tensor y1 = dtu_tensor(TC_DTYPE_FLOAT32, want.rank, want.dims);
        tc__tensor y2 = dtu_tensor(TC_DTYPE_FLOAT32, want.rank, want.dims);
        run_once(&d, &bt, &epi, resp, &y1, NULL);
        run_once(&d, &bt, &epi, resp, &y2, pool);
        if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s: 1 and 2 threads differ", kWino->name);
        /* Magnitude: of the pre-activation output (Winograd's error scales with it). */
        double mag = 0.0;
        for (int64_t i = 0; i < tc__tensor_numel(&ref[0]); i++) {
            const double a = fabs(dtu_get(&ref[0], i)) + (use_res ? fabs(dtu_get(&res, i)) : 0.0);
            mag = a > mag ? a : mag;
        }
        const float *got = y1.data;
        for (int64_t i = 0; i < tc__tensor_numel(&y1); i++) {
            const double w = dtu_get(&want, i), e = fabs(got[i] - w);
            if (!(e <= 1e-4 * mag + 1e-6))
                fail_msg("%s: N%lld C%lld->%lld %lldx%lld pads %lld,%lld,%lld,%lld act %d: element %lld: got %.9g, "
                         "want %.9g (magnitude %.3g)",
                         kWino->name, (long long)c->n, (long long)c->cin, (long long)c->cout, (long long)c->h,
                         (long long)c->w, (long long)c->pads[0], (long long)c->pads[1], (long long)c->pads[2],
                         (long long)c->pads[3], (int)act, (long long)i, (double)got[i], w, mag);
            if (mag > 0 && e / mag > g_max_rel_err) g_max_rel_err = e / mag;
        }
        tc__tensor_free(&y1);
        tc__tensor_free(&y2);
        tc__tensor_free(&want);
    }
    tc__tensor_free(&ref[0]);
    tc__tensor_free(&res);
    unbuild(&bt);
}

static void test_sizes_pads_channels(void **state) {
    if (!cpu_has(kWino)) skip();
    tc__pool_t pool = *state;
    dtu_rng r = {0x3140u};
    static const int64_t kSizes[] = {1, 2, 3, 5, 7, 8, 13, 14, 56};
    static const int64_t kChannels[] = {1, 3, 17};
    static const int64_t kPads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 3}, {0, 1, 2, 0}};
    int n = 0;
    for (size_t si = 0; si < sizeof kSizes / sizeof kSizes[0]; si++)
        for (size_t pi = 0; pi < sizeof kPads / sizeof kPads[0]; pi++) {
            const int64_t h = kSizes[si], w = kSizes[(si + pi) % (sizeof kSizes / sizeof kSizes[0])];
            const int64_t *p = kPads[pi];
            if (h + p[0] + p[2] < 3 || w + p[1] + p[3] < 3) continue; /* no output */
            wcase c = {.n = (si + pi) % 3 == 0 ? 2 : 1,
                       .cin = kChannels[(si + pi) % 3],
                       .cout = kChannels[(si + 2 * pi + 1) % 3],
                       .h = h,
                       .w = w,
                       .kh = 3,
                       .kw = 3,
                       .stride = 1,
                       .dil = 1,
                       .group = 1,
                       .pads = {p[0], p[1], p[2], p[3]},
                       .bias = (si + pi) & 1};
            check_case(&c, &r, pool);
            n++;
        }
    /* Square sizes with pad 1 (the common case), every channel pair at 13x13. */
    for (size_t si = 0; si < sizeof kSizes / sizeof kSizes[0]; si++) {
        wcase c = {1, 17, 3, kSizes[si], kSizes[si], 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, si & 1};
        check_case(&c, &r, pool);
        n++;
    }
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++) {
            wcase c = {1, kChannels[a], kChannels[b], 13, 13, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, (a + b) & 1};
            check_case(&c, &r, pool);
            n++;
        }
    assert_true(n > 40);
}

static void test_larger(void **state) {
    if (!cpu_has(kWino)) skip();
    tc__pool_t pool = *state;
    dtu_rng r = {0x77a1u};
    const wcase cases[] = {
        /* several MR-row and NR-column panels, K of 64 and 128 */
        {1, 64, 40, 28, 28, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
        {2, 128, 30, 14, 14, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, false},
        {1, 33, 29, 56, 56, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
        /* auto_pad */
        {1, 5, 7, 11, 9, 3, 3, 1, 1, 1, {0}, "SAME_UPPER", true},
        {1, 5, 7, 10, 12, 3, 3, 1, 1, 1, {0}, "SAME_LOWER", false},
        {1, 5, 7, 10, 12, 3, 3, 1, 1, 1, {0}, "VALID", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], &r, pool);
    print_message("conv_winograd_f32_avx512: max error %.3g of the output magnitude\n", g_max_rel_err);
}

static bool supported(const wcase *c, const tc__epilogue *epi, const tc__tensor *bias) {
    dtu_rng r = {0x5u};
    built bt;
    build(c, &r, &bt);
    tc__attrs attrs = {bt.na, bt.attrs};
    tc__tensor y[1];
    dtu_run_ok(DTU_OP(Conv), 13, bt.attrs, bt.na, bt.n_in, bt.in, 1, y);
    const tc__tensor *outs[1] = {&y[0]};
    const tc__step_desc d = desc_of(&bt, &attrs, outs, epi, bias, NULL);
    const bool ok = kWino->supports(&d);
    tc__tensor_free(&y[0]);
    unbuild(&bt);
    return ok;
}

static void test_rejects(void **state) {
    (void)state;
    const tc__epilogue none = tc__epilogue_none();
    const wcase base = {1, 4, 6, 9, 9, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true};
    assert_true(supported(&base, &none, NULL));
    wcase c = base;
    c.stride = 2;
    assert_false(supported(&c, &none, NULL));
    c = base;
    c.dil = 2;
    assert_false(supported(&c, &none, NULL));
    c = base;
    c.group = 2;
    assert_false(supported(&c, &none, NULL));
    c = base;
    c.kh = c.kw = 5;
    assert_false(supported(&c, &none, NULL));
    c = base;
    c.kw = 1;
    assert_false(supported(&c, &none, NULL));
    /* a fused bias over the output's last dim */
    tc__epilogue e = tc__epilogue_none();
    e.bias_input = 3;
    int64_t nine = 9;
    dtu_rng r = {0x9u};
    tc__tensor wb = dtu_random(&r, TC_DTYPE_FLOAT32, 1, &nine);
    assert_false(supported(&base, &e, &wb));
    tc__tensor_free(&wb);
}

/* Listed for Conv after the im2col tactic (the safe heuristic choice), within the tuner's candidate cap. */
static void test_registry(void **state) {
    (void)state;
    const tc__tactic *list[64];
    const int n = tc__tactics_for(&tc__backend_cpu, "Conv", TC__ISA_ALL, list, 64);
    int wino = -1, im2col = -1;
    for (int i = 0; i < n; i++) {
        if (list[i] == kWino) wino = i;
        if (list[i] == &tc__tactic_conv_im2col_f32_avx512) im2col = i;
    }
    assert_true(wino >= 0 && im2col >= 0 && wino > im2col);
    const tc__tactic *capped[TC__TUNE_MAX_CANDIDATES];
    const int m = tc__tactics_for(&tc__backend_cpu, "Conv", TC__ISA_ALL, capped, TC__TUNE_MAX_CANDIDATES);
    bool found = false;
    for (int i = 0; i < m; i++) found |= capped[i] == kWino;
    assert_true(found);
    assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, "conv_winograd_f32_avx512", "Conv"), kWino);
    assert_null(kWino->packs_input);
}

static int setup_pool(void **state) {
    *state = tc__pool_create(2);
    return *state == NULL ? -1 : 0;
}

static int teardown_pool(void **state) {
    tc__pool_destroy(*state);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_sizes_pads_channels),
        cmocka_unit_test(test_larger),
    };
    return cmocka_run_group_tests(tests, setup_pool, teardown_pool);
}
