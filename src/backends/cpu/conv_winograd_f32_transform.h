/*
 * conv_winograd_f32_transform.h - the three 1-D transforms of Winograd F(4x4, 3x3) (interpolation points
 * 0, +-1, +-2 and infinity, Lavin & Gray) as one body for every vector width: G g (filter), B^T d
 * (input) and A^T m (output), each on whole vectors whose lanes are independent problems (tiles for
 * NCHW, channels for NCHW8c). Include from a file compiled for its ISA, after blocked_vec_<isa>.h
 * (which defines BV_V and the BV_ operations); applying a transform to the rows and then to the
 * columns of a tile gives the 2-D one. Used by conv_winograd_f32_avx512.c and
 * conv_winograd_nchw8c_f32_avx2.c.
 */
#ifndef TC_BACKENDS_CPU_CONV_WINOGRAD_F32_TRANSFORM_H
#define TC_BACKENDS_CPU_CONV_WINOGRAD_F32_TRANSFORM_H

#ifndef BV_V
#error "include blocked_vec_<isa>.h first"
#endif

/* o = G g for 3 vectors (6 results). */
static inline void wino_g(BV_V g0, BV_V g1, BV_V g2, BV_V *o) {
    const BV_V q = BV_SET1(1.0f / 4), s = BV_SET1(1.0f / 6), ms = BV_SET1(-1.0f / 6), t = BV_SET1(1.0f / 12),
               f = BV_SET1(1.0f / 24);
    const BV_V g02 = BV_ADD(g0, g2), a = BV_FMADD(f, g0, BV_MUL(s, g2)), b = BV_MUL(t, g1);
    o[0] = BV_MUL(q, g0);
    o[1] = BV_MUL(ms, BV_ADD(g02, g1));
    o[2] = BV_MUL(ms, BV_SUB(g02, g1));
    o[3] = BV_ADD(a, b);
    o[4] = BV_SUB(a, b);
    o[5] = g2;
}

/* o = B^T d for 6 vectors. */
static inline void wino_bt(BV_V d0, BV_V d1, BV_V d2, BV_V d3, BV_V d4, BV_V d5, BV_V *o) {
    const BV_V four = BV_SET1(4.0f), m4 = BV_SET1(-4.0f), m5 = BV_SET1(-5.0f), two = BV_SET1(2.0f);
    o[0] = BV_FMADD(four, d0, BV_FMADD(m5, d2, d4));
    o[1] = BV_FMADD(m4, BV_ADD(d1, d2), BV_ADD(d3, d4));
    o[2] = BV_FMADD(four, BV_SUB(d1, d2), BV_SUB(d4, d3));
    o[3] = BV_FMADD(two, BV_SUB(d3, d1), BV_SUB(d4, d2));
    o[4] = BV_FMADD(two, BV_SUB(d1, d3), BV_SUB(d4, d2));
    o[5] = BV_FMADD(four, d1, BV_FMADD(m5, d3, d5));
}

/* o = A^T m for 6 vectors (4 results). */
static inline void wino_at(BV_V m0, BV_V m1, BV_V m2, BV_V m3, BV_V m4, BV_V m5, BV_V *o) {
    const BV_V a = BV_ADD(m1, m2), b = BV_SUB(m1, m2), c = BV_ADD(m3, m4), e = BV_SUB(m3, m4);
    o[0] = BV_ADD(BV_ADD(m0, a), c);
    o[1] = BV_FMADD(BV_SET1(2.0f), e, b);
    o[2] = BV_FMADD(BV_SET1(4.0f), c, a);
    o[3] = BV_ADD(BV_FMADD(BV_SET1(8.0f), e, b), m5);
}

/* The 2-D filter transform of one 3x3 kernel per lane: u[r * 6 + c] = (G k G^T)[r][c] (k: 9 taps, row-major). */
static inline void wino_filter_2d(const BV_V *k, BV_V *u) {
    BV_V t[6][3];
    for (int c = 0; c < 3; c++) { /* G g, column c */
        BV_V col[6];
        wino_g(k[c], k[3 + c], k[6 + c], col);
        for (int r = 0; r < 6; r++)
            t[r][c] = col[r];
    }
    for (int r = 0; r < 6; r++) /* (G g) G^T, row r */
        wino_g(t[r][0], t[r][1], t[r][2], u + r * 6);
}

/* The 2-D input transform of one 6x6 tile per lane: v[r * 6 + c] = (B^T d B)[r][c] (d: 36 values, row-major). */
static inline void wino_input_2d(const BV_V *d, BV_V *v) {
    BV_V t[6][6]; /* d B, row by row */
    for (int r = 0; r < 6; r++)
        wino_bt(d[r * 6], d[r * 6 + 1], d[r * 6 + 2], d[r * 6 + 3], d[r * 6 + 4], d[r * 6 + 5], t[r]);
    for (int c = 0; c < 6; c++) {
        BV_V o[6];
        wino_bt(t[0][c], t[1][c], t[2][c], t[3][c], t[4][c], t[5][c], o);
        for (int r = 0; r < 6; r++)
            v[r * 6 + c] = o[r];
    }
}

/* The 2-D output transform of one tile per lane: y[r * 4 + c] = (A^T m A)[r][c] (m: 36 values, row-major). */
static inline void wino_output_2d(const BV_V *m, BV_V *y) {
    BV_V t[4][6]; /* A^T m */
    for (int c = 0; c < 6; c++) {
        BV_V q[4];
        wino_at(m[c], m[6 + c], m[12 + c], m[18 + c], m[24 + c], m[30 + c], q);
        for (int r = 0; r < 4; r++)
            t[r][c] = q[r];
    }
    for (int r = 0; r < 4; r++)
        wino_at(t[r][0], t[r][1], t[r][2], t[r][3], t[r][4], t[r][5], y + r * 4);
}

#endif
