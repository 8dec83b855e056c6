/* scratch.c - kernel scratch memory: bump allocation from a context's preallocated buffer
 * on the engine's run path, malloc for the reference executor. */
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"

void *tc__kernel_alloc(const tc__kernel_ctx *ctx, size_t bytes) {
    if (bytes == 0) bytes = 1;
    tc__scratch *s = ctx->scratch;
    if (s == NULL) return malloc(bytes);
    size_t at = (s->used + 63) & ~(size_t)63;
    if (at < s->used || at > s->cap || bytes > s->cap - at) return NULL;
    s->used = at + bytes;
    return s->base + at;
}

void tc__kernel_free(const tc__kernel_ctx *ctx, void *p) {
    tc__scratch *s = ctx->scratch;
    if (s == NULL) {
        free(p);
        return;
    }
    /* Stack discipline: freeing the most recent block gives its space back. */
    unsigned char *b = p;
    if (b != NULL && b >= s->base && b < s->base + s->cap && (size_t)(b - s->base) < s->used)
        s->used = (size_t)(b - s->base);
}

bool tc__ref_uses_scratch(const char *op_type) {
    static const char *const kOps[] = {
        "Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "LayerNormalization", "Pad", "ReduceMean",
        "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL2", "Resize", "Softmax",
        "LogSoftmax", "BatchNormalization", "Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool",
        "GlobalMaxPool"};
    for (size_t i = 0; i < sizeof kOps / sizeof kOps[0]; i++)
        if (strcmp(kOps[i], op_type) == 0) return true;
    return false;
}
