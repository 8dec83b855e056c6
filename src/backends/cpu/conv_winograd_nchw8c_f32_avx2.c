/*
 * conv_winograd_nchw8c_f32_avx2.c - Winograd F(4x4, 3x3) on NCHW8c with AVX2 (conv_winograd_f32.h): the body
 * conv_winograd_nchwc_f32_body.h with ymm vectors of 8 channels, plus the filter transform, which this tactic runs
 * at every run into scratch (U[e] C_in x C_out in the 6x16 GEMM's NR-column panels; one block of 8 output channels
 * per task).
 */
#include "backends/cpu/blocked_vec_avx2.h"
#include "backends/cpu/conv_winograd_f32_transform.h"
#include "backends/cpu/conv_winograd_nchwc_f32_body.h"

/* U[e](ci, co) = (G g G^T)[e], lanes = 8 output channels. */
static void w8_filter_task(void *ctx, size_t cb) {
    const wc_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t co0 = cb * BV_L, plane = g->cin * g->cout;
    const __m256i stride = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32((int32_t)(g->cin * 9)));
    float *u0 = (float *)jb->u; /* this tactic's scratch */
    for (size_t ci = 0; ci < g->cin; ci++) {
        const float *k = jb->w + (co0 * g->cin + ci) * 9;
        BV_V kk[9], o[36];
        for (int i = 0; i < 9; i++)
            kk[i] = _mm256_i32gather_ps(k + i, stride, 4);
        wino_filter_2d(kk, o);
        /* co0 .. co0 + 7 are contiguous in their panel: C_out % 8 == 0 and NR % 8 == 0. */
        float *u = u0 + tc__wino_pack_b_off(ci, co0, g->cin, g->cout, jb->nr);
        for (int e = 0; e < 36; e++)
            BV_STOREU(u + (size_t)e * plane, o[e]);
    }
}

tc_status tc__conv_winograd_nchw8c_f32_run_avx2(const tc__kernel_ctx *ctx) {
    return wc_run(ctx, &tc__gemm_config_f32_avx2, "conv_winograd_nchw8c_f32_avx2", w8_filter_task);
}
