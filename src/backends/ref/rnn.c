/*
 * rnn.c - reference LSTM, GRU and RNN (ONNX semantics, every attribute core/rnn_params.c accepts): each direction and
 * batch row runs its own recurrence in double precision (state h, and LSTM's cell c, in scratch); steps past a row's
 * sequence_lens write zeros to Y, and Y_h/Y_c hold the state after the row's last step (zeros for a length of 0, as
 * onnxruntime gives). Gate pre-activations are clipped to [-clip, clip] when clip is set (after LSTM's peepholes).
 */
#include <string.h>

#include "backends/ref/ref.h"
#include "core/rnn_params.h"

typedef struct rnn_dims {
    int64_t seq, batch, in, hid, gh; /* gh: gates * hid */
} rnn_dims;

static inline double get(const tc__tensor *t, int64_t i) {
    return t->dtype == TC_DTYPE_FLOAT32 ? (double)((const float *)t->data)[i] : tc__tensor_get_f64(t, i);
}

static inline void put(tc__tensor *t, int64_t i, double v) {
    if (t->dtype == TC_DTYPE_FLOAT32) ((float *)t->data)[i] = (float)v;
    else tc__tensor_set_f64(t, i, v);
}

static inline double clipv(const tc__rnn_params *p, double v) {
    return !p->has_clip ? v : v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
}

/* Index of state element j of direction d, batch row b in initial_h/Y_h-shaped tensors. */
static inline int64_t state_at(const tc__rnn_params *p, const rnn_dims *s, int d, int64_t b, int64_t j) {
    return (p->layout ? (b * p->dirs + d) : ((int64_t)d * s->batch + b)) * s->hid + j;
}

/* Checks the shapes of the inputs against X, W and the attributes; fills s. */
static tc_status check_inputs(const tc__kernel_ctx *ctx, const tc__rnn_params *p, rnn_dims *s) {
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *r = ctx->in[2];
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs X, W and R must have rank 3");
    s->seq = x->dims[p->layout ? 1 : 0];
    s->batch = x->dims[p->layout ? 0 : 1];
    s->in = x->dims[2];
    s->hid = r->dims[2];
    s->gh = s->hid * p->gates;
    if ((p->hidden > 0 && p->hidden != s->hid) || w->dims[0] != p->dirs || r->dims[0] != p->dirs ||
        w->dims[1] != s->gh || r->dims[1] != s->gh || w->dims[2] != s->in)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs W %lldx%lldx%lld and R %lldx%lldx%lld disagree "
                        "with X's input size %lld, %d direction(s) and %d gates",
                        (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2], (long long)r->dims[0],
                        (long long)r->dims[1], (long long)r->dims[2], (long long)s->in, p->dirs, p->gates);
    for (int i = 1; i < ctx->n_in; i++)
        if (ctx->in[i] != NULL && i != 4 && ctx->in[i]->dtype != x->dtype)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d's data type differs from X's", i);
    const tc__tensor *b = ctx->n_in > 3 ? ctx->in[3] : NULL, *sl = ctx->n_in > 4 ? ctx->in[4] : NULL;
    if (b != NULL && tc__tensor_numel(b) != p->dirs * 2 * s->gh)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input B must have %lld elements", (long long)(p->dirs * 2 * s->gh));
    if (sl != NULL) {
        if (sl->dtype != TC_DTYPE_INT32 || tc__tensor_numel(sl) != s->batch)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input sequence_lens must be int32 of %lld elements",
                            (long long)s->batch);
        for (int64_t i = 0; i < s->batch; i++) {
            const int32_t v = ((const int32_t *)sl->data)[i];
            if (v < 0 || v > s->seq)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "sequence_lens[%lld] is %d, expected 0 to the sequence length %lld", (long long)i,
                                (int)v, (long long)s->seq);
        }
    }
    for (int i = 5; i < ctx->n_in && i < 7; i++)
        if (ctx->in[i] != NULL && tc__tensor_numel(ctx->in[i]) != p->dirs * s->batch * s->hid)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %s must have %lld elements",
                            i == 5 ? "initial_h" : "initial_c", (long long)(p->dirs * s->batch * s->hid));
    if (ctx->n_in > 7 && ctx->in[7] != NULL && tc__tensor_numel(ctx->in[7]) != p->dirs * 3 * s->hid)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input P must have %lld elements", (long long)(p->dirs * 3 * s->hid));
    return TC_STATUS_OK;
}

/* One direction d of one batch row b; st holds h, c (LSTM) or rh (GRU), gates [gh], tmp [hid]. */
static void run_row(const tc__kernel_ctx *ctx, const tc__rnn_params *p, const rnn_dims *s, int d, int64_t b,
                    double *st) {
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *r = ctx->in[2];
    const tc__tensor *bias = ctx->n_in > 3 ? ctx->in[3] : NULL, *sl = ctx->n_in > 4 ? ctx->in[4] : NULL;
    const tc__tensor *h0 = ctx->n_in > 5 ? ctx->in[5] : NULL, *c0 = p->lstm && ctx->n_in > 6 ? ctx->in[6] : NULL;
    const tc__tensor *peep = p->lstm && ctx->n_in > 7 ? ctx->in[7] : NULL;
    tc__tensor *y = ctx->n_out > 0 ? ctx->out[0] : NULL, *yh = ctx->n_out > 1 ? ctx->out[1] : NULL;
    tc__tensor *yc = p->lstm && ctx->n_out > 2 ? ctx->out[2] : NULL;
    const int64_t H = s->hid, GH = s->gh, I = s->in;
    double *h = st, *c = st + H, *gates = st + 2 * H, *tmp = gates + GH;
    for (int64_t j = 0; j < H; j++) {
        h[j] = h0 ? get(h0, state_at(p, s, d, b, j)) : 0.0;
        c[j] = c0 ? get(c0, state_at(p, s, d, b, j)) : 0.0;
    }
    const bool rev = p->reverse || d == 1;
    const tc__rnn_act f = p->act[d][0], g = p->act[d][1], ha = p->act[d][2];
    const int64_t len = sl ? ((const int32_t *)sl->data)[b] : s->seq;
    const int64_t wo = (int64_t)d * GH * I, ro = (int64_t)d * GH * H, bo = (int64_t)d * 2 * GH;
    for (int64_t k = 0; k < len; k++) {
        const int64_t t = rev ? len - 1 - k : k;
        const int64_t xo = (p->layout ? b * s->seq + t : t * s->batch + b) * I;
        /* every gate's input part and biases; the recurrent part too except GRU's hidden gate */
        const int64_t full = p->lstm || p->gates == 1 ? GH : 2 * H;
        for (int64_t row = 0; row < GH; row++) {
            double acc = bias ? get(bias, bo + row) + (row < full ? get(bias, bo + GH + row) : 0.0) : 0.0;
            for (int64_t i = 0; i < I; i++) acc += get(x, xo + i) * get(w, wo + row * I + i);
            if (row < full)
                for (int64_t j = 0; j < H; j++) acc += h[j] * get(r, ro + row * H + j);
            gates[row] = acc;
        }
        if (p->lstm) {
            for (int64_t j = 0; j < H; j++) {
                const double pi = peep ? get(peep, (int64_t)d * 3 * H + j) : 0.0;
                const double po = peep ? get(peep, (int64_t)d * 3 * H + H + j) : 0.0;
                const double pf = peep ? get(peep, (int64_t)d * 3 * H + 2 * H + j) : 0.0;
                const double ig = tc__rnn_act_apply(f, clipv(p, gates[j] + pi * c[j]));
                const double fg = tc__rnn_act_apply(f, clipv(p, gates[2 * H + j] + pf * c[j]));
                const double cg = tc__rnn_act_apply(g, clipv(p, gates[3 * H + j]));
                c[j] = fg * c[j] + ig * cg;
                const double og = tc__rnn_act_apply(f, clipv(p, gates[H + j] + po * c[j]));
                tmp[j] = og * tc__rnn_act_apply(ha, c[j]);
            }
        } else if (p->gates == 1) { /* RNN: H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb) */
            for (int64_t j = 0; j < H; j++) tmp[j] = tc__rnn_act_apply(f, clipv(p, gates[j]));
        } else {
            double *rh = c; /* the recurrent part of the hidden gate */
            for (int64_t j = 0; j < H; j++) {
                gates[j] = tc__rnn_act_apply(f, clipv(p, gates[j]));         /* z */
                gates[H + j] = tc__rnn_act_apply(f, clipv(p, gates[H + j])); /* r */
                tmp[j] = p->linear_before_reset ? h[j] : gates[H + j] * h[j];
            }
            for (int64_t j = 0; j < H; j++) {
                double acc = bias ? get(bias, bo + GH + 2 * H + j) : 0.0;
                for (int64_t q = 0; q < H; q++) acc += tmp[q] * get(r, ro + (2 * H + j) * H + q);
                rh[j] = p->linear_before_reset ? gates[H + j] * acc : acc;
            }
            for (int64_t j = 0; j < H; j++) {
                const double hh = tc__rnn_act_apply(g, clipv(p, gates[2 * H + j] + rh[j]));
                tmp[j] = (1.0 - gates[j]) * hh + gates[j] * h[j];
            }
        }
        memcpy(h, tmp, (size_t)H * sizeof *h);
        if (y != NULL) {
            const int64_t yo = (p->layout ? (b * s->seq + t) * p->dirs + d : (t * p->dirs + d) * s->batch + b) * H;
            for (int64_t j = 0; j < H; j++) put(y, yo + j, h[j]);
        }
    }
    if (y != NULL) /* steps past the row's length */
        for (int64_t t = len; t < s->seq; t++) {
            const int64_t yo = (p->layout ? (b * s->seq + t) * p->dirs + d : (t * p->dirs + d) * s->batch + b) * H;
            for (int64_t j = 0; j < H; j++) put(y, yo + j, 0.0);
        }
    /* a row of length 0 has no last step: zeros, as onnxruntime's LSTM and GRU give (its RNN gives zeros forward but the
     * initial state in reverse; the spec says nothing) */
    for (int64_t j = 0; j < H; j++) {
        if (yh != NULL) put(yh, state_at(p, s, d, b, j), len > 0 ? h[j] : 0.0);
        if (yc != NULL) put(yc, state_at(p, s, d, b, j), len > 0 ? c[j] : 0.0);
    }
}

static tc_status ref_rnn(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 3 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->in[2] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W and R");
    const tc_dtype dt = ctx->in[0]->dtype;
    if (dt != TC_DTYPE_FLOAT32 && dt != TC_DTYPE_FLOAT64 && dt != TC_DTYPE_FLOAT16)
        return tc__ref_unsupported_dtype(ctx, 0, dt);
    tc__rnn_params p;
    tc_status st = tc__rnn_params_read(ctx->attrs, ctx->op_type, &p, ctx->err);
    if (st) return st;
    rnn_dims s = {0};
    if ((st = check_inputs(ctx, &p, &s))) return st;
    for (int o = 0; o < ctx->n_out; o++)
        if (ctx->out[o] != NULL && ctx->out[o]->dtype != dt)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output %d's data type differs from X's", o);
    const size_t n = (size_t)(3 * s.hid + s.gh);
    double *state = tc__kernel_alloc(ctx, n * sizeof(double));
    if (state == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "no memory for the recurrent state");
    for (int d = 0; d < p.dirs; d++)
        for (int64_t b = 0; b < s.batch; b++) run_row(ctx, &p, &s, d, b, state);
    tc__kernel_free(ctx, state);
    return TC_STATUS_OK;
}

tc_status tc__ref_LSTM(const tc__kernel_ctx *ctx) { return ref_rnn(ctx); }
tc_status tc__ref_GRU(const tc__kernel_ctx *ctx) { return ref_rnn(ctx); }
tc_status tc__ref_RNN(const tc__kernel_ctx *ctx) { return ref_rnn(ctx); }
