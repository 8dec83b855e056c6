/*
 * cudnn_graph.h - the FP16 NHWC convolution with its epilogue (y = relu(conv(x, w) + bias + z)) as one cuDNN operation
 * graph through cuDNN's backend (graph) API (cudnn.h's optional descriptor functions): the engine configurations
 * cuDNN's heuristics offer for a geometry, a configuration's check (as read from a plan), and the run of one
 * configuration, its execution plan built on the first use and cached for the process.
 *
 * The graph: CONVOLUTION_FORWARD (x, w -> FP32 virtual, FP32 compute) -> POINTWISE ADD bias -> POINTWISE ADD z ->
 * POINTWISE RELU_FWD -> y FP16, the nodes that do not apply left out (a plain convolution writes y itself).
 */
#ifndef TC_BACKENDS_CUDA_CUDNN_GRAPH_H
#define TC_BACKENDS_CUDA_CUDNN_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/error.h"

/* FP16 NHWC x [n][h][w][c], KRSC filter [k][r][s][c], FP16 NHWC y [n][oh][ow][k]; symmetric pads; one group. */
typedef struct tc__dnn_graph_conv {
    int32_t n, c, h, w, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw;
    bool bias;     /* + FP16 bias [k] (as a [1,k,1,1] tensor broadcast) */
    bool residual; /* + FP16 NHWC z of y's shape, after the bias */
    bool relu;     /* then ReLU */
} tc__dnn_graph_conv;

/* Knob choices a configuration holds at most (cuDNN's engines have a handful; a configuration with more is not
 * offered). A knob's value is kept as int32 (cuDNN's are small indices; a larger one is not offered either). */
#define TC__DNN_GRAPH_MAX_KNOBS 22

/* One engine configuration: cuDNN's engine (its global index) and its knob choices. Plain data without padding holes,
 * so it can be stored in a plan as is (TC__DNN_GRAPH_CFG_BYTES); the reserved fields are 0. */
typedef struct tc__dnn_graph_cfg {
    int64_t engine;  /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX */
    int32_t n_knobs; /* 0..TC__DNN_GRAPH_MAX_KNOBS */
    int32_t reserved;
    struct {
        int32_t type;  /* cudnnBackendKnobType_t */
        int32_t value; /* CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE */
    } knobs[TC__DNN_GRAPH_MAX_KNOBS];
} tc__dnn_graph_cfg;
#define TC__DNN_GRAPH_CFG_BYTES 192

/* Up to cap engine configurations cuDNN's heuristics (mode A, then the fallback list when mode A offers none that
 * works) offer for g whose execution plan, rebuilt from the configuration alone, finalizes and whose workspace is at
 * most max_ws bytes, in cuDNN's order (engines noted REDUCED_PRECISION_REDUCTION left out); 0 with a reason in why
 * when there is none, the geometry is invalid or the library lacks the backend API. Builds plans (milliseconds each,
 * more for runtime-compiled engines): for build time, not for a run. */
int tc__dnn_graph_configs(const tc__dnn_graph_conv *g, size_t max_ws, tc__dnn_graph_cfg *out, int cap, char *why,
                          size_t why_size);

/* Validates a configuration read from a plan (knob count, reserved fields, value ranges); cuDNN itself judges the
 * engine and knobs when the plan is built. */
bool tc__dnn_graph_cfg_check(const tc__dnn_graph_cfg *cfg, tc__err *err);

/* Enqueues y = act(conv(x, w) + bias + z) on stream with configuration cfg (bias used when g->bias, z when
 * g->residual; every pointer 16-byte aligned). The execution plan is built on the first call per (geometry, cfg) and
 * cached for the process (bounded; never evicted: a captured CUDA graph may hold its kernels), the cuDNN handle's lock
 * held while building and executing; later calls only execute it (graph-capturable). TC_STATUS_UNSUPPORTED with err
 * untouched when the library lacks the backend API, cuDNN refuses the configuration, its workspace exceeds ws_bytes,
 * a pointer is misaligned, the cache is full, or the plan is not built yet and the stream is capturing (building may
 * run device work): tc__dnn_graph_why() then says which. Other failures name the cuDNN call and its messages. */
tc_status tc__dnn_graph_run(const tc__dnn_graph_conv *g, const tc__dnn_graph_cfg *cfg, const void *x, const void *w,
                            const void *bias, const void *z, void *y, void *workspace, size_t ws_bytes,
                            cudaStream_t stream, tc__err *err);

/* Why this thread's last tc__dnn_graph_run returned TC_STATUS_UNSUPPORTED ("" when it did not). */
const char *tc__dnn_graph_why(void);

#endif
