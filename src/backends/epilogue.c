/* epilogue.c - the reference application of a fused epilogue, y = act(y + bias + residual),
 * in place on a step's output (see core/epilogue.h). */
#include <math.h>

#include "backends/epilogue.h"

const char *tc__act_name(tc__act act) {
    switch (act) {
    case TC__ACT_NONE: return "";
    case TC__ACT_RELU: return "Relu";
    case TC__ACT_CLIP: return "Clip";
    case TC__ACT_SIGMOID: return "Sigmoid";
    case TC__ACT_SILU: return "SiLU";
    case TC__ACT_HARDSWISH: return "HardSwish";
    case TC__ACT_HARDSIGMOID: return "HardSigmoid";
    case TC__ACT_GELU_ERF: return "Gelu";
    case TC__ACT_GELU_TANH: return "GeluTanh";
    case TC__ACT_LEAKY_RELU: return "LeakyRelu";
    case TC__ACT_TANH: return "Tanh";
    case TC__ACT_FAKE_QUANT: return "QuantizeLinear+DequantizeLinear";
    case TC__ACT_COUNT_: break;
    }
    return "?";
}

double tc__act_eval(tc__act act, double x, double alpha, double beta) {
    switch (act) {
    case TC__ACT_NONE: return x;
    case TC__ACT_RELU: return x > 0.0 ? x : 0.0;
    case TC__ACT_CLIP: return x < alpha ? alpha : (x > beta ? beta : x);
    case TC__ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TC__ACT_SILU: return x / (1.0 + exp(-x));
    case TC__ACT_HARDSWISH: {
        double h = x / 6.0 + 0.5;
        return x * (h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h));
    }
    case TC__ACT_HARDSIGMOID: {
        double h = alpha * x + beta;
        return h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
    }
    case TC__ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case TC__ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case TC__ACT_LEAKY_RELU: return x >= 0.0 ? x : alpha * x;
    case TC__ACT_TANH: return tanh(x);
    case TC__ACT_FAKE_QUANT: return tc__fake_quant((float)x, (float)alpha, (float)beta);
    case TC__ACT_COUNT_: break;
    }
    return x;
}

tc_status tc__epilogue_apply(const tc__epilogue *e, tc__tensor *y, const tc__tensor *bias, const tc__tensor *residual,
                                 tc__err *err) {
    if (tc__epilogue_is_none(e)) return TC_STATUS_OK;
    if (!tc__dtype_is_float(y->dtype))
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "fused epilogue on %s output", tc_dtype_name(y->dtype));
    int64_t n = tc__tensor_numel(y);
    int64_t last = y->rank > 0 ? y->dims[y->rank - 1] : 1;
    if (bias != NULL && (bias->dtype != y->dtype || tc__tensor_numel(bias) != last))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "fused bias has %lld elements, the output's last dim is %lld",
                        (long long)tc__tensor_numel(bias), (long long)last);
    if (residual != NULL && (residual->dtype != y->dtype || tc__tensor_numel(residual) != n))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "fused residual has %lld elements, the output has %lld",
                        (long long)tc__tensor_numel(residual), (long long)n);
    tc__act act = (tc__act)e->act;
    if (y->dtype == TC_DTYPE_FLOAT32) {
        float *p = y->data;
        const float *b = bias ? bias->data : NULL, *r = residual ? residual->data : NULL;
        for (int64_t i = 0; i < n; i++) {
            double v = p[i];
            if (b) v += b[last ? i % last : 0];
            if (r) v += r[i];
            p[i] = (float)tc__act_eval(act, v, e->alpha, e->beta);
        }
        return TC_STATUS_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        double v = tc__tensor_get_f64(y, i);
        if (bias) v += tc__tensor_get_f64(bias, last ? i % last : 0);
        if (residual) v += tc__tensor_get_f64(residual, i);
        tc__tensor_set_f64(y, i, tc__act_eval(act, v, e->alpha, e->beta));
    }
    return TC_STATUS_OK;
}
