/*
 * test_cpu_qimage_mul.c - the per-channel Mul that writes an INT8 reader's image (qimage.h, mul_int8_image_avx2)
 * against a scalar quantization of fl(x * s): every image format (u7 bytes of max(q, 0), 16-bit centred codes, u8
 * codes with a zero point), padding borders, channel counts rounded up, widths that are not multiples of 8, scales of
 * one row or one per image (batch 2), either operand order, values that saturate (at 255, or 127 for 7-bit codes), 1
 * thread and a 2-thread pool; and
 * the steps the tactic refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include "core/thread_pool.h"

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/qimage.h"
#include "core/quant_attr.h"

typedef struct mcase {
    int64_t n, c, h, w;
    int64_t pt, pl, pb, pr; /* the image's padding */
    int fmt;                /* TC__INT8_IMG_U7, _S16, _U8 */
    int zp, lo;
    bool per_image, rank3, swap;
    int hi; /* the highest code: 127, or 255 */
} mcase;

static size_t up4(size_t v) { return (v + 3) / 4 * 4; }

/* The image element at (n, row, col, ch) as the reader's own conversion writes it. */
static int32_t want_elem(const mcase *k, const float *x, const float *s, float scale, int64_t n, int64_t row,
                         int64_t col, int64_t ch) {
    const int32_t fill = k->fmt == TC__INT8_IMG_U8 ? k->zp : 0;
    const int64_t r = row - k->pt, cc = col - k->pl;
    if (r < 0 || r >= k->h || cc < 0 || cc >= k->w || ch >= k->c) return fill;
    const float v = x[((n * k->c + ch) * k->h + r) * k->w + cc] * s[(k->per_image ? n * k->c : 0) + ch];
    const int32_t u = tc__q_code_in(v, 1.0f / scale, (uint8_t)k->zp, (uint8_t)k->lo, (uint8_t)k->hi);
    const int32_t q = u - k->zp;
    return k->fmt == TC__INT8_IMG_U7 ? (q > 0 ? q : 0) : k->fmt == TC__INT8_IMG_S16 ? q : u;
}

static void run_case(const mcase *k, tc__pool_t pool) {
    dtu_rng rng = {0x1234567ull + (uint64_t)(k->c * 131 + k->w)};
    const int64_t xd[4] = {k->n, k->c, k->h, k->w};
    const int64_t sd4[4] = {k->per_image ? k->n : 1, k->c, 1, 1}, sd3[3] = {k->c, 1, 1};
    tc__tensor x = dtu_random(&rng, TC_DTYPE_FLOAT32, 4, xd);
    tc__tensor s = k->rank3 ? dtu_random(&rng, TC_DTYPE_FLOAT32, 3, sd3) : dtu_random(&rng, TC_DTYPE_FLOAT32, 4, sd4);
    tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, 4, xd);
    const float scale = 2.0f / 127.0f; /* products up to 4: some codes saturate */
    const size_t hp = (size_t)(k->h + k->pt + k->pb), wp = (size_t)(k->w + k->pl + k->pr), cp = up4((size_t)k->c);
    const int64_t img[9] = {(int64_t)hp, (int64_t)wp, (int64_t)cp, k->pt, k->pl, k->zp, k->lo, k->fmt, k->hi};
    tc__attr items[2] = {dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, img, k->hi == 255 ? 8 : 9),
                         dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, scale)};
    const tc__attrs attrs = {2, items};
    const tc__tensor *in[2] = {k->swap ? &s : &x, k->swap ? &x : &s}, *out_c[1] = {&y};
    tc__tensor *out[1] = {&y};
    const bool in_const[2] = {false, false};
    const tc__epilogue none = tc__epilogue_none();
    const tc__step_desc d = {.op_type = "Mul", .opset = 17, .attrs = &attrs, .n_in = 2, .in = in, .in_const = in_const,
                             .n_out = 1, .out = out_c, .epi = &none};
    const tc__tactic *t = &tc__tactic_mul_int8_image_avx2;
    assert_true(t->supports(&d));
    tc__err err = {0};
    tc__kernel_ctx kc = {.node_name = "scale", .op_type = "Mul", .opset = 17, .attrs = &attrs, .n_in = 2, .in = in,
                         .n_out = 1, .out = out, .err = &err, .epi = &none, .exec = pool};
    if (t->run(&kc) != TC_STATUS_OK) fail_msg("run: %s", err.msg);
    const size_t esz = k->fmt == TC__INT8_IMG_S16 ? 2 : 1;
    const uint8_t *b = y.data;
    for (int64_t n = 0; n < k->n; n++)
        for (size_t row = 0; row < hp; row++)
            for (size_t col = 0; col < wp; col++)
                for (size_t ch = 0; ch < cp; ch++) {
                    const size_t at = ((size_t)n * hp * wp + row * wp + col) * cp + ch;
                    int32_t got;
                    if (esz == 2) {
                        int16_t v;
                        memcpy(&v, b + 2 * at, 2);
                        got = v;
                    } else {
                        got = b[at];
                    }
                    const int32_t want = want_elem(k, x.data, s.data, scale, n, (int64_t)row, (int64_t)col, (int64_t)ch);
                    if (got != want)
                        fail_msg("fmt %d c %d w %d: image[%d][%zu][%zu][%zu] = %d, want %d", k->fmt, (int)k->c, (int)k->w,
                                 (int)n, row, col, ch, got, want);
                }
    tc__tensor_free(&x), tc__tensor_free(&s), tc__tensor_free(&y);
}

static void test_formats(void **state) {
    (void)state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2) skip();
    const mcase cases[] = {
        {1, 16, 9, 9, 0, 0, 0, 0, TC__INT8_IMG_U8, 128, 1, false, false, false, 255},
        {1, 13, 7, 11, 1, 1, 1, 1, TC__INT8_IMG_U8, 140, 0, false, true, true, 255}, /* Cp 16, padded, [C,1,1], s first */
        {2, 24, 5, 17, 0, 0, 0, 0, TC__INT8_IMG_S16, 128, 1, true, false, false, 255}, /* one scale row per image */
        {1, 3, 1, 1, 0, 0, 0, 0, TC__INT8_IMG_S16, 128, 1, false, false, false, 255},
        {2, 40, 6, 8, 2, 1, 0, 3, TC__INT8_IMG_U7, 128, 1, true, false, true, 255},
        {1, 8, 3, 23, 0, 2, 1, 0, TC__INT8_IMG_U7, 128, 1, false, true, false, 255},
        {1, 20, 4, 13, 1, 0, 0, 1, TC__INT8_IMG_U8, 5, 0, false, false, false, 127}, /* 7-bit codes: saturate at 127 */
    };
    tc__pool_t pool = tc__pool_create(2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], NULL);
        run_case(&cases[i], pool);
    }
    tc__pool_destroy(pool);
}

/* Steps that are not a per-channel Mul with a valid image are refused. */
static void test_refuses(void **state) {
    (void)state;
    dtu_rng rng = {7};
    const int64_t xd[4] = {1, 8, 4, 4}, sd[4] = {1, 8, 1, 1}, bad_sd[4] = {1, 8, 4, 1};
    tc__tensor x = dtu_random(&rng, TC_DTYPE_FLOAT32, 4, xd), s = dtu_random(&rng, TC_DTYPE_FLOAT32, 4, sd);
    tc__tensor sb = dtu_random(&rng, TC_DTYPE_FLOAT32, 4, bad_sd), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, xd);
    const tc__tensor *out[1] = {&y};
    const bool in_const[2] = {false, false};
    const tc__epilogue none = tc__epilogue_none();
    const int64_t good[8] = {4, 4, 8, 0, 0, 128, 1, TC__INT8_IMG_U8};
    const int64_t own[7] = {4, 4, 8, 0, 0, 128, 1};                      /* no format */
    const int64_t u7_zp[8] = {4, 4, 8, 0, 0, 120, 0, TC__INT8_IMG_U7};   /* u7 bytes need symmetric codes */
    const int64_t too_big[8] = {40, 40, 8, 0, 0, 128, 1, TC__INT8_IMG_S16}; /* beyond Y's bytes */
    struct {
        const int64_t *img;
        size_t n;
        const tc__tensor *s;
        float scale;
        bool ok;
    } cases[] = {{good, 8, &s, 0.1f, true}, {good, 8, &sb, 0.1f, false}, {own, 7, &s, 0.1f, false},
                 {u7_zp, 8, &s, 0.1f, false}, {too_big, 8, &s, 0.1f, false}, {good, 8, &s, 0.0f, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc__attr items[2] = {dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, cases[i].img, cases[i].n),
                             dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, cases[i].scale)};
        const tc__attrs attrs = {2, items};
        const tc__tensor *in[2] = {&x, cases[i].s};
        const tc__step_desc d = {.op_type = "Mul", .opset = 17, .attrs = &attrs, .n_in = 2, .in = in,
                                 .in_const = in_const, .n_out = 1, .out = out, .epi = &none};
        if (tc__tactic_mul_int8_image_avx2.supports(&d) != cases[i].ok) fail_msg("case %zu", i);
        if (i == 0) { /* no image attribute: refused (never a tuning candidate) */
            const tc__attrs empty = {0, NULL};
            tc__step_desc e = d;
            e.attrs = &empty;
            assert_false(tc__tactic_mul_int8_image_avx2.supports(&e));
        }
    }
    tc__tensor_free(&x), tc__tensor_free(&s), tc__tensor_free(&sb), tc__tensor_free(&y);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
