/*
 * test_ref_rnn.c - reference LSTM, GRU and RNN and their shape inference: hand-computed one-unit cases (LSTM with
 * peepholes and clip, GRU with linear_before_reset 0 and 1, RNN with its default Tanh and with Relu); on random
 * LSTM/GRU shapes, bidirectional equals the forward and reverse runs of each half, layout 1 equals layout 0 transposed, a row shortened by sequence_lens equals a run of
 * its first steps with zeros after (a row of length 0: zero states); symbolic dims through inference; attribute and
 * shape errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

static tc__attr attr_strings(const char *name, const char *const *v, size_t n) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_STRINGS;
    a.strings = v;
    a.n = n;
    return a;
}

/* LSTM, one unit, one input, two steps: gates i o f c; W = [.5 -.3 .8 .2], R = [.1 .4 -.6 .7], B (Wb then Rb),
 * P = [pi po pf], initial h and c; clip 1.5 so that some pre-activations are clipped. */
static void test_lstm_hand(void **state) {
    (void)state;
    const double xs[2] = {1.2, -2.5}, w[4] = {0.5, -0.3, 0.8, 0.2}, r[4] = {0.1, 0.4, -0.6, 0.7};
    const double b[8] = {0.1, 0.2, 0.3, 0.4, -0.05, 0.05, -0.1, 0.1}, p[3] = {0.3, -0.2, 0.5};
    const double clip = 1.5;
    double h = 0.25, c = -0.4, ys[2];
    for (int t = 0; t < 2; t++) {
        double pre[4];
        for (int g = 0; g < 4; g++) pre[g] = xs[t] * w[g] + h * r[g] + b[g] + b[4 + g];
        double cl = fmin(clip, fmax(-clip, pre[0] + p[0] * c));
        const double ig = sig(cl);
        const double fg = sig(fmin(clip, fmax(-clip, pre[2] + p[2] * c)));
        const double cg = tanh(fmin(clip, fmax(-clip, pre[3])));
        c = fg * c + ig * cg;
        const double og = sig(fmin(clip, fmax(-clip, pre[1] + p[1] * c)));
        h = og * tanh(c);
        ys[t] = h;
    }
    const int64_t dx[3] = {2, 1, 1}, dw[3] = {1, 4, 1}, db[2] = {1, 8}, dh[3] = {1, 1, 1}, dp[2] = {1, 3}, dl = 1;
    tc__tensor X = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dx, xs), W = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dw, w);
    tc__tensor R = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dw, r), B = dtu_from_f64(TC_DTYPE_FLOAT32, 2, db, b);
    tc__tensor H0 = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dh, (const double[]){0.25});
    tc__tensor C0 = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dh, (const double[]){-0.4});
    tc__tensor P = dtu_from_f64(TC_DTYPE_FLOAT32, 2, dp, p);
    tc__tensor SL = dtu_from_i64(TC_DTYPE_INT32, 1, &dl, (const int64_t[]){2});
    const tc__tensor *in[8] = {&X, &W, &R, &B, &SL, &H0, &C0, &P};
    tc__attr at[2] = {dtu_attr_int("hidden_size", 1), dtu_attr_float("clip", (float)clip)};
    tc__tensor out[3];
    dtu_run_ok(DTU_OP(LSTM), 14, at, 2, 8, in, 3, out);
    const int64_t dy[4] = {2, 1, 1, 1};
    dtu_assert_shape(&out[0], 4, dy);
    dtu_assert_values(&out[0], ys, 1e-6, "LSTM Y");
    dtu_assert_values(&out[1], &h, 1e-6, "LSTM Y_h");
    dtu_assert_values(&out[2], &c, 1e-6, "LSTM Y_c");
    for (int i = 0; i < 3; i++) tc__tensor_free(&out[i]);
    const tc__tensor *all[] = {&X, &W, &R, &B, &H0, &C0, &P, &SL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tc__tensor_free((tc__tensor *)all[i]);
}

/* GRU, one unit, one input, three steps, gates z r h, both linear_before_reset values. */
static void test_gru_hand(void **state) {
    (void)state;
    const double xs[3] = {0.7, -1.1, 2.0}, w[3] = {0.6, -0.4, 0.9}, r[3] = {-0.3, 0.8, 0.5};
    const double b[6] = {0.1, -0.2, 0.3, 0.05, 0.15, -0.25};
    const int64_t dx[3] = {3, 1, 1}, dw[3] = {1, 3, 1}, db[2] = {1, 6};
    tc__tensor X = dtu_from_f64(TC_DTYPE_FLOAT64, 3, dx, xs), W = dtu_from_f64(TC_DTYPE_FLOAT64, 3, dw, w);
    tc__tensor R = dtu_from_f64(TC_DTYPE_FLOAT64, 3, dw, r), B = dtu_from_f64(TC_DTYPE_FLOAT64, 2, db, b);
    const tc__tensor *in[4] = {&X, &W, &R, &B};
    for (int lbr = 0; lbr < 2; lbr++) {
        double h = 0.0, ys[3];
        for (int t = 0; t < 3; t++) {
            const double z = sig(xs[t] * w[0] + h * r[0] + b[0] + b[3]);
            const double rg = sig(xs[t] * w[1] + h * r[1] + b[1] + b[4]);
            const double hh = lbr ? tanh(xs[t] * w[2] + b[2] + rg * (h * r[2] + b[5]))
                                  : tanh(xs[t] * w[2] + b[2] + (rg * h) * r[2] + b[5]);
            h = (1 - z) * hh + z * h;
            ys[t] = h;
        }
        tc__attr at[2] = {dtu_attr_int("hidden_size", 1), dtu_attr_int("linear_before_reset", lbr)};
        tc__tensor out[2];
        dtu_run_ok(DTU_OP(GRU), 14, at, 2, 4, in, 2, out);
        dtu_assert_values(&out[0], ys, 1e-12, lbr ? "GRU Y (lbr 1)" : "GRU Y (lbr 0)");
        dtu_assert_values(&out[1], &h, 1e-12, "GRU Y_h");
        tc__tensor_free(&out[0]);
        tc__tensor_free(&out[1]);
    }
    tc__tensor_free(&X);
    tc__tensor_free(&W);
    tc__tensor_free(&R);
    tc__tensor_free(&B);
}

/* RNN, one unit, one input, three steps, reverse: h = f(x w + h r + wb + rb) from the last step back. */
static void test_rnn_hand(void **state) {
    (void)state;
    const double xs[3] = {0.9, -0.4, 1.7}, w = 0.8, r = -0.6, wb = 0.2, rb = -0.1, h0 = 0.5;
    const int64_t dx[3] = {3, 1, 1}, dw[3] = {1, 1, 1}, db[2] = {1, 2};
    tc__tensor X = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dx, xs), W = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dw, &w);
    tc__tensor R = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dw, &r), B = dtu_from_f64(TC_DTYPE_FLOAT32, 2, db, (const double[]){wb, rb});
    tc__tensor H0 = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dw, &h0);
    const tc__tensor *in[6] = {&X, &W, &R, &B, NULL, &H0};
    for (int relu = 0; relu < 2; relu++) {
        double h = h0, ys[3];
        for (int t = 2; t >= 0; t--) {
            const double v = xs[t] * w + h * r + wb + rb;
            h = relu ? (v > 0 ? v : 0) : tanh(v);
            ys[t] = h;
        }
        const char *act[1] = {"Relu"};
        tc__attr at[3] = {dtu_attr_int("hidden_size", 1), dtu_attr_string("direction", "reverse"),
                          attr_strings("activations", act, 1)};
        tc__tensor out[2];
        dtu_run_ok(DTU_OP(RNN), 14, at, relu ? 3 : 2, 6, in, 2, out);
        dtu_assert_values(&out[0], ys, 1e-6, relu ? "RNN Y (Relu)" : "RNN Y (Tanh)");
        dtu_assert_values(&out[1], &h, 1e-6, "RNN Y_h");
        tc__tensor_free(&out[0]);
        tc__tensor_free(&out[1]);
    }
    tc__tensor *all[] = {&X, &W, &R, &B, &H0};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tc__tensor_free(all[i]);
}

/* Copies elements [lo, lo + n) of every one of `outer` blocks of `block` elements into a new tensor of dims. */
static tc__tensor slice_blocks(const tc__tensor *t, int64_t outer, int64_t block, int64_t lo, int64_t n, int32_t rank,
                               const int64_t *dims) {
    tc__tensor o = dtu_tensor(t->dtype, rank, dims);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t k = 0; k < n; k++) tc__tensor_set_f64(&o, a * n + k, dtu_get(t, a * block + lo + k));
    return o;
}

typedef struct rnn_case {
    bool lstm;
    int64_t S, Bt, I, H;
    tc__tensor X, W, R, B, H0, C0, P; /* bidirectional weights and states */
} rnn_case;

static rnn_case make_case(dtu_rng *rng, bool lstm) {
    rnn_case c = {.lstm = lstm};
    c.S = 1 + (int64_t)(dtu_next(rng) % 6);
    c.Bt = 1 + (int64_t)(dtu_next(rng) % 4);
    c.I = 1 + (int64_t)(dtu_next(rng) % 7);
    c.H = 1 + (int64_t)(dtu_next(rng) % 6);
    const int64_t G = lstm ? 4 : 3;
    const int64_t dx[3] = {c.S, c.Bt, c.I}, dw[3] = {2, G * c.H, c.I}, dr[3] = {2, G * c.H, c.H};
    const int64_t db[2] = {2, 2 * G * c.H}, dh[3] = {2, c.Bt, c.H}, dp[2] = {2, 3 * c.H};
    c.X = dtu_random(rng, TC_DTYPE_FLOAT32, 3, dx);
    c.W = dtu_random(rng, TC_DTYPE_FLOAT32, 3, dw);
    c.R = dtu_random(rng, TC_DTYPE_FLOAT32, 3, dr);
    c.B = dtu_random(rng, TC_DTYPE_FLOAT32, 2, db);
    c.H0 = dtu_random(rng, TC_DTYPE_FLOAT32, 3, dh);
    c.C0 = dtu_random(rng, TC_DTYPE_FLOAT32, 3, dh);
    c.P = dtu_random(rng, TC_DTYPE_FLOAT32, 2, dp);
    return c;
}

static void free_case(rnn_case *c) {
    tc__tensor *all[] = {&c->X, &c->W, &c->R, &c->B, &c->H0, &c->C0, &c->P};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tc__tensor_free(all[i]);
}

/* Runs the op on in (n_in inputs) with direction dir (and layout), outputs Y and Y_h (and Y_c). */
static void run(const rnn_case *c, const char *dir, int layout, int n_in, const tc__tensor *const *in, tc__tensor *out) {
    tc__attr at[3] = {dtu_attr_int("hidden_size", c->H), dtu_attr_string("direction", dir), dtu_attr_int("layout", layout)};
    if (c->lstm) dtu_run_ok(DTU_OP(LSTM), 14, at, 3, n_in, in, 3, out);
    else dtu_run_ok(DTU_OP(GRU), 14, at, 3, n_in, in, 2, out);
}

/* Bidirectional = forward on direction 0's weights + reverse on direction 1's. */
static void check_bidirectional(rnn_case *c) {
    const int n_out = c->lstm ? 3 : 2, n_in = c->lstm ? 8 : 6;
    const int64_t G = c->lstm ? 4 : 3;
    const tc__tensor *in[8] = {&c->X, &c->W, &c->R, &c->B, NULL, &c->H0, &c->C0, &c->P};
    tc__tensor both[3];
    run(c, "bidirectional", 0, n_in, in, both);
    for (int d = 0; d < 2; d++) {
        const int64_t dw[3] = {1, G * c->H, c->I}, dr[3] = {1, G * c->H, c->H}, db[2] = {1, 2 * G * c->H};
        const int64_t dh[3] = {1, c->Bt, c->H}, dp[2] = {1, 3 * c->H};
        tc__tensor w = slice_blocks(&c->W, 1, 0, d * G * c->H * c->I, G * c->H * c->I, 3, dw);
        tc__tensor r = slice_blocks(&c->R, 1, 0, d * G * c->H * c->H, G * c->H * c->H, 3, dr);
        tc__tensor b = slice_blocks(&c->B, 1, 0, d * 2 * G * c->H, 2 * G * c->H, 2, db);
        tc__tensor h0 = slice_blocks(&c->H0, 1, 0, d * c->Bt * c->H, c->Bt * c->H, 3, dh);
        tc__tensor c0 = slice_blocks(&c->C0, 1, 0, d * c->Bt * c->H, c->Bt * c->H, 3, dh);
        tc__tensor p = slice_blocks(&c->P, 1, 0, d * 3 * c->H, 3 * c->H, 2, dp);
        const tc__tensor *in1[8] = {&c->X, &w, &r, &b, NULL, &h0, &c0, &p};
        tc__tensor one[3];
        run(c, d ? "reverse" : "forward", 0, n_in, in1, one);
        /* Y [S, 2, B, H]: direction d's half of each step */
        const int64_t dy[4] = {c->S, 1, c->Bt, c->H};
        tc__tensor yd = slice_blocks(&both[0], c->S, 2 * c->Bt * c->H, d * c->Bt * c->H, c->Bt * c->H, 4, dy);
        dtu_assert_close(&one[0], &yd, 1e-6, "bidirectional Y half");
        for (int o = 1; o < n_out; o++) {
            tc__tensor sd = slice_blocks(&both[o], 1, 0, d * c->Bt * c->H, c->Bt * c->H, 3, dh);
            dtu_assert_close(&one[o], &sd, 1e-6, "bidirectional state half");
            tc__tensor_free(&sd);
        }
        tc__tensor_free(&yd);
        for (int o = 0; o < n_out; o++) tc__tensor_free(&one[o]);
        tc__tensor *all[] = {&w, &r, &b, &h0, &c0, &p};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tc__tensor_free(all[i]);
    }
    for (int o = 0; o < n_out; o++) tc__tensor_free(&both[o]);
}

/* Transposes the first two dims of a tensor whose trailing dims hold inner elements each. */
static tc__tensor swap01(const tc__tensor *t) {
    int64_t dims[TC_MAX_RANK];
    for (int32_t i = 0; i < t->rank; i++) dims[i] = t->dims[i];
    dims[0] = t->dims[1];
    dims[1] = t->dims[0];
    const int64_t inner = tc__tensor_numel(t) / (t->dims[0] * t->dims[1]);
    tc__tensor o = dtu_tensor(t->dtype, t->rank, dims);
    for (int64_t a = 0; a < t->dims[0]; a++)
        for (int64_t b = 0; b < t->dims[1]; b++)
            for (int64_t k = 0; k < inner; k++)
                tc__tensor_set_f64(&o, (b * t->dims[0] + a) * inner + k, dtu_get(t, (a * t->dims[1] + b) * inner + k));
    return o;
}

/* Layout 1 ([B, S, I] in, [B, S, D, H] and [B, D, H] out) equals layout 0 transposed. */
static void check_layout(rnn_case *c) {
    const int n_out = c->lstm ? 3 : 2, n_in = c->lstm ? 8 : 6;
    const tc__tensor *in[8] = {&c->X, &c->W, &c->R, &c->B, NULL, &c->H0, &c->C0, &c->P};
    tc__tensor y0[3], y1[3];
    run(c, "bidirectional", 0, n_in, in, y0);
    tc__tensor x1 = swap01(&c->X), h1 = swap01(&c->H0), c1 = swap01(&c->C0);
    const tc__tensor *in1[8] = {&x1, &c->W, &c->R, &c->B, NULL, &h1, &c1, &c->P};
    run(c, "bidirectional", 1, n_in, in1, y1);
    /* Y [S, D, B, H] -> [B, S, D, H]: view as [S*D, B, H], swap, then compare as [B, S*D, H] */
    tc__tensor v = y0[0];
    v.rank = 3;
    v.dims[0] = c->S * 2;
    v.dims[1] = c->Bt;
    v.dims[2] = c->H;
    tc__tensor t = swap01(&v);
    dtu_assert_close(&y1[0], &t, 1e-6, "layout 1 Y");
    tc__tensor_free(&t);
    for (int o = 1; o < n_out; o++) {
        tc__tensor s = swap01(&y0[o]);
        dtu_assert_close(&y1[o], &s, 1e-6, "layout 1 state");
        tc__tensor_free(&s);
    }
    for (int o = 0; o < n_out; o++) {
        tc__tensor_free(&y0[o]);
        tc__tensor_free(&y1[o]);
    }
    tc__tensor_free(&x1);
    tc__tensor_free(&h1);
    tc__tensor_free(&c1);
}

/* Row b with sequence_lens L equals a batch-1 run of its first L steps; Y past L is zero. */
static void check_seq_lens(rnn_case *c, dtu_rng *rng) {
    const int n_out = c->lstm ? 3 : 2, n_in = c->lstm ? 8 : 6;
    int64_t lens[8];
    for (int64_t b = 0; b < c->Bt; b++) lens[b] = (int64_t)(dtu_next(rng) % (uint64_t)(c->S + 1));
    tc__tensor sl = dtu_from_i64(TC_DTYPE_INT32, 1, &c->Bt, lens);
    const tc__tensor *in[8] = {&c->X, &c->W, &c->R, &c->B, &sl, &c->H0, &c->C0, &c->P};
    tc__tensor all[3];
    run(c, "bidirectional", 0, n_in, in, all);
    for (int64_t b = 0; b < c->Bt; b++) {
        const int64_t L = lens[b];
        for (int64_t t = 0; t < c->S; t++)
            for (int d = 0; d < 2; d++)
                for (int64_t j = 0; j < c->H; j++) {
                    const double y = dtu_get(&all[0], ((t * 2 + d) * c->Bt + b) * c->H + j);
                    if (t >= L && y != 0.0) fail_msg("Y at step %lld past length %lld is %g", (long long)t, (long long)L, y);
                }
        if (L == 0) { /* no last step: Y_h and Y_c are zeros (onnxruntime's answer) */
            for (int o = 1; o < n_out; o++)
                for (int d = 0; d < 2; d++)
                    for (int64_t j = 0; j < c->H; j++)
                        if (dtu_get(&all[o], (d * c->Bt + b) * c->H + j) != 0.0) fail_msg("state of a row of length 0 is not 0");
            continue;
        }
        const int64_t dx[3] = {L, 1, c->I}, dh[3] = {2, 1, c->H};
        tc__tensor x = dtu_tensor(TC_DTYPE_FLOAT32, 3, dx), h0 = dtu_tensor(TC_DTYPE_FLOAT32, 3, dh);
        tc__tensor c0 = dtu_tensor(TC_DTYPE_FLOAT32, 3, dh);
        for (int64_t t = 0; t < L; t++)
            for (int64_t i = 0; i < c->I; i++) tc__tensor_set_f64(&x, t * c->I + i, dtu_get(&c->X, (t * c->Bt + b) * c->I + i));
        for (int d = 0; d < 2; d++)
            for (int64_t j = 0; j < c->H; j++) {
                tc__tensor_set_f64(&h0, d * c->H + j, dtu_get(&c->H0, (d * c->Bt + b) * c->H + j));
                tc__tensor_set_f64(&c0, d * c->H + j, dtu_get(&c->C0, (d * c->Bt + b) * c->H + j));
            }
        const tc__tensor *in1[8] = {&x, &c->W, &c->R, &c->B, NULL, &h0, &c0, &c->P};
        tc__tensor one[3];
        run(c, "bidirectional", 0, n_in, in1, one);
        for (int64_t t = 0; t < L; t++)
            for (int d = 0; d < 2; d++)
                for (int64_t j = 0; j < c->H; j++) {
                    const double got = dtu_get(&all[0], ((t * 2 + d) * c->Bt + b) * c->H + j);
                    const double want = dtu_get(&one[0], (t * 2 + d) * c->H + j);
                    if (fabs(got - want) > 1e-6) fail_msg("row %lld step %lld: %g vs %g", (long long)b, (long long)t, got, want);
                }
        for (int o = 1; o < n_out; o++)
            for (int d = 0; d < 2; d++)
                for (int64_t j = 0; j < c->H; j++) {
                    const double got = dtu_get(&all[o], (d * c->Bt + b) * c->H + j);
                    const double want = dtu_get(&one[o], d * c->H + j);
                    if (fabs(got - want) > 1e-6) fail_msg("row %lld state %d: %g vs %g", (long long)b, o, got, want);
                }
        for (int o = 0; o < n_out; o++) tc__tensor_free(&one[o]);
        tc__tensor_free(&x);
        tc__tensor_free(&h0);
        tc__tensor_free(&c0);
    }
    for (int o = 0; o < n_out; o++) tc__tensor_free(&all[o]);
    tc__tensor_free(&sl);
}

static void test_rnn_properties(void **state) {
    (void)state;
    dtu_rng rng = {4242};
    for (int k = 0; k < 16; k++) {
        rnn_case c = make_case(&rng, k % 2 == 0);
        check_bidirectional(&c);
        check_layout(&c);
        check_seq_lens(&c, &rng);
        free_case(&c);
    }
}

/* Symbolic dims: X [seq, batch, 3] with layout 0 and 1 -> Y and Y_h keep the symbols; H from R when hidden_size is
 * absent; an unknown-rank W is accepted. */
static void test_rnn_infer_symbolic(void **state) {
    (void)state;
    for (int layout = 0; layout < 2; layout++) {
        tc__vinfo x, w, r, out[3];
        tc__vinfo_init(&x);
        tc__vinfo_init(&w);
        tc__vinfo_init(&r);
        x.dtype = w.dtype = r.dtype = TC_DTYPE_FLOAT32;
        x.shape.rank = 3;
        x.shape.dims[layout ? 1 : 0] = (tc__dim){-1, 7}; /* seq */
        x.shape.dims[layout ? 0 : 1] = (tc__dim){-1, 9}; /* batch */
        x.shape.dims[2] = tc__dim_known(3);
        r.shape.rank = 3;
        r.shape.dims[0] = tc__dim_known(2);
        r.shape.dims[1] = tc__dim_known(20);
        r.shape.dims[2] = tc__dim_known(5);
        const tc__vinfo *in[3] = {&x, &w, &r};
        for (int i = 0; i < 3; i++) tc__vinfo_init(&out[i]);
        tc__attr at[2] = {dtu_attr_string("direction", "bidirectional"), dtu_attr_int("layout", layout)};
        tc__attrs as = {2, at};
        tc__err err = {0};
        tc__infer_ctx ic = {"test", "LSTM", 14, &as, 3, in, 3, out, &err};
        if (tc__infer_LSTM(&ic) != TC_STATUS_OK) fail_msg("%s", err.msg);
        const tc__dim seq = {-1, 7}, batch = {-1, 9}, d2 = tc__dim_known(2), h5 = tc__dim_known(5);
        const tc__dim y0[4] = {seq, d2, batch, h5}, y1[4] = {batch, seq, d2, h5};
        const tc__dim s0[3] = {d2, batch, h5}, s1[3] = {batch, d2, h5};
        assert_int_equal(out[0].shape.rank, 4);
        for (int k = 0; k < 4; k++) assert_true(tc__dim_same(out[0].shape.dims[k], layout ? y1[k] : y0[k]));
        for (int o = 1; o < 3; o++) {
            assert_int_equal(out[o].dtype, TC_DTYPE_FLOAT32);
            assert_int_equal(out[o].shape.rank, 3);
            for (int k = 0; k < 3; k++) assert_true(tc__dim_same(out[o].shape.dims[k], layout ? s1[k] : s0[k]));
        }
    }
}

static void test_rnn_errors(void **state) {
    (void)state;
    dtu_rng rng = {5};
    rnn_case c = make_case(&rng, true);
    const tc__tensor *in[3] = {&c.X, &c.W, &c.R};
    const dtu_op op = DTU_OP(LSTM);
    tc__attr bad_dir[2] = {dtu_attr_string("direction", "sideways")};
    dtu_run_fails(op, 14, bad_dir, 1, 3, in, 3, TC_STATUS_INVALID_ARGUMENT, "sideways");
    tc__attr fwd = dtu_attr_string("direction", "forward"); /* W holds 2 directions */
    dtu_run_fails(op, 14, &fwd, 1, 3, in, 3, TC_STATUS_INVALID_GRAPH, "input W's dim 0 is 2, expected 1");
    tc__attr bi = dtu_attr_string("direction", "bidirectional");
    tc__attr forget[2] = {bi, dtu_attr_int("input_forget", 1)};
    dtu_run_fails(op, 14, forget, 2, 3, in, 3, TC_STATUS_UNSUPPORTED, "input_forget");
    const char *acts[6] = {"Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Elu"};
    tc__attr ac[2] = {bi, attr_strings("activations", acts, 6)};
    dtu_run_fails(op, 14, ac, 2, 3, in, 3, TC_STATUS_UNSUPPORTED, "'Elu'");
    ac[1] = attr_strings("activations", acts, 3);
    dtu_run_fails(op, 14, ac, 2, 3, in, 3, TC_STATUS_INVALID_ARGUMENT, "expected 6");
    const float alpha = 0.5f;
    tc__attr al[2] = {bi, {.name = "activation_alpha", .kind = TC__ATTR_FLOATS, .floats = &alpha, .n = 1}};
    dtu_run_fails(op, 14, al, 2, 3, in, 3, TC_STATUS_UNSUPPORTED, "activation_alpha");
    tc__attr hs[2] = {bi, dtu_attr_int("hidden_size", c.H + 1)};
    dtu_run_fails(op, 14, hs, 2, 3, in, 3, TC_STATUS_INVALID_GRAPH, "input W's dim 1");
    tc__attr cl[2] = {bi, dtu_attr_float("clip", -1.0f)};
    dtu_run_fails(op, 14, cl, 2, 3, in, 3, TC_STATUS_INVALID_ARGUMENT, "clip");
    int64_t lens[8];
    for (int64_t b = 0; b < c.Bt; b++) lens[b] = c.S + 1;
    tc__tensor sl = dtu_from_i64(TC_DTYPE_INT32, 1, &c.Bt, lens);
    const tc__tensor *in_sl[5] = {&c.X, &c.W, &c.R, NULL, &sl};
    dtu_run_fails(op, 14, &bi, 1, 5, in_sl, 3, TC_STATUS_INVALID_ARGUMENT, "sequence_lens[0]");
    tc__tensor xi = dtu_random(&rng, TC_DTYPE_INT32, 3, c.X.dims);
    const tc__tensor *in_i[3] = {&xi, &c.W, &c.R};
    dtu_run_fails(op, 14, &bi, 1, 3, in_i, 3, TC_STATUS_UNSUPPORTED, "int32");
    dtu_run_fails(DTU_OP(GRU), 14, &bi, 1, 3, in, 2, TC_STATUS_INVALID_GRAPH, "input W's dim 1");
    tc__tensor_free(&sl);
    tc__tensor_free(&xi);
    free_case(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lstm_hand),
        cmocka_unit_test(test_gru_hand),
        cmocka_unit_test(test_rnn_hand),
        cmocka_unit_test(test_rnn_properties),
        cmocka_unit_test(test_rnn_infer_symbolic),
        cmocka_unit_test(test_rnn_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
