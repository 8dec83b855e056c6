/*
 * cases_convt.h - ConvTranspose cases for test_all_tactics.c (included there; uses its tcase, rand_t, add_in,
 * pick, kEdge and run_case): 1-D to 3-D, groups, strides, dilations, asymmetric pads, output_padding,
 * output_shape and auto_pad, channel counts from the edge sizes, with and without bias, W constant or computed.
 */
#ifndef TC_TESTS_CASES_CONVT_H
#define TC_TESTS_CASES_CONVT_H

static void convt_cases(void) {
    for (int r = 0; r < 18; r++) {
        tcase c = {.op = "ConvTranspose", .opset = 22, .tol = 5e-5};
        const int nsp = r % 9 == 4 ? 3 : r % 6 == 5 ? 1 : 2;
        const int64_t group = r % 4 == 1 ? 1 + r % 3 + 1 : 1;
        const bool wide = r % 3 == 0; /* channel counts off the GEMM tiles */
        const int64_t cin_g = wide ? pick(kEdge, 10) + 8 : pick(kEdge, 4), cout_g = wide ? pick(kEdge, 10) : 1 + r % 4;
        int64_t x[5] = {1 + r % 2, group * cin_g}, w[5] = {group * cin_g, cout_g};
        int64_t st[3], dil[3], op[3], pads[6], os[3];
        for (int d = 0; d < nsp; d++) {
            x[2 + d] = nsp == 3 ? 2 + (r + d) % 3 : 1 + (r * 3 + d * 5) % 9;
            w[2 + d] = 1 + (r + d) % 3 + (r == 3 && d == 0);
            st[d] = 1 + (r + 2 * d) % 3;
            dil[d] = 1 + (r % 5 == 2 && d == nsp - 1);
            op[d] = (r + d) % 2 == 0 ? (st[d] > dil[d] ? st[d] : dil[d]) - 1 : 0; /* below the stride or dilation */
            pads[d] = (r + d) % 3 == 0 ? 0 : (r + d) % 2;
            pads[nsp + d] = (r + 2 * d) % 3 == 1 ? 1 : 0;
        }
        for (int d = 0; d < nsp; d++) { /* the full size minus one, or plus two */
            const int64_t full = st[d] * (x[2 + d] - 1) + op[d] + (w[2 + d] - 1) * dil[d] + 1;
            os[d] = r % 2 == 0 && full > 1 ? full - 1 : full + 2;
            if (full - pads[d] - pads[nsp + d] < 1) pads[d] = pads[nsp + d] = 0; /* leave an output */
        }
        const int32_t rank = nsp + 2;
        add_in(&c, rand_t(rank, x, -1, 1), false);
        add_in(&c, rand_t(rank, w, -1, 1), r != 8); /* a computed W once: every tactic refuses it */
        const int64_t m = group * cout_g;
        if (r % 4 != 2) add_in(&c, rand_t(1, &m, -1, 1), true);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("dilations", dil, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("output_padding", op, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_int("group", group);
        if (r % 7 == 3) c.attrs[c.n_attrs++] = etu_attr_ints("output_shape", os, (size_t)nsp);
        else if (r % 7 == 6) c.attrs[c.n_attrs++] = etu_attr_string("auto_pad", r % 14 == 6 ? "SAME_UPPER" : "SAME_LOWER");
        else c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, (size_t)(2 * nsp));
        run_case(&c);
    }
    /* The DBNet shape: kernel 2, stride 2, no padding, channel counts off the tiles. */
    for (int r = 0; r < 2; r++) {
        tcase c = {.op = "ConvTranspose", .opset = 22, .tol = 5e-5};
        int64_t x[4] = {1, 24 + 9 * r, 17, 33 - 2 * r}, w[4] = {x[1], 24 - 23 * r, 2, 2}, st[2] = {2, 2}, m = w[1];
        add_in(&c, rand_t(4, x, -1, 1), false);
        add_in(&c, rand_t(4, w, -1, 1), true);
        add_in(&c, rand_t(1, &m, -1, 1), true);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
        run_case(&c);
    }
}

#endif
