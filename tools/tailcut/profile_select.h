/* profile_select.h - choosing an optimisation profile of an engine for run-time input shapes (`run`, `bench`): the
 * first profile whose ranges hold them, as a TensorRT user picks one per context, or the one --profile-index names. */
#ifndef TC_CLI_PROFILE_SELECT_H
#define TC_CLI_PROFILE_SELECT_H

#include <stdint.h>

#include "tailcut/tailcut.h"

/* Run-time shapes by input name (names kept by reference). */
typedef struct cli_shapes {
    int n;
    const char *names[64];
    int32_t ranks[64];
    int64_t dims[64][TC_MAX_RANK];
} cli_shapes;

/* Parses "name:DxD,name2:DxD" (a --shapes value) into s; writes `name` into buf (kept by s). 0, or -1 with a message. */
int cli_shapes_parse(const char *spec, char *buf, size_t size, cli_shapes *s, const char *cmd);

/*
 * The profile to run s in: `want` when >= 0 (which must hold them), else the first whose ranges hold every shape of s
 * (inputs s does not name are left to the profile). -1 with a message listing the profiles' ranges when none does.
 */
int cli_select_profile(const tc_engine *e, const cli_shapes *s, int want, const char *cmd);

#endif
