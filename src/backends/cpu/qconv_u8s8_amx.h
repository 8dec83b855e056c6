/*
 * qconv_u8s8_amx.h - the INT8 operator of qconv_u8s8.h on AMX-INT8 (TDPBUSD): the same padded u8 image,
 * packed weight, zero-point correction and epilogue as the VNNI kernel, so it chains with it and must
 * compute the same values bit for bit (its tactics name the VNNI ones as their proof: tactic.h).
 *
 * A panel is up to 32 output pixels whose windows lie at one stride apart in the image (the pixels of one
 * output row, or of the whole plane when it is one run of pixels: stride-1 1x1 layers and MatMul rows) x
 * one or two blocks of 16 output channels: two A tiles of 16 pixels x 64 image bytes, two B tiles of 16
 * channel quads x 16 channels (the VNNI packing's 64-byte rows, as they are), four C tiles of 16 x 16 int32.
 * K runs over the window's runs (a kernel row of kw * Cp bytes with dilation 1 along the width, else one tap
 * of Cp bytes) in chunks of 64 bytes: the kernel takes layers whose run is a multiple of 64 bytes (no tail).
 * A tile of fewer than 16 pixels is copied into a zeroed buffer first (no read past the panel's pixels).
 *
 * The tile code (qconv_u8s8_amx.c) needs only AMX; the driver and epilogue (tc__qconv_run_amx) are the VNNI
 * file's, on AVX-512. The plan below is plain C.
 */
#ifndef TC_BACKENDS_CPU_QCONV_U8S8_AMX_H
#define TC_BACKENDS_CPU_QCONV_U8S8_AMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/qconv_u8s8.h"

#define TC__QAMX_PANEL 32 /* output pixels per panel: two A tiles */
#define TC__QAMX_MAX_RUNS 64

/* How a layer's output pixels split into panels, and where their windows are. */
typedef struct tc__qamx_plan {
    size_t row_px;  /* pixels of one panel row: ow, or oh * ow when the plane is one run of pixels */
    size_t rows;    /* panel rows per image: oh, or 1 */
    size_t per_row; /* panels per panel row */
    size_t panels;  /* panels of the whole batch */
    size_t stride;  /* image bytes between consecutive pixels' windows: sw * Cp */
    size_t runs, run_len; /* runs per window and their bytes (a multiple of 64) */
    size_t run_off[TC__QAMX_MAX_RUNS]; /* byte offset of each run from the window's start */
} tc__qamx_plan;

/* The plan of geometry g, or false when the AMX kernel does not take it (depthwise, a run not a multiple of 64
 * bytes, more than TC__QAMX_MAX_RUNS runs). */
bool tc__qamx_plan_of(const tc__qconv_geom *g, tc__qamx_plan *p);

/* Panel k of plan p: its image, first output pixel (index in the plane), pixel count (1..32), and the byte
 * offset of its first window in the image of the whole batch. */
static inline void tc__qamx_panel_at(const tc__qamx_plan *p, const tc__qconv_geom *g, size_t k, size_t *n,
                                     size_t *p0, int *m, size_t *a_off) {
    const size_t per_image = p->rows * p->per_row;
    *n = k / per_image;
    const size_t pr = k % per_image / p->per_row, j = k % p->per_row;
    const size_t first = j * TC__QAMX_PANEL, left = p->row_px - first;
    *p0 = pr * p->row_px + first;
    *m = (int)(left < TC__QAMX_PANEL ? left : TC__QAMX_PANEL);
    const size_t r = *p0 / g->ow, c = *p0 % g->ow;
    *a_off = (*n * g->hp * g->wp + r * g->sh * g->wp + c * g->sw) * g->cp;
}

/* One panel x one or two blocks: c[i][b * 16 + l] (int32, rows of 32) = sum over the window of u8 image bytes
 * times the packed weight of block b, for pixels i < m (rows past m are undefined). */
typedef struct tc__qamx_job {
    const uint8_t *a; /* the panel's first window */
    size_t stride;    /* bytes between windows */
    int m;            /* pixels, 1..32 */
    const tc__qamx_plan *plan;
    const int8_t *w;  /* the packed weight of the first block */
    size_t w_block;   /* bytes per block (K * 16) */
    int nb;           /* blocks, 1 or 2 */
    int32_t (*c)[32];
} tc__qamx_job;

/* Configures this thread's tiles (once per task, before tc__qamx_accumulate) and releases them after. */
void tc__qamx_begin(void);
void tc__qamx_end(void);
void tc__qamx_accumulate(const tc__qamx_job *j);

/* Runs the operator with AMX on a step its tactic supports (needs AMX-INT8 and AVX512-VNNI). */
tc_status tc__qconv_run_amx(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

#endif
