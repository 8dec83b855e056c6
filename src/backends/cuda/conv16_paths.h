/*
 * conv16_paths.h - the configurations of cuda_conv_fp16_cudnn (conv16_paths.c): which code computes a chained
 * convolution whose output stays FP16 NHWC. Configuration 0 (the default, what an untimed choice takes) is the
 * tactic's own choice: the pointwise cuBLASLt GEMM for a 1x1 convolution, else cuDNN's legacy fused call
 * (cudnnConvolutionBiasActivationForward). The others, timed by the tuner once the chain is known
 * (engine_tactics.c's retune_chained_configs): our implicit-GEMM kernel (igemm_conv_fp16.h) in each of its tile
 * configurations, and cuDNN's graph API (cudnn_graph.h) in each engine configuration its heuristics offer. A path that
 * cannot run a step at run time (a refusal of cuDNN's) falls back to the default, which computes the same values.
 */
#ifndef TC_BACKENDS_CUDA_CONV16_PATHS_H
#define TC_BACKENDS_CUDA_CONV16_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/cnn_epi.h"
#include "backends/cuda/cudnn_graph.h"

enum { TC__CONV16_DEFAULT = 0, TC__CONV16_IGEMM = 1, TC__CONV16_GRAPH = 2 };

/* One configuration as stored in a plan (plain data, no padding holes; reserved bytes 0). */
typedef struct tc__conv16_cfg {
    uint8_t path;     /* TC__CONV16_* */
    uint8_t igemm_id; /* TC__CONV16_IGEMM: the kernel's configuration id */
    uint8_t reserved[6];
    tc__dnn_graph_cfg graph; /* TC__CONV16_GRAPH: cuDNN's engine configuration (zero otherwise) */
} tc__conv16_cfg;

/* The convolution as the paths see it: FP16 NHWC x, KRSC filter, FP16 NHWC y; symmetric pads, one group. */
typedef struct tc__conv16_geom {
    int32_t n, c, h, w, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw;
    bool bias, residual, relu; /* the FP16 bias, the FP16 NHWC residual, ReLU (the only activation the paths take) */
} tc__conv16_geom;

/* Fills up to cap configurations for g (the default first) and returns how many; ws_max: the workspace the step's
 * scratch holds for them. The graph configurations are asked of cuDNN once per geometry and remembered. */
int tc__conv16_configs(const tc__conv16_geom *g, size_t ws_max, tc__conv16_cfg *out, int cap);

/* Validates a configuration read from a plan. */
bool tc__conv16_cfg_check(const void *config, tc__err *err);

/*
 * Runs configuration cfg (not the default) for g on the stream: x, w16 (KRSC), bias16 (NULL when !g->bias), z (NULL
 * when !g->residual), y; ws of ws_bytes. TC_STATUS_UNSUPPORTED, err untouched, when this path does not take the step
 * here (the caller runs the default); another failure names what failed.
 */
tc_status tc__conv16_run(const tc__conv16_geom *g, const tc__conv16_cfg *cfg, const void *x, const void *w16,
                         const void *bias16, const void *z, void *y, void *ws, size_t ws_bytes, cudaStream_t s,
                         tc__err *err);

#endif
