/* ops_pending.c - TEMPORARY weak placeholders so the library links while operator
 * families are written in parallel. Deleted once every operator is implemented. */
#include "backends/ref/ref.h"
#include "graph/op_schema.h"

#define TC_OP(name)                                                                                  \
    __attribute__((weak)) tc_status tc__infer_##name(tc__infer_ctx *ctx) {                           \
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "op %s: shape inference not implemented yet", \
                        #name);                                                                      \
    }                                                                                                \
    __attribute__((weak)) tc_status tc__ref_##name(const tc__kernel_ctx *ctx) {                      \
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "op %s: kernel not implemented yet", #name); \
    }
#include "core/ops.inc"
#undef TC_OP
