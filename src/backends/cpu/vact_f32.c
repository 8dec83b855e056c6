/* vact_f32.c - activations and fused epilogues of the vectorized float32 kernels: mapping
 * from the IR's epilogue and the checks tactics share (see vact_f32.h). */
#include "backends/cpu/vact_f32.h"

tc__vact tc__vact_from_epilogue(const tc__epilogue *e) {
    tc__vact a = {TC__VACT_NONE, e->alpha, e->beta, 0.0f};
    switch ((tc__act)e->act) {
    case TC__ACT_NONE: a.kind = TC__VACT_NONE; break;
    case TC__ACT_RELU: a.kind = TC__VACT_RELU; break;
    case TC__ACT_CLIP: a.kind = TC__VACT_CLIP; break;
    case TC__ACT_SIGMOID: a.kind = TC__VACT_SIGMOID; break;
    case TC__ACT_SILU: a.kind = TC__VACT_SILU; break;
    case TC__ACT_HARDSWISH: a.kind = TC__VACT_HARDSWISH; break;
    case TC__ACT_HARDSIGMOID: a.kind = TC__VACT_HARDSIGMOID; break;
    case TC__ACT_GELU_ERF: a.kind = TC__VACT_GELU_ERF; break;
    case TC__ACT_GELU_TANH: a.kind = TC__VACT_GELU_TANH; break;
    case TC__ACT_LEAKY_RELU: a.kind = TC__VACT_LEAKY_RELU; break;
    case TC__ACT_TANH: a.kind = TC__VACT_TANH; break;
    case TC__ACT_FAKE_QUANT:
        a.kind = TC__VACT_FAKE_QUANT;
        a.inv = 1.0f / e->alpha;
        break;
    case TC__ACT_COUNT_: break;
    }
    return a;
}

bool tc__vact_same_f32_shape(const tc__tensor *t, const tc__tensor *ref) {
    if (t == NULL || ref == NULL || t->dtype != TC_DTYPE_FLOAT32 || t->rank != ref->rank) return false;
    for (int32_t i = 0; i < t->rank; i++)
        if (t->dims[i] != ref->dims[i]) return false;
    return true;
}

bool tc__vact_epilogue_supported(const tc__step_desc *d) {
    const tc__epilogue *e = d->epi;
    if (e == NULL) return true;
    if (e->act >= TC__ACT_COUNT_) return false;
    if (e->bias_input >= 0 || d->bias != NULL) return false;
    if (e->residual_input >= 0 || d->residual != NULL) {
        if (d->residual == NULL || d->n_out < 1 || d->out[0] == NULL) return false;
        if (!tc__vact_same_f32_shape(d->residual, d->out[0])) return false;
    }
    return true;
}

tc_status tc__vact_residual(const tc__kernel_ctx *ctx, int64_t n, const float **res) {
    *res = NULL;
    const tc__tensor *r = ctx->residual;
    if (r == NULL) return TC_STATUS_OK;
    if (r->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(r) != n || (r->data == NULL && n != 0))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "fused residual has %lld elements, the output has %lld",
                        (long long)tc__tensor_numel(r), (long long)n);
    *res = r->data;
    return TC_STATUS_OK;
}
