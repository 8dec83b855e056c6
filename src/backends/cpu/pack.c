/*
 * pack.c - packing of GEMM operands into the panel layouts the microkernels read: B into
 * NR-column panels and A into MR-row panels, k-major, the last panel narrower (no padding), so a
 * packed matrix is a permutation of the original with the same size.
 */
#include <string.h>

#include "backends/cpu/gemm.h"

#define PREFETCH_ROWS 16

void tc__gemm_pack_b_f32(size_t k, size_t n, size_t nr, const float *src, size_t rs, size_t cs, float *dst) {
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const size_t w = n - j0 < nr ? n - j0 : nr;
        float *d = dst + j0 * k;
        const float *s = src + j0 * cs;
        if (cs == 1) {
            /* Rows are far apart (often a whole activation away from the core): ask for the rows a
             * few steps ahead, as no hardware prefetcher follows this pattern. */
            for (size_t p = 0; p < k; p++) {
                if (p + PREFETCH_ROWS < k) {
                    const float *ahead = s + (p + PREFETCH_ROWS) * rs;
                    __builtin_prefetch(ahead);
                    __builtin_prefetch(ahead + w - 1);
                }
                memcpy(d + p * w, s + p * rs, w * sizeof(float));
            }
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
                memcpy(d + p * h, s + p * cs, h * sizeof(float));
        } else {
            for (size_t ii = 0; ii < h; ii++)
                for (size_t p = 0; p < k; p++)
                    d[p * h + ii] = s[ii * rs + p * cs];
        }
    }
}
