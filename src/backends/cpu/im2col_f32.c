/*
 * im2col_f32.c - the portable im2col packer (see im2col_f32.h). Panel by panel (so writes are
 * sequential) and for each row k = (c, kd, kh, kw) of it (kernel position and channel advance
 * without divisions), the panel's columns are split into runs that lie in one output row (od, oh);
 * each run copies its in-bounds outputs (memcpy for stride 1, a strided gather otherwise) and zeroes
 * the padding.
 */
#include <string.h>

#include "backends/cpu/im2col_f32.h"

/* d[t] = row[(o_first + t) * sw + offw] for t in [a, b), 0 for the other t < cnt (row NULL: a == b). */
static void copy_chunk(float *d, size_t cnt, const float *row, int64_t o_first, int64_t sw, int64_t offw, size_t a,
                       size_t b) {
    if (a > 0) memset(d, 0, a * sizeof(float));
    if (b > a) {
        const float *src = row + (o_first + (int64_t)a) * sw + offw;
        if (sw == 1)
            memcpy(d + a, src, (b - a) * sizeof(float));
        else
            for (size_t t = a; t < b; t++, src += sw)
                d[t] = *src;
    }
    if (cnt > b) memset(d + b, 0, (cnt - b) * sizeof(float));
}

/* Outputs o in [*o0, *o1) of O whose input index o * s + off lies in [0, I). */
static void in_bounds(int64_t off, int64_t s, int64_t I, int64_t O, int64_t *o0, int64_t *o1) {
    /* ceil(-off / s) and floor((I - 1 - off) / s) + 1, for s > 0 and any sign */
    const int64_t a = -off, b = I - 1 - off;
    const int64_t lo = a >= 0 ? (a + s - 1) / s : -((-a) / s);
    const int64_t hi = (b >= 0 ? b / s : -((-b + s - 1) / s)) + 1;
    *o0 = lo < 0 ? 0 : (lo > O ? O : lo);
    *o1 = hi > O ? O : (hi < *o0 ? *o0 : hi);
}

/* A run of a panel's columns that lie in one output row: outputs ow .. ow + len - 1 of row (od, oh)
 * are the panel's columns t .. t + len - 1. */
typedef struct seg_t {
    int64_t d0, h0; /* od * stride_d, oh * stride_h */
    int64_t ow;
    size_t len, t;
} seg_t;

#define MAX_NR 64
#define KW_TABLE 16

void tc__im2col_f32_pack(const void *ctx, size_t batch, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                         float *dst) {
    const tc__im2col_f32 *g = ctx;
    const size_t cin_g = g->channels / g->groups, n = batch / g->groups, grp = batch % g->groups;
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];
    const int64_t sw = g->stride[2];
    const size_t isp = (size_t)(ID * IH * IW), ksp = (size_t)(KD * KH * KW);
    const float *xg = g->x + (n * g->channels + grp * cin_g) * isp;
    /* In-bounds outputs per kernel column (most kernels are narrow). */
    int64_t lo_tab[KW_TABLE], hi_tab[KW_TABLE];
    for (int64_t kw = 0; kw < KW && kw < KW_TABLE; kw++)
        in_bounds(kw * g->dilation[2] - g->pad[2], sw, IW, OW, &lo_tab[kw], &hi_tab[kw]);
    if (nr > MAX_NR) return; /* no microkernel is that wide */
    /* Panel by panel, so that the writes are sequential (a panel's rows are contiguous). */
    for (size_t j = j0; j < j0 + nc;) {
        const size_t w = j0 + nc - j < nr ? j0 + nc - j : nr;
        seg_t seg[MAX_NR];
        size_t nseg = 0;
        int64_t ow = (int64_t)(j % (size_t)OW), oh = (int64_t)(j / (size_t)OW % (size_t)OH),
                od = (int64_t)(j / (size_t)(OW * OH));
        for (size_t t = 0; t < w;) {
            const size_t len = (size_t)(OW - ow) < w - t ? (size_t)(OW - ow) : w - t;
            seg[nseg++] = (seg_t){od * g->stride[0], oh * g->stride[1], ow, len, t};
            t += len;
            ow = 0;
            if (++oh == OH) {
                oh = 0;
                od++;
            }
        }
        float *panel = dst + (j - j0) * kc;
        size_t c = k0 / ksp, r = k0 % ksp;
        int64_t kd = (int64_t)(r / (size_t)(KH * KW)), kh = (int64_t)(r / (size_t)KW % (size_t)KH),
                kw = (int64_t)(r % (size_t)KW);
        for (size_t kk = 0; kk < kc; kk++) {
            const int64_t offd = kd * g->dilation[0] - g->pad[0], offh = kh * g->dilation[1] - g->pad[1],
                          offw = kw * g->dilation[2] - g->pad[2];
            int64_t ow_lo, ow_hi;
            if (kw < KW_TABLE)
                ow_lo = lo_tab[kw], ow_hi = hi_tab[kw];
            else
                in_bounds(offw, sw, IW, OW, &ow_lo, &ow_hi);
            const float *plane = xg + c * isp;
            float *d = panel + kk * w;
            for (size_t s = 0; s < nseg; s++) {
                const int64_t id = seg[s].d0 + offd, ih = seg[s].h0 + offh;
                const float *row = (id >= 0 && id < ID && ih >= 0 && ih < IH) ? plane + (id * IH + ih) * IW : NULL;
                const size_t cnt = seg[s].len;
                size_t a = 0, b = 0; /* outputs [ow + a, ow + b) of the run read the row */
                if (row != NULL) {
                    const int64_t lo = ow_lo - seg[s].ow, hi = ow_hi - seg[s].ow;
                    a = lo <= 0 ? 0 : ((size_t)lo > cnt ? cnt : (size_t)lo);
                    b = hi <= (int64_t)a ? a : ((size_t)hi > cnt ? cnt : (size_t)hi);
                }
                copy_chunk(d + seg[s].t, cnt, row, seg[s].ow, sw, offw, a, b);
            }
            if (++kw == KW) { /* next kernel position, then channel */
                kw = 0;
                if (++kh == KH) {
                    kh = 0;
                    if (++kd == KD) {
                        kd = 0;
                        c++;
                    }
                }
            }
        }
        j += w;
    }
}
