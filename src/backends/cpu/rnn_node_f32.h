/*
 * rnn_node_f32.h - LSTM and GRU on float32, shared by the lstm_gemm_f32_<isa> and gru_gemm_f32_<isa> tactics.
 * Per direction: the input projection of the whole sequence is one GEMM, XW [rows of X, G*H] = X * W[d]^T + the
 * biases (W[d] packed at build into NR-column panels); then each step is one GEMM of the batch's states by R[d]^T
 * (packed at build; GRU: its z/r columns and its hidden-gate columns as two matrices; up to 4 rows: row by row over
 * the panels), then the gates elementwise (Sigmoid/Tanh/Relu by the ISA's vector row functions). W and R must be
 * constants.
 */
#ifndef TC_BACKENDS_CPU_RNN_NODE_F32_H
#define TC_BACKENDS_CPU_RNN_NODE_F32_H

#include "backends/cpu/gemm.h"
#include "backends/tactic.h"

bool tc__rnn_node_f32_supports(const tc__step_desc *d);
bool tc__rnn_node_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__rnn_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                const tc__gemm_config *cfg);
size_t tc__rnn_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg);
tc_status tc__rnn_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg);

/* One tactic for op OP ("LSTM" or "GRU") named NAME on configuration CFG (rnn_gemm_f32_<isa>_tactic.c: PACK, SCRATCH
 * and RUN are that file's wrappers binding CFG). */
#define TC__RNN_TACTIC(NAME, OP, CAPS, PACK, SCRATCH, RUN)                                                            \
    const tc__tactic tc__tactic_##NAME = {                                                                           \
        .name = #NAME, .op_type = OP, .backend = TC__BACKEND_CPU, .caps = (CAPS),                                   \
        .supports = tc__rnn_node_f32_supports, .packs_input = tc__rnn_node_f32_packs_input, .pack = PACK,           \
        .scratch_bytes = SCRATCH, .run = RUN,                                                                        \
    }

#endif
