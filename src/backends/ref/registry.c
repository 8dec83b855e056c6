/* registry.c - the table of reference kernels, generated from core/ops.inc. */
#include <string.h>

#include "backends/ref/ref.h"

static const struct {
    const char *op_type;
    tc__ref_fn fn;
} kKernels[] = {
#define TC_OP(name) {#name, tc__ref_##name},
#include "core/ops.inc"
#undef TC_OP
};

tc__ref_fn tc__ref_find(const char *op_type) {
    for (size_t i = 0; i < sizeof kKernels / sizeof kKernels[0]; i++)
        if (strcmp(kKernels[i].op_type, op_type) == 0) return kKernels[i].fn;
    return NULL;
}

tc_status tc__ref_unsupported_dtype(const tc__kernel_ctx *ctx, int input, tc_dtype dtype) {
    const char *n = tc_dtype_name(dtype);
    return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "input %d has data type %s, which the %s kernel does not support",
                    input, n ? n : "unknown", ctx->op_type);
}
