/*
 * gemm_act_f32_scalar.c - the activations GEMM microkernels do not apply as a clamp, in place on a
 * stored C tile, one value at a time with the reference formulas (tc__act_eval, in double).
 */
#include "backends/cpu/gemm.h"

void tc__gemm_act_f32_scalar(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float *p = c + i * ldc + j;
            *p = (float)tc__act_eval((tc__act)e->act, *p, e->act_alpha, e->act_beta);
        }
}
