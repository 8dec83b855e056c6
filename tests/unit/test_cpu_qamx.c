/*
 * test_cpu_qamx.c - the AMX-INT8 kernel's tile code (qconv_u8s8_amx.c) on amx_tiles.h's emulation, so it runs
 * on any CPU: for random layers (1x1 flat planes, 3x3 rows with and without stride, dilation with one run per
 * tap, MatMul rows, single pixels, panels with short A tiles, odd block counts) every panel x block pair's
 * int32 sums must equal a scalar sum over the window computed from the geometry alone (the VNNI packing's
 * documented layout, u8 image bytes x s8 weights). Also: the layers the plan refuses, and that every tactic
 * with a proof names a twin of its op, layout and precision that needs no more ISA than it does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* the tile code, built here on the emulation, under names of its own */
#define TC_AMX_EMULATE
#define tc__qamx_begin emu_qamx_begin
#define tc__qamx_end emu_qamx_end
#define tc__qamx_accumulate emu_qamx_accumulate
#include "backends/cpu/qconv_u8s8_amx.c"

#include "tactics/tactic.h"

static size_t up(size_t v, size_t m) { return (v + m - 1) / m * m; }

static tc__qconv_geom geom(size_t batch, size_t cin, size_t cout, size_t ih, size_t iw, size_t kh, size_t kw, size_t s,
                           size_t d, size_t pad) {
    tc__qconv_geom g = {.batch = batch, .cin = cin, .cout = cout, .ih = ih, .iw = iw, .kh = kh, .kw = kw, .sh = s,
                        .sw = s, .dh = d, .dw = d, .pt = pad, .pl = pad};
    g.hp = ih + 2 * pad, g.wp = iw + 2 * pad;
    g.oh = (g.hp - d * (kh - 1) - 1) / s + 1;
    g.ow = (g.wp - d * (kw - 1) - 1) / s + 1;
    g.cp = up(cin, 4), g.cout16 = up(cout, 16);
    return g;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* The sum of pixel p (plane index) of image n x output channel oc over the window, from the geometry. */
static int32_t scalar_sum(const tc__qconv_geom *g, const uint8_t *img, const int8_t *w, size_t n, size_t p, size_t oc) {
    const size_t r = p / g->ow, col = p % g->ow, taps = g->kh * g->kw, c4 = g->cp / 4;
    int64_t acc = 0;
    for (size_t a = 0; a < g->kh; a++)
        for (size_t b = 0; b < g->kw; b++)
            for (size_t c = 0; c < g->cp; c++) {
                const size_t row = r * g->sh + a * g->dh, x = col * g->sw + b * g->dw;
                const uint8_t u = img[((n * g->hp + row) * g->wp + x) * g->cp + c];
                const size_t t = a * g->kw + b;
                acc += (int64_t)u * w[((oc / 16 * taps + t) * c4 + c / 4) * 64 + oc % 16 * 4 + c % 4];
            }
    return (int32_t)acc;
}

/* Every panel x block pair of g on random bytes against scalar_sum. */
static void check_layer(const tc__qconv_geom *g) {
    tc__qamx_plan p;
    assert_true(tc__qamx_plan_of(g, &p));
    const size_t img_bytes = g->batch * g->hp * g->wp * g->cp, taps = g->kh * g->kw;
    const size_t w_block = taps * g->cp * 16, nblocks = g->cout16 / 16;
    uint8_t *img = malloc(img_bytes);
    int8_t *w = malloc(w_block * nblocks);
    assert_non_null(img);
    assert_non_null(w);
    for (size_t i = 0; i < img_bytes; i++) img[i] = (uint8_t)next_u32();
    for (size_t i = 0; i < w_block * nblocks; i++) w[i] = (int8_t)((int)(next_u32() % 255) - 127);
    int32_t c[TC__QAMX_PANEL][32];
    size_t covered = 0;
    for (size_t k = 0; k < p.panels; k++) {
        size_t n, p0, a_off;
        int m;
        tc__qamx_panel_at(&p, g, k, &n, &p0, &m, &a_off);
        assert_true(m >= 1 && m <= TC__QAMX_PANEL);
        covered += (size_t)m;
        for (size_t b0 = 0; b0 < nblocks; b0 += 2) {
            const int nb = nblocks - b0 >= 2 ? 2 : 1;
            memset(c, 0x5a, sizeof c);
            const tc__qamx_job j = {.a = img + a_off, .stride = p.stride, .m = m, .plan = &p, .w = w + b0 * w_block,
                                    .w_block = w_block, .nb = nb, .c = c};
            emu_qamx_begin();
            emu_qamx_accumulate(&j);
            emu_qamx_end();
            for (int i = 0; i < m; i++)
                for (int l = 0; l < 16 * nb; l++) {
                    const int32_t want = scalar_sum(g, img, w, n, p0 + (size_t)i, b0 * 16 + (size_t)l);
                    if (c[i][l] != want)
                        fail_msg("panel %zu pixel %zu channel %zu: %d, want %d", k, p0 + (size_t)i, b0 * 16 + (size_t)l,
                                 c[i][l], want);
                }
        }
    }
    assert_int_equal(covered, g->batch * g->oh * g->ow); /* each pixel of each image once */
    free(img);
    free(w);
}

static void test_layers(void **state) {
    (void)state;
    const tc__qconv_geom cases[] = {
        geom(2, 64, 48, 7, 7, 1, 1, 1, 1, 0),    /* flat plane of 49: panels 32 + 17; 3 blocks (a pair and one) */
        geom(1, 64, 16, 14, 14, 3, 3, 1, 1, 1),  /* rows of 14: one short A tile per panel */
        geom(1, 64, 32, 15, 15, 3, 3, 2, 1, 1),  /* stride 2, odd plane */
        geom(1, 128, 40, 9, 9, 1, 1, 2, 1, 0),   /* strided 1x1: not flat */
        geom(1, 64, 20, 11, 11, 3, 3, 1, 2, 2),  /* dilation 2: one run per tap */
        geom(1, 13, 33, 6, 10, 2, 4, 1, 1, 0),   /* Cp 16 x kw 4: one 64-byte run per kernel row; 13 channels */
        geom(1, 128, 17, 1, 37, 1, 1, 1, 1, 0),  /* MatMul rows: 37 = 32 + 5, 17 channels */
        geom(1, 64, 16, 1, 1, 1, 1, 1, 1, 0),    /* one pixel */
        geom(1, 192, 64, 5, 40, 1, 1, 1, 1, 1),  /* rows of 42 with padding: 32 + 10, three 64-byte chunks */
        geom(3, 256, 32, 4, 4, 3, 3, 1, 1, 1),   /* batch 3, 9 chunks per run */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_layer(&cases[i]);
}

static void test_plan_refuses(void **state) {
    (void)state;
    tc__qamx_plan p;
    tc__qconv_geom g = geom(1, 3, 64, 32, 32, 7, 7, 2, 1, 3); /* a stem: runs of 28 bytes */
    assert_false(tc__qamx_plan_of(&g, &p));
    g = geom(1, 96, 64, 8, 8, 1, 1, 1, 1, 0); /* 96 bytes: not a multiple of 64 */
    assert_false(tc__qamx_plan_of(&g, &p));
    g = geom(1, 64, 64, 8, 8, 3, 3, 1, 1, 1);
    g.depthwise = true;
    assert_false(tc__qamx_plan_of(&g, &p));
    g = geom(1, 64, 64, 8, 8, 3, 3, 1, 1, 1);
    assert_true(tc__qamx_plan_of(&g, &p));
    assert_int_equal(p.runs, 3);
    assert_int_equal(p.run_len, 192);
    assert_int_equal(p.rows, 8); /* padded rows: windows of the next row are not one stride on */
    g = geom(1, 64, 64, 8, 8, 1, 1, 1, 1, 0);
    assert_true(tc__qamx_plan_of(&g, &p));
    assert_int_equal(p.rows, 1);
    assert_int_equal(p.row_px, 64);
}

/* Every tactic with a proof: a twin of the same op, layout flags and precision that needs no more ISA. */
static void test_proofs_are_twins(void **state) {
    (void)state;
    const char *ops[] = {"Conv", "MatMul", "Gemm"};
    int with_proof = 0;
    for (size_t k = 0; k < 3; k++) {
        const tc__tactic *t[64];
        const int n = tc__tactics_for(ops[k], UINT64_MAX, t, 64);
        for (int i = 0; i < n; i++) {
            const tc__tactic *p = t[i]->proof;
            if (p == NULL) continue;
            with_proof++;
            assert_string_equal(p->op_type, t[i]->op_type);
            assert_int_equal(p->flags, t[i]->flags);
            assert_string_equal(p->precision, t[i]->precision);
            assert_true((p->isa & ~t[i]->isa) == 0);
            assert_null(p->proof);
        }
    }
    assert_int_equal(with_proof, 4); /* the AMX Conv (plain and NCHW16c), MatMul and Gemm */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_plan_refuses),
        cmocka_unit_test(test_proofs_are_twins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
