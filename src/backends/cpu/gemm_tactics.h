/*
 * gemm_tactics.h - the logic shared by the GEMM-based tactics (MatMul, Gemm, Conv as GEMM): each
 * tactic file (<name>_tactic.c) binds one of these families to one microkernel configuration.
 *
 * Families and what they pack at build time (a permutation of the same size, see gemm.h):
 *   MatMul, packed B: constant B (any rank) into NR-column panels per matrix; A at run time.
 *   MatMul, runtime B: nothing; B tiles are packed into scratch at run time (e.g. attention Q.K^T).
 *   Gemm, packed B / runtime B: likewise, honouring transA/transB, alpha, beta and C broadcasting.
 *   Conv 1x1 (stride 1, no padding, one group): W[Cout, Cin] into MR-row panels; X per image is B.
 *   Conv im2col: W per group into MR-row panels; B tiles are built from X (im2col) into scratch.
 * The step's epilogue is fused (TC__TACTIC_FUSES_EPILOGUE); Conv's own bias is a per-row bias.
 * Scratch is sized for up to tc__cpu_get()->logical_cpus threads.
 */
#ifndef TC_BACKENDS_CPU_GEMM_TACTICS_H
#define TC_BACKENDS_CPU_GEMM_TACTICS_H

#include "backends/cpu/gemm.h"
#include "backends/tactic.h"

/* MatMul (matmul_node_f32.c). */
bool tc__matmul_node_f32_supports(const tc__step_desc *d, bool packed_b);
bool tc__matmul_node_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__matmul_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                   const tc__gemm_config *cfg);
size_t tc__matmul_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b);
/* Runs the step, with the blocking in ctx->config when the tactic has configurations (tc__gemm_blocking). */
tc_status tc__matmul_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool packed_b);
/* The blockings worth timing for step d (tc__tactic.configs; tc__gemm_blocking each, the default first). */
int tc__matmul_node_f32_configs(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b, void *out, int cap);

/* Gemm (gemm_node_f32.c). */
bool tc__gemm_node_f32_supports(const tc__step_desc *d, bool packed_b);
bool tc__gemm_node_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__gemm_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                 const tc__gemm_config *cfg);
size_t tc__gemm_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b);
tc_status tc__gemm_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool packed_b);

/* Conv as GEMM (conv_node_f32.c); im2col false: the 1x1 stride-1 unpadded single-group case. */
bool tc__conv_node_f32_supports(const tc__step_desc *d, bool im2col);
bool tc__conv_node_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__conv_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                 const tc__gemm_config *cfg);
size_t tc__conv_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool im2col);
tc_status tc__conv_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool im2col);

/* ---- helpers shared by the families (gemm_tactics_util.c) ----------------------------------- */

/* Threads the scratch of a tactic is sized for. */
size_t tc__gemm_tactic_max_threads(void);
/* True when t is a float32 tensor. */
bool tc__gemm_is_f32(const tc__tensor *t);
/*
 * True when the step's epilogue can be fused: activation known; bias (if any) float32 with as
 * many values as `bias_len`; residual (if any) float32 with the output's element count.
 */
bool tc__gemm_epilogue_ok(const tc__step_desc *d, int64_t bias_len);
/* The run-time epilogue of ctx (activation only; biases and residual are set by the caller). */
tc__gemm_epi tc__gemm_epi_from_ctx(const tc__kernel_ctx *ctx);

#endif
