/*
 * dn_elem.cu - Cast, comparisons / logic, Not, IsNaN, Pow and ReduceMean of the dense CUDA tactics (dn_elem.h):
 * one thread per output element in grid-stride loops (ReduceMean: one thread, warp or block per output by the
 * size of the reduction). Conversions follow the reference (where_cast.c, core/tensor.c) bit for bit: float to
 * integer truncates (NaN 0, beyond int64 saturates, narrower types wrap), integer to float16 rounds once through
 * a float32 rounded to odd, float32 to float16 rounds to nearest even with the reference's NaN payload.
 */
#include <math.h>

#include "backends/cuda/dn_elem.h"
#include "backends/cuda/dn_walk.cuh"

namespace {

constexpr int kThreads = 256;

/* ---- conversions (the reference's, as device code) ---------------------------------------------------------- */

__device__ __forceinline__ float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (man == 0) u = sign;
        else {
            const float f = (float)man * 5.9604644775390625e-8f;
            return sign ? -f : f;
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    }
    return __uint_as_float(u);
}

__device__ __forceinline__ uint16_t f32_to_f16(float f) {
    const uint32_t u = __float_as_uint(f);
    const uint32_t sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 255) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    const int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        const uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        const uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;
    return (uint16_t)half;
}

/* double -> float rounded to odd (where_cast.c f64_to_f32_odd). */
__device__ __forceinline__ float f64_to_f32_odd(double d) {
    float f = (float)d;
    if ((double)f == d || isnan(d)) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    return __uint_as_float(__float_as_uint(f) | 1u);
}

/* tc__f64_to_int_bits for the signed targets and uint8 (all below int64's range). */
__device__ __forceinline__ long long f64_to_i64_bits(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return 0x7fffffffffffffffll;
    if (v <= -9223372036854775808.0) return (long long)(-0x7fffffffffffffffll - 1);
    return (long long)v;
}

struct Val {
    bool is_float;
    double f;
    long long i;
};

__device__ __forceinline__ Val load_val(const void *x, int32_t dt, int64_t k) {
    Val v = {false, 0.0, 0};
    switch (dt) {
    case TC_DTYPE_FLOAT32: v.is_float = true, v.f = (double)((const float *)x)[k]; break;
    case TC_DTYPE_FLOAT16: v.is_float = true, v.f = (double)f16_to_f32(((const uint16_t *)x)[k]); break;
    case TC_DTYPE_INT64: v.i = ((const long long *)x)[k]; break;
    case TC_DTYPE_INT32: v.i = ((const int32_t *)x)[k]; break;
    case TC_DTYPE_INT8: v.i = ((const int8_t *)x)[k]; break;
    case TC_DTYPE_UINT8: v.i = ((const uint8_t *)x)[k]; break;
    case TC_DTYPE_BOOL: v.i = ((const uint8_t *)x)[k] ? 1 : 0; break;
    default: break;
    }
    return v;
}

__device__ __forceinline__ void store_val(void *y, int32_t dt, int64_t k, Val v) {
    switch (dt) {
    case TC_DTYPE_FLOAT32: ((float *)y)[k] = v.is_float ? (float)v.f : (float)v.i; return;
    case TC_DTYPE_FLOAT16:
        ((uint16_t *)y)[k] = v.is_float ? f32_to_f16((float)v.f) : f32_to_f16(f64_to_f32_odd((double)v.i));
        return;
    case TC_DTYPE_BOOL: ((uint8_t *)y)[k] = v.is_float ? v.f != 0.0 : v.i != 0; return;
    default: break;
    }
    const long long b = v.is_float ? f64_to_i64_bits(v.f) : v.i; /* then narrowed like a C cast (wraps) */
    switch (dt) {
    case TC_DTYPE_INT64: ((long long *)y)[k] = b; return;
    case TC_DTYPE_INT32: ((int32_t *)y)[k] = (int32_t)(uint32_t)(unsigned long long)b; return;
    case TC_DTYPE_INT8: ((int8_t *)y)[k] = (int8_t)(uint8_t)(unsigned long long)b; return;
    case TC_DTYPE_UINT8: ((uint8_t *)y)[k] = (uint8_t)(unsigned long long)b; return;
    default: return;
    }
}

__global__ void cast_kernel(const void *__restrict__ x, int32_t sdt, void *__restrict__ y, int32_t ddt, int64_t n) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
        store_val(y, ddt, k, load_val(x, sdt, k));
}

/* ---- comparisons, logic, Not, IsNaN, Pow -------------------------------------------------------------------- */

template <typename T>
__device__ __forceinline__ bool cmp(int op, T a, T b) {
    return op == TC__DN_CMP_EQ ? a == b : op == TC__DN_CMP_LT ? a < b : a > b; /* NaN: every test false */
}

template <typename T>
__global__ void binary_bool_kernel(const tc__dn_walk w, const T *__restrict__ a, const T *__restrict__ b, int op,
                                   uint8_t *__restrict__ y) {
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < w.numel;
         o += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[2];
        tc_dn_offsets<2>(w, o, off);
        const T x = a[off[0]], z = b[off[1]];
        bool r;
        if (op == TC__DN_LOGIC_AND) r = x != 0 && z != 0;
        else if (op == TC__DN_LOGIC_OR) r = x != 0 || z != 0;
        else r = cmp<T>(op, x, z);
        y[o] = r ? 1 : 0;
    }
}

__global__ void not_kernel(const uint8_t *__restrict__ x, uint8_t *__restrict__ y, int64_t n) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
        y[k] = x[k] ? 0 : 1;
}

__global__ void isnan_kernel(const void *__restrict__ x, int32_t dt, uint8_t *__restrict__ y, int64_t n) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) {
        bool r;
        if (dt == TC_DTYPE_FLOAT16) r = (((const uint16_t *)x)[k] & 0x7fffu) > 0x7c00u;
        else r = isnan(((const float *)x)[k]);
        y[k] = r ? 1 : 0;
    }
}

__global__ void pow_kernel(const tc__dn_walk w, const float *__restrict__ a, const void *__restrict__ b, int32_t bdt,
                           float *__restrict__ y) {
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < w.numel;
         o += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[2];
        tc_dn_offsets<2>(w, o, off);
        const double e = bdt == TC_DTYPE_FLOAT32 ? (double)((const float *)b)[off[1]]
                         : bdt == TC_DTYPE_INT64 ? (double)((const long long *)b)[off[1]]
                                                 : (double)((const int32_t *)b)[off[1]];
        y[o] = (float)pow((double)a[off[0]], e);
    }
}

/* ---- ReduceMean --------------------------------------------------------------------------------------------- */

__device__ __forceinline__ int64_t walk_off(int32_t rank, const int64_t *dims, const int64_t *st, int64_t i) {
    int64_t off = 0;
    for (int d = rank - 1; d > 0; d--) {
        const int64_t c = i % dims[d];
        i /= dims[d];
        off += c * st[d];
    }
    return off + i * st[0];
}

/* G threads per output (1, a warp, or a block of 256). */
template <int G>
__global__ void reducemean_kernel(const tc__cuda_reduce_args p) {
    __shared__ double sh[32];
    const int lane = (int)(threadIdx.x % G);
    const int64_t groups = (int64_t)gridDim.x * (blockDim.x / G);
    for (int64_t o = (int64_t)blockIdx.x * (blockDim.x / G) + threadIdx.x / G; o < p.n_out; o += groups) {
        const float *x = p.x + walk_off(p.krank, p.kdims, p.kst, o);
        double acc = 0.0;
        for (int64_t r = lane; r < p.count; r += G) acc += (double)__ldg(x + walk_off(p.rrank, p.rdims, p.rst, r));
        if (G >= 32)
#pragma unroll
            for (int s = 16; s > 0; s >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, s);
        if (G > 32) {
            __syncthreads(); /* sh may still be read for the previous output */
            if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = acc;
            __syncthreads();
            acc = 0.0;
            for (int k = 0; k < G / 32; k++) acc += sh[k];
        }
        if (lane == 0) p.y[o] = (float)(acc / (double)p.count); /* 0 / 0: NaN, the reference's empty mean */
    }
}

} // namespace

extern "C" cudaError_t tc__cuda_dn_cast(const void *x, int32_t sdt, void *y, int32_t ddt, int64_t n, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    if (sdt == ddt) return cudaMemcpyAsync(y, x, (size_t)n * tc_dtype_size((tc_dtype)sdt), cudaMemcpyDeviceToDevice, s);
    cast_kernel<<<tc_dn_grid(n, kThreads), kThreads, 0, s>>>(x, sdt, y, ddt, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_binary_bool(const tc__dn_walk *w, const void *a, const void *b, int32_t dt, int op,
                                               uint8_t *y, cudaStream_t s) {
    if (w->numel <= 0) return cudaSuccess;
    const unsigned grid = tc_dn_grid(w->numel, kThreads);
    switch (dt) {
    case TC_DTYPE_FLOAT32:
        binary_bool_kernel<float><<<grid, kThreads, 0, s>>>(*w, (const float *)a, (const float *)b, op, y);
        break;
    case TC_DTYPE_INT64:
        binary_bool_kernel<long long><<<grid, kThreads, 0, s>>>(*w, (const long long *)a, (const long long *)b, op, y);
        break;
    case TC_DTYPE_INT32:
        binary_bool_kernel<int32_t><<<grid, kThreads, 0, s>>>(*w, (const int32_t *)a, (const int32_t *)b, op, y);
        break;
    case TC_DTYPE_BOOL:
        binary_bool_kernel<uint8_t><<<grid, kThreads, 0, s>>>(*w, (const uint8_t *)a, (const uint8_t *)b, op, y);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_not(const uint8_t *x, uint8_t *y, int64_t n, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    not_kernel<<<tc_dn_grid(n, kThreads), kThreads, 0, s>>>(x, y, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_isnan(const void *x, int32_t dt, uint8_t *y, int64_t n, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    isnan_kernel<<<tc_dn_grid(n, kThreads), kThreads, 0, s>>>(x, dt, y, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_pow_f32(const tc__dn_walk *w, const float *a, const void *b, int32_t bdt, float *y,
                                           cudaStream_t s) {
    if (w->numel <= 0) return cudaSuccess;
    pow_kernel<<<tc_dn_grid(w->numel, kThreads), kThreads, 0, s>>>(*w, a, b, bdt, y);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_reducemean_f32(const tc__cuda_reduce_args *p, cudaStream_t s) {
    if (p->n_out <= 0) return cudaSuccess;
    if (p->count <= 32) {
        reducemean_kernel<1><<<tc_dn_grid(p->n_out, kThreads), kThreads, 0, s>>>(*p);
    } else if (p->count <= 16384 || p->n_out >= 4096) {
        reducemean_kernel<32><<<tc_dn_grid(p->n_out * 32, kThreads), kThreads, 0, s>>>(*p);
    } else {
        const unsigned grid = (unsigned)(p->n_out < (1 << 20) ? p->n_out : (1 << 20));
        reducemean_kernel<256><<<grid, 256, 0, s>>>(*p);
    }
    return cudaGetLastError();
}
