/*
 * gemm_f32_scalar_4x8.c - the portable FP32 GEMM microkernel (baseline ISA, so every path runs on
 * any CPU): up to 4 rows x 8 columns of C in 4-lane accumulators written with GCC/Clang vector
 * extensions (baseline SIMD where the target has it, scalar code elsewhere). Same contract and
 * epilogue as the vector microkernels.
 */
#include <string.h>

#include "backends/cpu/gemm.h"

#define MR 4
#define NR 8

/* Four lanes with GCC/Clang vector extensions: SIMD on any target that has it (SSE2 on x86-64),
 * plain scalar code elsewhere. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p) {
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void kernel(const tc__gemm_tile *t, const int mr, const bool full) {
    const size_t nr = full ? NR : t->nr, kc = t->kc, rs_a = t->rs_a, cs_a = t->cs_a, rs_b = t->rs_b, ldc = t->ldc;
    v4f acc[MR][NR / 4];
    float *c = t->c;
    for (int i = 0; i < mr; i++) {
        float row[NR] = {0};
        if (t->load_c)
            for (size_t j = 0; j < nr; j++)
                row[j] = c[(size_t)i * ldc + j];
        for (int v = 0; v < NR / 4; v++)
            acc[i][v] = load4(row + 4 * v);
    }
    const float *b = t->b, *a = t->a;
    for (size_t k = 0; k < kc; k++) {
        v4f bv[NR / 4];
        if (full) {
            for (int v = 0; v < NR / 4; v++)
                bv[v] = load4(b + 4 * v);
        } else {
            float row[NR] = {0};
            for (size_t j = 0; j < nr; j++)
                row[j] = b[j];
            for (int v = 0; v < NR / 4; v++)
                bv[v] = load4(row + 4 * v);
        }
        b += rs_b;
        for (int i = 0; i < mr; i++) {
            const float av = a[(size_t)i * rs_a];
            const v4f avv = {av, av, av, av};
            for (int v = 0; v < NR / 4; v++)
                acc[i][v] += avv * bv[v]; /* no fmaf: a libm call without FMA hardware */
        }
        a += cs_a;
    }
    const tc__gemm_epi *e = t->epi;
    for (int i = 0; i < mr; i++) {
        float *cr = c + (size_t)i * ldc;
        for (size_t j = 0; j < nr; j++) {
            float v = acc[i][j / 4][j % 4];
            if (e != NULL) {
                v *= e->alpha;
                if (e->bias_m != NULL) v += e->bias_m[t->i0 + (size_t)i];
                if (e->bias_n != NULL) v += e->bias_n[t->j0 + j];
                if (e->res != NULL) v += e->res_scale * e->res[(t->i0 + (size_t)i) * e->ld_res + t->j0 + j];
                if (e->act == TC__ACT_RELU)
                    v = v > 0.0f ? v : 0.0f;
                else if (e->act == TC__ACT_CLIP)
                    v = v < e->act_alpha ? e->act_alpha : (v > e->act_beta ? e->act_beta : v);
            }
            cr[j] = v;
        }
    }
    if (e != NULL && !tc__gemm_act_is_clamp(e->act)) tc__gemm_act_f32_scalar(c, ldc, (size_t)mr, nr, e);
}

#define TC_KERNEL_ROWS_(n)                                                                                             \
    static void kernel_##n(const tc__gemm_tile *t) { kernel(t, n, true); }                                             \
    static void kernel_##n##_masked(const tc__gemm_tile *t) { kernel(t, n, false); }
TC_KERNEL_ROWS_(1)
TC_KERNEL_ROWS_(2)
TC_KERNEL_ROWS_(3)
TC_KERNEL_ROWS_(4)
#undef TC_KERNEL_ROWS_

void tc__gemm_f32_scalar_4x8(const tc__gemm_tile *t) {
    static void (*const kFull[MR + 1])(const tc__gemm_tile *) = {NULL, kernel_1, kernel_2, kernel_3, kernel_4};
    static void (*const kMasked[MR + 1])(const tc__gemm_tile *) = {NULL, kernel_1_masked, kernel_2_masked,
                                                                   kernel_3_masked, kernel_4_masked};
    if (t->mr < 1 || t->mr > MR || t->nr < 1 || t->nr > NR) return;
    (t->nr == NR ? kFull : kMasked)[t->mr](t);
}
