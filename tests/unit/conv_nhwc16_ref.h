/* conv_nhwc16_ref.h - host reference for the FP16 NHWC convolution kernels' device tests: random FP16 data (never all
 * zero) and y = act(conv(x, w) + bias + residual) in double precision over the FP16 values, NHWC image, KRSC filter
 * (cuDNN's NHWC filter, as cuda_conv_fp16_cudnn packs it), symmetric pads, one group. */
#ifndef TC_TESTS_CONV_NHWC16_REF_H
#define TC_TESTS_CONV_NHWC16_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

typedef struct cnr_geom {
    int32_t n, c, h, w, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw;
} cnr_geom;

/* Output size of one dimension (symmetric pads). */
static inline int32_t cnr_out(int32_t in, int32_t k, int32_t pad, int32_t stride, int32_t dil) {
    return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

/* n FP16 values uniform in [-scale, scale) from a 64-bit LCG (*seed advances). */
static inline void cnr_fill(uint16_t *v, int64_t n, float scale, uint64_t *seed) {
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        const float u = (float)((*seed >> 40) & 0xFFFFFF) / 16777216.0f; /* [0, 1) */
        v[i] = tc__f32_to_f16((2.0f * u - 1.0f) * scale);
    }
}

/* want[n][oh][ow][k] (double) = act(sum x*w + bias[k] + res[...]); bias and res may be NULL. */
static inline void cnr_conv(const cnr_geom *g, const uint16_t *x, const uint16_t *w, const uint16_t *bias,
                            const uint16_t *res, bool relu, double *want) {
    for (int32_t b = 0; b < g->n; b++)
        for (int32_t p = 0; p < g->oh; p++)
            for (int32_t q = 0; q < g->ow; q++)
                for (int32_t k = 0; k < g->k; k++) {
                    double acc = 0.0;
                    for (int32_t i = 0; i < g->r; i++) {
                        const int32_t ih = p * g->sh - g->ph + i * g->dh;
                        if (ih < 0 || ih >= g->h) continue;
                        for (int32_t j = 0; j < g->s; j++) {
                            const int32_t iw = q * g->sw - g->pw + j * g->dw;
                            if (iw < 0 || iw >= g->w) continue;
                            const uint16_t *xp = x + (((int64_t)b * g->h + ih) * g->w + iw) * g->c;
                            const uint16_t *wp = w + (((int64_t)k * g->r + i) * g->s + j) * g->c;
                            for (int32_t c = 0; c < g->c; c++)
                                acc += (double)tc__f16_to_f32(xp[c]) * (double)tc__f16_to_f32(wp[c]);
                        }
                    }
                    const int64_t o = (((int64_t)b * g->oh + p) * g->ow + q) * g->k + k;
                    if (bias != NULL) acc += tc__f16_to_f32(bias[k]);
                    if (res != NULL) acc += tc__f16_to_f32(res[o]);
                    if (relu && acc < 0.0) acc = 0.0;
                    want[o] = acc;
                }
}

/* Whether an FP16 result got is within FP16's accuracy of want: |got - want| <= atol + rtol * |want|, NaN never. */
static inline bool cnr_close(uint16_t got, double want, double atol, double rtol) {
    const double v = tc__f16_to_f32(got);
    const double d = v - want;
    return v == v && (d < 0 ? -d : d) <= atol + rtol * (want < 0 ? -want : want);
}

#endif
