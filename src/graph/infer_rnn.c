/*
 * infer_rnn.c - shape inference for LSTM, GRU and RNN: X [S, B, I] (layout 1: [B, S, I]),
 * W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H], sequence_lens [B] int32, initial_h
 * (and LSTM's initial_c) [D, B, H] (layout 1: [B, D, H]), LSTM's P [D, 3*H] ->
 * Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h (and LSTM's Y_c) like initial_h.
 * G is 4 (LSTM), 3 (GRU) or 1 (RNN); D is 2 for bidirectional, else 1; H is hidden_size
 * (or R's last dim when the attribute is absent). Attributes by core/rnn_params.c.
 */
#include "core/rnn_params.h"
#include "graph/op_schema.h"

static const char *const kInNames[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};

/* Fails when input i has a known rank other than rank or a known dim k that differs from a known want[k]. */
static tc_status check_shape(tc__infer_ctx *ctx, int i, int32_t rank, const tc__dim *want) {
    const tc__vinfo *v = tc__infer_input(ctx, i);
    if (v == NULL || v->shape.rank < 0) return TC_STATUS_OK;
    if (v->shape.rank != rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s: input %s has rank %d, expected %d", ctx->op_type,
                        kInNames[i], (int)v->shape.rank, (int)rank);
    for (int32_t k = 0; k < rank; k++)
        if (tc__dim_is_known(v->shape.dims[k]) && tc__dim_is_known(want[k]) && v->shape.dims[k].value != want[k].value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s: input %s's dim %d is %lld, expected %lld",
                            ctx->op_type, kInNames[i], (int)k, (long long)v->shape.dims[k].value,
                            (long long)want[k].value);
    return TC_STATUS_OK;
}

static tc__dim dim_of(const tc__vinfo *v, int32_t k) {
    return v != NULL && v->shape.rank > k ? v->shape.dims[k] : tc__dim_unknown();
}

static tc__dim dim_mul(tc__dim a, int64_t m) { return tc__dim_is_known(a) ? tc__dim_known(a.value * m) : tc__dim_unknown(); }

static tc_status infer_rnn(tc__infer_ctx *ctx, bool lstm) {
    tc_status st = tc__infer_check_arity(ctx, 3, lstm ? 8 : 6, lstm ? 3 : 2);
    if (st) return st;
    tc__rnn_params p;
    if ((st = tc__rnn_params_read(ctx->attrs, ctx->op_type, &p, ctx->err))) return st;
    const tc__vinfo *x = ctx->in[0], *w = ctx->in[1], *r = ctx->in[2];
    const tc_dtype dt = x->dtype;
    if (dt != TC_DTYPE_UNDEFINED && dt != TC_DTYPE_FLOAT32 && dt != TC_DTYPE_FLOAT64 && dt != TC_DTYPE_FLOAT16) {
        const char *n = tc_dtype_name(dt);
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: input X has data type %s, expected float, double or float16",
                        ctx->op_type, n ? n : "?");
    }
    for (int i = 1; i < ctx->n_in; i++) {
        const tc__vinfo *v = ctx->in[i];
        const tc_dtype want = i == 4 ? TC_DTYPE_INT32 : dt;
        if (v != NULL && v->dtype != TC_DTYPE_UNDEFINED && want != TC_DTYPE_UNDEFINED && v->dtype != want)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s: input %s has data type %s, expected %s",
                            ctx->op_type, kInNames[i], tc_dtype_name(v->dtype) ? tc_dtype_name(v->dtype) : "?",
                            tc_dtype_name(want) ? tc_dtype_name(want) : "?");
    }
    if (x->shape.rank >= 0 && x->shape.rank != 3)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s: input X has rank %d, expected 3", ctx->op_type,
                        (int)x->shape.rank);
    const int g = p.gates;
    tc__dim hid = p.hidden > 0 ? tc__dim_known(p.hidden) : dim_of(r, 2);
    if (!tc__dim_is_known(hid) && tc__dim_is_known(dim_of(w, 1)) && dim_of(w, 1).value % g == 0)
        hid = tc__dim_known(dim_of(w, 1).value / g);
    const tc__dim seq = dim_of(x, p.layout ? 1 : 0), batch = dim_of(x, p.layout ? 0 : 1), in = dim_of(x, 2);
    const tc__dim dirs = tc__dim_known(p.dirs);
    const tc__dim gh = dim_mul(hid, g);
    const tc__dim w_want[3] = {dirs, gh, in}, r_want[3] = {dirs, gh, hid}, b_want[2] = {dirs, dim_mul(hid, 2 * g)};
    const tc__dim s_want[1] = {batch}, p_want[2] = {dirs, dim_mul(hid, 3)};
    const tc__dim h_want[3] = {p.layout ? batch : dirs, p.layout ? dirs : batch, hid};
    if ((st = check_shape(ctx, 1, 3, w_want)) || (st = check_shape(ctx, 2, 3, r_want)) ||
        (st = check_shape(ctx, 3, 2, b_want)) || (st = check_shape(ctx, 4, 1, s_want)) ||
        (st = check_shape(ctx, 5, 3, h_want)) || (lstm && (st = check_shape(ctx, 6, 3, h_want))) ||
        (lstm && (st = check_shape(ctx, 7, 2, p_want))))
        return st;
    for (int o = 0; o < ctx->n_out; o++) {
        tc__vinfo *v = &ctx->out[o];
        v->dtype = dt;
        if (o == 0) {
            v->shape.rank = 4;
            const tc__dim d0[4] = {seq, dirs, batch, hid}, d1[4] = {batch, seq, dirs, hid};
            for (int k = 0; k < 4; k++) v->shape.dims[k] = p.layout ? d1[k] : d0[k];
        } else {
            v->shape.rank = 3;
            for (int k = 0; k < 3; k++) v->shape.dims[k] = h_want[k];
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_LSTM(tc__infer_ctx *ctx) { return infer_rnn(ctx, true); }
tc_status tc__infer_GRU(tc__infer_ctx *ctx) { return infer_rnn(ctx, false); }
tc_status tc__infer_RNN(tc__infer_ctx *ctx) { return infer_rnn(ctx, false); }
