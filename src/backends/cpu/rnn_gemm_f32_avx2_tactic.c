/*
 * rnn_gemm_f32_avx2_tactic.c - tactics lstm_gemm_f32_avx2 and gru_gemm_f32_avx2: LSTM and GRU (float32, every
 * direction, layout, sequence_lens, initial states, peepholes, clip) as one input-projection GEMM over the sequence
 * plus one GEMM of the states per step, W and R packed at build (rnn_node_f32.c). Microkernel: the avx2 GEMM one.
 */
#include "backends/cpu/rnn_node_f32.h"

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__rnn_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_avx2);
}

static size_t scratch_bytes(const tc__step_desc *d) { return tc__rnn_node_f32_scratch_bytes(d, &tc__gemm_config_f32_avx2); }

static tc_status run(const tc__kernel_ctx *ctx) { return tc__rnn_node_f32_run(ctx, &tc__gemm_config_f32_avx2); }

TC__RNN_TACTIC(lstm_gemm_f32_avx2, "LSTM", TC__GEMM_ISA_AVX2, pack, scratch_bytes, run);
TC__RNN_TACTIC(gru_gemm_f32_avx2, "GRU", TC__GEMM_ISA_AVX2, pack, scratch_bytes, run);
