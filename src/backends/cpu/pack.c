/*
 * pack.c - packing of GEMM operands into the panel layouts the microkernels read: B into
 * NR-column panels and A into MR-row panels, k-major, the last panel narrower (no padding), so a
 * packed matrix is a permutation of the original with the same size.
 */
#include <string.h>

#include "backends/cpu/gemm.h"

/* n floats from s to d in fixed-size memcpy pieces the compiler inlines: a libc call per panel row
 * costs about as much as the copy (runtime B tiles: 10% of a GEMM with M = 64). */
static inline void copy_floats(float *d, const float *s, size_t n) {
    size_t t = 0;
    for (; t + 8 <= n; t += 8)
        memcpy(d + t, s + t, 8 * sizeof(float));
    for (; t < n; t++)
        d[t] = s[t];
}

void tc__gemm_pack_b_f32(size_t k, size_t n, size_t nr, const float *src, size_t rs, size_t cs, float *dst) {
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const size_t w = n - j0 < nr ? n - j0 : nr;
        float *d = dst + j0 * k;
        const float *s = src + j0 * cs;
        if (cs == 1) {
            for (size_t p = 0; p < k; p++)
                copy_floats(d + p * w, s + p * rs, w);
        } else { /* transposed source: read along k */
            for (size_t jj = 0; jj < w; jj++)
                for (size_t p = 0; p < k; p++)
                    d[p * w + jj] = s[p * rs + jj * cs];
        }
    }
}

void tc__gemm_pack_a_f32(size_t m, size_t k, size_t mr, const float *src, size_t rs, size_t cs, float *dst) {
    for (size_t i0 = 0; i0 < m; i0 += mr) {
        const size_t h = m - i0 < mr ? m - i0 : mr;
        float *d = dst + i0 * k;
        const float *s = src + i0 * rs;
        if (rs == 1) {
            for (size_t p = 0; p < k; p++)
                copy_floats(d + p * h, s + p * cs, h);
        } else {
            for (size_t ii = 0; ii < h; ii++)
                for (size_t p = 0; p < k; p++)
                    d[p * h + ii] = s[ii * rs + p * cs];
        }
    }
}
