/*
 * amx_panel.h - what the AMX kernels share: the INT8 one (TDPBUSD: qconv_u8s8.h's u8 image, VNNI packing and
 * epilogue; driver tc__qconv_run_amx in qconv_u8s8_avx512vnni.c) and the BF16 one (TDPBF16PS: hconv.h's BF16
 * image and packing; driver tc__hconv_run_amx_bf16 in hconv_bf16_avx512bf16.c). Each computes what its AVX-512
 * twin computes and names it as its proof (tactic.h): they were written without AMX hardware.
 *
 * Both packings hold, per block of 16 output channels, the window's K bytes as rows of 64 bytes (16 channels x
 * 4 bytes: an INT8 channel quad, or a BF16 channel pair): exactly AMX's B tile rows. So one tile code serves
 * both: a panel is up to 32 output pixels whose windows lie one stride apart in the padded channels-last image
 * (the pixels of one output row, or of the whole plane when it is one run of pixels: stride-1 1x1 layers and
 * MatMul rows) x one or two blocks: two A tiles of 16 pixels x 64 image bytes, two B tiles of 16 rows x 64
 * bytes, four C tiles of 16 x 16 32-bit sums (int32 or float). K runs over the window's runs (a kernel row of kw
 * pixels with dilation 1 along the width, else one tap) in chunks of 64 bytes: the kernels take layers whose
 * run is at least 64 bytes (a multiple of 4); a shorter last chunk of a run (the tail: run_len % 64 bytes, tail / 4
 * weight rows) goes through zeroed buffers. A tile of fewer than 16 pixels is copied into a zeroed buffer first.
 *
 * The plan is plain C (amx_panel.c); the tiles need only AMX (amx_panel_amx.c; the tests build it on
 * amx_tiles.h's emulation); the drivers and epilogues are AVX-512.
 */
#ifndef TC_BACKENDS_CPU_AMX_PANEL_H
#define TC_BACKENDS_CPU_AMX_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/lowp_layer.h"

#define TC__AMX_PANEL 32 /* output pixels per panel: two A tiles */
#define TC__AMX_MAX_RUNS 64

/* How a layer's output pixels split into panels, and where their windows are (bytes). */
typedef struct tc__amx_plan {
    size_t batch, oh, ow, sh, sw, hp, wp;
    size_t px_bytes; /* bytes per pixel of the padded image: Cp times the element size */
    size_t row_px;   /* pixels of one panel row: ow, or oh * ow when the plane is one run of pixels */
    size_t rows;     /* panel rows per image: oh, or 1 */
    size_t per_row;  /* panels per panel row */
    size_t panels;   /* panels of the whole batch */
    size_t stride;   /* bytes between consecutive pixels' windows: sw * px_bytes */
    size_t runs, run_len; /* runs per window and their bytes (>= 64, a multiple of 4) */
    size_t run_off[TC__AMX_MAX_RUNS]; /* byte offset of each run from the window's start */
} tc__amx_plan;

/* The plan of layer s (not depthwise) on an image of px_bytes per pixel, or false when the AMX kernels do not take
 * it (a run shorter than 64 bytes or not a multiple of 4, more than TC__AMX_MAX_RUNS runs, an empty output). */
bool tc__amx_plan_of(const tc__lowp_shape *s, size_t px_bytes, tc__amx_plan *p);

/* Panel k of plan p: its image, first output pixel (index in the plane), pixel count (1..32), and the byte offset
 * of its first window in the image of the whole batch. */
static inline void tc__amx_panel_at(const tc__amx_plan *p, size_t k, size_t *n, size_t *p0, int *m, size_t *a_off) {
    const size_t per_image = p->rows * p->per_row;
    *n = k / per_image;
    const size_t pr = k % per_image / p->per_row, j = k % p->per_row;
    const size_t first = j * TC__AMX_PANEL, left = p->row_px - first;
    *p0 = pr * p->row_px + first;
    *m = (int)(left < TC__AMX_PANEL ? left : TC__AMX_PANEL);
    const size_t r = *p0 / p->ow, c = *p0 % p->ow;
    *a_off = *n * p->hp * p->wp * p->px_bytes + (r * p->sh * p->wp + c * p->sw) * p->px_bytes;
}

/* One panel x one or two blocks: c[i][b * 16 + l] = the sum over the window of image elements times the packed
 * weight of block b (int32 for u8 x s8, float for BF16), for pixels i < m (rows past m are undefined). */
typedef struct tc__amx_job {
    const uint8_t *a;  /* the panel's first window */
    size_t stride;     /* bytes between windows */
    int m;             /* pixels, 1..32 */
    const tc__amx_plan *plan;
    const uint8_t *w;  /* the packed weight of the first block */
    size_t w_block;    /* bytes per block (K bytes x 16) */
    int nb;            /* blocks, 1 or 2 */
    void *c;           /* [32][32] 32-bit sums, rows of 128 bytes */
} tc__amx_job;

/* Configures this thread's tiles (once per task, before the dot products) and releases them after. */
void tc__amx_begin(void);
void tc__amx_end(void);
void tc__amx_dot_u8s8(const tc__amx_job *j); /* TDPBUSD: u8 image, s8 weight, int32 sums */
void tc__amx_dot_bf16(const tc__amx_job *j); /* TDPBF16PS: BF16 image and weight, float sums */

#endif
