/*
 * im2col_f32_avx512.c - the AVX-512 im2col packer (see im2col_f32.h). Per panel of the tile, the
 * input offset and output position of each column are computed once into vectors; then each row
 * k = (c, kd, kh, kw) of the panel costs a few vector compares (which columns read the input and
 * which are padding) and one masked load (columns contiguous in the input: stride 1 within an
 * output row) or a masked gather per 16 columns, stored with a mask. Padding lanes are never read.
 * Inputs too large for 32-bit offsets use the portable packer.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/im2col_f32.h"

#define MAX_VECS 4  /* panels up to 64 columns */
#define MAX_TAPS 64 /* kernel positions with precomputed masks (7x7 fits) */

void tc__im2col_f32_pack_avx512(const void *ctx, size_t batch, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                                float *dst) {
    const tc__im2col_f32 *g = ctx;
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];
    const int64_t isp = ID * IH * IW;
    /* Offsets (input and padded positions) must fit in 32-bit lanes. */
    int64_t reach = 0;
    for (int d = 0; d < 3; d++)
        reach += g->out[d] * g->stride[d] + g->kernel[d] * g->dilation[d] + g->pad[d];
    if (nr > 16 * MAX_VECS || isp * 4 + reach * 4 > INT32_MAX) {
        tc__im2col_f32_pack(ctx, batch, k0, kc, j0, nc, nr, dst);
        return;
    }
    const size_t cin_g = g->channels / g->groups, n = batch / g->groups, grp = batch % g->groups;
    const float *xg = g->x + (n * g->channels + grp * cin_g) * (size_t)isp;
    const size_t ksp = (size_t)(KD * KH * KW);
    for (size_t j = j0; j < j0 + nc;) {
        const size_t w = j0 + nc - j < nr ? j0 + nc - j : nr, nv = (w + 15) / 16;
        /* Per column t of the panel: od * sd, oh * sh, ow * sw and its input offset at kernel position 0. */
        int32_t pd[16 * MAX_VECS], ph[16 * MAX_VECS], pw[16 * MAX_VECS], pb[16 * MAX_VECS];
        int64_t ow = (int64_t)(j % (size_t)OW), oh = (int64_t)(j / (size_t)OW % (size_t)OH),
                od = (int64_t)(j / (size_t)(OW * OH));
        bool contiguous = true;
        for (size_t t = 0; t < 16 * nv; t++) {
            pd[t] = (int32_t)(od * g->stride[0]);
            ph[t] = (int32_t)(oh * g->stride[1]);
            pw[t] = (int32_t)(ow * g->stride[2]);
            pb[t] = (int32_t)(((int64_t)pd[t] * IH + ph[t]) * IW + pw[t]);
            if (t < w && pb[t] != pb[0] + (int32_t)t) contiguous = false;
            if (++ow == OW) {
                ow = 0;
                if (++oh == OH) {
                    oh = 0;
                    od++;
                }
            }
        }
        __m512i vd[MAX_VECS], vh[MAX_VECS], vw[MAX_VECS], vb[MAX_VECS];
        __mmask16 store[MAX_VECS];
        for (size_t v = 0; v < nv; v++) {
            vd[v] = _mm512_loadu_si512(pd + 16 * v);
            vh[v] = _mm512_loadu_si512(ph + 16 * v);
            vw[v] = _mm512_loadu_si512(pw + 16 * v);
            vb[v] = _mm512_loadu_si512(pb + 16 * v);
            const size_t lanes = w - 16 * v < 16 ? w - 16 * v : 16;
            store[v] = (__mmask16)(lanes == 16 ? 0xffffu : (1u << lanes) - 1u);
        }
        const __m512i lim_d = _mm512_set1_epi32((int32_t)ID), lim_h = _mm512_set1_epi32((int32_t)IH),
                      lim_w = _mm512_set1_epi32((int32_t)IW);
        /* Per kernel position r = (kd, kh, kw): which columns read the input, and the input shift. */
        __mmask16 valid[MAX_TAPS][MAX_VECS];
        int64_t shift[MAX_TAPS];
        const size_t taps = ksp < MAX_TAPS ? ksp : MAX_TAPS;
        for (size_t rr = 0; rr < taps; rr++) {
            const int64_t offd = (int64_t)(rr / (size_t)(KH * KW)) * g->dilation[0] - g->pad[0],
                          offh = (int64_t)(rr / (size_t)KW % (size_t)KH) * g->dilation[1] - g->pad[1],
                          offw = (int64_t)(rr % (size_t)KW) * g->dilation[2] - g->pad[2];
            shift[rr] = (offd * IH + offh) * IW + offw;
            const __m512i od_ = _mm512_set1_epi32((int32_t)offd), oh_ = _mm512_set1_epi32((int32_t)offh),
                          ow_ = _mm512_set1_epi32((int32_t)offw);
            for (size_t v = 0; v < nv; v++) /* unsigned compares: negative positions are out of range too */
                valid[rr][v] =
                    _mm512_mask_cmplt_epu32_mask(
                        _mm512_mask_cmplt_epu32_mask(_mm512_cmplt_epu32_mask(_mm512_add_epi32(vd[v], od_), lim_d),
                                                     _mm512_add_epi32(vh[v], oh_), lim_h),
                        _mm512_add_epi32(vw[v], ow_), lim_w) &
                    store[v];
        }
        float *panel = dst + (j - j0) * kc;
        size_t c = k0 / ksp, r = k0 % ksp;
        for (size_t kk = 0; kk < kc; kk++) {
            const float *plane = xg + c * (size_t)isp;
            float *d = panel + kk * w;
            if (r < taps) {
                for (size_t v = 0; v < nv; v++) {
                    const __mmask16 m = valid[r][v];
                    __m512 x;
                    if (m == 0) {
                        x = _mm512_setzero_ps();
                    } else if (contiguous) {
                        /* As an integer: for padding lanes the address may lie outside the plane. */
                        const uintptr_t at =
                            (uintptr_t)plane + (uintptr_t)(((int64_t)pb[0] + (int64_t)(16 * v) + shift[r]) * 4);
                        x = _mm512_maskz_loadu_ps(m, (const void *)at);
                    } else {
                        const __m512i idx = _mm512_add_epi32(vb[v], _mm512_set1_epi32((int32_t)shift[r]));
                        x = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, plane, 4);
                    }
                    _mm512_mask_storeu_ps(d + 16 * v, store[v], x);
                }
            } else { /* a kernel with more taps than the table: compute the masks here */
                const int64_t offd = (int64_t)(r / (size_t)(KH * KW)) * g->dilation[0] - g->pad[0],
                              offh = (int64_t)(r / (size_t)KW % (size_t)KH) * g->dilation[1] - g->pad[1],
                              offw = (int64_t)(r % (size_t)KW) * g->dilation[2] - g->pad[2];
                const __m512i od_ = _mm512_set1_epi32((int32_t)offd), oh_ = _mm512_set1_epi32((int32_t)offh),
                              ow_ = _mm512_set1_epi32((int32_t)offw),
                              sh_ = _mm512_set1_epi32((int32_t)((offd * IH + offh) * IW + offw));
                for (size_t v = 0; v < nv; v++) {
                    const __mmask16 m =
                        _mm512_mask_cmplt_epu32_mask(
                            _mm512_mask_cmplt_epu32_mask(_mm512_cmplt_epu32_mask(_mm512_add_epi32(vd[v], od_), lim_d),
                                                         _mm512_add_epi32(vh[v], oh_), lim_h),
                            _mm512_add_epi32(vw[v], ow_), lim_w) &
                        store[v];
                    const __m512 x =
                        _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_add_epi32(vb[v], sh_), plane, 4);
                    _mm512_mask_storeu_ps(d + 16 * v, store[v], x);
                }
            }
            if (++r == ksp) {
                r = 0;
                c++;
            }
        }
        j += w;
    }
}
