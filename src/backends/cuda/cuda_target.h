/*
 * cuda_target.h - the CUDA backend's target record (a plan's TARGET section for --backend cuda): the device a plan
 * was built and tuned on. A plan runs on a device of the same compute capability (its kernels are compiled for it
 * and its tactics were timed there) and the same kernel revision; the name and memory are for messages.
 */
#ifndef TC_BACKENDS_CUDA_CUDA_TARGET_H
#define TC_BACKENDS_CUDA_CUDA_TARGET_H

#include <stdint.h>

/* Bumped whenever a CUDA tactic's arithmetic, packed layout or configurations change: older plans are refused (2: the
 * FP16 convolution packs its bias after the filter, the FP16 cuBLASLt tactics carry algorithm configurations). */
#define TC__CUDA_KERNEL_REV 2

typedef struct tc__cuda_target {
    char name[96];           /* "NVIDIA H200", NUL-padded */
    uint32_t cc_major, cc_minor;
    uint32_t n_sm;
    uint32_t kernel_rev;
    uint64_t total_mem;      /* bytes */
    int32_t runtime_version; /* cudaRuntimeGetVersion at build: 13000 */
    int32_t driver_version;
    uint64_t reserved;       /* 0 */
} tc__cuda_target;

#endif
