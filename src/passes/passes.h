/*
 * passes.h - graph optimisation passes and the driver that runs them to a fixpoint.
 * Each pass rewrites the graph in place and counts its rewrites in ctx->changes;
 * the list (and each pass's off switch) is passes.inc.
 */
#ifndef TC_PASSES_PASSES_H
#define TC_PASSES_PASSES_H

#include "graph/graph.h"

typedef struct tc__pass_ctx {
    tc__graph *g;
    tc__eval_fn eval;  /* evaluates a node on constant inputs (constant folding) */
    void *eval_user;
    int changes;       /* incremented by the pass for every rewrite it makes */
    tc__err *err;
} tc__pass_ctx;

#define TC_PASS(name, flag) tc_status tc__pass_##name(tc__pass_ctx *ctx);
#include "passes/passes.inc"
#undef TC_PASS

/* Rewrites made by each pass over the whole run, in passes.inc order. */
typedef struct tc__pass_report {
    int rounds;
    int changes[16];
} tc__pass_report;

/*
 * Runs every pass not switched off in `disabled` (TC_PASS_* bits), round after round, until a
 * round changes nothing (at most 16 rounds). Between passes the graph is compacted, re-sorted and
 * its shapes re-inferred, so every pass sees a consistent graph. report may be NULL.
 */
tc_status tc__passes_run(tc__graph *g, uint32_t disabled, tc__eval_fn eval, void *eval_user, tc__pass_report *report,
                         tc__err *err);

/*
 * The layout pass (layout_nchw16c.c): not part of the rounds above. The engine runs it once after
 * them, when the target has the NCHW16c kernels, and re-sorts and re-infers the graph afterwards.
 */
tc_status tc__pass_layout_nchw16c(tc__pass_ctx *ctx);
/* The same pass with blocks of `block` channels (16: NCHW16c, as above; 8: NCHW8c, the AVX2 kernels). */
tc_status tc__pass_layout_nchwc(tc__pass_ctx *ctx, int64_t block);
/* Attention chains into one Attention node, for device backends (fuse_attention.c; not in passes.inc). */
tc_status tc__pass_fuse_attention(tc__pass_ctx *ctx);
/* After it: an Attention node's Q, K and V projections into one MatMul read as packed Q|K|V (merge_qkv.c). */
tc_status tc__pass_merge_qkv(tc__pass_ctx *ctx);
/* Gather(constant table) + constant Adds + LayerNormalization into one TcEmbedLayerNorm node, for device backends
 * (fuse_embed_layernorm.c; not in passes.inc). */
tc_status tc__pass_fuse_embed_layernorm(tc__pass_ctx *ctx);

/*
 * The INT8 precision pass (precision_int8.c): gives quantizable nodes (one-group Conv, MatMul, Gemm with
 * a constant weight) whose data input the cache calibrated the attribute tc.int8_scale, except the nodes
 * named in exclude; with w7 (reduce range) every INT8 node also gets tc.int8_w7 = 1, except the nodes named
 * in w8 (they keep 8-bit weights). Run once after the rounds, before the layout pass. The scales come from
 * scale_of (the engine looks them up in its calibration cache, quant/calib_cache.h, which passes do not include):
 * true and *scale when the value named name was calibrated.
 */
typedef bool (*tc__scale_lookup)(const void *user, const char *name, float *scale);
typedef struct tc__int8_lists {
    const char *const *exclude; /* stay FP32 */
    int n_exclude;
    const char *const *w8; /* with w7: keep 8-bit weights */
    int n_w8;
} tc__int8_lists;
tc_status tc__pass_precision_int8(tc__pass_ctx *ctx, tc__scale_lookup scale_of, const void *user,
                                  const tc__int8_lists *lists, bool w7);

/*
 * The asymmetric codes the precision pass gives a layer reading value v of graph g (an optimized graph: v's producer
 * ends in a GELU, SiLU or HardSwish epilogue) with calibrated symmetric scale `scale`: codes 0..code_max (255, or 127
 * with reduce range) over [that activation's minimum, 127 * scale] as scale *s and zero point *z; false when the
 * layer keeps symmetric codes. `--export-qdq` writes the same.
 */
bool tc__int8_floor_codes(const tc__graph *g, int32_t v, float scale, double code_max, float *s, int64_t *z);

/*
 * The 16-bit float precision pass (precision_half.c): gives the same layers the int attribute attr
 * (TC__ATTR_FP16 or TC__ATTR_BF16) = 1, except the nodes named in exclude. Run once after the rounds,
 * before the layout pass.
 */
tc_status tc__pass_precision_half(tc__pass_ctx *ctx, const char *attr, const char *const *exclude, int n_exclude);
/* Marks every node of op_type (not excluded) with attr = 1 (precision_half.c; device builds' Attention nodes). */
tc_status tc__pass_precision_half_op(tc__pass_ctx *ctx, const char *attr, const char *op_type, const char *const *exclude,
                                     int n_exclude);

/* Number of passes and the name / description of pass i (for --help and inspect). */
int tc__pass_count(void);
const char *tc__pass_name(int i);
const char *tc__pass_description(int i);

#endif
