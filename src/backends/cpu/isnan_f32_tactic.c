/* isnan_f32_tactic.c - tactic isnan_f32: IsNaN of a float32 tensor as one tight loop (x != x). */
#include "backends/tactic.h"

static bool supports(const tc__step_desc *d) {
    return d->n_in == 1 && d->n_out == 1 && d->in[0] != NULL && d->in[0]->dtype == TC_DTYPE_FLOAT32 &&
           tc__epilogue_is_none(d->epi);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    const float *x = ctx->in[0]->data;
    uint8_t *y = ctx->out[0]->data;
    int64_t n = tc__tensor_numel(ctx->in[0]);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] != x[i];
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_isnan_f32 = {
    .name = "isnan_f32",
    .op_type = "IsNaN",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = supports,
    .run = run,
};
