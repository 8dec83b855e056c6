/*
 * gemm_f32.cu - the batched strided FP32 GEMM (gemm_f32.h): BM x BN output tiles per block of 256 threads, each
 * thread a TM x TN register tile (two 4-wide halves per dim so that the shared-memory reads of a warp do not
 * conflict), BK-deep slices of A and B staged through two shared-memory buffers with the next slice prefetched into
 * registers. Operands are read through arbitrary element strides with loads ordered along whichever of an operand's
 * dims is contiguous (k or m for A, n or k for B), predicated at the edges (zero fill). The epilogue (alpha, beta *
 * addend, bias, residual, activation) is applied to each output once and written through Y's strides. Tiles are
 * walked by a grid-stride loop over (batch, tile row, tile column), so no grid dimension limit applies.
 */
#include "backends/cuda/gemm_f32.h"

#include "backends/cuda/cuda_act.cuh"

namespace {

template <int BM, int BN, int BK, int TM, int TN, bool A_KFAST, bool B_NFAST>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    gemm_kernel(const tc__cuda_gemm_args p, int64_t tiles_m, int64_t tiles_n) {
    constexpr int NTX = BN / TN, NTY = BM / TM, NT = NTX * NTY;
    constexpr int A_PER = BM * BK / NT, B_PER = BK * BN / NT;
    static_assert(TM % 4 == 0 && TN % 4 == 0, "register tiles are 4-wide halves");
    static_assert((BM * BK) % NT == 0 && (BK * BN) % NT == 0, "tile loads split evenly");
    __shared__ __align__(16) float As[2][BK][BM + 4];
    __shared__ __align__(16) float Bs[2][BK][BN + 4];

    const int tid = (int)threadIdx.x, tx = tid % NTX, ty = tid / NTX;
    const int64_t per_batch = tiles_m * tiles_n, total = per_batch * p.n_batch;
    const int64_t M = p.m, N = p.n, K = p.k;

    for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
        const int64_t batch = t / per_batch, rem = t - batch * per_batch;
        const int64_t m0 = rem / tiles_n * BM, n0 = rem % tiles_n * BN;
        int64_t oa = 0, ob = 0, oy = 0, obias = 0, q = batch;
        for (int d = p.nb - 1; d >= 0; d--) {
            const int64_t c = q % p.bdims[d];
            q /= p.bdims[d];
            oa += c * p.a_bs[d];
            ob += c * p.b_bs[d];
            oy += c * p.y_bs[d];
            obias += c * p.bias_bs[d];
        }
        const float *A = p.a + oa, *B = p.b + ob;

        /* This thread's load slots: fixed row (A) / column (B) per slot, k offset within the slice. */
        int a_kk[A_PER], b_kk[B_PER];
        int64_t a_off[A_PER], b_off[B_PER];
        bool a_ok[A_PER], b_ok[B_PER];
        int a_mm[A_PER], b_nn[B_PER];
#pragma unroll
        for (int i = 0; i < A_PER; i++) {
            const int e = tid + i * NT;
            const int kk = A_KFAST ? e % BK : e / BM, mm = A_KFAST ? e / BK : e % BM;
            a_kk[i] = kk;
            a_mm[i] = mm;
            a_ok[i] = m0 + mm < M;
            a_off[i] = a_ok[i] ? (m0 + mm) * p.rs_a : 0;
        }
#pragma unroll
        for (int i = 0; i < B_PER; i++) {
            const int e = tid + i * NT;
            const int nn = B_NFAST ? e % BN : e / BK, kk = B_NFAST ? e / BN : e % BK;
            b_kk[i] = kk;
            b_nn[i] = nn;
            b_ok[i] = n0 + nn < N;
            b_off[i] = b_ok[i] ? (n0 + nn) * p.cs_b : 0;
        }
        float ra[A_PER], rb[B_PER];
        auto load = [&](int64_t k0) {
#pragma unroll
            for (int i = 0; i < A_PER; i++) {
                const int64_t gk = k0 + a_kk[i];
                ra[i] = a_ok[i] && gk < K ? __ldg(A + a_off[i] + gk * p.cs_a) : 0.0f;
            }
#pragma unroll
            for (int i = 0; i < B_PER; i++) {
                const int64_t gk = k0 + b_kk[i];
                rb[i] = b_ok[i] && gk < K ? __ldg(B + b_off[i] + gk * p.rs_b) : 0.0f;
            }
        };
        auto store = [&](int buf) {
#pragma unroll
            for (int i = 0; i < A_PER; i++) As[buf][a_kk[i]][a_mm[i]] = ra[i];
#pragma unroll
            for (int i = 0; i < B_PER; i++) Bs[buf][b_kk[i]][b_nn[i]] = rb[i];
        };

        float acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

        const int64_t n_k = (K + BK - 1) / BK;
        int buf = 0;
        if (n_k > 0) {
            load(0);
            store(0);
            __syncthreads();
        }
        for (int64_t kt = 0; kt < n_k; kt++) {
            const bool more = kt + 1 < n_k;
            if (more) load((kt + 1) * BK);
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                float fa[TM], fb[TN];
#pragma unroll
                for (int g = 0; g < TM / 4; g++) {
                    const float4 v = *reinterpret_cast<const float4 *>(&As[buf][kk][g * NTY * 4 + ty * 4]);
                    fa[g * 4 + 0] = v.x, fa[g * 4 + 1] = v.y, fa[g * 4 + 2] = v.z, fa[g * 4 + 3] = v.w;
                }
#pragma unroll
                for (int h = 0; h < TN / 4; h++) {
                    const float4 v = *reinterpret_cast<const float4 *>(&Bs[buf][kk][h * NTX * 4 + tx * 4]);
                    fb[h * 4 + 0] = v.x, fb[h * 4 + 1] = v.y, fb[h * 4 + 2] = v.z, fb[h * 4 + 3] = v.w;
                }
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
            }
            if (more) store(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }

        /* Epilogue: each output of the tile once, through Y's strides. */
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int64_t gm = m0 + (i / 4) * NTY * 4 + ty * 4 + (i % 4);
            if (gm >= M) continue;
#pragma unroll
            for (int j = 0; j < TN; j++) {
                const int64_t gn = n0 + (j / 4) * NTX * 4 + tx * 4 + (j % 4);
                if (gn >= N) continue;
                float v = p.alpha * acc[i][j];
                if (p.addend != nullptr) v = fmaf(p.beta, __ldg(p.addend + gm * p.rs_add + gn * p.cs_add), v);
                if (p.bias != nullptr) v += __ldg(p.bias + obias + gm * p.rs_bias + gn * p.cs_bias);
                const int64_t off = oy + gm * p.rs_y + gn * p.cs_y;
                if (p.residual != nullptr) v += __ldg(p.residual + off);
                p.y[off] = tc_cuda_act(v, p.act);
            }
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN>
cudaError_t launch(const tc__cuda_gemm_args *p, int64_t max_blocks, cudaStream_t stream) {
    constexpr int NT = (BM / TM) * (BN / TN);
    const int64_t tiles_m = (p->m + BM - 1) / BM, tiles_n = (p->n + BN - 1) / BN;
    const int64_t total = tiles_m * tiles_n * p->n_batch;
    const unsigned grid = (unsigned)(total < max_blocks ? total : max_blocks);
    /* Loads run along the contiguous dim of each operand (k for row-major A, m for a transposed one; n for row-major
     * B, k for a transposed one), so that a warp's loads coalesce. */
    const bool a_kfast = p->cs_a == 1 || p->rs_a != 1;
    const bool b_nfast = p->cs_b == 1 || p->rs_b != 1;
    if (a_kfast && b_nfast)
        gemm_kernel<BM, BN, BK, TM, TN, true, true><<<grid, NT, 0, stream>>>(*p, tiles_m, tiles_n);
    else if (a_kfast)
        gemm_kernel<BM, BN, BK, TM, TN, true, false><<<grid, NT, 0, stream>>>(*p, tiles_m, tiles_n);
    else if (b_nfast)
        gemm_kernel<BM, BN, BK, TM, TN, false, true><<<grid, NT, 0, stream>>>(*p, tiles_m, tiles_n);
    else
        gemm_kernel<BM, BN, BK, TM, TN, false, false><<<grid, NT, 0, stream>>>(*p, tiles_m, tiles_n);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t tc__cuda_gemm_f32(const tc__cuda_gemm_args *args, int n_sm, cudaStream_t stream) {
    if (args->m <= 0 || args->n <= 0 || args->n_batch <= 0) return cudaSuccess;
    if (n_sm <= 0) n_sm = 132;
    const int64_t max_blocks = (int64_t)1 << 30;
    /* 128 x 128 tiles when they fill the machine, else 64 x 64 (attention's small batched products). */
    const int64_t big = ((args->m + 127) / 128) * ((args->n + 127) / 128) * args->n_batch;
    if (big >= n_sm) return launch<128, 128, 8, 8, 8>(args, max_blocks, stream);
    return launch<64, 64, 16, 4, 4>(args, max_blocks, stream);
}
