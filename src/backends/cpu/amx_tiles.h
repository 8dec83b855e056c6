/*
 * amx_tiles.h - the AMX tile operations the AMX kernels use (Intel SDM, "Intel AMX instruction set
 * reference"): configure, zero, load, store, TDPBUSD, TDPBF16PS, release. Compiled for AMX they are the
 * compiler's intrinsics (-mamx-tile -mamx-int8 -mamx-bf16). With TC_AMX_EMULATE they are C functions on a
 * per-thread tile file with the instructions' semantics, including the shape checks that raise #UD: the tests
 * run the AMX kernels' addressing and blocking on CPUs without AMX with this (tests/unit/test_cpu_amx.c). Tile
 * numbers are constants (the instructions encode them).
 */
#ifndef TC_BACKENDS_CPU_AMX_TILES_H
#define TC_BACKENDS_CPU_AMX_TILES_H

#include <stddef.h>
#include <stdint.h>

/* The 64-byte operand of LDTILECFG, palette 1: 8 tiles of at most 16 rows of 64 bytes. */
typedef struct tc__amx_cfg {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16]; /* bytes per row of tile t */
    uint8_t rows[16];   /* rows of tile t */
} tc__amx_cfg;
_Static_assert(sizeof(tc__amx_cfg) == 64, "LDTILECFG takes 64 bytes");

#ifndef TC_AMX_EMULATE
#include <immintrin.h>

#define TC_AMX_CONFIG(cfg) _tile_loadconfig(cfg)
#define TC_AMX_RELEASE() _tile_release()
#define TC_AMX_ZERO(t) _tile_zero(t)
#define TC_AMX_LOAD(t, base, stride) _tile_loadd(t, base, (long)(stride))
#define TC_AMX_STORE(t, base, stride) _tile_stored(t, base, (long)(stride))
#define TC_AMX_DPBUSD(c, a, b) _tile_dpbusd(c, a, b)
#define TC_AMX_DPBF16PS(c, a, b) _tile_dpbf16ps(c, a, b)

#else /* the emulation */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local struct {
    bool on; /* configured */
    tc__amx_cfg cfg;
    uint8_t t[8][16][64];
} tc__amx_emu;

/* #UD on hardware: the emulation aborts, so a test fails loudly. */
static inline void tc__amx_emu_check(bool ok) {
    if (!ok) abort();
}
static inline void tc__amx_emu_config(const void *cfg) {
    memcpy(&tc__amx_emu.cfg, cfg, sizeof tc__amx_emu.cfg);
    const tc__amx_cfg *c = &tc__amx_emu.cfg;
    tc__amx_emu_check(c->palette == 1);
    for (int t = 0; t < 8; t++) tc__amx_emu_check(c->rows[t] <= 16 && c->colsb[t] <= 64);
    memset(tc__amx_emu.t, 0, sizeof tc__amx_emu.t);
    tc__amx_emu.on = true;
}
static inline void tc__amx_emu_release(void) { tc__amx_emu.on = false; }
static inline void tc__amx_emu_zero(int t) {
    tc__amx_emu_check(tc__amx_emu.on);
    memset(tc__amx_emu.t[t], 0, sizeof tc__amx_emu.t[t]);
}
/* TILELOADD: rows x colsb bytes, row r from base + r * stride; the rest of the tile becomes 0. */
static inline void tc__amx_emu_load(int t, const void *base, size_t stride) {
    tc__amx_emu_check(tc__amx_emu.on);
    memset(tc__amx_emu.t[t], 0, sizeof tc__amx_emu.t[t]);
    for (int r = 0; r < tc__amx_emu.cfg.rows[t]; r++)
        memcpy(tc__amx_emu.t[t][r], (const uint8_t *)base + (size_t)r * stride, tc__amx_emu.cfg.colsb[t]);
}
static inline void tc__amx_emu_store(int t, void *base, size_t stride) {
    tc__amx_emu_check(tc__amx_emu.on);
    for (int r = 0; r < tc__amx_emu.cfg.rows[t]; r++)
        memcpy((uint8_t *)base + (size_t)r * stride, tc__amx_emu.t[t][r], tc__amx_emu.cfg.colsb[t]);
}
/* TDPBUSD c += a (u8) . b (s8): c[m][n] += sum over k < a.colsb / 4 and i < 4 of a[m][4k + i] * b[k][4n + i]. */
static inline void tc__amx_emu_dpbusd(int c, int a, int b) {
    const tc__amx_cfg *g = &tc__amx_emu.cfg;
    tc__amx_emu_check(tc__amx_emu.on && g->colsb[a] == 4 * g->rows[b] && g->colsb[c] == g->colsb[b] &&
                      g->rows[c] == g->rows[a] && g->colsb[c] % 4 == 0 && g->colsb[a] % 4 == 0);
    for (int m = 0; m < g->rows[c]; m++)
        for (int n = 0; n < g->colsb[c] / 4; n++) {
            uint32_t acc; /* wraps as the hardware's 32-bit sums do */
            memcpy(&acc, &tc__amx_emu.t[c][m][4 * n], 4);
            for (int k = 0; k < g->colsb[a] / 4; k++)
                for (int i = 0; i < 4; i++)
                    acc += (uint32_t)((int32_t)tc__amx_emu.t[a][m][4 * k + i] * (int8_t)tc__amx_emu.t[b][k][4 * n + i]);
            memcpy(&tc__amx_emu.t[c][m][4 * n], &acc, 4);
        }
}

/* BF16 bits as a float. */
static inline float tc__amx_emu_bf16(const uint8_t *p) {
    const uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
/* TDPBF16PS c += a . b on BF16 pairs: c[m][n] += a[m][2k] * b[k][2n] then + a[m][2k + 1] * b[k][2n + 1], in float,
 * over k < a.colsb / 4 (the SDM's order; its flushing of denormals is not emulated). */
static inline void tc__amx_emu_dpbf16ps(int c, int a, int b) {
    const tc__amx_cfg *g = &tc__amx_emu.cfg;
    tc__amx_emu_check(tc__amx_emu.on && g->colsb[a] == 4 * g->rows[b] && g->colsb[c] == g->colsb[b] &&
                      g->rows[c] == g->rows[a] && g->colsb[c] % 4 == 0 && g->colsb[a] % 4 == 0);
    for (int m = 0; m < g->rows[c]; m++)
        for (int n = 0; n < g->colsb[c] / 4; n++) {
            float acc;
            memcpy(&acc, &tc__amx_emu.t[c][m][4 * n], 4);
            for (int k = 0; k < g->colsb[a] / 4; k++)
                for (int i = 0; i < 2; i++)
                    acc += tc__amx_emu_bf16(&tc__amx_emu.t[a][m][4 * k + 2 * i]) *
                           tc__amx_emu_bf16(&tc__amx_emu.t[b][k][4 * n + 2 * i]);
            memcpy(&tc__amx_emu.t[c][m][4 * n], &acc, 4);
        }
}

#define TC_AMX_CONFIG(cfg) tc__amx_emu_config(cfg)
#define TC_AMX_RELEASE() tc__amx_emu_release()
#define TC_AMX_ZERO(t) tc__amx_emu_zero(t)
#define TC_AMX_LOAD(t, base, stride) tc__amx_emu_load(t, base, (size_t)(stride))
#define TC_AMX_STORE(t, base, stride) tc__amx_emu_store(t, base, (size_t)(stride))
#define TC_AMX_DPBUSD(c, a, b) tc__amx_emu_dpbusd(c, a, b)
#define TC_AMX_DPBF16PS(c, a, b) tc__amx_emu_dpbf16ps(c, a, b)
#endif

#endif
