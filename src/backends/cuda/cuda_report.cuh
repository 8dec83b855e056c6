/*
 * cuda_report.cuh - the device side of data-error reports (cuda_exec.h): a kernel that finds its input invalid
 * records the report's code in the context's error word unless an earlier step already did (the first one wins).
 */
#ifndef TC_BACKENDS_CUDA_CUDA_REPORT_CUH
#define TC_BACKENDS_CUDA_CUDA_REPORT_CUH

#include "backends/cuda/cuda_exec.h"

__device__ __forceinline__ void tc_cuda_report(const tc__cuda_report &r) {
    if (r.word != nullptr && r.code != 0) atomicCAS(r.word, 0u, r.code);
}

#endif
