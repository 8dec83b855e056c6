/*
 * igemm_conv_fp16.cu - the implicit-GEMM FP16 convolution of igemm_conv_fp16.h. A block computes a BM x BN tile of
 * Y = A.B^T (A: [M = n*oh*ow][K = r*s*c] gathered from the NHWC image, B: the KRSC filter as [N = k][K]) over K tiles
 * of 32: cp.async 16-byte copies of 8 channels of one filter tap (c % 8 == 0), zero-filled (src-size 0) for padding
 * taps, rows past M or N and K past r*s*c, into a multistage shared-memory ring (rows padded to 40 halves: ldmatrix's
 * 8 row addresses hit distinct banks); warps run mma.sync m16n8k16 (FP16 operands, FP32 sums) on fragments read by
 * ldmatrix. Epilogue: the FP32 tile staged in shared memory (over the ring), then 8 channels a thread: bias, residual
 * (16-byte loads), ReLU, FP16 with saturation, 16-byte stores, guarded at M and N (N % 8 == 0).
 * The split-K configuration gives each blockIdx.z a contiguous range of K tiles, writes FP32 partials to the
 * workspace ([split][M][N]) and a second kernel sums them in split order and applies the epilogue (no atomics).
 * Index arithmetic is 32-bit: ok() bounds every element count below 2^31.
 */
#include <atomic>
#include <cuda_fp16.h>

#include "backends/cuda/half_io.cuh"
#include "backends/cuda/igemm_conv_fp16.h"
#include "backends/cuda/mma_ptx.cuh"

namespace {

constexpr int kBK = 32;          /* K per tile: 4 chunks of 8 channels */
constexpr int kPitch = kBK + 8;  /* halves per shared row (80 bytes): conflict-free ldmatrix and 16-byte aligned */
constexpr int kTargetBlocks = 264; /* split-K aims at 2 blocks per SM of an H200 (132 SMs) */
constexpr int kMaxSplits = 16;
constexpr int kSplitTile = 64;    /* the split-K configuration's BM = BN (see TC_IGEMM_CONFIGS) */

/* The configurations: id, BM, BN, warps along M, warps along N, stages, split-K. Ids are stable (plan files). */
#define TC_IGEMM_CONFIGS(X)                                                                                            \
    X(0, 128, 128, 2, 4, 4, false)                                                                                     \
    X(1, 128, 64, 2, 2, 4, false)                                                                                      \
    X(2, 64, 64, 2, 2, 4, false)                                                                                       \
    X(3, 64, 64, 2, 2, 4, true)

/* What the kernels read: the user's record with its GEMM sizes and the split-K plan. */
struct args {
    const __half *x, *w, *bias, *res;
    __half *y;
    float *ws;
    int n, c, h, wd, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw, relu;
    int M, N, K, ohw, ktiles, kt_per, splits;
};

/* v[j] += p[j] for 8 FP16 values (p 16-byte aligned). */
__device__ __forceinline__ void add8(float (&v)[8], const __half *p) {
    const uint4 raw = __ldg((const uint4 *)p);
    const __half2 *h = (const __half2 *)&raw;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float2 f = __half22float2(h[j]);
        v[2 * j] += f.x, v[2 * j + 1] += f.y;
    }
}

/* Output elements o .. o + 7 (channels n .. n + 7, n % 8 == 0) from their sums v: + bias, + residual (16-byte loads),
 * ReLU, FP16 with saturation, one 16-byte store. */
__device__ __forceinline__ void epi8(float (&v)[8], const args &a, int o, int n) {
    if (a.bias != nullptr) add8(v, a.bias + n);
    if (a.res != nullptr) add8(v, a.res + o);
    uint4 out;
    __half2 *h = (__half2 *)&out;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float lo = v[2 * j], hi = v[2 * j + 1];
        if (a.relu) lo = lo < 0.0f ? 0.0f : lo, hi = hi < 0.0f ? 0.0f : hi; /* NaN stays */
        h[j] = __halves2half2(tc_half_sat(lo), tc_half_sat(hi));
    }
    *(uint4 *)(a.y + o) = out;
}

/* The block's output tile staged in shared memory as FP32, over the ring once the main loop is done; pitch BN + 8
 * floats (8 mod 32 banks: the 4 rows x 4 float2 of a half-warp's fragment store hit distinct banks). */
template <int BN>
__host__ __device__ constexpr int out_pitch() {
    return BN + 8;
}

template <int BM, int BN, int ST>
__host__ __device__ constexpr int smem_bytes() {
    return ST * (BM + BN) * kPitch * (int)sizeof(__half);
}

/* One block: output pixels [m0, m0 + BM) x channels [n0, n0 + BN), K tiles [kt0, kt0 + kt_per) of split blockIdx.z
 * (all of them without split-K). Warp (wm, wn) owns the TM x TN sub-tile at (wm * TM, wn * TN). */
template <int BM, int BN, int WM, int WN, int ST, bool SPLIT>
__global__ void __launch_bounds__(WM *WN * 32) igemm_kernel(const args a) {
    constexpr int NT = WM * WN * 32, TM = BM / WM, TN = BN / WN, MI = TM / 16, NI = TN / 8;
    constexpr int RS = NT / 4;                   /* rows one pass of the loaders covers (4 chunks a row) */
    constexpr int AR = BM / RS, BR = BN / RS;    /* passes (rows per thread) of the A and B loaders */
    static_assert(TM % 16 == 0 && TN % 16 == 0 && BM % RS == 0 && BN % RS == 0 && ST >= 2, "tile shape");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *sa = (__half *)smem_raw;  /* [ST][BM][kPitch] */
    __half *sb = sa + ST * BM * kPitch; /* [ST][BN][kPitch] */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % WM, wn = warp / WM;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const int kt0 = SPLIT ? blockIdx.z * a.kt_per : 0;
    const int nk = SPLIT ? min(a.kt_per, a.ktiles - kt0) : a.ktiles; /* >= 1: the host leaves no split empty */

    /* This thread's loader slots: chunk column jc (channels jc*8 .. jc*8 + 7 of a K tile) of rows rr + i * RS. For
     * its A rows, the output pixel's image offset (-1 past M) and the input coordinates of filter tap (0, 0). */
    const int jc = tid & 3, rr = tid >> 2;
    int a_img[AR], a_ih[AR], a_iw[AR], b_off[BR];
#pragma unroll
    for (int i = 0; i < AR; i++) {
        const int m = m0 + rr + i * RS;
        a_img[i] = -1, a_ih[i] = 0, a_iw[i] = 0;
        if (m < a.M) {
            const int b = m / a.ohw, pix = m - b * a.ohw, oy = pix / a.ow, ox = pix - oy * a.ow;
            a_img[i] = b * a.h * a.wd * a.c; /* < n*h*w*c < 2^31 */
            a_ih[i] = oy * a.sh - a.ph, a_iw[i] = ox * a.sw - a.pw;
        }
    }
#pragma unroll
    for (int i = 0; i < BR; i++) {
        const int nn = n0 + rr + i * RS;
        b_off[i] = nn < a.N ? nn * a.K : -1; /* < k*r*s*c < 2^31 */
    }

    /* This thread's chunk of the next K tile to load: k index kk = (fr * s + fs) * c + ch (one tap per chunk), found
     * by division for the first tile and advanced by kBK per tile after (the tiles load in order). */
    int kk = kt0 * kBK + jc * 8, fr, fs, ch;
    {
        const int tap = kk / a.c;
        fr = tap / a.s, fs = tap - fr * a.s, ch = kk - tap * a.c;
    }
    /* The next K tile (kt0, kt0 + 1, ... in turn) into ring slot st. */
    auto load_next = [&](int st) {
        const bool kv = kk < a.K;
        const int dy = fr * a.dh, dx = fs * a.dw;
        __half *da = sa + st * BM * kPitch + jc * 8;
#pragma unroll
        for (int i = 0; i < AR; i++) {
            const int ih = a_ih[i] + dy, iw = a_iw[i] + dx;
            const bool v = kv && a_img[i] >= 0 && (unsigned)ih < (unsigned)a.h && (unsigned)iw < (unsigned)a.wd;
            const __half *src = a.x;
            if (v) src = a.x + a_img[i] + (ih * a.wd + iw) * a.c + ch;
            tc_cp_async16z(da + (rr + i * RS) * kPitch, src, v);
        }
        __half *db = sb + st * BN * kPitch + jc * 8;
#pragma unroll
        for (int i = 0; i < BR; i++) {
            const bool v = kv && b_off[i] >= 0;
            tc_cp_async16z(db + (rr + i * RS) * kPitch, v ? a.w + b_off[i] + kk : a.w, v);
        }
        kk += kBK, ch += kBK; /* kk < K + 2 * kBK, K < 2^28: no overflow */
        while (ch >= a.c) {   /* at most kBK / 8 steps (c >= 8) */
            ch -= a.c;
            if (++fs == a.s) fs = 0, fr++;
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++) acc[mi][ni][0] = acc[mi][ni][1] = acc[mi][ni][2] = acc[mi][ni][3] = 0.0f;

    /* one cp.async group per K tile, empty groups past the end: tile t is group t */
#pragma unroll
    for (int t = 0; t < ST - 1; t++) {
        if (t < nk) load_next(t);
        tc_cp_commit();
    }
    for (int t = 0; t < nk; t++) {
        tc_cp_wait<ST - 2>(); /* groups 0 .. t done: tile t landed (this thread's copies) */
        __syncthreads();      /* everyone's copies visible; everyone done with tile t - 1's slot */
        if (t + ST - 1 < nk) load_next((t + ST - 1) % ST); /* tile t + ST - 1 */
        tc_cp_commit();
        const __half *as = sa + (t % ST) * BM * kPitch + wm * TM * kPitch;
        const __half *bs = sb + (t % ST) * BN * kPitch + wn * TN * kPitch;
#pragma unroll
        for (int ks = 0; ks < kBK / 16; ks++) {
            /* B fragments of two n8 groups per ldmatrix.x4: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
             * k 0-7), (n 8-15, k 8-15) */
            uint32_t bf[NI][2];
#pragma unroll
            for (int j = 0; j < NI / 2; j++) {
                uint32_t q[4];
                tc_ldsm_x4(q, bs + (j * 16 + (lane & 7) + (lane >> 4) * 8) * kPitch + ks * 16 + ((lane >> 3) & 1) * 8);
                bf[2 * j][0] = q[0], bf[2 * j][1] = q[1], bf[2 * j + 1][0] = q[2], bf[2 * j + 1][1] = q[3];
            }
#pragma unroll
            for (int mi = 0; mi < MI; mi++) {
                /* A fragment: matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15) */
                uint32_t af[4];
                tc_ldsm_x4(af, as + (mi * 16 + (lane & 15)) * kPitch + ks * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int ni = 0; ni < NI; ni++) tc_mma16816(acc[mi][ni], af, bf[ni][0], bf[ni][1]);
            }
        }
    }
    tc_cp_wait<0>(); /* only empty groups can be open; leave none behind */
    static_assert(BM * out_pitch<BN>() * 4 <= smem_bytes<BM, BN, ST>(), "the output tile fits in the ring");

    /* the accumulators into the output tile: c0, c1 at row lane / 4, columns (lane % 4) * 2 + 0, 1 of each m16n8
     * fragment; c2, c3 8 rows below */
    constexpr int OP = out_pitch<BN>();
    float *ot = (float *)smem_raw; /* [BM][OP] */
    __syncthreads();               /* every warp is done with the ring */
    const int rb = wm * TM + (lane >> 2), cb = wn * TN + (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++) {
            float *d = ot + (rb + mi * 16) * OP + cb + ni * 8;
            *(float2 *)d = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
            *(float2 *)(d + 8 * OP) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
        }
    __syncthreads();
    /* rows of 8 channels to Y through the epilogue (or as FP32 partials to the workspace: [split][M][N]); N % 8 ==
     * 0: a group of 8 is wholly inside or outside */
    constexpr int C8 = BN / 8;
    float *ws = SPLIT ? a.ws + (size_t)blockIdx.z * (size_t)a.M * (size_t)a.N : nullptr;
    for (int u = tid; u < BM * C8; u += NT) {
        const int row = u / C8, col = (u - row * C8) * 8, m = m0 + row, n = n0 + col;
        if (m >= a.M || n >= a.N) continue;
        const float4 p = *(const float4 *)(ot + row * OP + col), q = *(const float4 *)(ot + row * OP + col + 4);
        const int o = m * a.N + n;
        if (SPLIT) {
            *(float4 *)(ws + o) = p, *(float4 *)(ws + o + 4) = q;
        } else {
            float v[8] = {p.x, p.y, p.z, p.w, q.x, q.y, q.z, q.w};
            epi8(v, a, o, n);
        }
    }
}

/* Split-K: y = epilogue(sum over splits of the partials, in split order), 8 channels a thread. */
__global__ void __launch_bounds__(256) splitk_reduce(const args a) {
    const int total8 = a.M * a.N / 8;
    const size_t plane = (size_t)a.M * (size_t)a.N;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < total8; i += gridDim.x * 256) {
        const int o = i * 8, n = o % a.N;
        float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        for (int z = 0; z < a.splits; z++) {
            const float4 *p = (const float4 *)(a.ws + z * plane + o);
            const float4 u = p[0], q = p[1];
            v[0] += u.x, v[1] += u.y, v[2] += u.z, v[3] += u.w, v[4] += q.x, v[5] += q.y, v[6] += q.z, v[7] += q.w;
        }
        epi8(v, a, o, n);
    }
}

/* The split-K plan for p (a pure function of the geometry, so workspace() and run() agree): enough splits for about
 * kTargetBlocks blocks of kSplitTile^2, at most kMaxSplits, at most one per 4 K tiles (the ring's depth: shorter
 * splits are mostly pipeline prologue); no split left empty. */
void split_plan(int64_t M, int64_t N, int64_t K, int *kt_per, int *splits) {
    const int64_t ktiles = (K + kBK - 1) / kBK;
    const int64_t tiles = ((M + kSplitTile - 1) / kSplitTile) * ((N + kSplitTile - 1) / kSplitTile);
    int64_t sp = (kTargetBlocks + tiles - 1) / tiles;
    if (sp > kMaxSplits) sp = kMaxSplits;
    if (sp > ktiles / 4) sp = ktiles / 4;
    if (sp < 1) sp = 1;
    const int64_t per = (ktiles + sp - 1) / sp;
    *kt_per = (int)per;
    *splits = (int)((ktiles + per - 1) / per);
}

template <int BM, int BN, int WM, int WN, int ST, bool SPLIT>
cudaError_t launch(const args &a, cudaStream_t s) {
    constexpr int smem = smem_bytes<BM, BN, ST>();
    static std::atomic<bool> attr_done{false};
    if (!attr_done.load(std::memory_order_acquire)) {
        const cudaError_t e = cudaFuncSetAttribute((const void *)igemm_kernel<BM, BN, WM, WN, ST, SPLIT>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
        attr_done.store(true, std::memory_order_release);
    }
    const dim3 grid((unsigned)((a.M + BM - 1) / BM), (unsigned)((a.N + BN - 1) / BN), SPLIT ? (unsigned)a.splits : 1u);
    igemm_kernel<BM, BN, WM, WN, ST, SPLIT><<<grid, WM * WN * 32, smem, s>>>(a);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || !SPLIT) return e;
    const int total8 = a.M * a.N / 8;
    int blocks = (total8 + 255) / 256;
    if (blocks > 8192) blocks = 8192;
    splitk_reduce<<<blocks, 256, 0, s>>>(a);
    return cudaGetLastError();
}

bool in_range(int64_t v, int64_t lo) { return v >= lo && v <= TC__IGEMM_MAX_DIM; }
bool below31(int64_t v) { return v >= 1 && v <= INT32_MAX; }
bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The output size of one dimension, -1 when the window does not fit even once. */
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
    const int64_t span = in + 2 * pad - dil * (k - 1) - 1;
    return span < 0 ? -1 : span / stride + 1;
}

/* The host's view of the configurations: tile and split-K, by id. */
struct config {
    int id, bm, bn;
    bool split;
};
constexpr config kConfigs[] = {
#define TC_IGEMM_ROW(ID, BM, BN, WM, WN, ST, SPLIT) {ID, BM, BN, SPLIT},
    TC_IGEMM_CONFIGS(TC_IGEMM_ROW)
#undef TC_IGEMM_ROW
};
static_assert(sizeof kConfigs / sizeof kConfigs[0] == TC__IGEMM_NUM_CONFIGS, "TC__IGEMM_NUM_CONFIGS");

const config *config_of(uint8_t id) {
    for (const config &c : kConfigs)
        if (c.id == id) return &c;
    return nullptr;
}

bool is_split(uint8_t id) {
    const config *c = config_of(id);
    return c != nullptr && c->split;
}

bool overlaps(const void *a, size_t an, const void *b, size_t bn) {
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a != nullptr && b != nullptr && x < y + bn && y < x + an;
}

} // namespace

extern "C" bool tc__igemm_conv_ok(const tc__igemm_conv *p) {
    if (p == nullptr) return false;
    const int64_t sizes[] = {p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->oh, p->ow, p->sh, p->sw, p->dh, p->dw};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!in_range(sizes[i], 1)) return false;
    if (!in_range(p->ph, 0) || !in_range(p->pw, 0) || p->c % 8 != 0 || p->k % 8 != 0) return false;
    if (out_size(p->h, p->r, p->ph, p->sh, p->dh) != p->oh || out_size(p->w, p->s, p->pw, p->sw, p->dw) != p->ow)
        return false;
    if (!below31((int64_t)p->n * p->h * p->w * p->c) || !below31((int64_t)p->k * p->r * p->s * p->c) ||
        !below31((int64_t)p->n * p->oh * p->ow * p->k) || (p->k + 63) / 64 > 65535)
        return false;
    return aligned16(p->x) && aligned16(p->wt) && aligned16(p->bias) && aligned16(p->res) && aligned16(p->y) &&
           aligned16(p->workspace);
}

extern "C" bool tc__igemm_conv_id_valid(uint8_t id) { return id < TC__IGEMM_NUM_CONFIGS; }

extern "C" size_t tc__igemm_conv_workspace(const tc__igemm_conv *p, uint8_t id) {
    if (!tc__igemm_conv_ok(p) || !tc__igemm_conv_id_valid(id) || !is_split(id)) return 0;
    const int64_t M = (int64_t)p->n * p->oh * p->ow, N = p->k, K = (int64_t)p->r * p->s * p->c;
    int per, splits;
    split_plan(M, N, K, &per, &splits);
    return splits > 1 ? (size_t)splits * (size_t)M * (size_t)N * sizeof(float) : 0; /* 1: run as its plain tile */
}

extern "C" size_t tc__igemm_conv_workspace_max(const tc__igemm_conv *p) {
    size_t most = 0;
    for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) {
        const size_t b = tc__igemm_conv_workspace(p, id);
        if (b > most) most = b;
    }
    return most;
}

extern "C" int tc__igemm_conv_configs(const tc__igemm_conv *p, uint8_t *ids, int cap) {
    if (!tc__igemm_conv_ok(p) || ids == nullptr || cap <= 0) return 0;
    const int64_t M = (int64_t)p->n * p->oh * p->ow, N = p->k, K = (int64_t)p->r * p->s * p->c;
    int per, splits;
    split_plan(M, N, K, &per, &splits);
    /* best guess: of the plain tiles giving every SM a block, the one wasting least on tile edges (kConfigs lists
     * the larger tiles first: they win ties), else split-K where it splits, else the smallest plain tile; then the
     * others in id order */
    uint8_t order[TC__IGEMM_NUM_CONFIGS];
    int n = 0, split_id = -1, smallest = -1;
    double best_used = 0.0;
    for (const config &c : kConfigs) {
        if (c.split) {
            split_id = c.id;
            continue;
        }
        smallest = c.id;
        const int64_t blocks = ((M + c.bm - 1) / c.bm) * ((N + c.bn - 1) / c.bn);
        const double used = (double)M * (double)N / ((double)blocks * c.bm * c.bn);
        if (blocks >= kTargetBlocks / 2 && used > best_used + 1e-9) order[0] = (uint8_t)c.id, n = 1, best_used = used;
    }
    if (n == 0 && splits > 1 && split_id >= 0) order[n++] = (uint8_t)split_id;
    if (n == 0) order[n++] = (uint8_t)smallest;
    for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) {
        bool seen = false;
        for (int i = 0; i < n; i++) seen |= order[i] == id;
        if (!seen && !(is_split(id) && splits < 2)) order[n++] = id;
    }
    int out = 0;
    for (int i = 0; i < n && out < cap; i++) ids[out++] = order[i];
    return out;
}

extern "C" cudaError_t tc__igemm_conv_run(const tc__igemm_conv *p, uint8_t id, cudaStream_t s) {
    if (!tc__igemm_conv_ok(p) || !tc__igemm_conv_id_valid(id) || p->x == nullptr || p->wt == nullptr ||
        p->y == nullptr)
        return cudaErrorInvalidValue;
    /* what the kernels write (y, the workspace) overlaps nothing they read nor each other */
    const size_t need = tc__igemm_conv_workspace(p, id);
    if (need > 0 && (p->workspace == nullptr || p->workspace_bytes < need)) return cudaErrorInvalidValue;
    const size_t yb = (size_t)p->n * p->oh * p->ow * p->k * 2;
    const void *reads[] = {p->x, p->wt, p->bias, p->res};
    const size_t read_bytes[] = {(size_t)p->n * p->h * p->w * p->c * 2, (size_t)p->k * p->r * p->s * p->c * 2,
                                 (size_t)p->k * 2, yb};
    for (int i = 0; i < 4; i++)
        if (overlaps(p->y, yb, reads[i], read_bytes[i]) || overlaps(p->workspace, need, reads[i], read_bytes[i]))
            return cudaErrorInvalidValue;
    if (overlaps(p->y, yb, p->workspace, need)) return cudaErrorInvalidValue;
    args a;
    a.x = (const __half *)p->x, a.w = (const __half *)p->wt, a.bias = (const __half *)p->bias;
    a.res = (const __half *)p->res, a.y = (__half *)p->y, a.ws = (float *)p->workspace;
    a.n = p->n, a.c = p->c, a.h = p->h, a.wd = p->w, a.k = p->k, a.r = p->r, a.s = p->s, a.oh = p->oh, a.ow = p->ow;
    a.ph = p->ph, a.pw = p->pw, a.sh = p->sh, a.sw = p->sw, a.dh = p->dh, a.dw = p->dw, a.relu = p->relu != 0;
    a.M = p->n * p->oh * p->ow, a.N = p->k, a.K = p->r * p->s * p->c, a.ohw = p->oh * p->ow;
    a.ktiles = (a.K + kBK - 1) / kBK;
    split_plan(a.M, a.N, a.K, &a.kt_per, &a.splits);
    /* a split-K id whose plan is one split runs its tile without the workspace (it reserved none) */
#define TC_IGEMM_RUN(ID, BM, BN, WM, WN, ST, SPLIT)                                                                   \
    if (id == ID) {                                                                                                    \
        if (SPLIT && a.splits < 2) return launch<BM, BN, WM, WN, ST, false>(a, s);                                     \
        return launch<BM, BN, WM, WN, ST, SPLIT>(a, s);                                                                \
    }
    TC_IGEMM_CONFIGS(TC_IGEMM_RUN)
#undef TC_IGEMM_RUN
    return cudaErrorInvalidValue;
}
