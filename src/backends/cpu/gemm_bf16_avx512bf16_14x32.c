/*
 * gemm_bf16_avx512bf16_14x32.c - the AVX512-BF16 GEMM: FP32 -> BF16 conversion and packing
 * (vcvtne2ps2bf16), the 14x32 microkernel (28 zmm FP32 accumulators; per pair of K, two loads of
 * B and one 32-bit broadcast of an A pair per row, each feeding vdpbf16ps) and the single-threaded
 * operator with K and M blocking. Layouts and rounding are described in gemm_bf16_avx512bf16.h.
 *
 * Measured on the development machine (a Sapphire Rapids-class Xeon without AMX): vdpbf16ps on zmm
 * issues once every 2 cycles whatever the number of independent chains, a quarter of the FMA rate,
 * so its registers-only peak (about 85 GFLOP/s per core) is half of FP32's. The kernel reaches that
 * peak; BF16 pays off there only where weight bandwidth, not arithmetic, is the limit (small M).
 */
#include "backends/cpu/gemm_bf16_avx512bf16.h"

#include <immintrin.h>
#include <string.h>

#define MR TC__GEMM_BF16_MR
#define NR TC__GEMM_BF16_NR
#define NV (NR / 16) /* zmm vectors per row of the tile */

_Static_assert(NR % 16 == 0, "NR is a whole number of zmm vectors");

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The first n (clamped to 16) lanes. */
static inline __mmask16 mask16(size_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u); }

/* ---- conversion and packing ------------------------------------------------------------------- */

/* Up to 32 floats (n of them; the rest read as 0) as 32 bfloat16 in order: 16 pairs of neighbours. */
static inline __m512i convert32(const float *src, size_t n) {
    const __m512 lo = _mm512_maskz_loadu_ps(mask16(n), src);
    const __m512 hi = _mm512_maskz_loadu_ps(mask16(n > 16 ? n - 16 : 0), src + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

void tc__gemm_bf16_convert(const float *src, size_t n, uint16_t *dst) {
    for (size_t i = 0; i < n; i += 32) {
        const size_t w = min_size(32, n - i);
        const __mmask32 m = w == 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << w) - 1u);
        _mm512_mask_storeu_epi16(dst + i, m, convert32(src + i, w));
    }
}

size_t tc__gemm_bf16_packed_b_size(size_t k, size_t n) { return (n + NR - 1) / NR * NR * 2 * ((k + 1) / 2); }

/*
 * 16 columns of two rows of B (r1 NULL: the zero row after an odd K; w: columns that exist) as 16
 * (row 0, row 1) pairs, the layout vdpbf16ps reads.
 */
static inline __m512i pair_rows16(const float *r0, const float *r1, size_t w) {
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                                22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512 x0 = _mm512_maskz_loadu_ps(mask16(w), r0);
    const __m512 x1 = r1 != NULL ? _mm512_maskz_loadu_ps(mask16(w), r1) : _mm512_setzero_ps();
    return _mm512_permutexvar_epi16(interleave, (__m512i)_mm512_cvtne2ps_pbh(x1, x0));
}

void tc__gemm_bf16_pack_b(size_t k, size_t n, const float *b, size_t ldb, uint16_t *dst) {
    const size_t kp = (k + 1) / 2;
    for (size_t j0 = 0; j0 < n; j0 += NR) {
        uint16_t *panel = dst + j0 * 2 * kp;
        for (size_t p = 0; p < kp; p++) {
            const float *r0 = b + 2 * p * ldb + j0, *r1 = 2 * p + 1 < k ? r0 + ldb : NULL;
            for (size_t v = 0; v < NV; v++) {
                const size_t j = j0 + 16 * v; /* padding columns past n are zero */
                const __m512i pairs =
                    j < n ? pair_rows16(r0 + 16 * v, r1 != NULL ? r1 + 16 * v : NULL, n - j) : _mm512_setzero_si512();
                _mm512_storeu_si512(panel + (p * NR + 16 * v) * 2, pairs);
            }
        }
    }
}

size_t tc__gemm_bf16_packed_a_size(size_t m, size_t k) { return (m + MR - 1) / MR * MR * 2 * ((k + 1) / 2); }

/* Transposes 16 rows of 16 32-bit lanes in place: afterwards r[j] holds lane j of every row. */
static inline __attribute__((always_inline)) void transpose16x16_epi32(__m512i r[16]) {
    __m512i t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 16; i++) {
        const int base = i & 8, j = i & 3; /* pairs (base + j, base + j + 4) */
        t[i] = (i & 4) ? _mm512_shuffle_i32x4(r[base + j], r[base + j + 4], 0xdd)
                       : _mm512_shuffle_i32x4(r[base + j], r[base + j + 4], 0x88);
    }
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
    }
}

/*
 * Pairs [p0, p0 + 16) of the h rows of one A panel (row ii at a + ii * lda): each row converted to
 * 16 pairs, transposed so a vector holds one pair of every row, stored as h lanes at stride MR.
 */
static void pack_a_pairs16(size_t h, size_t k, const float *a, size_t lda, size_t p0, uint16_t *panel) {
    const size_t kp = (k + 1) / 2, np = min_size(16, kp - p0), nk = min_size(32, k - 2 * p0);
    __m512i r[16];
#pragma GCC unroll 16
    for (size_t ii = 0; ii < 16; ii++)
        r[ii] = ii < h ? convert32(a + ii * lda + 2 * p0, nk) : _mm512_setzero_si512();
    transpose16x16_epi32(r);
    for (size_t t = 0; t < np; t++)
        _mm512_mask_storeu_epi32(panel + (p0 + t) * MR * 2, mask16(h), r[t]);
}

void tc__gemm_bf16_pack_a(size_t m, size_t k, const float *a, size_t lda, uint16_t *dst) {
    _Static_assert(MR <= 16, "one transposed vector holds a pair of every row of a panel");
    const size_t kp = (k + 1) / 2;
    for (size_t i0 = 0; i0 < m; i0 += MR) {
        const size_t h = min_size(MR, m - i0);
        for (size_t p0 = 0; p0 < kp; p0 += 16)
            pack_a_pairs16(h, k, a + i0 * lda, lda, p0, dst + i0 * 2 * kp);
    }
}

/* ---- microkernel ------------------------------------------------------------------------------ */

/* The A pair at p as one 32-bit lane broadcast (the compiler folds it into vdpbf16ps's operand). */
static inline __m512bh broadcast_pair(const uint16_t *p) {
    int32_t w;
    memcpy(&w, p, sizeof w);
    return (__m512bh)_mm512_set1_epi32(w);
}

/* mr is a constant in each instantiation, so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void kernel(const tc__gemm_bf16_tile *t, const int mr) {
    const size_t kp = t->kp, ldc = t->ldc, nr = t->nr;
    __mmask16 m[NV];
    for (size_t v = 0; v < NV; v++)
        m[v] = mask16(nr > 16 * v ? nr - 16 * v : 0);
    float *c = t->c;
    __m512 acc[MR][NV];
#pragma GCC unroll 14
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            acc[i][v] = t->load_c ? _mm512_maskz_loadu_ps(m[v], c + (size_t)i * ldc + 16 * v) : _mm512_setzero_ps();
    const uint16_t *a = t->a, *b = t->b;
    for (size_t p = 0; p < kp; p++) {
        __m512bh bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            bv[v] = (__m512bh)_mm512_loadu_si512(b + 32 * v);
        b += 2 * NR;
#pragma GCC unroll 14
        for (int i = 0; i < mr; i++) {
            const __m512bh av = broadcast_pair(a + 2 * i);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, bv[v]);
        }
        a += 2 * MR;
    }
    if (t->bias != NULL) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            const __m512 bias = _mm512_maskz_loadu_ps(m[v], t->bias + 16 * v);
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++)
                acc[i][v] = _mm512_add_ps(acc[i][v], bias);
        }
    }
    if (t->relu) {
        /* max(x, 0) returns its second operand when x is NaN: ReLU maps NaN to 0 like the FP32 kernels. */
        const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 14
        for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                acc[i][v] = _mm512_max_ps(acc[i][v], zero);
    }
#pragma GCC unroll 14
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            _mm512_mask_storeu_ps(c + (size_t)i * ldc + 16 * v, m[v], acc[i][v]);
}

#define TC_KERNEL_ROWS_(n) \
    static void kernel_##n(const tc__gemm_bf16_tile *t) { kernel(t, n); }
TC_KERNEL_ROWS_(1)
TC_KERNEL_ROWS_(2)
TC_KERNEL_ROWS_(3)
TC_KERNEL_ROWS_(4)
TC_KERNEL_ROWS_(5)
TC_KERNEL_ROWS_(6)
TC_KERNEL_ROWS_(7)
TC_KERNEL_ROWS_(8)
TC_KERNEL_ROWS_(9)
TC_KERNEL_ROWS_(10)
TC_KERNEL_ROWS_(11)
TC_KERNEL_ROWS_(12)
TC_KERNEL_ROWS_(13)
TC_KERNEL_ROWS_(14)
#undef TC_KERNEL_ROWS_

_Static_assert(MR == 14, "one kernel_<rows> per row count up to MR");

void tc__gemm_bf16_avx512bf16_14x32(const tc__gemm_bf16_tile *t) {
    static void (*const kRows[MR + 1])(const tc__gemm_bf16_tile *) = {
        NULL,     kernel_1, kernel_2,  kernel_3,  kernel_4,  kernel_5,  kernel_6,  kernel_7,
        kernel_8, kernel_9, kernel_10, kernel_11, kernel_12, kernel_13, kernel_14,
    };
    if (t->mr < 1 || t->mr > MR || t->nr < 1 || t->nr > NR) return;
    kRows[t->mr](t);
}

/* ---- operator --------------------------------------------------------------------------------- */

/* The cache blocking of one problem: kc columns of A (rows of B) per block, mc rows of A per block. */
typedef struct blocking {
    size_t kc, mc;
} blocking;

/*
 * kc: a packed B panel (kc x NR bfloat16) fills about half of L1, with the blocks of K balanced
 * and even (pairs never straddle blocks). mc: a packed A block (mc x kc) fills about half of L2.
 */
static blocking choose_blocking(size_t m, size_t k) {
    const tc__cpu *cpu = tc__cpu_get();
    const size_t l1 = cpu->l1d_bytes ? cpu->l1d_bytes : 32 * 1024, l2 = cpu->l2_bytes ? cpu->l2_bytes : 1024 * 1024;
    size_t kc_max = l1 / 2 / (NR * sizeof(uint16_t));
    kc_max = kc_max < 64 ? 64 : kc_max & ~(size_t)1;
    const size_t blocks = k == 0 ? 1 : (k + kc_max - 1) / kc_max;
    size_t kc = (k + blocks - 1) / blocks;
    kc += kc & 1;
    if (kc == 0) kc = 2;
    size_t mc = l2 / 2 / (kc * sizeof(uint16_t)) / MR * MR;
    if (mc < MR) mc = MR;
    const size_t m_up = (m + MR - 1) / MR * MR;
    return (blocking){.kc = kc, .mc = mc < m_up ? mc : m_up};
}

size_t tc__gemm_bf16_scratch_bytes(size_t m, size_t k) {
    const blocking bl = choose_blocking(m, k);
    return tc__gemm_bf16_packed_a_size(bl.mc, bl.kc) * sizeof(uint16_t);
}

/* The arguments of the operator that every block shares. */
typedef struct bf16_problem {
    size_t m, n, k;
    const float *a;
    size_t lda;
    const uint16_t *packed_b;
    float *c;
    size_t ldc;
    const float *bias;
    bool relu;
} bf16_problem;

/* Rows [i0, i0 + mc) x columns [k0, k0 + kc) of A, already packed in ap, times all of B into C. */
static void run_block(const bf16_problem *p, size_t i0, size_t mc, size_t k0, size_t kc, const uint16_t *ap) {
    const size_t kp = (kc + 1) / 2, kp_all = (p->k + 1) / 2;
    const bool last = k0 + kc >= p->k;
    for (size_t j0 = 0; j0 < p->n; j0 += NR) {
        tc__gemm_bf16_tile t = {.nr = min_size(NR, p->n - j0),
                                .kp = kp,
                                .b = p->packed_b + j0 * 2 * kp_all + k0 * NR,
                                .ldc = p->ldc,
                                .load_c = k0 > 0,
                                .bias = last && p->bias != NULL ? p->bias + j0 : NULL,
                                .relu = last && p->relu};
        for (size_t ir = 0; ir < mc; ir += MR) {
            t.mr = min_size(MR, mc - ir);
            t.a = ap + ir * 2 * kp;
            t.c = p->c + (i0 + ir) * p->ldc + j0;
            tc__gemm_bf16_avx512bf16_14x32(&t);
        }
    }
}

void tc__gemm_bf16_run(size_t m, size_t n, size_t k, const float *a, size_t lda, const uint16_t *packed_b, float *c,
                       size_t ldc, const float *bias, bool relu, void *scratch) {
    if (m == 0 || n == 0) return;
    const bf16_problem p = {m, n, k, a, lda, packed_b, c, ldc, bias, relu};
    const blocking bl = choose_blocking(m, k);
    uint16_t *ap = scratch;
    /* k == 0 still runs one (empty) block: C = relu(bias) or 0. */
    for (size_t k0 = 0; k0 == 0 || k0 < k; k0 += bl.kc) {
        const size_t kc = min_size(bl.kc, k - k0);
        for (size_t i0 = 0; i0 < m; i0 += bl.mc) {
            const size_t mc = min_size(bl.mc, m - i0);
            if (kc > 0) tc__gemm_bf16_pack_a(mc, kc, a + i0 * lda + k0, lda, ap);
            run_block(&p, i0, mc, k0, kc, ap);
        }
    }
}
