/*
 * op_schema.h - what the graph layer knows about each operator: its name and
 * a shape/type inference function. The list of operators is ops.inc.
 *
 * Inference runs both statically (symbolic dims, values known only for
 * constants) and at run time (every input concrete with its value known), so
 * an inference function must handle unknown inputs gracefully: when it cannot
 * tell a dim, it sets it unknown rather than failing. It fails only when the
 * node is invalid (wrong input count, bad attribute, incompatible shapes).
 */
#ifndef TC_GRAPH_OP_SCHEMA_H
#define TC_GRAPH_OP_SCHEMA_H

#include "core/attr.h"
#include "core/error.h"
#include "graph/shape.h"

typedef struct tc__infer_ctx {
    const char *node_name;
    const char *op_type;
    int64_t opset;            /* opset version of the default ONNX domain */
    const tc__attrs *attrs;
    int n_in;
    const tc__vinfo *const *in; /* in[i] is NULL for an absent optional input */
    int n_out;
    tc__vinfo *out;             /* preinitialised with tc__vinfo_init; set dtype and shape */
    tc__err *err;
} tc__infer_ctx;

typedef tc_status (*tc__infer_fn)(tc__infer_ctx *ctx);

typedef struct tc__op_schema {
    const char *op_type;
    tc__infer_fn infer;
} tc__op_schema;

/* Declarations of every tc__infer_<Op>, from the single list. */
#define TC_OP(name) tc_status tc__infer_##name(tc__infer_ctx *ctx);
#include "core/ops.inc"
#undef TC_OP

/* The domain of tailcut's own ops (ops.inc's Tc... entries, made by passes). */
#define TC__DOMAIN_INTERNAL "tailcut"

/* Look-up by ONNX op type in the default domain (a Tc... op: in TC__DOMAIN_INTERNAL); NULL when not supported. */
const tc__op_schema *tc__op_schema_find(const char *domain, const char *op_type);
/* Number of operators in ops.inc and the i-th schema (for listings and tests). */
int tc__op_schema_count(void);
const tc__op_schema *tc__op_schema_at(int i);

/*
 * Helpers for inference functions. Each fails with a message naming the node.
 */
/* Checks n_in is within [min, max] and n_out within [1, max_out]. */
tc_status tc__infer_check_arity(tc__infer_ctx *ctx, int min_in, int max_in, int max_out);
/* Input i when present, else NULL. */
static inline const tc__vinfo *tc__infer_input(const tc__infer_ctx *ctx, int i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}
/* NumPy broadcasting of two shapes into out (unknown dims propagate). */
tc_status tc__infer_broadcast(tc__infer_ctx *ctx, const tc__shape *a, const tc__shape *b, tc__shape *out);
/* Normalises a possibly negative axis against rank; fails when out of range. */
tc_status tc__infer_axis(tc__infer_ctx *ctx, int64_t axis, int32_t rank, int32_t *out);
/* Copies dtype and shape of input 0 to output 0 (for shape-preserving ops). */
tc_status tc__infer_same_as_input0(tc__infer_ctx *ctx);
/* Reads a known int64/int32 1-D or 0-D tensor value as int64s; returns count or -1 when unknown. */
int64_t tc__infer_const_ints(const tc__vinfo *v, int64_t *out, int64_t cap);

#endif
