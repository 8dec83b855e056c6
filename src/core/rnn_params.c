/* rnn_params.c - reads and validates the attributes of LSTM, GRU and RNN (ONNX defaults: forward, layout 0, no clip,
 * activations Sigmoid/Tanh/Tanh for LSTM, Sigmoid/Tanh for GRU, Tanh for RNN). */
#include "core/rnn_params.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const struct { const char *name; tc__rnn_act act; } kActs[] = {
    {"Sigmoid", TC__RNN_SIGMOID}, {"Tanh", TC__RNN_TANH},         {"Relu", TC__RNN_RELU},
    {"Softsign", TC__RNN_SOFTSIGN}, {"Softplus", TC__RNN_SOFTPLUS},
};

double tc__rnn_act_apply(tc__rnn_act a, double x) {
    switch (a) {
    case TC__RNN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TC__RNN_TANH: return tanh(x);
    case TC__RNN_RELU: return x > 0.0 ? x : 0.0;
    case TC__RNN_SOFTSIGN: return x / (1.0 + fabs(x));
    case TC__RNN_SOFTPLUS: return x > 30.0 ? x : log1p(exp(x));
    }
    return x;
}

static tc_status read_acts(const tc__attrs *attrs, tc__rnn_params *p, tc__err *err) {
    const tc__rnn_act dflt[TC__RNN_MAX_ACTS] = {p->gates == 1 ? TC__RNN_TANH : TC__RNN_SIGMOID, TC__RNN_TANH, TC__RNN_TANH};
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < TC__RNN_MAX_ACTS; k++) p->act[d][k] = dflt[k];
    if (tc__attr_has(attrs, "activation_alpha") || tc__attr_has(attrs, "activation_beta"))
        return tc__fail(err, TC_STATUS_UNSUPPORTED,
                        "attributes activation_alpha/activation_beta are not supported (activations with parameters)");
    const tc__attr *a = tc__attr_find(attrs, "activations");
    if (a == NULL) return TC_STATUS_OK;
    if (a->kind != TC__ATTR_STRINGS) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute activations must be strings");
    if (a->n != (size_t)(p->n_acts * p->dirs))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute activations has %zu names, expected %d (%d per direction)",
                        a->n, p->n_acts * p->dirs, p->n_acts);
    for (size_t i = 0; i < a->n; i++) {
        const char *s = a->strings[i];
        size_t k = 0;
        while (k < sizeof kActs / sizeof kActs[0] && (s == NULL || strcasecmp(s, kActs[k].name) != 0)) k++;
        if (k == sizeof kActs / sizeof kActs[0])
            return tc__fail(err, TC_STATUS_UNSUPPORTED,
                            "activation '%s' is not supported (Sigmoid, Tanh, Relu, Softsign, Softplus are)",
                            s ? s : "?");
        p->act[i / (size_t)p->n_acts][i % (size_t)p->n_acts] = kActs[k].act;
    }
    return TC_STATUS_OK;
}

tc_status tc__rnn_params_read(const tc__attrs *attrs, const char *op_type, tc__rnn_params *p, tc__err *err) {
    memset(p, 0, sizeof *p);
    const bool lstm = strcmp(op_type, "LSTM") == 0, rnn = strcmp(op_type, "RNN") == 0;
    if (!lstm && !rnn && strcmp(op_type, "GRU") != 0)
        return tc__fail(err, TC_STATUS_INTERNAL, "%s is not a recurrent op", op_type);
    p->lstm = lstm;
    p->gates = lstm ? 4 : rnn ? 1 : 3;
    p->n_acts = lstm ? 3 : rnn ? 1 : 2;
    const tc__attr *a = tc__attr_find(attrs, "direction");
    const char *dir = "forward";
    if (a != NULL) {
        if (a->kind != TC__ATTR_STRING || a->s == NULL)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute direction must be a string");
        dir = a->s;
    }
    if (strcmp(dir, "forward") == 0) p->dirs = 1;
    else if (strcmp(dir, "reverse") == 0) p->dirs = 1, p->reverse = true;
    else if (strcmp(dir, "bidirectional") == 0) p->dirs = 2;
    else
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute direction is '%s', expected forward, reverse or bidirectional", dir);
    a = tc__attr_find(attrs, "hidden_size");
    p->hidden = -1;
    if (a != NULL) {
        if (a->kind != TC__ATTR_INT) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute hidden_size must be an integer");
        if (a->i < 1 || a->i > ((int64_t)1 << 31))
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute hidden_size is %lld, expected 1 to 2^31",
                            (long long)a->i);
        p->hidden = a->i;
    }
    a = tc__attr_find(attrs, "layout");
    if (a != NULL && (a->kind != TC__ATTR_INT || (a->i != 0 && a->i != 1)))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute layout must be 0 or 1");
    p->layout = a != NULL ? (int)a->i : 0;
    a = tc__attr_find(attrs, "clip");
    if (a != NULL) {
        if (a->kind != TC__ATTR_FLOAT || !isfinite(a->f) || a->f <= 0.0f)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute clip must be a finite float above 0");
        p->has_clip = true;
        p->clip = a->f;
    }
    a = rnn ? NULL : tc__attr_find(attrs, lstm ? "input_forget" : "linear_before_reset");
    if (a != NULL && (a->kind != TC__ATTR_INT || (a->i != 0 && a->i != 1)))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s must be 0 or 1", lstm ? "input_forget" : "linear_before_reset");
    if (lstm && a != NULL && a->i == 1)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "attribute input_forget 1 (coupled input and forget gates) is not supported");
    if (!lstm && !rnn) p->linear_before_reset = a != NULL && a->i == 1;
    return read_acts(attrs, p, err);
}
