/*
 * test_cpu_winograd_nchw8c.c - the Winograd F(4x4, 3x3) NCHW8c tactic (conv_winograd_nchw8c_f32_avx2)
 * against the reference Conv plus the reference epilogue, through the harness of
 * test_cpu_conv_nchw16c.c (inputs, residuals and outputs reordered to NCHW8c; 1 thread and a 2-thread
 * pool must give identical bits; the scratch it announces is enough and is given back). Cases: the
 * ResNet-50 3x3 layers of 56, 28 and 14 pixels, planes of 1 to 17 pixels a side (odd, not multiples
 * of the 4x4 tile), 1 to 5 channel blocks in and out, asymmetric, zero, large and automatic padding,
 * batches, every fused activation with and without the residual and the conv bias, random
 * configurations; and the steps supports() rejects (strides, dilations, other kernels, groups,
 * channels not a multiple of the block, plain layouts or the other block).
 */
#ifndef TC_TEST_BLOCK /* test_cpu_wino_nchw16c.c runs these cases in blocks of 16 */
#define TC_TEST_BLOCK 8
#define TC_TEST_TACTIC tc__tactic_conv_winograd_nchw8c_f32_avx2
#endif
#define TC_TEST_HARNESS_ONLY
/* Winograd F(4x4, 3x3) loses a few more bits than a direct sum (the transforms scale by up to 8). */
#define CV_TOL_PER_SQRT_K 1e-4
#include "test_cpu_conv_nchw16c.c"

static const tc__epilogue kWRelu = {-1, -1, TC__ACT_RELU, 0, 0.0f, 0.0f};

/* A 3x3 stride-1 case with pads 1, blocked input, a bias. */
static cv_case w_case(int64_t cin, int64_t cout, int64_t h, int64_t w) { return cv_plain_case(cin, cout, h, w, 3, 1); }

static void test_resnet_shapes(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    cv_case c = w_case(64, 64, 56, 56);
    c.epi = kWRelu;
    check_case(1, &c, "3x3 64@56");
    c = w_case(128, 128, 28, 28);
    c.epi = kWRelu;
    c.residual = true;
    check_case(2, &c, "3x3 128@28 +res");
    c = w_case(256, 256, BLK == 16 ? 28 : 14, BLK == 16 ? 28 : 14); /* (NCHW16c refuses 256@14: test_rejects) */
    c.bias = false;
    check_case(3, &c, "3x3 256@14 (28)");
}

/* Planes of 1 to 17 pixels a side; 1 to 5 blocks of input and output channels. */
static void test_edge_sizes(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 17};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    uint64_t seed = 100;
    for (size_t i = 0; i < ns; i++)
        for (size_t k = 0; k < ns; k++) {
            cv_case c = w_case(BLK * (1 + (int64_t)(seed % 3)), BLK * (1 + (int64_t)(seed % 5)), sizes[i], sizes[k]);
            c.epi = seed % 2 ? kWRelu : tc__epilogue_none();
            check_case(seed++, &c, "edge");
        }
}

/* Asymmetric, zero, large and automatic padding, batches. */
static void test_windows(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    uint64_t seed = 300;
    cv_case c = w_case(2 * BLK, 4 * BLK, 15, 17);
    c.pads[0] = 0, c.pads[1] = 2, c.pads[2] = 2, c.pads[3] = 0;
    check_case(seed++, &c, "asymmetric pads");
    c = w_case(2 * BLK, 3 * BLK, 9, 10);
    c.pads[0] = 4, c.pads[1] = 3, c.pads[2] = 3, c.pads[3] = 5; /* outputs with no tap in bounds */
    check_case(seed++, &c, "pads beyond the kernel");
    c = w_case(BLK, 2 * BLK, 11, 6);
    c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 0;
    check_case(seed++, &c, "no padding");
    const char *const autos[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int a = 0; a < 3; a++) {
        c = w_case(3 * BLK, 2 * BLK, 14, 17);
        c.auto_pad = autos[a];
        check_case(seed++, &c, autos[a]);
    }
    c = w_case(2 * BLK, 4 * BLK, 10, 12);
    c.n = 2;
    c.residual = true;
    c.epi = kWRelu;
    check_case(seed++, &c, "batch 2 +res");
    c = w_case(BLK, BLK, 5, 3);
    c.n = 3;
    check_case(seed++, &c, "batch 3");
}

/* Every activation, with and without the residual and the conv bias. */
static void test_epilogues(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    for (int e = 0; e < VTU_N_EPILOGUES; e++)
        for (int res = 0; res < 2; res++) {
            cv_case c = w_case(4 * BLK, 3 * BLK, 9, 13);
            c.epi = vtu_epilogues[e];
            c.residual = res == 1;
            c.bias = (e + res) % 2 == 0;
            check_case(400 + (uint64_t)e * 2 + (uint64_t)res, &c, "epilogue");
        }
}

static void test_random(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    dtu_rng r = {4243};
    for (int t = 0; t < 40; t++) {
        cv_case c = w_case(BLK * (1 + (int64_t)(dtu_next(&r) % 4)), BLK * (1 + (int64_t)(dtu_next(&r) % 6)),
                           1 + (int64_t)(dtu_next(&r) % 24), 1 + (int64_t)(dtu_next(&r) % 30));
        c.n = 1 + (int64_t)(dtu_next(&r) % 2);
        for (int i = 0; i < 4; i++) c.pads[i] = (int64_t)(dtu_next(&r) % 4);
        if (c.h + c.pads[0] + c.pads[2] < 3 || c.w + c.pads[1] + c.pads[3] < 3) {
            t--;
            continue;
        }
        c.bias = dtu_next(&r) % 2;
        c.residual = dtu_next(&r) % 3 == 0;
        c.epi = vtu_epilogues[dtu_next(&r) % VTU_N_EPILOGUES];
        check_case(1000 + (uint64_t)t, &c, "random");
    }
}

static void test_rejects(void **state) {
    (void)state;
    sup_step s;
    sup_init(&s, 32, 32);
    assert_true(sup(&s));
    s.attrs[s.na++] = dtu_attr_int("group", 2); /* grouped */
    s.w.dims[1] = 16;
    assert_false(sup(&s));
    sup_init(&s, 32, CBAD); /* C_out % BLK != 0: a padded layout, which this tactic refuses (the direct one takes it) */
    assert_false(sup(&s));
    sup_init(&s, CBAD, 32); /* C_in % BLK != 0: padded X, refused too */
    assert_false(sup(&s));
    s.attrs[1].i = 0; /* nor plain: the tactic reads NCHW8c only */
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.attrs[1].i = 0; /* a plain X */
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* output not blocked */
    s.attrs[2].i = 0;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* the other block */
    if (BLK != 16)
        s.attrs[s.na - 1].i = 16;
    else
        s.attrs[s.na++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, 8);
    assert_false(sup(&s));
#if BLK == 16 /* this tactic packs W's transform at build: W must be a constant with data */
    sup_init(&s, 32, 32);
    s.in_const[1] = false;
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.w.data = NULL;
    assert_false(sup(&s));
    /* a transformed filter beyond 2 MiB (256 x 256: 9.4 MB) on fewer than 32 tiles: 14x14 (16 tiles) is refused,
     * 28x28 (49) and 16x16 (16 tiles, 32 x 32 channels: 147 KB) are taken */
    sup_init(&s, 256, 256);
    s.x.dims[2] = s.x.dims[3] = s.y.dims[2] = s.y.dims[3] = 14;
    assert_false(sup(&s));
    s.x.dims[2] = s.x.dims[3] = s.y.dims[2] = s.y.dims[3] = 28;
    assert_true(sup(&s));
    sup_init(&s, 32, 32);
    s.x.dims[2] = s.x.dims[3] = s.y.dims[2] = s.y.dims[3] = 16;
    assert_true(sup(&s));
#endif
    sup_init(&s, 32, 32); /* stride 2 */
    const int64_t two[2] = {2, 2};
    s.attrs[s.na++] = dtu_attr_ints("strides", two, 2);
    s.y.dims[2] = s.y.dims[3] = 4;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* dilation 2 */
    s.attrs[s.na++] = dtu_attr_ints("dilations", two, 2);
    s.y.dims[2] = s.y.dims[3] = 6;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* a 1x1 kernel */
    s.w.dims[2] = s.w.dims[3] = 1;
    for (int i = 0; i < 4; i++) s.pads[i] = 0;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* 5x5 */
    s.w.dims[2] = s.w.dims[3] = 5;
    for (int i = 0; i < 4; i++) s.pads[i] = 2;
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.b.dims[0] = 16; /* a bias of the wrong length */
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* a residual: blocked is fine, plain is not */
    s.with_res = true;
    s.epi.residual_input = 3;
    s.attrs[1].i = 1 | 8;
    assert_true(sup(&s));
    s.attrs[1].i = 1;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* other dtypes */
    s.x.dtype = s.y.dtype = TC_DTYPE_FLOAT16;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* an unknown activation */
    s.epi.act = TC__ACT_COUNT_;
    assert_false(sup(&s));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet_shapes), cmocka_unit_test(test_edge_sizes), cmocka_unit_test(test_windows),
        cmocka_unit_test(test_epilogues),     cmocka_unit_test(test_random),     cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_run_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
