/*
 * conv_f32.cu - FP32 2-D convolution kernels (conv_f32.h).
 *
 * conv_igemm: per group g, the GEMM Y_g (cout_g x N*OH*OW) = W_g (cout_g x K) * B_g (K x N*OH*OW) with
 * K = cin_g * KH * KW and B_g the implicit im2col of X (gathered while loading the shared-memory tile, zero where
 * the window leaves X). 64 x 64 output tiles over 16-deep K slices, 256 threads of 4 x 4 outputs each, the next
 * slice prefetched into registers while the current one is multiplied. Plain FP32 FMAs (no tensor cores, no TF32),
 * summing each output over K in increasing order.
 *
 * conv_direct: one thread per output element (grid-stride), summing over its group's input channels and kernel
 * taps: depthwise and grouped convolutions whose GEMMs would be too thin for the tiles.
 */
#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/conv_f32.h"

#include <stdint.h>

namespace {

constexpr int BM = 64, BN = 64, BK = 16, THREADS = 256;
constexpr int AS_LD = BM + 4; /* padded row of the transposed weight tile (16-byte aligned rows) */

__global__ void __launch_bounds__(THREADS) conv_igemm(const tc__cuda_conv2d p) {
    __shared__ __align__(16) float As[BK][AS_LD]; /* As[k][m] */
    __shared__ __align__(16) float Bs[BK][BN];    /* Bs[k][j] */

    const int t = (int)threadIdx.x;
    const int64_t cin_g = p.c / p.group, cout_g = p.m / p.group;
    const int KW = (int)p.kw, KHW = (int)(p.kh * p.kw), K = (int)(cin_g * KHW);
    const int64_t OHW = p.oh * p.ow, HW = p.h * p.w_in, ncols = p.n * OHW;
    const int64_t mt = (cout_g + BM - 1) / BM, nt = (ncols + BN - 1) / BN, tiles = p.group * mt * nt;

    /* loader roles: A: row am, columns ak0..ak0+3 of the slice; B: column bj, rows bk0, bk0 + 4, ... */
    const int am = t / 4, ak0 = (t % 4) * 4;
    const int bj = t % BN, bk0 = t / BN;
    /* compute role: rows ty*4 .. ty*4+3, columns tx*4 .. tx*4+3 of the tile */
    const int tx = t % 16, ty = t / 16;

    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t ntile = tile % nt, rest = tile / nt;
        const int64_t m0 = (rest % mt) * BM, g = rest / mt;
        const int64_t j0 = ntile * BN;

        /* this thread's A row */
        const bool a_ok = m0 + am < cout_g;
        const float *wrow = p.w + (g * cout_g + (a_ok ? m0 + am : 0)) * (int64_t)K;
        /* this thread's B column */
        const int64_t jb = j0 + bj;
        const bool b_ok = jb < ncols;
        int64_t ih0 = 0, iw0 = 0;
        const float *xb = p.x;
        if (b_ok) {
            const int64_t img = jb / OHW, pix = jb % OHW;
            ih0 = (pix / p.ow) * p.sh - p.ph;
            iw0 = (pix % p.ow) * p.sw - p.pw;
            xb = p.x + (img * p.c + g * cin_g) * HW;
        }

        float ra[4], rb[4];
        auto load = [&](int k0) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int k = k0 + ak0 + i;
                ra[i] = a_ok && k < K ? wrow[k] : 0.0f;
            }
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int k = k0 + bk0 + 4 * i;
                float v = 0.0f;
                if (b_ok && k < K) {
                    const int c = k / KHW, r = k - c * KHW;
                    const int kh = r / KW, kw = r - kh * KW;
                    const int64_t ih = ih0 + kh * p.dh, iw = iw0 + kw * p.dw;
                    if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w_in) v = xb[c * HW + ih * p.w_in + iw];
                }
                rb[i] = v;
            }
        };

        float acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;

        load(0);
        for (int k0 = 0; k0 < K; k0 += BK) {
            __syncthreads(); /* the previous slice has been read */
#pragma unroll
            for (int i = 0; i < 4; i++) As[ak0 + i][am] = ra[i];
#pragma unroll
            for (int i = 0; i < 4; i++) Bs[bk0 + 4 * i][bj] = rb[i];
            __syncthreads();
            if (k0 + BK < K) load(k0 + BK); /* in flight during the products below */
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                const float4 a = *reinterpret_cast<const float4 *>(&As[kk][ty * 4]);
                const float4 b = *reinterpret_cast<const float4 *>(&Bs[kk][tx * 4]);
                const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
        }

        /* epilogue: conv bias, fused epilogue, store */
        int64_t ybase[4];
        bool col_ok[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int64_t col = j0 + tx * 4 + j;
            col_ok[j] = col < ncols;
            const int64_t img = col_ok[j] ? col / OHW : 0, pix = col_ok[j] ? col % OHW : 0;
            ybase[j] = img * p.m * OHW + pix;
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t m = m0 + ty * 4 + i;
            if (m >= cout_g) continue;
            const int64_t oc = g * cout_g + m;
            const float bias = p.b != nullptr ? p.b[oc] : 0.0f;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (!col_ok[j]) continue;
                const int64_t o = ybase[j] + oc * OHW;
                p.y[o] = tc_cnn_epi(acc[i][j] + bias, o, p.epi);
            }
        }
    }
}

/* One thread per output element; I is the type of the flat output index (32-bit when the output allows). */
template <typename I>
__global__ void __launch_bounds__(256) conv_direct(const tc__cuda_conv2d p, I total) {
    const int64_t cin_g = p.c / p.group, cout_g = p.m / p.group, HW = p.h * p.w_in;
    const I OW = (I)p.ow, OH = (I)p.oh, M = (I)p.m;
    const int KH = (int)p.kh, KW = (int)p.kw;
    for (I idx = (I)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (I)gridDim.x * blockDim.x) {
        const I ow = idx % OW;
        I r = idx / OW;
        const I oh = r % OH;
        r /= OH;
        const I oc = r % M, img = r / M;
        const int64_t g = (int64_t)oc / cout_g;
        const int64_t ih0 = (int64_t)oh * p.sh - p.ph, iw0 = (int64_t)ow * p.sw - p.pw;
        /* taps inside X: kh in [kh0, kh1), kw in [kw0, kw1) */
        int kh0 = 0, kh1 = KH, kw0 = 0, kw1 = KW;
        while (kh0 < KH && ih0 + kh0 * p.dh < 0) kh0++;
        while (kh1 > kh0 && ih0 + (kh1 - 1) * p.dh >= p.h) kh1--;
        while (kw0 < KW && iw0 + kw0 * p.dw < 0) kw0++;
        while (kw1 > kw0 && iw0 + (kw1 - 1) * p.dw >= p.w_in) kw1--;
        const float *xp = p.x + ((int64_t)img * p.c + g * cin_g) * HW; /* the group's first input plane */
        const float *wp = p.w + (int64_t)oc * cin_g * KH * KW;
        float acc = 0.0f;
        for (int64_t c = 0; c < cin_g; c++, xp += HW, wp += KH * KW)
            for (int kh = kh0; kh < kh1; kh++) {
                const int64_t row = (ih0 + kh * p.dh) * p.w_in; /* ih in [0, H) */
                const float *wr = wp + kh * KW;
                for (int kw = kw0; kw < kw1; kw++) acc = fmaf(wr[kw], xp[row + iw0 + kw * p.dw], acc);
            }
        if (p.b != nullptr) acc += p.b[oc];
        p.y[idx] = tc_cnn_epi(acc, (int64_t)idx, p.epi);
    }
}

} // namespace

extern "C" bool tc__cuda_conv2d_f32_fits(const tc__cuda_conv2d *p) {
    const int64_t lim = INT32_MAX;
    if (p->group < 1 || p->c % p->group != 0 || p->m % p->group != 0) return false;
    if (p->kh < 1 || p->kw < 1 || p->kh > lim || p->kw > lim || p->kh * p->kw > lim) return false;
    if (p->c / p->group > lim / (p->kh * p->kw)) return false; /* K = cin_g * KH * KW */
    if (p->oh < 0 || p->ow < 0 || (p->ow > 0 && p->oh > lim / p->ow)) return false;
    return p->m / p->group <= lim;
}

extern "C" cudaError_t tc__cuda_conv2d_f32(const tc__cuda_conv2d *p, cudaStream_t s) {
    const int64_t total = p->n * p->m * p->oh * p->ow;
    if (total <= 0) return cudaSuccess;
    const int64_t cin_g = p->c / p->group, cout_g = p->m / p->group, K = cin_g * p->kh * p->kw;
    if (cout_g >= 16 && K >= 16) {
        const int64_t ncols = p->n * p->oh * p->ow;
        const int64_t tiles = p->group * ((cout_g + BM - 1) / BM) * ((ncols + BN - 1) / BN);
        const unsigned blocks = (unsigned)(tiles < ((int64_t)1 << 20) ? tiles : ((int64_t)1 << 20));
        conv_igemm<<<blocks, THREADS, 0, s>>>(*p);
    } else if (total <= INT32_MAX) {
        conv_direct<uint32_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>(*p, (uint32_t)total);
    } else {
        conv_direct<int64_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>(*p, total);
    }
    return cudaGetLastError();
}
