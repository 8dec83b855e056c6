/*
 * embed_layernorm.h - the CUDA kernel of TcEmbedLayerNorm (embed_layernorm.cu): row r of the flattened ids is
 * x = table[ids[r]] + addend[r % s] (FP32; no addend: the table row), then LayerNormalization over its d elements in
 * float, y = (x - mean) / sqrt(var + epsilon) * scale + bias, written FP32 or as an FP16 row image
 * (engine/row16_chain.c). An index outside [-v, v) writes NaN over its row and reports TC__CUDA_BAD_INDEX.
 */
#ifndef TC_BACKENDS_CUDA_EMBED_LAYERNORM_H
#define TC_BACKENDS_CUDA_EMBED_LAYERNORM_H

#include <stdbool.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of at most this many elements (the row is held in shared memory). */
#define TC__EMBED_LN_MAX_D 8192

typedef struct tc__cuda_embed_ln_args {
    const void *ids; /* int64 when ids64, else int32 */
    bool ids64;
    const float *table, *addend, *scale, *bias; /* addend may be NULL */
    void *y;                                    /* float, or FP16 when y16 */
    bool y16;
    int64_t rows, d, v, s; /* ids' elements, the row length, the table's rows, the addend's rows */
    float epsilon;
    tc__cuda_report report;
} tc__cuda_embed_ln_args;

/* Launches on stream (nothing when there is no row); cudaErrorInvalidValue when d > TC__EMBED_LN_MAX_D. */
cudaError_t tc__cuda_embed_layernorm(const tc__cuda_embed_ln_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
