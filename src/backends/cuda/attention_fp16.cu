/*
 * attention_fp16.cu - fused attention on FP16 Tensor Cores (attention_fp16.h): one warp per 16 query rows of one head
 * (grid: row blocks x batch*heads), keys in tiles of 64 staged as FP16 in shared memory (K row-major, V transposed;
 * 16-byte loads of 8 elements, several in flight per lane, where the rows are aligned),
 * S = Q.K^T and O += P.V by mma.sync m16n8k16 (FP16 operands, FP32 sums), the softmax online over the tiles (running
 * row maximum and sum in float, as flash attention does). Q, K, V are FP32 (rounded to FP16 when staged) or FP16 row
 * images; Y is FP32 or an FP16 image. Scale, float or boolean masks through broadcast strides, a mask shorter than
 * the keys and causal masking as core/attention_geom.h; no softcap. A row whose keys are all masked gets 0/0 = NaN, as
 * the reference's softmax of -inf scores does; under the NaN guard (only with nan_to 0: the tactic refuses others)
 * such a row, or one with a NaN score, whose every probability the reference would replace by 0, gets 0.
 */
#include <cuda_fp16.h>
#include <math.h>

#include "backends/cuda/attention_fp16.h"
#include "backends/cuda/half_io.cuh"

namespace {

constexpr int kKt = 64;      /* keys per tile */
constexpr int kMaxD = TC__ATTN16_MAX_D;
constexpr int kPad = 8;      /* halves of padding per shared row (bank spread) */

__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const uint32_t *)&h;
}

__device__ __forceinline__ uint32_t ld2(const __half *p) { return *(const uint32_t *)p; }

/* Element (row, e) of a [rows, w] head with row stride si at base (FP16 when is16, else float), as FP16 (zero past
 * `rows`; finite floats beyond FP16's range saturate). */
__device__ __forceinline__ __half elem(const void *base, bool is16, int64_t si, int64_t row, int64_t rows, int e) {
    if (row >= rows) return __float2half_rn(0.0f);
    return is16 ? __ldg((const __half *)base + row * si + e) : tc_half_sat(__ldg((const float *)base + row * si + e));
}

/* Eight elements (row, e .. e + 7) of a head with row stride si at base as FP16 (zeros past `rows`); vec: the eight
 * are one aligned 16-byte (FP16) or two 16-byte (float) loads. */
__device__ __forceinline__ uint4 elem8(const void *base, bool is16, int64_t si, int64_t row, int64_t rows, int e,
                                       bool vec) {
    if (row >= rows) return make_uint4(0u, 0u, 0u, 0u);
    if (vec && is16) return __ldg((const uint4 *)((const __half *)base + row * si + e));
    union {
        uint4 u;
        __half h[8];
    } x;
    if (vec) {
        const float4 *f = (const float4 *)((const float *)base + row * si + e);
        const float4 p = __ldg(f), q = __ldg(f + 1);
        x.h[0] = tc_half_sat(p.x), x.h[1] = tc_half_sat(p.y), x.h[2] = tc_half_sat(p.z), x.h[3] = tc_half_sat(p.w);
        x.h[4] = tc_half_sat(q.x), x.h[5] = tc_half_sat(q.y), x.h[6] = tc_half_sat(q.z), x.h[7] = tc_half_sat(q.w);
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++) x.h[k] = elem(base, is16, si, row, rows, e + k);
    }
    return x.u;
}

/* True when every row of a head (row, head and batch strides si, sh, sb elements) at p takes elem8's vector loads. */
__device__ __forceinline__ bool vec8_ok(const void *p, bool is16, int64_t si, int64_t sh, int64_t sb) {
    return ((uintptr_t)p & (is16 ? 15u : 31u)) == 0 && si % 8 == 0 && sh % 8 == 0 && sb % 8 == 0;
}

/* Stages rows j0 .. j0 + R - 1 of a head (W elements each) into dst as FP16, row-major with pitch P halves, or
 * transposed (dst[e][row], pitch P) when T; every lane issues up to 8 loads of 8 elements before it stores any. */
template <int R, int W, int P, bool T>
__device__ __forceinline__ void stage16(__half *dst, const void *base, bool is16, int64_t si, int64_t j0, int64_t rows,
                                        bool vec, int lane) {
    constexpr int C8 = W / 8, N = R * C8 / 32; /* chunks per row, chunks per lane */
#pragma unroll
    for (int u0 = 0; u0 < N; u0 += 8) {
        uint4 r[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            if (u0 + u >= N) break;
            const int t = lane + 32 * (u0 + u), row = t / C8, c = t - row * C8;
            r[u] = elem8(base, is16, si, j0 + row, rows, c * 8, vec);
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
            if (u0 + u >= N) break;
            const int t = lane + 32 * (u0 + u), row = t / C8, c = t - row * C8;
            if (T) {
                const __half *hv = (const __half *)&r[u];
#pragma unroll
                for (int k = 0; k < 8; k++) dst[(c * 8 + k) * P + row] = hv[k];
            } else {
                *(uint4 *)(dst + row * P + c * 8) = r[u];
            }
        }
    }
}

/* The two query rows of a thread from its O fragments (columns n * 8 + qc, + 1), normalised. */
template <int DV, typename T>
__device__ __forceinline__ void store(T *yb, const tc__attn_geom &g, const float (&o)[DV / 8][4], int64_t i0, int64_t i1,
                                      int qc, float inv0, float inv1) {
#pragma unroll
    for (int n = 0; n < DV / 8; n++) {
        const int e = n * 8 + qc;
        if (i0 < g.s) tc_st(yb + i0 * g.y_si + e, o[n][0] * inv0), tc_st(yb + i0 * g.y_si + e + 1, o[n][1] * inv0);
        if (i1 < g.s) tc_st(yb + i1 * g.y_si + e, o[n][2] * inv1), tc_st(yb + i1 * g.y_si + e + 1, o[n][3] * inv1);
    }
}

/* Clears one row's O fragments (first = 0: the thread's first row, 2: its second). */
template <int DV>
__device__ __forceinline__ void zero_row(float (&o)[DV / 8][4], int first) {
#pragma unroll
    for (int n = 0; n < DV / 8; n++) o[n][first] = o[n][first + 1] = 0.0f;
}

template <int D, int DV>
__global__ void __launch_bounds__(32) attention16_kernel(const tc__cuda_attn_args a) {
    __shared__ __align__(16) __half qs[16][D + kPad];
    __shared__ __align__(16) __half ks[kKt][D + kPad];
    __shared__ __align__(16) __half vt[DV][kKt + kPad];
    const tc__attn_geom &g = a.g;
    const int lane = threadIdx.x;
    const int64_t bh = blockIdx.y, b = bh / g.hq, h = bh % g.hq, hk = h / (g.hq / g.hk);
    const int64_t r0 = (int64_t)blockIdx.x * 16;
    const int64_t q_at = b * g.q_sb + h * g.q_sh, k_at = b * g.k_sb + hk * g.k_sh, v_at = b * g.v_sb + hk * g.v_sh;
    const void *qb = a.q16 ? (const void *)((const __half *)a.q + q_at) : (const void *)((const float *)a.q + q_at);
    const void *kb = a.k16 ? (const void *)((const __half *)a.k + k_at) : (const void *)((const float *)a.k + k_at);
    const void *vb = a.v16 ? (const void *)((const __half *)a.v + v_at) : (const void *)((const float *)a.v + v_at);
    const bool vq = vec8_ok(a.q, a.q16, g.q_si, g.q_sh, g.q_sb), vk = vec8_ok(a.k, a.k16, g.k_si, g.k_sh, g.k_sb),
               vv = vec8_ok(a.v, a.v16, g.v_si, g.v_sh, g.v_sb);
    stage16<16, D, D + kPad, false>(&qs[0][0], qb, a.q16, g.q_si, r0, g.s, vq, lane);
    __syncwarp();
    /* Q's A fragments: rows lane/4 and lane/4 + 8, dims (lane%4)*2 + {0,1} (+8) of each 16-dim step */
    const int qr = lane >> 2, qc = (lane & 3) * 2;
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        qf[kk][0] = ld2(&qs[qr][kk * 16 + qc]);
        qf[kk][1] = ld2(&qs[qr + 8][kk * 16 + qc]);
        qf[kk][2] = ld2(&qs[qr][kk * 16 + qc + 8]);
        qf[kk][3] = ld2(&qs[qr + 8][kk * 16 + qc + 8]);
    }
    const int64_t i0 = r0 + qr, i1 = i0 + 8; /* this thread's two query rows */
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
    bool nan0 = false, nan1 = false; /* a NaN score in the row (the NaN guard's case) */
    float o[DV / 8][4];
#pragma unroll
    for (int n = 0; n < DV / 8; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    const int64_t m_base = b * g.m_sb + h * g.m_sh;
    for (int64_t j0 = 0; j0 < g.l; j0 += kKt) {
        __syncwarp();
        stage16<kKt, D, D + kPad, false>(&ks[0][0], kb, a.k16, g.k_si, j0, g.l, vk, lane);
        stage16<kKt, DV, kKt + kPad, true>(&vt[0][0], vb, a.v16, g.v_si, j0, g.l, vv, lane);
        __syncwarp();
        /* S = Q.K^T for 8 key groups of 8 */
        float s[kKt / 8][4];
#pragma unroll
        for (int n = 0; n < kKt / 8; n++) {
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                mma16816(s[n], qf[kk], ld2(&ks[n * 8 + qr][kk * 16 + qc]), ld2(&ks[n * 8 + qr][kk * 16 + qc + 8]));
        }
        /* scale, masks; the tile's row maxima */
        float t0 = -INFINITY, t1 = -INFINITY;
#pragma unroll
        for (int n = 0; n < kKt / 8; n++) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int64_t j = j0 + n * 8 + qc + (c & 1), i = c < 2 ? i0 : i1;
                float v = s[n][c] * g.scale;
                if (j >= g.l || (g.causal && j > i) || (g.has_mask && j >= g.mask_len)) {
                    v = -INFINITY;
                } else if (g.has_mask && i < g.s) {
                    const int64_t at = m_base + i * g.m_si + j;
                    if (g.mask_bool) {
                        if (((const unsigned char *)a.mask)[at] == 0) v = -INFINITY;
                    } else {
                        v += ((const float *)a.mask)[at];
                    }
                }
                s[n][c] = v;
                if (c < 2) t0 = fmaxf(t0, v), nan0 |= isnan(v);
                else t1 = fmaxf(t1, v), nan1 |= isnan(v);
            }
        }
        t0 = fmaxf(t0, __shfl_xor_sync(0xffffffffu, t0, 1));
        t0 = fmaxf(t0, __shfl_xor_sync(0xffffffffu, t0, 2));
        t1 = fmaxf(t1, __shfl_xor_sync(0xffffffffu, t1, 1));
        t1 = fmaxf(t1, __shfl_xor_sync(0xffffffffu, t1, 2));
        const float n0 = fmaxf(m0, t0), n1 = fmaxf(m1, t1);
        /* all keys so far masked: nothing to add yet (exp(-inf - -inf) would be NaN) */
        const float c0 = n0 == -INFINITY ? 1.0f : __expf(m0 - n0), c1 = n1 == -INFINITY ? 1.0f : __expf(m1 - n1);
        const float b0 = n0 == -INFINITY ? 0.0f : n0, b1 = n1 == -INFINITY ? 0.0f : n1;
        float p0 = 0.0f, p1 = 0.0f;
#pragma unroll
        for (int n = 0; n < kKt / 8; n++) {
            s[n][0] = __expf(s[n][0] - b0), s[n][1] = __expf(s[n][1] - b0);
            s[n][2] = __expf(s[n][2] - b1), s[n][3] = __expf(s[n][3] - b1);
            p0 += s[n][0] + s[n][1];
            p1 += s[n][2] + s[n][3];
        }
        p0 += __shfl_xor_sync(0xffffffffu, p0, 1);
        p0 += __shfl_xor_sync(0xffffffffu, p0, 2);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 1);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 2);
        l0 = l0 * c0 + p0, l1 = l1 * c1 + p1;
        m0 = n0, m1 = n1;
#pragma unroll
        for (int n = 0; n < DV / 8; n++) o[n][0] *= c0, o[n][1] *= c0, o[n][2] *= c1, o[n][3] *= c1;
        /* O += P.V: S's accumulator layout of key groups 2kk, 2kk+1 is P's A fragment of keys 16kk..16kk+15 */
#pragma unroll
        for (int kk = 0; kk < kKt / 16; kk++) {
            const uint32_t pf[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                                    pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int n = 0; n < DV / 8; n++)
                mma16816(o[n], pf, ld2(&vt[n * 8 + qr][kk * 16 + qc]), ld2(&vt[n * 8 + qr][kk * 16 + qc + 8]));
        }
    }
    float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
    if (g.nan_guard) { /* every probability of such a row is NaN in the reference, replaced by nan_to = 0 */
        const unsigned b0m = __ballot_sync(0xffffffffu, nan0), b1m = __ballot_sync(0xffffffffu, nan1);
        const unsigned quad = 0xFu << (lane & ~3);
        if ((b0m & quad) != 0 || m0 == -INFINITY) inv0 = 0.0f, zero_row<DV>(o, 0);
        if ((b1m & quad) != 0 || m1 == -INFINITY) inv1 = 0.0f, zero_row<DV>(o, 2);
    }
    const int64_t y_at = b * g.y_sb + h * g.y_sh;
    if (a.y16) store<DV>((__half *)a.y + y_at, g, o, i0, i1, qc, inv0, inv1);
    else store<DV>((float *)a.y + y_at, g, o, i0, i1, qc, inv0, inv1);
}

#define TC_ATTN16_CASES(X) X(64) X(32) X(128) X(16) X(48) X(80) X(96) X(112)

cudaError_t launch(const tc__cuda_attn_args *p, dim3 grid, cudaStream_t s) {
    const int64_t d = p->g.d;
#define TC_ATTN16_CASE(DD)                                                                                             \
    if (d == DD) {                                                                                                     \
        attention16_kernel<DD, DD><<<grid, 32, 0, s>>>(*p);                                                            \
        return cudaGetLastError();                                                                                     \
    }
    TC_ATTN16_CASES(TC_ATTN16_CASE)
#undef TC_ATTN16_CASE
    return cudaErrorInvalidValue;
}

} // namespace

extern "C" bool tc__cuda_attn16_shape_ok(int64_t d, int64_t dv) {
    return d == dv && d % 16 == 0 && d >= 16 && d <= kMaxD;
}

extern "C" cudaError_t tc__cuda_attention_fp16(const tc__cuda_attn_args *p, cudaStream_t s) {
    const tc__attn_geom &g = p->g;
    if (g.b <= 0 || g.hq <= 0 || g.s <= 0 || g.dv <= 0) return cudaSuccess;
    if (!tc__cuda_attn16_shape_ok(g.d, g.dv) || g.b * g.hq > 65535 || (g.s + 15) / 16 > INT32_MAX || g.softcap > 0.0f ||
        (g.nan_guard && g.nan_to != 0.0f))
        return cudaErrorInvalidValue;
    return launch(p, dim3((unsigned)((g.s + 15) / 16), (unsigned)(g.b * g.hq)), s);
}
