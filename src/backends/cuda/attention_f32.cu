/*
 * attention_f32.cu - FP32 fused attention (attention_f32.h). Grid: (query-row blocks of TC__ATTN_ROWS, batch x query
 * heads); one warp per query row. The block stages K in shared memory, the whole head where it fits, else 32 keys at
 * a time (rows padded against bank conflicts; float4 loads where aligned, several in flight per thread); each lane
 * computes its keys' scores of its warp's row into the row's buffer in shared memory (mask, causal and softcap as the
 * reference: core/attention_geom.h); the warp takes the row's maximum (NaN propagates, as the reference's),
 * exponentials and sum, and applies the NaN guard; then the block stages V likewise and each lane accumulates output
 * dims in registers (at most TC__ATTN_MAX_DV; pairs read as float2 when dv is even; Q and K as float4 when d % 4 is
 * 0). Sums are in float. Q, K, V and Y may each be an FP16 row image instead (engine/row16_chain.c; the args' q16 ..
 * y16): the loads convert to float (half_io.cuh), shared memory and sums stay float, Y is stored as FP16.
 */
#include <math.h>

#include <atomic>

#include "backends/cuda/attention_f32.h"
#include "backends/cuda/half_io.cuh"

namespace {

constexpr int kRows = TC__ATTN_ROWS;
constexpr int kTile = 32;
constexpr int kMaxDv = TC__ATTN_MAX_DV;
constexpr int kBatch = 8;


__device__ __forceinline__ float nan_max(float a, float b) { return (isnan(b) || b > a) ? b : a; }

/* Stages rows j0 .. j0 + n - 1 (zeros past l) of a [l, w] head with row stride si into dst with row pitch pitch. Each
 * thread issues kBatch loads (of 4 elements when vec: w and si multiples of 4, src aligned to 4 elements) before it
 * stores any, so a stage costs a memory latency or two, not one per element. T: float or __half. */
template <typename T>
__device__ __forceinline__ void stage(float *dst, int pitch, const T *src, int64_t si, int64_t j0, int n,
                                      int64_t l, int w, bool vec) {
    const int step = (int)blockDim.x;
    /* item t = row * cols + e walks by step: row and e advance by step's quotient and remainder (no division per item) */
    const int cols = vec ? w / 4 : w, total = n * cols, sq = step / cols, sr = step - sq * cols;
    int row0 = (int)threadIdx.x / cols, e0 = (int)threadIdx.x - row0 * cols;
    for (int t0 = threadIdx.x; t0 < total; t0 += kBatch * step) {
        float4 r[kBatch];
        int rows[kBatch], es[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; u++) {
            rows[u] = row0, es[u] = e0;
            const int t = t0 + u * step;
            const int64_t j = j0 + row0;
            if (t < total && j < l) {
                if (vec) r[u] = tc_ld4(src + j * si + 4 * e0);
                else r[u].x = tc_ld(src + j * si + e0);
            } else {
                r[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
            row0 += sq, e0 += sr;
            if (e0 >= cols) e0 -= cols, row0++;
        }
#pragma unroll
        for (int u = 0; u < kBatch; u++) {
            if (t0 + u * step >= total) continue;
            if (vec) {
                float *o = dst + rows[u] * pitch + 4 * es[u];
                if (pitch % 4 == 0) *(float4 *)o = r[u]; /* 16-byte aligned rows: one store */
                else o[0] = r[u].x, o[1] = r[u].y, o[2] = r[u].z, o[3] = r[u].w;
            } else {
                dst[rows[u] * pitch + es[u]] = r[u].x;
            }
        }
    }
}

/* A warp's output row from its lanes' sums (attention_kernel's layout of acc). */
template <bool P2, int kC, typename T>
__device__ __forceinline__ void store_row(T *y, const float2 (&acc)[kC], int lane, int dv) {
#pragma unroll
    for (int c = 0; c < kC; c++) {
        if (P2) {
            const int e = 2 * lane + 64 * c;
            if (e < dv) tc_st(y + e, acc[c].x), tc_st(y + e + 1, acc[c].y);
        } else {
            const int e = lane + 32 * c;
            if (e < dv) tc_st(y + e, acc[c].x);
        }
    }
}

/* Q4: d % 4 == 0, the scores read Q and K as float4 (K rows pitch d + 4, 16-byte aligned; else d + 1); P2: dv even,
 * a lane owns output dims 2 lane + 64 c, 2 lane + 1 + 64 c and reads V as float2. NC: the chunks c of output dims a
 * lane owns (64 dims each with P2, else 32: dv <= NC x that), so that a short head (BERT's 64) runs one chunk, not
 * TC__ATTN_MAX_DV's worth of predicated ones. */
template <bool Q4, bool P2, int NC>
__global__ void attention_kernel(const tc__cuda_attn_args a, int tile, bool vec_k, bool vec_v) {
    extern __shared__ float smem[];
    const tc__attn_geom &g = a.g;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t bh = blockIdx.y, b = bh / g.hq, h = bh % g.hq, hk = h / (g.hq / g.hk);
    const int64_t i = (int64_t)blockIdx.x * kRows + warp;
    const bool live = i < g.s;
    const int d = (int)g.d, dv = (int)g.dv, kp = Q4 ? d + 4 : d + 1, kw = kp > dv ? kp : dv;
    const int64_t l = g.l;
    float *qs = smem;                    /* [kRows][d] */
    float *kv = qs + kRows * d;          /* [tile][kw]: tile rows of K (pitch kp), then of V (pitch dv) */
    float *sc = kv + (int64_t)tile * kw; /* [kRows][l] */
    float *row = sc + (int64_t)warp * l;
    const int64_t k_at = b * g.k_sb + hk * g.k_sh, v_at = b * g.v_sb + hk * g.v_sh;
    const int64_t q_at = b * g.q_sb + h * g.q_sh + i * g.q_si;
    for (int e = lane; e < d; e += 32)
        qs[warp * d + e] = !live ? 0.0f
                           : (a.q16 ? tc_ld((const __half *)a.q + q_at + e) : tc_ld((const float *)a.q + q_at + e)) *
                                 g.scale;
    const float masked = g.softcap > 0.0f ? -g.softcap : -INFINITY;
    const int64_t m_at = b * g.m_sb + h * g.m_sh + i * g.m_si;
    /* scores: tile keys staged at a time, keys lane, lane + 32, ... of the tile per lane */
    for (int64_t j0 = 0; j0 < l; j0 += tile) {
        const int n = l - j0 < tile ? (int)(l - j0) : tile;
        __syncthreads();
        if (a.k16) stage(kv, kp, (const __half *)a.k + k_at, g.k_si, j0, n, l, d, vec_k);
        else stage(kv, kp, (const float *)a.k + k_at, g.k_si, j0, n, l, d, vec_k);
        __syncthreads();
        if (!live) continue;
        for (int jj = lane; jj < n; jj += 32) {
            const int64_t j = j0 + jj;
            float s;
            if ((g.causal && j > i) || (g.has_mask && j >= g.mask_len)) {
                s = masked;
            } else {
                /* the mask's value first: its global load overlaps the dot product */
                float madd = 0.0f;
                bool mskip = false;
                if (g.has_mask) {
                    if (g.mask_bool) mskip = ((const unsigned char *)a.mask)[m_at + j] == 0;
                    else madd = ((const float *)a.mask)[m_at + j];
                }
                s = 0.0f;
                const float *qr = qs + warp * d, *kr = kv + jj * kp;
                if (Q4) {
                    const float4 *q4 = (const float4 *)qr, *k4 = (const float4 *)kr;
#pragma unroll 4
                    for (int e = 0; e < d / 4; e++) {
                        const float4 x = q4[e], y = k4[e];
                        s = fmaf(x.x, y.x, s);
                        s = fmaf(x.y, y.y, s);
                        s = fmaf(x.z, y.z, s);
                        s = fmaf(x.w, y.w, s);
                    }
                } else {
                    for (int e = 0; e < d; e++) s = fmaf(qr[e], kr[e], s);
                }
                if (g.has_mask) {
                    if (mskip) s = -INFINITY;
                    else if (!g.mask_bool) s += madd;
                }
                if (g.softcap > 0.0f) s = g.softcap * tanhf(s / g.softcap);
            }
            row[j] = s;
        }
    }
    /* the row's softmax (its warp only) */
    if (live) {
        __syncwarp();
        float mx = -INFINITY;
        for (int64_t j = lane; j < l; j += 32) mx = nan_max(mx, row[j]);
        for (int o = 16; o > 0; o >>= 1) mx = nan_max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0.0f;
        for (int64_t j = lane; j < l; j += 32) {
            const float e = expf(row[j] - mx);
            row[j] = e;
            sum += e;
        }
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inv = 1.0f / sum;
        for (int64_t j = lane; j < l; j += 32) {
            float p = row[j] * inv;
            if (g.nan_guard && isnan(p)) p = g.nan_to;
            row[j] = p;
        }
        __syncwarp();
    }
    /* outputs: tile rows of V staged at a time; a lane's output dims in registers */
    constexpr int kC = NC;
    float2 acc[kC];
#pragma unroll
    for (int c = 0; c < kC; c++) acc[c] = make_float2(0.0f, 0.0f);
    for (int64_t j0 = 0; j0 < l; j0 += tile) {
        const int n = l - j0 < tile ? (int)(l - j0) : tile;
        __syncthreads();
        if (a.v16) stage(kv, dv, (const __half *)a.v + v_at, g.v_si, j0, n, l, dv, vec_v);
        else stage(kv, dv, (const float *)a.v + v_at, g.v_si, j0, n, l, dv, vec_v);
        __syncthreads();
        if (!live) continue;
#pragma unroll 4
        for (int r = 0; r < n; r++) {
            const float p = row[j0 + r];
#pragma unroll
            for (int c = 0; c < kC; c++) {
                if (P2) {
                    const int e = 2 * lane + 64 * c;
                    if (e < dv) {
                        const float2 v2 = *(const float2 *)(kv + r * dv + e);
                        acc[c].x = fmaf(p, v2.x, acc[c].x);
                        acc[c].y = fmaf(p, v2.y, acc[c].y);
                    }
                } else {
                    const int e = lane + 32 * c;
                    if (e < dv) acc[c].x = fmaf(p, kv[r * dv + e], acc[c].x);
                }
            }
        }
    }
    if (!live) return;
    const int64_t y_at = b * g.y_sb + h * g.y_sh + i * g.y_si;
    if (a.y16) store_row<P2, kC>((__half *)a.y + y_at, acc, lane, dv);
    else store_row<P2, kC>((float *)a.y + y_at, acc, lane, dv);
}

/* Shared memory of a launch staging tile rows of K and V at a time (floats). */
int64_t smem_floats(int64_t d, int64_t dv, int64_t l, int64_t tile) {
    const int64_t kp = d % 4 == 0 ? d + 4 : d + 1, kw = kp > dv ? kp : dv;
    return kRows * d + tile * kw + kRows * l;
}

/* True when every row of a head of width w, row stride si, head stride sh, batch stride sb at base is aligned to 4
 * elements of elem bytes for the 4-element loads. */
bool vec_ok(const void *base, size_t elem, int64_t w, int64_t si, int64_t sh, int64_t sb) {
    return ((uintptr_t)base & (4 * elem - 1)) == 0 && w % 4 == 0 && si % 4 == 0 && sh % 4 == 0 && sb % 4 == 0;
}

/* The kernels by (Q4, P2, chunks 1 / 2 / 4 / 8): index 8 q4 + 4 p2 + log2(chunks); P2 takes at most 4 chunks. */
typedef void (*attn_fn)(const tc__cuda_attn_args, int, bool, bool);
const attn_fn kKernels[16] = {
    attention_kernel<false, false, 1>, attention_kernel<false, false, 2>, attention_kernel<false, false, 4>,
    attention_kernel<false, false, 8>, attention_kernel<false, true, 1>,  attention_kernel<false, true, 2>,
    attention_kernel<false, true, 4>,  nullptr,                           attention_kernel<true, false, 1>,
    attention_kernel<true, false, 2>,  attention_kernel<true, false, 4>,  attention_kernel<true, false, 8>,
    attention_kernel<true, true, 1>,   attention_kernel<true, true, 2>,   attention_kernel<true, true, 4>,
    nullptr};

} // namespace

extern "C" size_t tc__cuda_attn_smem(int64_t d, int64_t dv, int64_t l) {
    if (d < 1 || dv < 0 || dv > kMaxDv || l < 0 || d > 4096 || l > ((int64_t)1 << 24)) return (size_t)-1;
    return sizeof(float) * (size_t)smem_floats(d, dv, l, kTile);
}

extern "C" cudaError_t tc__cuda_attention_f32(const tc__cuda_attn_args *args, cudaStream_t stream) {
    const tc__attn_geom &g = args->g;
    if (g.b <= 0 || g.hq <= 0 || g.s <= 0 || g.dv <= 0) return cudaSuccess;
    const size_t smem32 = tc__cuda_attn_smem(g.d, g.dv, g.l);
    if (smem32 > TC__ATTN_SMEM_MAX || g.b * g.hq > 65535 || (g.s + kRows - 1) / kRows > INT32_MAX)
        return cudaErrorInvalidValue;
    /* the whole head of K and V staged at once where it fits, else 32 keys at a time */
    const int64_t whole = g.l > 0 ? g.l : 1;
    const bool all = sizeof(float) * (size_t)smem_floats(g.d, g.dv, g.l, whole) <= TC__ATTN_SMEM_MAX;
    const int tile = all ? (int)whole : kTile;
    const size_t smem = sizeof(float) * (size_t)smem_floats(g.d, g.dv, g.l, tile);
    const bool vk = vec_ok(args->k, args->k16 ? 2 : 4, g.d, g.k_si, g.k_sh, g.k_sb),
               vv = vec_ok(args->v, args->v16 ? 2 : 4, g.dv, g.v_si, g.v_sh, g.v_sb);
    const dim3 grid((unsigned)((g.s + kRows - 1) / kRows), (unsigned)(g.b * g.hq));
    const bool q4 = g.d % 4 == 0, p2 = g.dv % 2 == 0;
    const int64_t chunk = p2 ? 64 : 32, nc = (g.dv + chunk - 1) / chunk;
    const int idx = (q4 ? 8 : 0) + (p2 ? 4 : 0) + (nc <= 1 ? 0 : nc <= 2 ? 1 : nc <= 4 ? 2 : 3);
    if (p2 && nc > 4) return cudaErrorInvalidValue; /* (dv <= TC__ATTN_MAX_DV) */
    /* once per process (contexts on several threads may race here: the attribute is the same for all); the first
     * launch runs outside any capture (the engine's first run) */
    static std::atomic<bool> attr_set{false};
    if (!attr_set.load(std::memory_order_acquire)) {
        for (int f = 0; f < 16; f++) {
            if (kKernels[f] == nullptr) continue;
            const cudaError_t e =
                cudaFuncSetAttribute((const void *)kKernels[f], cudaFuncAttributeMaxDynamicSharedMemorySize, TC__ATTN_SMEM_MAX);
            if (e != cudaSuccess) return e;
        }
        attr_set.store(true, std::memory_order_release);
    }
    kKernels[idx]<<<grid, kRows * 32, smem, stream>>>(*args, tile, vk, vv);
    return cudaGetLastError();
}
