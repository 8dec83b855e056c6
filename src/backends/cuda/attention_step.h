/*
 * attention_step.h - what the CUDA attention tactics (attention_f32_tactic.c, attention_fp16_tactic.c) share: the
 * geometry of a step's tensors with the checks common to both kernels, and the kernel arguments of a run (pointers,
 * FP16 row image flags, K and V inside a packed Q|K|V tensor: merge_qkv).
 */
#ifndef TC_BACKENDS_CUDA_ATTENTION_STEP_H
#define TC_BACKENDS_CUDA_ATTENTION_STEP_H

#include "backends/cuda/attention_f32.h"
#include "backends/tactic.h"

/* The geometry of a step's tensors (float32 Q, K, V and Y, an optional float32 or boolean mask, at most 65535 batch x
 * heads); false, with why through tc__refuse when d is given, when they do not fit. */
bool tc__cuda_attn_step_geometry(const tc__step_desc *d, const tc__attrs *attrs, int n_in, const tc__tensor *const *in,
                                 int n_out, const tc__tensor *const *out, tc__attn_geom *g);

/* The kernel arguments of a run (geometry as above); fails naming `tactic` when the step does not fit. */
tc_status tc__cuda_attn_step_args(const tc__kernel_ctx *ctx, const char *tactic, tc__cuda_attn_args *a);

#endif
