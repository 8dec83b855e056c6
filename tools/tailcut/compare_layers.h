/* compare_layers.h - `tailcut compare --per-layer`: per step of B, how far its output tensor is from A's
 * tensor of the same name (SQNR, cosine, max abs error), accumulated over the samples from two contexts
 * that keep their tensors (tc_context_keep_tensors), and the table / JSON that report it. */
#ifndef TC_CLI_COMPARE_LAYERS_H
#define TC_CLI_COMPARE_LAYERS_H

#include <stdbool.h>

#include "compare_stats.h"
#include "tailcut/tailcut.h"

/* One step of B and its output tensor. Strings are copies (a per-shape engine is rebuilt between samples). */
typedef struct cli_layer {
    int index;               /* B's step index */
    char *step, *ops, *precision, *tensor;
    out_stats st;            /* a = A's tensor (the reference), b = B's */
    int compared;            /* samples added to st */
    char note[256];          /* why a sample was not compared (the first reason), "" if none */
} cli_layer;

typedef struct cli_layers {
    bool ready;              /* rows chosen (at the first sample) */
    bool reduced_only;       /* rows are B's reduced-precision steps; false: every step (none is) */
    int n_steps;             /* steps of B */
    int n;
    cli_layer *rows;         /* in B's step order */
} cli_layers;

/*
 * Adds one sample: for every row, A's and B's tensors of that name from contexts ca and cb, which ran the
 * sample with tensors kept. At the first call the rows are chosen from engine b: its steps whose precision
 * is not "fp32", or every step with an output when there is none. A tensor missing from A (fused away or
 * named differently there), or of another shape, is noted on its row, not an error. Returns 0, or 1 when
 * out of memory (reason printed).
 */
int cli_layers_add(cli_layers *layers, const tc_engine *b, tc_context *ca, tc_context *cb);
/* Prints the per-layer table (after the per-output report). */
void cli_layers_print_table(const cli_layers *layers);
/* Prints `  "layers": [...],\n` and `  "layers_selection": ...,\n` for the JSON report. */
void cli_layers_print_json(const cli_layers *layers);
/* Frees the rows and zeroes layers (safe on a zeroed one). */
void cli_layers_free(cli_layers *layers);

#endif
