/*
 * cases_rnn.h - LSTM and GRU cases for test_all_tactics.c (included there; uses its tcase, rand_t, add_in, pick,
 * kEdge and run_case): every direction and layout, sizes from the edge sizes (batch, input and hidden sizes off the
 * GEMM tiles), with and without biases, sequence_lens (0 to the full length), initial states, LSTM peepholes, clip,
 * GRU linear_before_reset 0/1, all outputs checked; a computed W once (every tactic refuses it).
 */
#ifndef TC_TESTS_CASES_RNN_H
#define TC_TESTS_CASES_RNN_H

static void rnn_cases(void) {
    static const char *const dirs[] = {"forward", "reverse", "bidirectional"};
    static const int64_t seqs[] = {1, 2, 5, 17};
    static int64_t lens[64];
    for (int r = 0; r < 28; r++) {
        const bool lstm = r % 2 == 0;
        tcase c = {.op = lstm ? "LSTM" : "GRU", .opset = 22, .tol = 1e-4, .n_out = lstm ? 3 : 2};
        const int nd = (r / 2) % 3 == 2 ? 2 : 1, layout = (r / 3) % 2;
        const int64_t G = lstm ? 4 : 3, S = seqs[r % 4], B = pick(kEdge, 7), I = pick(kEdge, 10);
        const int64_t H = r == 4 ? 64 : pick(kEdge, 10);
        const int64_t x[3] = {layout ? B : S, layout ? S : B, I}, w[3] = {nd, G * H, I}, rr[3] = {nd, G * H, H};
        const int64_t b[2] = {nd, 2 * G * H}, st[3] = {layout ? B : nd, layout ? nd : B, H}, p[2] = {nd, 3 * H};
        add_in(&c, rand_t(3, x, -1, 1), false);
        add_in(&c, rand_t(3, w, -0.7, 0.7), r != 9); /* a computed W once */
        add_in(&c, rand_t(3, rr, -0.7, 0.7), true);
        const bool with_b = r % 5 != 1, with_sl = r % 3 == 1, with_h = r % 4 != 3, with_p = lstm && r % 3 != 0;
        if (with_b || with_sl || with_h || with_p) {
            if (with_b) add_in(&c, rand_t(2, b, -0.5, 0.5), r % 7 != 2);
            else c.n_in++; /* absent */
            if (with_sl) {
                for (int64_t i = 0; i < B; i++) lens[i] = i == 0 ? S : (int64_t)etu_int(&rng, 0, (int)S, false);
                add_in(&c, etu_from_i64(TC_DTYPE_INT32, 1, &B, lens), false);
            } else {
                c.n_in++;
            }
            if (with_h || with_p) {
                if (with_h) add_in(&c, rand_t(3, st, -1, 1), false);
                else c.n_in++;
                if (lstm && (with_h || with_p)) {
                    if (with_h) add_in(&c, rand_t(3, st, -1, 1), false);
                    else c.n_in++;
                    if (with_p) add_in(&c, rand_t(2, p, -0.5, 0.5), true);
                }
            }
        }
        c.attrs[c.n_attrs++] = etu_attr_int("hidden_size", H);
        c.attrs[c.n_attrs++] = etu_attr_string("direction", dirs[(r / 2) % 3]);
        c.attrs[c.n_attrs++] = etu_attr_int("layout", layout);
        if (r % 6 == 5) c.attrs[c.n_attrs++] = etu_attr_float("clip", 0.8f);
        if (!lstm) c.attrs[c.n_attrs++] = etu_attr_int("linear_before_reset", (r / 4) % 2);
        run_case(&c);
    }
}

#endif
