/* bench_inputs.h - input buffers for `tailcut bench`: one per engine input, shaped by the
 * profile's opt shape and filled with seeded random non-zero data of the input's dtype. */
#ifndef TC_CLI_BENCH_INPUTS_H
#define TC_CLI_BENCH_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "profile_select.h"
#include "tailcut/tailcut.h"

typedef struct cli_input_buf {
    const char *name; /* belongs to the engine */
    tc_dtype dtype;
    int32_t rank;
    int64_t dims[TC_MAX_RANK];
    void *data; /* heap, 64-byte aligned; cli_inputs_free releases it */
    size_t bytes;
    const char *fill; /* static description of the data, e.g. "~N(0,1)" */
} cli_input_buf;

/*
 * Allocates and fills one buffer per engine input, in engine input order, with the shapes of
 * the `opt` shapes of profile `profile`. Data: floating types ~N(0,1) (sum of 12 uniforms minus 6,
 * magnitudes below 1e-3 pushed to 1e-3 so nothing is zero); integer types are ids in [1, 100),
 * except names containing "mask" (all 1) or "token_type"/"segment" (all 1: such tables have 2 rows);
 * bool is all true. Prints the reason (prefixed "tailcut CMD:") and returns non-zero on failure.
 */
/* shapes (or NULL) gives run-time shapes for the inputs it names; the others take the profile's opt shapes. */
int cli_inputs_prepare(const tc_engine *engine, int profile, const cli_shapes *shapes, uint64_t seed, const char *cmd,
                       cli_input_buf **bufs, int *count);
void cli_inputs_free(cli_input_buf *bufs, int count);

/* Writes "name dtype[d0,d1,...]" for buffer b into out. */
void cli_input_describe(const cli_input_buf *b, char *out, size_t size);

#endif
