/*
 * qconv_u8s8_amx.c - the AMX-INT8 tile code of qconv_u8s8_amx.h: one panel (up to 32 pixels) x one or two
 * blocks of 16 output channels, accumulated with TDPBUSD over every 64-byte chunk of the window's runs.
 * Tiles: C 0-3 (c[pixel tile][block]), A 4-5 (pixel tiles), B 6-7 (blocks); every tile 16 rows x 64 bytes.
 * Needs only AMX (the epilogue is the caller's); built for the emulation of amx_tiles.h by the tests.
 */
#include <string.h>

#include "backends/cpu/amx_tiles.h"
#include "backends/cpu/qconv_u8s8_amx.h"

static const tc__amx_cfg kCfg = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

void tc__qamx_begin(void) { TC_AMX_CONFIG(&kCfg); }
void tc__qamx_end(void) { TC_AMX_RELEASE(); }

/* Loads A tile t (4 or 5) with the 64 bytes at offset off of `rows` windows (fewer than 16: through buf, whose other
 * rows stay 0; only the panel's last A tile can be short, so one buffer serves both). */
#define QAMX_LOAD_A(t, base, rows)                                                                                   \
    do {                                                                                                             \
        if ((rows) == 16) {                                                                                          \
            TC_AMX_LOAD(t, (base) + off, j->stride);                                                                 \
        } else {                                                                                                     \
            for (int r_ = 0; r_ < (rows); r_++) memcpy(buf[r_], (base) + off + (size_t)r_ * j->stride, 64);          \
            TC_AMX_LOAD(t, buf, 64);                                                                                 \
        }                                                                                                            \
    } while (0)

void tc__qamx_accumulate(const tc__qamx_job *j) {
    const tc__qamx_plan *p = j->plan;
    const int m0 = j->m < 16 ? j->m : 16, m1 = j->m - m0; /* pixels of A tiles 4 and 5 */
    const bool two_a = m1 > 0, two_b = j->nb == 2;
    const uint8_t *a1 = j->a + 16 * j->stride;
    uint8_t buf[16][64];
    memset(buf, 0, sizeof buf);
    TC_AMX_ZERO(0);
    TC_AMX_ZERO(1);
    TC_AMX_ZERO(2);
    TC_AMX_ZERO(3);
    for (size_t r = 0; r < p->runs; r++) {
        for (size_t o = 0; o < p->run_len; o += 64) {
            const size_t off = p->run_off[r] + o;
            /* the weight's K offset of this chunk: runs are consecutive in the packing (tap-major, 4 bytes per quad
             * row of 64 bytes) */
            const int8_t *b = j->w + (r * p->run_len + o) * 16;
            QAMX_LOAD_A(4, j->a, m0);
            TC_AMX_LOAD(6, b, 64);
            TC_AMX_DPBUSD(0, 4, 6);
            if (two_b) {
                TC_AMX_LOAD(7, b + j->w_block, 64);
                TC_AMX_DPBUSD(1, 4, 7);
            }
            if (two_a) {
                QAMX_LOAD_A(5, a1, m1);
                TC_AMX_DPBUSD(2, 5, 6);
                if (two_b) TC_AMX_DPBUSD(3, 5, 7);
            }
        }
    }
    const size_t cs = sizeof j->c[0]; /* bytes per row of c */
    TC_AMX_STORE(0, &j->c[0][0], cs);
    if (two_b) TC_AMX_STORE(1, &j->c[0][16], cs);
    if (two_a) {
        TC_AMX_STORE(2, &j->c[16][0], cs);
        if (two_b) TC_AMX_STORE(3, &j->c[16][16], cs);
    }
}
