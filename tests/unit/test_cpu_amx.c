/*
 * test_cpu_amx.c - the AMX kernels' tile code (amx_panel_amx.c) on amx_tiles.h's emulation, so it runs on any
 * CPU: for random layers (1x1 flat planes, 3x3 rows with and without stride, dilation with one run per tap,
 * MatMul rows, single pixels, panels with short A tiles, odd block counts, runs that end in a chunk shorter than 64
 * bytes) every panel x block pair's sums must
 * equal a scalar sum over the window computed from the geometry alone: INT8 (u8 image bytes x s8 weights in the
 * VNNI packing's documented layout) exactly, BF16 (image and weight pairs in hconv.h's layout) within float
 * rounding. Also: the layers the plan refuses, and that every tactic with a proof names a twin of its op, layout
 * and precision that needs no more ISA than it does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

/* the tile code, built here on the emulation, under names of its own */
#define TC_AMX_EMULATE
#define tc__amx_begin emu_amx_begin
#define tc__amx_end emu_amx_end
#define tc__amx_dot_u8s8 emu_amx_dot_u8s8
#define tc__amx_dot_bf16 emu_amx_dot_bf16
#include "backends/backend.h"
#include "backends/cpu/amx_panel_amx.c"

#include "backends/tactic.h"

static size_t up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* A layer and its padded image's channels per pixel (Cp: C_in rounded up to 4 for INT8, to 2 for BF16). */
typedef struct layer {
    tc__lowp_shape s;
    size_t cp, cout16;
} layer;

static layer geom(size_t batch, size_t cin, size_t cout, size_t ih, size_t iw, size_t kh, size_t kw, size_t st,
                  size_t d, size_t pad) {
    layer l = {.s = {.batch = batch, .cin = cin, .cout = cout, .ih = ih, .iw = iw, .kh = kh, .kw = kw, .sh = st,
                     .sw = st, .dh = d, .dw = d, .pt = pad, .pl = pad}};
    l.s.hp = ih + 2 * pad, l.s.wp = iw + 2 * pad;
    l.s.oh = (l.s.hp - d * (kh - 1) - 1) / st + 1;
    l.s.ow = (l.s.wp - d * (kw - 1) - 1) / st + 1;
    l.cp = up(cin, 4), l.cout16 = up(cout, 16);
    return l;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* BF16 bits as a float. */
static float bf16(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The sum of pixel p (plane index) of image n x output channel oc over the window, from the geometry: INT8 (u8 image
 * [N][Hp][Wp][Cp], weight [block][tap][Cp / 4][16][4]) or BF16 (image of BF16 values, weight [block][tap][Cp / 2][16][2]);
 * *mag: the sum of the products' magnitudes. */
static double scalar_sum(const layer *l, bool is_bf16, const uint8_t *img, const uint8_t *w, size_t n, size_t p,
                         size_t oc, double *mag) {
    const tc__lowp_shape *s = &l->s;
    const size_t r = p / s->ow, col = p % s->ow, taps = s->kh * s->kw, per = is_bf16 ? 2 : 4;
    double acc = 0.0;
    *mag = 0.0;
    for (size_t a = 0; a < s->kh; a++)
        for (size_t b = 0; b < s->kw; b++)
            for (size_t c = 0; c < l->cp; c++) {
                const size_t at = ((n * s->hp + r * s->sh + a * s->dh) * s->wp + col * s->sw + b * s->dw) * l->cp + c;
                const size_t wi = ((oc / 16 * taps + a * s->kw + b) * (l->cp / per) + c / per) * 16 * per + oc % 16 * per +
                                  c % per;
                double prod;
                if (is_bf16) {
                    uint16_t x, v;
                    memcpy(&x, img + 2 * at, 2);
                    memcpy(&v, w + 2 * wi, 2);
                    prod = (double)bf16(x) * bf16(v);
                } else {
                    prod = (double)img[at] * (int8_t)w[wi];
                }
                acc += prod;
                *mag += fabs(prod);
            }
    return acc;
}

/* Random BF16 bits of a value in [-2, 2). */
static uint16_t random_bf16(void) {
    const float f = (float)(next_u32() % 65536) / 16384.0f - 2.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

/* Every panel x block pair of layer l on random image and weight values against scalar_sum. */
static void check_layer(layer l, bool is_bf16) {
    const tc__lowp_shape *s = &l.s;
    if (is_bf16) l.cp = up(s->cin, 2);
    const size_t esz = is_bf16 ? 2 : 1, taps = s->kh * s->kw;
    tc__amx_plan p;
    assert_true(tc__amx_plan_of(s, l.cp * esz, &p));
    const size_t img_elems = s->batch * s->hp * s->wp * l.cp;
    const size_t w_block = taps * l.cp * esz * 16, nblocks = l.cout16 / 16;
    uint8_t *img = malloc(img_elems * esz), *w = malloc(w_block * nblocks);
    assert_non_null(img);
    assert_non_null(w);
    for (size_t i = 0; i < img_elems; i++) {
        if (!is_bf16) img[i] = (uint8_t)next_u32();
        else {
            const uint16_t h = random_bf16();
            memcpy(img + 2 * i, &h, 2);
        }
    }
    for (size_t i = 0; i < w_block * nblocks / esz; i++) {
        if (!is_bf16) w[i] = (uint8_t)(int8_t)((int)(next_u32() % 255) - 127);
        else {
            const uint16_t h = random_bf16();
            memcpy(w + 2 * i, &h, 2);
        }
    }
    union {
        int32_t i[TC__AMX_PANEL][32];
        float f[TC__AMX_PANEL][32];
    } c;
    size_t covered = 0;
    for (size_t k = 0; k < p.panels; k++) {
        size_t n, p0, a_off;
        int m;
        tc__amx_panel_at(&p, k, &n, &p0, &m, &a_off);
        assert_true(m >= 1 && m <= TC__AMX_PANEL);
        covered += (size_t)m;
        for (size_t b0 = 0; b0 < nblocks; b0 += 2) {
            const int nb = nblocks - b0 >= 2 ? 2 : 1;
            memset(&c, 0x5a, sizeof c);
            const tc__amx_job j = {.a = img + a_off, .stride = p.stride, .m = m, .plan = &p, .w = w + b0 * w_block,
                                   .w_block = w_block, .nb = nb, .c = &c};
            emu_amx_begin();
            if (is_bf16) emu_amx_dot_bf16(&j);
            else emu_amx_dot_u8s8(&j);
            emu_amx_end();
            for (int i = 0; i < m; i++)
                for (int ch = 0; ch < 16 * nb; ch++) {
                    double mag;
                    const size_t oc = b0 * 16 + (size_t)ch;
                    const double want = scalar_sum(&l, is_bf16, img, w, n, p0 + (size_t)i, oc, &mag);
                    const double got = is_bf16 ? (double)c.f[i][ch] : (double)c.i[i][ch];
                    if (is_bf16 ? !(fabs(got - want) <= 1e-6 * mag + 1e-30) : got != want)
                        fail_msg("%s panel %zu pixel %zu channel %zu: %g, want %g", is_bf16 ? "bf16" : "int8", k,
                                 p0 + (size_t)i, oc, got, want);
                }
        }
    }
    assert_int_equal(covered, s->batch * s->oh * s->ow); /* each pixel of each image once */
    free(img);
    free(w);
}

static void test_layers(void **state) {
    (void)state;
    const layer cases[] = {
        geom(2, 64, 48, 7, 7, 1, 1, 1, 1, 0),    /* flat plane of 49: panels 32 + 17; 3 blocks (a pair and one) */
        geom(1, 64, 16, 14, 14, 3, 3, 1, 1, 1),  /* rows of 14: one short A tile per panel */
        geom(1, 64, 32, 15, 15, 3, 3, 2, 1, 1),  /* stride 2, odd plane */
        geom(1, 128, 40, 9, 9, 1, 1, 2, 1, 0),   /* strided 1x1: not flat */
        geom(1, 64, 20, 11, 11, 3, 3, 1, 2, 2),  /* dilation 2: one run per tap */
        geom(1, 13, 33, 6, 10, 2, 4, 1, 1, 0),   /* INT8 Cp 16 x kw 4: one 64-byte run per kernel row; 13 channels */
        geom(1, 128, 17, 1, 37, 1, 1, 1, 1, 0),  /* MatMul rows: 37 = 32 + 5, 17 channels */
        geom(1, 64, 16, 1, 1, 1, 1, 1, 1, 0),    /* one pixel */
        geom(1, 192, 64, 5, 40, 1, 1, 1, 1, 1),  /* rows of 42 with padding: 32 + 10, several 64-byte chunks */
        geom(3, 256, 32, 4, 4, 3, 3, 1, 1, 1),   /* batch 3, many chunks per run */
        geom(1, 96, 40, 7, 7, 1, 1, 1, 1, 0),    /* 96 bytes: a chunk and a tail of 32 (BF16 192: three chunks) */
        geom(1, 24, 33, 9, 9, 3, 3, 1, 1, 1),    /* kernel rows of 72 bytes: tail 8 (BF16 144: tail 16); short A tiles */
        geom(1, 144, 16, 5, 5, 3, 3, 2, 2, 2),   /* dilation 2: taps of 144 bytes, tail 16; stride 2 */
        geom(2, 100, 48, 1, 35, 1, 1, 1, 1, 0),  /* MatMul rows of 100 bytes (tail 36), 35 = 32 + 3 pixels, batch 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_layer(cases[i], false);
    /* BF16: 2 bytes per channel (the INT8 Cp 16 x kw 4 layer is 8 x kw 4 here: a 64-byte run too) */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layer l = cases[i];
        if (i == 5) l = geom(1, 7, 33, 6, 10, 2, 4, 1, 1, 0);
        check_layer(l, true);
    }
}

static void test_plan_refuses(void **state) {
    (void)state;
    tc__amx_plan p;
    layer l = geom(1, 3, 64, 32, 32, 7, 7, 2, 1, 3); /* a stem: runs of 28 bytes */
    assert_false(tc__amx_plan_of(&l.s, l.cp, &p));
    l = geom(1, 24, 64, 8, 8, 1, 1, 1, 1, 0); /* 24 bytes: shorter than a chunk */
    assert_false(tc__amx_plan_of(&l.s, l.cp, &p));
    assert_true(tc__amx_plan_of(&l.s, 4 * l.cp, &p)); /* 96 bytes (a chunk and a tail) */
    assert_false(tc__amx_plan_of(&l.s, 4 * l.cp + 2, &p)); /* not a multiple of 4 */
    l = geom(1, 96, 64, 8, 8, 1, 1, 1, 1, 0); /* 96 bytes: a chunk and a tail of 32 */
    assert_true(tc__amx_plan_of(&l.s, l.cp, &p));
    assert_int_equal(p.run_len, 96);
    assert_true(tc__amx_plan_of(&l.s, 2 * l.cp, &p)); /* 192 bytes as BF16 */
    l = geom(1, 64, 64, 8, 8, 3, 3, 1, 1, 1);
    assert_true(tc__amx_plan_of(&l.s, l.cp, &p));
    assert_int_equal(p.runs, 3);
    assert_int_equal(p.run_len, 192);
    assert_int_equal(p.rows, 8); /* padded rows: windows of the next row are not one stride on */
    l = geom(1, 64, 64, 8, 8, 1, 1, 1, 1, 0);
    assert_true(tc__amx_plan_of(&l.s, l.cp, &p));
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
        const int n = tc__tactics_for(&tc__backend_cpu, ops[k], UINT64_MAX, t, 64);
        for (int i = 0; i < n; i++) {
            const tc__tactic *p = t[i]->proof;
            if (p == NULL) continue;
            with_proof++;
            assert_string_equal(p->op_type, t[i]->op_type);
            assert_int_equal(p->flags, t[i]->flags);
            assert_string_equal(p->precision, t[i]->precision);
            assert_true((p->caps & ~t[i]->caps) == 0);
            assert_null(p->proof);
        }
    }
    assert_int_equal(with_proof, 8); /* the AMX INT8 and BF16 Conv (plain and NCHW16c), MatMul and Gemm */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_plan_refuses),
        cmocka_unit_test(test_proofs_are_twins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
