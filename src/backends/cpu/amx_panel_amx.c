/*
 * amx_panel_amx.c - the AMX tile code of amx_panel.h: one panel (up to 32 pixels) x one or two blocks of 16
 * output channels, accumulated with TDPBUSD (u8 x s8 into int32) or TDPBF16PS (BF16 pairs into float) over every
 * 64-byte chunk of the window's runs (a shorter last chunk through zeroed buffers). Tiles: C 0-3
 * (c[pixel tile][block]), A 4-5 (pixel tiles), B 6-7 (blocks); every tile 16 rows x 64 bytes. Needs only AMX (the
 * epilogues are the callers'); the tests build it on the emulation of amx_tiles.h.
 */
#include <string.h>

#include "backends/cpu/amx_panel.h"
#include "backends/cpu/amx_tiles.h"

static const tc__amx_cfg kCfg = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

void tc__amx_begin(void) { TC_AMX_CONFIG(&kCfg); }
void tc__amx_end(void) { TC_AMX_RELEASE(); }

/* Loads A tile t (4 or 5) with the 64 bytes at offset off of `rows` windows (fewer than 16: through buf, whose other
 * rows stay 0; only the panel's last A tile can be short, so one buffer serves both). */
#define AMX_LOAD_A(t, base, rows)                                                                                    \
    do {                                                                                                             \
        if ((rows) == 16) {                                                                                          \
            TC_AMX_LOAD(t, (base) + off, j->stride);                                                                 \
        } else {                                                                                                     \
            for (int r_ = 0; r_ < (rows); r_++) memcpy(buf[r_], (base) + off + (size_t)r_ * j->stride, 64);          \
            TC_AMX_LOAD(t, buf, 64);                                                                                 \
        }                                                                                                            \
    } while (0)

/* The last chunk of every run when runs are not whole 64-byte chunks: its `tail` bytes of each window row and its
 * tail / 4 weight rows through zeroed buffers (zero columns of A meet zero rows of B: the chunk adds only its own K). */
#define AMX_TAILS(DOT)                                                                                               \
    do {                                                                                                             \
        const size_t full = p->run_len / 64 * 64, tail = p->run_len - full, krows = tail / 4;                         \
        uint8_t ta[16][64], tb[2][16][64];                                                                            \
        memset(ta, 0, sizeof ta);                                                                                    \
        memset(tb, 0, sizeof tb);                                                                                    \
        for (size_t r = 0; r < p->runs; r++) {                                                                       \
            const size_t off = p->run_off[r] + full;                                                                 \
            const uint8_t *b = j->w + (r * p->run_len + full) * 16;                                                  \
            for (int r_ = 0; r_ < m0; r_++) memcpy(ta[r_], j->a + off + (size_t)r_ * j->stride, tail);                \
            TC_AMX_LOAD(4, ta, 64);                                                                                  \
            memcpy(tb[0], b, krows * 64);                                                                            \
            TC_AMX_LOAD(6, tb[0], 64);                                                                               \
            DOT(0, 4, 6);                                                                                            \
            if (two_b) {                                                                                             \
                memcpy(tb[1], b + j->w_block, krows * 64);                                                           \
                TC_AMX_LOAD(7, tb[1], 64);                                                                           \
                DOT(1, 4, 7);                                                                                        \
            }                                                                                                        \
            if (two_a) { /* (rows m1.. keep tile 4's: C rows past m are undefined) */                                 \
                for (int r_ = 0; r_ < m1; r_++) memcpy(ta[r_], a1 + off + (size_t)r_ * j->stride, tail);              \
                TC_AMX_LOAD(5, ta, 64);                                                                              \
                DOT(2, 5, 6);                                                                                        \
                if (two_b) DOT(3, 5, 7);                                                                             \
            }                                                                                                        \
        }                                                                                                            \
    } while (0)

/* The panel with dot product DOT (TC_AMX_DPBUSD or TC_AMX_DPBF16PS; a macro: the tile numbers are encoded). */
#define AMX_PANEL(DOT)                                                                                               \
    do {                                                                                                             \
        const tc__amx_plan *p = j->plan;                                                                             \
        const int m0 = j->m < 16 ? j->m : 16, m1 = j->m - m0; /* pixels of A tiles 4 and 5 */                        \
        const bool two_a = m1 > 0, two_b = j->nb == 2;                                                               \
        const uint8_t *a1 = j->a + 16 * j->stride;                                                                   \
        uint8_t buf[16][64];                                                                                         \
        memset(buf, 0, sizeof buf);                                                                                  \
        TC_AMX_ZERO(0);                                                                                              \
        TC_AMX_ZERO(1);                                                                                              \
        TC_AMX_ZERO(2);                                                                                              \
        TC_AMX_ZERO(3);                                                                                              \
        for (size_t r = 0; r < p->runs; r++)                                                                         \
            for (size_t o = 0; o + 64 <= p->run_len; o += 64) {                                                      \
                const size_t off = p->run_off[r] + o;                                                                \
                /* the chunk's weight rows: runs are consecutive in the packing, 64 bytes per 4 bytes of K */        \
                const uint8_t *b = j->w + (r * p->run_len + o) * 16;                                                 \
                AMX_LOAD_A(4, j->a, m0);                                                                             \
                TC_AMX_LOAD(6, b, 64);                                                                               \
                DOT(0, 4, 6);                                                                                        \
                if (two_b) {                                                                                         \
                    TC_AMX_LOAD(7, b + j->w_block, 64);                                                              \
                    DOT(1, 4, 7);                                                                                    \
                }                                                                                                    \
                if (two_a) {                                                                                         \
                    AMX_LOAD_A(5, a1, m1);                                                                           \
                    DOT(2, 5, 6);                                                                                    \
                    if (two_b) DOT(3, 5, 7);                                                                         \
                }                                                                                                    \
            }                                                                                                        \
        if (p->run_len % 64 != 0) AMX_TAILS(DOT);                                                                    \
        uint8_t *c = j->c;                                                                                           \
        TC_AMX_STORE(0, c, 128);                                                                                     \
        if (two_b) TC_AMX_STORE(1, c + 64, 128);                                                                     \
        if (two_a) {                                                                                                 \
            TC_AMX_STORE(2, c + 16 * 128, 128);                                                                      \
            if (two_b) TC_AMX_STORE(3, c + 16 * 128 + 64, 128);                                                      \
        }                                                                                                            \
    } while (0)

void tc__amx_dot_u8s8(const tc__amx_job *j) { AMX_PANEL(TC_AMX_DPBUSD); }
void tc__amx_dot_bf16(const tc__amx_job *j) { AMX_PANEL(TC_AMX_DPBF16PS); }
