/* gemm_tactics_util.c - small checks and conversions shared by the GEMM-based tactic families. */
#include "backends/cpu/gemm_tactics.h"
#include "core/cpu.h"

size_t tc__gemm_tactic_max_threads(void) {
    const int n = tc__cpu_get()->logical_cpus;
    return n > 0 ? (size_t)n : 1;
}

bool tc__gemm_is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

bool tc__gemm_epilogue_ok(const tc__step_desc *d, int64_t bias_len) {
    const tc__epilogue *e = d->epi;
    if (e == NULL) return true;
    if (e->act >= TC__ACT_COUNT_) return false;
    if (e->bias_input >= 0 && (!tc__gemm_is_f32(d->bias) || tc__tensor_numel(d->bias) != bias_len)) return false;
    if (e->bias_input < 0 && d->bias != NULL) return false;
    if (e->residual_input >= 0 && (!tc__gemm_is_f32(d->residual) || d->n_out < 1 || d->out[0] == NULL ||
                                   tc__tensor_numel(d->residual) != tc__tensor_numel(d->out[0])))
        return false;
    if (e->residual_input < 0 && d->residual != NULL) return false;
    return true;
}

tc__gemm_epi tc__gemm_epi_from_ctx(const tc__kernel_ctx *ctx) {
    tc__gemm_epi e = {.alpha = 1.0f, .res_scale = 1.0f, .act = TC__ACT_NONE};
    if (ctx->epi != NULL) {
        e.act = ctx->epi->act;
        e.act_alpha = ctx->epi->alpha;
        e.act_beta = ctx->epi->beta;
    }
    return e;
}
