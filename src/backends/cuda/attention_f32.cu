/*
 * attention_f32.cu - FP32 fused attention (attention_f32.h). Grid: (query-row blocks of TC__ATTN_ROWS, batch x query
 * heads); one warp per query row. The block stages K in tiles of 32 keys in shared memory (padded rows against bank
 * conflicts); each lane computes one key's score of its warp's row into the row's score buffer in shared memory
 * (mask, causal and softcap applied as the reference: core/attention_geom.h); the warp then takes the row's maximum
 * (NaN propagates, as the reference's), exponentials and sum, applies the NaN guard, and each lane accumulates
 * output dims lane, lane + 32, ... over the keys reading V's rows coalesced. Sums are in float.
 */
#include <math.h>

#include "backends/cuda/attention_f32.h"

namespace {

constexpr int kRows = TC__ATTN_ROWS;
constexpr int kTile = 32;

__device__ __forceinline__ float nan_max(float a, float b) { return (isnan(b) || b > a) ? b : a; }

__global__ void attention_kernel(const tc__cuda_attn_args a) {
    extern __shared__ float smem[];
    const tc__attn_geom &g = a.g;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t bh = blockIdx.y, b = bh / g.hq, h = bh % g.hq, hk = h / (g.hq / g.hk);
    const int64_t i = (int64_t)blockIdx.x * kRows + warp;
    const bool live = i < g.s;
    const int64_t d = g.d, l = g.l;
    float *qs = smem;                   /* [kRows][d] */
    float *ks = qs + kRows * d;         /* [kTile][d + 1] */
    float *sc = ks + kTile * (d + 1);   /* [kRows][l] */
    float *row = sc + (int64_t)warp * l;
    const float *kb = a.k + b * g.k_sb + hk * g.k_sh;
    for (int64_t e = lane; e < d; e += 32)
        qs[warp * d + e] = live ? a.q[b * g.q_sb + h * g.q_sh + i * g.q_si + e] * g.scale : 0.0f;
    const float masked = g.softcap > 0.0f ? -g.softcap : -INFINITY;
    const int64_t m_at = b * g.m_sb + h * g.m_sh + i * g.m_si;
    for (int64_t j0 = 0; j0 < l; j0 += kTile) {
        __syncthreads();
        for (int64_t t = threadIdx.x; t < kTile * d; t += blockDim.x) {
            const int64_t r = t / d, e = t % d, j = j0 + r;
            ks[r * (d + 1) + e] = j < l ? kb[j * g.k_si + e] : 0.0f;
        }
        __syncthreads();
        const int64_t j = j0 + lane;
        if (!live || j >= l) continue;
        float s;
        if ((g.causal && j > i) || (g.has_mask && j >= g.mask_len)) {
            s = masked;
        } else {
            s = 0.0f;
            const float *qr = qs + warp * d, *kr = ks + lane * (d + 1);
            for (int64_t e = 0; e < d; e++) s = fmaf(qr[e], kr[e], s);
            if (g.has_mask) {
                if (g.mask_bool) {
                    if (((const unsigned char *)a.mask)[m_at + j] == 0) s = -INFINITY;
                } else {
                    s += ((const float *)a.mask)[m_at + j];
                }
            }
            if (g.softcap > 0.0f) s = g.softcap * tanhf(s / g.softcap);
        }
        row[j] = s;
    }
    if (!live) return; /* no barrier below */
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
    const float *vb = a.v + b * g.v_sb + hk * g.v_sh;
    float *y = a.y + b * g.y_sb + h * g.y_sh + i * g.y_si;
    for (int64_t e = lane; e < g.dv; e += 32) {
        float acc = 0.0f;
        for (int64_t j = 0; j < l; j++) acc = fmaf(row[j], vb[j * g.v_si + e], acc);
        y[e] = acc;
    }
}

} // namespace

extern "C" size_t tc__cuda_attn_smem(int64_t d, int64_t l) {
    if (d < 1 || l < 0 || d > 4096 || l > ((int64_t)1 << 24)) return (size_t)-1;
    return sizeof(float) * (size_t)(kRows * d + kTile * (d + 1) + kRows * l);
}

extern "C" cudaError_t tc__cuda_attention_f32(const tc__cuda_attn_args *args, cudaStream_t stream) {
    const tc__attn_geom &g = args->g;
    if (g.b <= 0 || g.hq <= 0 || g.s <= 0 || g.dv <= 0) return cudaSuccess;
    const size_t smem = tc__cuda_attn_smem(g.d, g.l);
    if (smem > TC__ATTN_SMEM_MAX || g.b * g.hq > 65535 || (g.s + kRows - 1) / kRows > INT32_MAX)
        return cudaErrorInvalidValue;
    static bool attr_set = false; /* the first launch runs outside any capture (the engine's first run) */
    if (!attr_set) {
        const cudaError_t e =
            cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, TC__ATTN_SMEM_MAX);
        if (e != cudaSuccess) return e;
        attr_set = true;
    }
    const dim3 grid((unsigned)((g.s + kRows - 1) / kRows), (unsigned)(g.b * g.hq));
    attention_kernel<<<grid, kRows * 32, smem, stream>>>(*args);
    return cudaGetLastError();
}
