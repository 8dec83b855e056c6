/*
 * cases_resize.h - generated Resize cases (float32, the last two dims resized) for the CPU Resize tactics
 * (backends/cpu/resize_f32*.c): modes nearest (each nearest_mode, held to the reference's exact bytes) and linear
 * (within 1e-6 of the peak), each coordinate_transformation_mode the tactics take, scales (constant or computed,
 * integer and non-integer, up and down) or sizes, 1x1 inputs and outputs, odd sizes, rows wider than the linear
 * kernel's 256-column chunk, Resize-10, opset 18's axes, rank 3. #included into test_all_tactics.c after its
 * helpers; resize_cases() runs them all.
 */
#ifndef TC_TESTS_UNIT_CASES_RESIZE_H
#define TC_TESTS_UNIT_CASES_RESIZE_H

static void add_absent(tcase *c) {
    c->present[c->n_in] = false;
    c->is_const[c->n_in++] = false;
}

/* One case: x [dims], mode/coord/nearest attributes, then scales s[0..rank) or sizes z[0..rank). */
static void resize_case(int64_t opset, int32_t rank, const int64_t *dims, const char *mode, const char *coord,
                        const char *nearest, const double *s, const int64_t *z, bool is_const) {
    tcase c = {.op = "Resize", .opset = opset, .tol = strcmp(mode, "linear") == 0 ? 1e-6 : 0};
    add_in(&c, rand_t(rank, dims, -4, 4), false);
    const int64_t n = rank;
    c.attrs[c.n_attrs++] = etu_attr_string("mode", mode);
    if (opset >= 11) {
        c.attrs[c.n_attrs++] = etu_attr_string("coordinate_transformation_mode", coord);
        c.attrs[c.n_attrs++] = etu_attr_string("nearest_mode", nearest);
        const int64_t zero = 0; /* roi: required (empty) before opset 13, absent after */
        if (opset < 13) add_in(&c, etu_from_f64(TC_DTYPE_FLOAT32, 1, &zero, NULL), true);
        else add_absent(&c);
    }
    if (s) add_in(&c, etu_from_f64(TC_DTYPE_FLOAT32, 1, &n, s), is_const);
    else add_absent(&c);
    if (z) add_in(&c, etu_from_i64(TC_DTYPE_INT64, 1, &n, z), is_const);
    run_case(&c);
}

static void resize_cases(void) {
    static const char *const coords[] = {"asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel",
                                         "half_pixel_symmetric", "tf_half_pixel_for_nn"};
    static const char *const nearests[] = {"floor", "round_prefer_floor", "round_prefer_ceil", "ceil"};
    static const double kScale[] = {0.25, 0.5, 0.6, 1.0, 1.5, 2.0, 2.3, 3.0, 4.0, 8.0};
    static const int64_t kIn[] = {1, 2, 3, 7, 16, 17, 33, 40};
    for (int r = 0; r < 96; r++) {
        const bool linear = r % 3 == 2;
        const char *coord = coords[(r / 3) % (linear ? 5 : 6)]; /* tf_half_pixel_for_nn: nearest only */
        const char *nearest = nearests[(r / 2) % 4];
        int64_t dims[4] = {1 + r % 2, pick(kEdge, 10), pick(kIn, 8), pick(kIn, 8)};
        if (r % 16 == 5) dims[2] = dims[3] = 1; /* a 1x1 input */
        if (r % 16 == 9) dims[2] = 1, dims[3] = 150; /* one wide row: outputs past the 256-column chunk */
        if (dims[2] * dims[3] > 300) dims[1] = 1 + dims[1] % 3;
        double s[4] = {1, 1, kScale[etu_int(&rng, 0, 9, false)], kScale[etu_int(&rng, 0, 9, false)]};
        if (r % 16 == 9) s[2] = 1, s[3] = 2.0;
        if (r % 4 == 3) { /* sizes: any output size from 1 to 70, 1x1 now and then */
            int64_t z[4] = {dims[0], dims[1], etu_int(&rng, 1, 70, false), etu_int(&rng, 1, 70, false)};
            if (r % 16 == 7) z[2] = z[3] = 1;
            resize_case(13, 4, dims, linear ? "linear" : "nearest", coord, nearest, NULL, z, r % 8 != 7);
            continue;
        }
        if (floor((double)(float)s[2] * (double)dims[2]) < 1) s[2] = 1.0;
        if (floor((double)(float)s[3] * (double)dims[3]) < 1) s[3] = 1.0;
        resize_case(r % 5 == 0 ? 19 : 13, 4, dims, linear ? "linear" : "nearest", coord, nearest, s, NULL, r % 6 != 1);
    }
    { /* Resize-10: (X, scales), asymmetric, its own rounding */
        const int64_t dims[4] = {1, 3, 7, 9};
        const double up[4] = {1, 1, 2.5, 1.5}, down[4] = {1, 1, 0.6, 0.5};
        resize_case(10, 4, dims, "nearest", NULL, NULL, up, NULL, true);
        resize_case(10, 4, dims, "nearest", NULL, NULL, down, NULL, true);
        resize_case(10, 4, dims, "linear", NULL, NULL, up, NULL, true);
    }
    { /* rank 3 and a PP-OCR-like 2x/4x/8x nearest upsampling */
        const int64_t d3[3] = {5, 9, 13}, d4[4] = {1, 24, 10, 17};
        const double s3[3] = {1, 1.7, 0.8}, s4[4] = {1, 1, 8, 8}, s2[4] = {1, 1, 2, 2};
        resize_case(13, 3, d3, "linear", "half_pixel", "floor", s3, NULL, true);
        resize_case(13, 3, d3, "nearest", "asymmetric", "floor", s3, NULL, true);
        resize_case(11, 4, d4, "nearest", "asymmetric", "floor", s4, NULL, true);
        resize_case(11, 4, d4, "nearest", "asymmetric", "floor", s2, NULL, true);
        resize_case(11, 4, d4, "linear", "align_corners", "floor", s2, NULL, true);
    }
}

#endif
