/* profile_select.c - the profile of an engine that holds given run-time input shapes (see profile_select.h). */
#include "profile_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_open.h"

int cli_shapes_parse(const char *spec, char *buf, size_t size, cli_shapes *s, const char *cmd) {
    memset(s, 0, sizeof *s);
    if (strlen(spec) >= size) {
        fprintf(stderr, "tailcut %s: --shapes is too long\n", cmd);
        return -1;
    }
    memcpy(buf, spec, strlen(spec) + 1);
    for (char *item = buf, *next; item && *item; item = next) {
        next = strchr(item, ',');
        /* a comma inside a name's dims never occurs: dims are DxDx..; the next item starts after it */
        if (next) *next++ = '\0';
        char *colon = strrchr(item, ':');
        if (colon == NULL || colon == item || s->n >= 64) {
            fprintf(stderr, "tailcut %s: --shapes wants NAME:DxD..,..., got '%s'\n", cmd, item);
            return -1;
        }
        *colon = '\0';
        int rank = cli_parse_dims(colon + 1, s->dims[s->n]);
        if (rank < 0) {
            fprintf(stderr, "tailcut %s: --shapes: bad dims for '%s'\n", cmd, item);
            return -1;
        }
        s->names[s->n] = item;
        s->ranks[s->n++] = rank;
    }
    return 0;
}

/* True when profile p holds every shape of s; *why (when not) says which input and dim does not fit. */
static int holds(const tc_engine *e, int p, const cli_shapes *s, char *why, size_t size) {
    for (int k = 0; k < s->n; k++) {
        int idx = -1;
        for (int i = 0; i < tc_engine_num_inputs(e) && idx < 0; i++) {
            tc_io_info info;
            if (tc_engine_input_info(e, i, &info) == TC_STATUS_OK && strcmp(info.name, s->names[k]) == 0) idx = i;
        }
        if (idx < 0) {
            snprintf(why, size, "the engine has no input named '%s'", s->names[k]);
            return -1;
        }
        tc_input_range r;
        if (tc_engine_profile_range(e, p, idx, &r) != TC_STATUS_OK) continue; /* a static input: checked at run */
        if (r.rank != s->ranks[k]) {
            snprintf(why, size, "input '%s' has rank %d, given %d", s->names[k], (int)r.rank, (int)s->ranks[k]);
            return 0;
        }
        for (int32_t d = 0; d < r.rank; d++)
            if (s->dims[k][d] < r.min[d] || s->dims[k][d] > r.max[d]) {
                snprintf(why, size, "input '%s' dim %d is %lld, outside [%lld, %lld]", s->names[k], (int)d,
                         (long long)s->dims[k][d], (long long)r.min[d], (long long)r.max[d]);
                return 0;
            }
    }
    return 1;
}

/* Prints profile p's ranges ("x: 1x3x8x8..4x3x8x8") to stderr. */
static void print_ranges(const tc_engine *e, int p) {
    for (int i = 0; i < tc_engine_num_inputs(e); i++) {
        tc_input_range r;
        if (tc_engine_profile_range(e, p, i, &r) != TC_STATUS_OK) continue;
        fprintf(stderr, "%s%s: ", i ? ", " : "", r.name);
        for (int32_t d = 0; d < r.rank; d++) fprintf(stderr, "%s%lld", d ? "x" : "", (long long)r.min[d]);
        fprintf(stderr, "..");
        for (int32_t d = 0; d < r.rank; d++) fprintf(stderr, "%s%lld", d ? "x" : "", (long long)r.max[d]);
    }
}

int cli_select_profile(const tc_engine *e, const cli_shapes *s, int want, const char *cmd) {
    const int n = tc_engine_num_profiles(e);
    char why[256] = "";
    if (want >= 0) {
        if (want >= n) {
            fprintf(stderr, "tailcut %s: --profile-index %d: the engine has %d profile(s)\n", cmd, want, n);
            return -1;
        }
        int h = holds(e, want, s, why, sizeof why);
        if (h == 1) return want;
        fprintf(stderr, "tailcut %s: profile %d does not take these shapes: %s (its ranges: ", cmd, want, why);
        print_ranges(e, want);
        fprintf(stderr, ")\n");
        return -1;
    }
    for (int p = 0; p < n; p++) {
        int h = holds(e, p, s, why, sizeof why);
        if (h < 0) {
            fprintf(stderr, "tailcut %s: %s\n", cmd, why);
            return -1;
        }
        if (h == 1) return p;
    }
    fprintf(stderr, "tailcut %s: no profile of the engine takes these shapes; its profiles:\n", cmd);
    for (int p = 0; p < n; p++) {
        fprintf(stderr, "  profile %d: ", p);
        print_ranges(e, p);
        fprintf(stderr, "\n");
    }
    return -1;
}
