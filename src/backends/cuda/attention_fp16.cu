/*
 * attention_fp16.cu - fused attention on FP16 Tensor Cores (attention_fp16.h). A block takes 16 query rows of one head
 * (grid: row blocks x batch*heads) with kWarps warps that split the keys: keys come in tiles of 16 per warp, staged by
 * the whole block into shared memory (double-buffered: the next tile loads while this one is used; cp.async 16-byte
 * copies where Q, K and V are aligned FP16 row images, otherwise loads rounded to FP16), K and V row-major; fragments
 * are read with ldmatrix (V with .trans for the P.V operand). Each warp runs S = Q.K^T and O += P.V on its 16 keys of
 * every tile by mma.sync m16n8k16 (FP16 operands, FP32 sums) with its own online softmax (running row maximum and sum
 * in float, as flash attention keeps them); at the end the block merges the warps' states through shared memory (as
 * split-K flash decoding does). Per tile the block also stages one float per key (-inf past the keys or a shorter
 * mask, else the mask's value when it is the same for every query row, the usual [B, 1, 1, L] padding mask, else 0)
 * and, for a mask that differs between query rows, the tile of its values. Q, K, V are FP32 or FP16 row images; Y is
 * FP32 or an FP16 image. Scale, float or boolean masks through broadcast strides, causal masking as
 * core/attention_geom.h; no softcap. A row whose keys are all masked gets 0/0 = NaN, as the reference's softmax of
 * -inf scores does; under the NaN guard (only with nan_to 0: the tactic refuses others) such a row, or one with a NaN
 * score, whose every probability the reference would replace by 0, gets 0.
 */
#include <atomic>
#include <cuda_fp16.h>
#include <math.h>

#include "backends/cuda/attention_fp16.h"
#include "backends/cuda/half_io.cuh"
#include "backends/cuda/mma_ptx.cuh"

namespace {

constexpr int kWarps = 4;        /* warps per block: one block takes 16 query rows */
constexpr int kKt = 16 * kWarps; /* keys per tile, 16 per warp */
constexpr int kPad = 8;   /* halves of padding per shared row: ldmatrix's 8 row addresses hit distinct banks */

__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const uint32_t *)&h;
}

/* Eight elements (row, e .. e + 7) of a head with row stride si at base (FP16 when is16, else float) as FP16; vec:
 * the eight are one aligned 16-byte (FP16) or two 16-byte (float) loads. Finite floats beyond FP16's range saturate. */
__device__ __forceinline__ uint4 elem8(const void *base, bool is16, int64_t si, int64_t row, int e, bool vec) {
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
    } else if (is16) {
#pragma unroll
        for (int k = 0; k < 8; k++) x.h[k] = __ldg((const __half *)base + row * si + e + k);
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++) x.h[k] = tc_half_sat(__ldg((const float *)base + row * si + e + k));
    }
    return x.u;
}

/* True when every row of a head (row, head and batch strides si, sh, sb elements) at p takes 16-byte loads of 8. */
__device__ __forceinline__ bool vec8_ok(const void *p, bool is16, int64_t si, int64_t sh, int64_t sb) {
    return ((uintptr_t)p & (is16 ? 15u : 31u)) == 0 && si % 8 == 0 && sh % 8 == 0 && sb % 8 == 0;
}

/* One source of staged rows: a head's base, its row stride, whether FP16, whether 16-byte loads are possible. */
struct src_rows {
    const void *base;
    int64_t si;
    bool is16, vec;
};

/* Stages rows j0 .. j0 + R - 1 of a head (W elements each, zeros for rows at or past `rows`) into dst (pitch W + kPad
 * halves), by all NT threads of the block: cp.async when the source is an aligned FP16 image, else loads rounded to
 * FP16 and stored. */
template <int R, int W, int NT>
__device__ __forceinline__ void stage(__half *dst, const src_rows &s, int64_t j0, int64_t rows, int tid) {
    constexpr int C8 = W / 8, N = R * C8;
#pragma unroll 4
    for (int t = tid; t < N; t += NT) {
        const int row = t / C8, c = t - row * C8;
        __half *d = dst + row * (W + kPad) + c * 8;
        if (j0 + row >= rows) *(uint4 *)d = make_uint4(0u, 0u, 0u, 0u);
        else if (s.is16 && s.vec) tc_cp_async16(d, (const __half *)s.base + (j0 + row) * s.si + c * 8);
        else *(uint4 *)d = elem8(s.base, s.is16, s.si, j0 + row, c * 8, s.vec);
    }
}

/* The float per key of a tile (keys j0 .. j0 + kKt - 1) into ms: -inf past the keys or the mask, else the mask's
 * value when row_mask (the same for every query row), else 0. */
__device__ __forceinline__ void stage_keys(float *ms, const tc__cuda_attn_args &a, int64_t m_base, bool row_mask,
                                           int64_t j0, int tid) {
    const tc__attn_geom &g = a.g;
    if (tid >= kKt) return;
    const int64_t j = j0 + tid;
    float v = 0.0f;
    if (j >= g.l || (g.has_mask && j >= g.mask_len)) v = -INFINITY;
    else if (row_mask && g.mask_bool) v = ((const unsigned char *)a.mask)[m_base + j] ? 0.0f : -INFINITY;
    else if (row_mask) v = ((const float *)a.mask)[m_base + j];
    ms[tid] = v;
}

/* The mask values of query rows r0 .. r0 + 15 for the keys of a tile (j0 .. j0 + kKt - 1) into mt (pitch kKt + 4
 * floats; 0 past the rows, the keys or the mask; a boolean mask as 0 / -inf), for a mask that differs between query
 * rows: cp.async for whole aligned groups of 4 floats, else element loads. */
template <int NT>
__device__ __forceinline__ void stage_mask_rows(float *mt, const tc__cuda_attn_args &a, int64_t m_base, int64_t r0,
                                                int64_t j0, bool vec, int tid) {
    const tc__attn_geom &g = a.g;
    const int64_t jend = g.l < g.mask_len ? g.l : g.mask_len;
    constexpr int C4 = kKt / 4;
    for (int t = tid; t < 16 * C4; t += NT) {
        const int row = t / C4, c = t - row * C4;
        const int64_t i = r0 + row, j = j0 + c * 4;
        float *d = mt + row * (kKt + 4) + c * 4;
        if (i >= g.s || j >= jend) {
            *(float4 *)d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        } else if (vec && !g.mask_bool && j + 4 <= jend) {
            tc_cp_async16(d, (const float *)a.mask + m_base + i * g.m_si + j);
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int64_t at = m_base + i * g.m_si + j + k;
                d[k] = j + k >= jend ? 0.0f
                       : g.mask_bool ? (((const unsigned char *)a.mask)[at] ? 0.0f : -INFINITY)
                                     : ((const float *)a.mask)[at];
            }
        }
    }
}

/* Shared memory of a block: Q rows, two K and two V tiles (halves; the warps' partial outputs reuse them at the end),
 * two key rows and two per-row mask tiles of floats, and the warps' row maxima, sums and NaN flags. */
template <int D>
constexpr size_t smem_bytes() {
    return sizeof(__half) * (size_t)(16 + 4 * kKt) * (D + kPad) + sizeof(float) * (2 * kKt + 2 * 16 * (kKt + 4)) +
           sizeof(float) * 3 * kWarps * 16;
}

/* One block: 16 query rows of one head. Warp w takes keys 16w .. 16w + 15 of every tile (its own running maximum, sum
 * and unnormalised output per row, as flash attention keeps them); at the end the block merges the warps' states. */
template <int D>
__global__ void __launch_bounds__(kWarps * 32) attention16_kernel(const tc__cuda_attn_args a) {
    constexpr int NT = kWarps * 32, P = D + kPad, MP = kKt + 4;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *qs = (__half *)smem_raw;           /* [16][P] */
    __half *ks = qs + 16 * P;                  /* [2][kKt][P] */
    __half *vs = ks + 2 * kKt * P;             /* [2][kKt][P] */
    float *ms = (float *)(vs + 2 * kKt * P);   /* [2][kKt] */
    float *mt = ms + 2 * kKt;                  /* [2][16][MP] */
    float *wm = mt + 2 * 16 * MP, *wl = wm + kWarps * 16, *wn = wl + kWarps * 16; /* [kWarps][16] each */
    float *ow = (float *)ks;                   /* [kWarps][16][P] floats, after the last tile */
    const tc__attn_geom &g = a.g;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t bh = blockIdx.y, b = bh / g.hq, h = bh % g.hq, hk = h / (g.hq / g.hk);
    const int64_t r0 = (int64_t)blockIdx.x * 16;
    const int64_t q_at = b * g.q_sb + h * g.q_sh, k_at = b * g.k_sb + hk * g.k_sh, v_at = b * g.v_sb + hk * g.v_sh;
    const src_rows sq = {a.q16 ? (const void *)((const __half *)a.q + q_at) : (const void *)((const float *)a.q + q_at),
                         g.q_si, a.q16, vec8_ok(a.q, a.q16, g.q_si, g.q_sh, g.q_sb)};
    const src_rows sk = {a.k16 ? (const void *)((const __half *)a.k + k_at) : (const void *)((const float *)a.k + k_at),
                         g.k_si, a.k16, vec8_ok(a.k, a.k16, g.k_si, g.k_sh, g.k_sb)};
    const src_rows sv = {a.v16 ? (const void *)((const __half *)a.v + v_at) : (const void *)((const float *)a.v + v_at),
                         g.v_si, a.v16, vec8_ok(a.v, a.v16, g.v_si, g.v_sh, g.v_sb)};
    const int64_t m_base = b * g.m_sb + h * g.m_sh;
    const bool row_mask = g.has_mask && g.m_si == 0; /* one mask row for every query: in the key row */
    const bool per_row = g.has_mask && g.m_si != 0; /* else a per-row mask tile */
    const bool mvec = per_row && ((uintptr_t)a.mask & 15u) == 0 && g.m_si % 4 == 0 && g.m_sh % 4 == 0 &&
                      g.m_sb % 4 == 0;
    const int64_t ntiles = (g.l + kKt - 1) / kKt;

    /* cp.async groups: Q, then tile 0, then tile 1 */
    stage<16, D, NT>(qs, sq, r0, g.s, tid);
    tc_cp_commit();
    for (int64_t t = 0; t < 2 && t < ntiles; t++) {
        stage<kKt, D, NT>(ks + t * kKt * P, sk, t * kKt, g.l, tid);
        stage<kKt, D, NT>(vs + t * kKt * P, sv, t * kKt, g.l, tid);
        stage_keys(ms + t * kKt, a, m_base, row_mask, t * kKt, tid);
        if (per_row) stage_mask_rows<NT>(mt + t * 16 * MP, a, m_base, r0, t * kKt, mvec, tid);
        tc_cp_commit();
    }

    const int qr = lane >> 2, qc = (lane & 3) * 2, kw = warp * 16; /* kw: this warp's keys within a tile */
    const int64_t i0 = r0 + qr, i1 = i0 + 8;                       /* this thread's two query rows */
    uint32_t qf[D / 16][4];
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
    bool nan0 = false, nan1 = false; /* a NaN score in the row (the NaN guard's case) */
    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

    for (int64_t t = 0; t < ntiles; t++) {
        if (t + 1 < ntiles) tc_cp_wait<1>();
        else tc_cp_wait<0>();
        __syncthreads();
        const __half *kt = ks + (t & 1) * kKt * P, *vt = vs + (t & 1) * kKt * P;
        const float *mk = ms + (t & 1) * kKt, *mr = mt + (t & 1) * 16 * MP;
        const int64_t j0 = t * kKt;
        if (t == 0) { /* Q's A fragments (ldmatrix: lanes 0-15 rows 0-15 at dim k, lanes 16-31 at dim k + 8) */
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) tc_ldsm_x4(qf[kk], qs + (lane & 15) * P + kk * 16 + (lane >> 4) * 8);
        }
        /* S = Q.K^T for this warp's two key groups of 8; one ldmatrix.x4 gives both B fragments of a 16-dim step */
        float s[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            uint32_t kb[4];
            tc_ldsm_x4(kb, kt + (kw + (lane & 7) + (lane >> 4) * 8) * P + kk * 16 + ((lane >> 3) & 1) * 8);
            tc_mma16816(s[0], qf[kk], kb[0], kb[1]);
            tc_mma16816(s[1], qf[kk], kb[2], kb[3]);
        }
        /* scale, masks; the rows' maxima over these 16 keys */
        float t0 = -INFINITY, t1 = -INFINITY;
#pragma unroll
        for (int n = 0; n < 2; n++) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int jj = kw + n * 8 + qc + (c & 1);
                float v = fmaf(s[n][c], g.scale, mk[jj]);
                if (per_row) v += mr[(qr + (c < 2 ? 0 : 8)) * MP + jj];
                if (g.causal && j0 + jj > (c < 2 ? i0 : i1)) v = -INFINITY;
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
#pragma unroll
        for (int n = 0; n < 2; n++) {
            s[n][0] = __expf(s[n][0] - b0), s[n][1] = __expf(s[n][1] - b0);
            s[n][2] = __expf(s[n][2] - b1), s[n][3] = __expf(s[n][3] - b1);
        }
        float p0 = s[0][0] + s[0][1] + s[1][0] + s[1][1], p1 = s[0][2] + s[0][3] + s[1][2] + s[1][3];
        p0 += __shfl_xor_sync(0xffffffffu, p0, 1);
        p0 += __shfl_xor_sync(0xffffffffu, p0, 2);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 1);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 2);
        l0 = l0 * c0 + p0, l1 = l1 * c1 + p1;
        m0 = n0, m1 = n1;
        /* O = O * c + P.V: S's accumulator layout of the two key groups is P's A fragment of these 16 keys; V's B
         * fragments by ldmatrix.trans of rows (keys) kw + 0..15, two groups of 8 dims per load */
        const uint32_t pf[4] = {pack2(s[0][0], s[0][1]), pack2(s[0][2], s[0][3]), pack2(s[1][0], s[1][1]),
                                pack2(s[1][2], s[1][3])};
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
            uint32_t vb[4];
            tc_ldsm_x4_t(vb, vt + (kw + (lane & 7) + ((lane >> 3) & 1) * 8) * P + (n + (lane >> 4)) * 8);
            o[n][0] *= c0, o[n][1] *= c0, o[n][2] *= c1, o[n][3] *= c1;
            o[n + 1][0] *= c0, o[n + 1][1] *= c0, o[n + 1][2] *= c1, o[n + 1][3] *= c1;
            tc_mma16816(o[n], pf, vb[0], vb[1]);
            tc_mma16816(o[n + 1], pf, vb[2], vb[3]);
        }
        __syncthreads(); /* every warp is done with this buffer: tile t + 2 goes there */
        if (t + 2 < ntiles) {
            const int64_t jn = (t + 2) * kKt;
            stage<kKt, D, NT>(ks + (t & 1) * kKt * P, sk, jn, g.l, tid);
            stage<kKt, D, NT>(vs + (t & 1) * kKt * P, sv, jn, g.l, tid);
            stage_keys(ms + (t & 1) * kKt, a, m_base, row_mask, jn, tid);
            if (per_row) stage_mask_rows<NT>(mt + (t & 1) * 16 * MP, a, m_base, r0, jn, mvec, tid);
            tc_cp_commit();
        }
    }
    tc_cp_wait<0>(); /* (no keys: Q's group is still open) */
    __syncthreads();
    /* the warps' states: unnormalised outputs (over the K/V tiles), row maxima, sums, NaN flags */
#pragma unroll
    for (int n = 0; n < D / 8; n++) {
        *(float2 *)(ow + (warp * 16 + qr) * P + n * 8 + qc) = make_float2(o[n][0], o[n][1]);
        *(float2 *)(ow + (warp * 16 + qr + 8) * P + n * 8 + qc) = make_float2(o[n][2], o[n][3]);
    }
    const unsigned quad = 0xFu << (lane & ~3); /* the 4 lanes of this thread's rows */
    const bool any0 = (__ballot_sync(0xffffffffu, nan0) & quad) != 0;
    const bool any1 = (__ballot_sync(0xffffffffu, nan1) & quad) != 0;
    if ((lane & 3) == 0) {
        wm[warp * 16 + qr] = m0, wl[warp * 16 + qr] = l0, wn[warp * 16 + qr] = any0 ? 1.0f : 0.0f;
        wm[warp * 16 + qr + 8] = m1, wl[warp * 16 + qr + 8] = l1, wn[warp * 16 + qr + 8] = any1 ? 1.0f : 0.0f;
    }
    __syncthreads();
    /* merge: row r's output is sum_w e_w O_w / sum_w e_w l_w with e_w = exp(m_w - max_w m_w); a row with every key
     * masked has max -inf, hence 0/0 = NaN, as the reference */
    const int64_t y_at = b * g.y_sb + h * g.y_sh;
    const bool y8 = ((uintptr_t)a.y & (a.y16 ? 15u : 31u)) == 0 && g.y_si % 8 == 0 && g.y_sh % 8 == 0 &&
                    g.y_sb % 8 == 0;
    for (int u = tid; u < 16 * (D / 8); u += NT) {
        const int r = u / (D / 8), e = (u - r * (D / 8)) * 8;
        const int64_t i = r0 + r;
        if (i >= g.s) continue;
        float mx = -INFINITY;
        bool bad = false;
#pragma unroll
        for (int w = 0; w < kWarps; w++) mx = fmaxf(mx, wm[w * 16 + r]), bad |= wn[w * 16 + r] != 0.0f;
        float den = 0.0f, acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int w = 0; w < kWarps; w++) {
            const float m = wm[w * 16 + r];
            const float f = m == -INFINITY && mx != -INFINITY ? 0.0f : __expf(m - mx);
            den += f * wl[w * 16 + r];
            const float *src = ow + (w * 16 + r) * P + e;
            const float4 x = *(const float4 *)src, y = *(const float4 *)(src + 4);
            acc[0] += f * x.x, acc[1] += f * x.y, acc[2] += f * x.z, acc[3] += f * x.w;
            acc[4] += f * y.x, acc[5] += f * y.y, acc[6] += f * y.z, acc[7] += f * y.w;
        }
        float inv = 1.0f / den;
        if (g.nan_guard && (bad || mx == -INFINITY)) { /* every probability NaN in the reference, replaced by 0 */
            inv = 0.0f;
#pragma unroll
            for (int k = 0; k < 8; k++) acc[k] = 0.0f;
        }
        if (a.y16) {
            __half *yr = (__half *)a.y + y_at + i * g.y_si + e;
            union {
                uint4 u;
                __half h[8];
            } z;
#pragma unroll
            for (int k = 0; k < 8; k++) z.h[k] = tc_half_sat(acc[k] * inv);
            if (y8) *(uint4 *)yr = z.u;
            else
#pragma unroll
                for (int k = 0; k < 8; k++) yr[k] = z.h[k];
        } else {
            float *yr = (float *)a.y + y_at + i * g.y_si + e;
            if (y8) {
                *(float4 *)yr = make_float4(acc[0] * inv, acc[1] * inv, acc[2] * inv, acc[3] * inv);
                *(float4 *)(yr + 4) = make_float4(acc[4] * inv, acc[5] * inv, acc[6] * inv, acc[7] * inv);
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++) yr[k] = acc[k] * inv;
            }
        }
    }
}

#define TC_ATTN16_CASES(X) X(64) X(32) X(128) X(16) X(48) X(80) X(96) X(112)

/* Opts every instance into the dynamic shared memory it needs (once per process; the first launch runs outside any
 * capture: the engine's first run). */
cudaError_t set_smem_attributes() {
    static std::atomic<bool> done{false};
    if (done.load(std::memory_order_acquire)) return cudaSuccess;
#define TC_ATTN16_ATTR(DD)                                                                                             \
    {                                                                                                                  \
        const cudaError_t e = cudaFuncSetAttribute((const void *)attention16_kernel<DD>,                               \
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,                        \
                                                   (int)smem_bytes<DD>());                                             \
        if (e != cudaSuccess) return e;                                                                                \
    }
    TC_ATTN16_CASES(TC_ATTN16_ATTR)
#undef TC_ATTN16_ATTR
    done.store(true, std::memory_order_release);
    return cudaSuccess;
}

cudaError_t launch(const tc__cuda_attn_args *p, dim3 grid, cudaStream_t s) {
    const cudaError_t e = set_smem_attributes();
    if (e != cudaSuccess) return e;
    const int64_t d = p->g.d;
#define TC_ATTN16_CASE(DD)                                                                                             \
    if (d == DD) {                                                                                                     \
        attention16_kernel<DD><<<grid, kWarps * 32, smem_bytes<DD>(), s>>>(*p);                                        \
        return cudaGetLastError();                                                                                     \
    }
    TC_ATTN16_CASES(TC_ATTN16_CASE)
#undef TC_ATTN16_CASE
    return cudaErrorInvalidValue;
}

} // namespace

extern "C" bool tc__cuda_attn16_shape_ok(int64_t d, int64_t dv) {
    return d == dv && d % 16 == 0 && d >= 16 && d <= TC__ATTN16_MAX_D;
}

extern "C" cudaError_t tc__cuda_attention_fp16(const tc__cuda_attn_args *p, cudaStream_t s) {
    const tc__attn_geom &g = p->g;
    if (g.b <= 0 || g.hq <= 0 || g.s <= 0 || g.dv <= 0) return cudaSuccess;
    if (!tc__cuda_attn16_shape_ok(g.d, g.dv) || g.b * g.hq > 65535 || (g.s + 15) / 16 > INT32_MAX || g.softcap > 0.0f ||
        (g.nan_guard && g.nan_to != 0.0f))
        return cudaErrorInvalidValue;
    return launch(p, dim3((unsigned)((g.s + 15) / 16), (unsigned)(g.b * g.hq)), s);
}
