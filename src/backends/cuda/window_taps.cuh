/* window_taps.cuh - the taps of a sliding window that fall inside the input, as device code for the CUDA pooling
 * kernels: the device twin of window.h's tc__window_taps (same arithmetic). */
#ifndef TC_BACKENDS_CUDA_WINDOW_TAPS_CUH
#define TC_BACKENDS_CUDA_WINDOW_TAPS_CUH

#include <stdint.h>

/* ceil(a / b) for b > 0 and any sign of a (window.h's tc__ceil_div). */
__device__ __forceinline__ int64_t tc_ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* Taps k in [*k0, *k1) of K taps dil apart from start whose index start + k * dil lies in [lo, hi). Without dilation
 * no 64-bit division (it costs a pooling kernel more than its memory traffic). */
__device__ __forceinline__ void tc_window_taps(int64_t start, int64_t dil, int64_t K, int64_t lo, int64_t hi,
                                               int64_t *k0, int64_t *k1) {
    const int64_t a = dil == 1 ? lo - start : tc_ceil_div(lo - start, dil);
    const int64_t b = dil == 1 ? hi - start : tc_ceil_div(hi - start, dil);
    *k0 = a < 0 ? 0 : a;
    *k1 = b > K ? K : b;
    if (*k1 < *k0) *k1 = *k0;
}

#endif
