/*
 * convt_node_f32.h - ConvTranspose on NCHW (1-D to 3-D, float32) as GEMM then col2im, shared by
 * the convt_gemm_f32_<isa> tactics. Per image n and group g: the columns (M_g * K) x IN =
 * W[g]^T (M_g * K x C_g, packed at build into the config's MR-row panels) * X[n, g] (C_g x IN),
 * with K the kernel size and IN the input's spatial size; then every column adds into the output
 * it reaches (col2im), which starts from the bias.
 */
#ifndef TC_BACKENDS_CPU_CONVT_NODE_F32_H
#define TC_BACKENDS_CPU_CONVT_NODE_F32_H

#include "backends/cpu/gemm.h"
#include "backends/tactic.h"

bool tc__convt_node_f32_supports(const tc__step_desc *d);
bool tc__convt_node_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__convt_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                  const tc__gemm_config *cfg);
size_t tc__convt_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg);
tc_status tc__convt_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg);

#endif
