/*
 * rnn_gemm_f32_scalar_tactic.c - tactics lstm_gemm_f32_scalar and gru_gemm_f32_scalar: LSTM and GRU (float32, every
 * direction, layout, sequence_lens, initial states, peepholes, clip) as one input-projection GEMM over the sequence
 * plus one GEMM of the states per step, W and R packed at build (rnn_node_f32.c). Microkernel: the scalar GEMM one.
 */
#include "backends/cpu/rnn_node_f32.h"

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__rnn_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_scalar);
}

static size_t scratch_bytes(const tc__step_desc *d) { return tc__rnn_node_f32_scratch_bytes(d, &tc__gemm_config_f32_scalar); }

static tc_status run(const tc__kernel_ctx *ctx) { return tc__rnn_node_f32_run(ctx, &tc__gemm_config_f32_scalar); }

const tc__tactic tc__tactic_lstm_gemm_f32_scalar = {
    .name = "lstm_gemm_f32_scalar",
    .op_type = "LSTM",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = tc__rnn_node_f32_supports,
    .packs_input = tc__rnn_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};

const tc__tactic tc__tactic_gru_gemm_f32_scalar = {
    .name = "gru_gemm_f32_scalar",
    .op_type = "GRU",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = tc__rnn_node_f32_supports,
    .packs_input = tc__rnn_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
