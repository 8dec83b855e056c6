/* cmd_build.c - `tailcut build MODEL.onnx -o MODEL.plan [profile options]`: optimise for this
 * machine and write one plan file. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "engine_open.h"
#include "tailcut/tailcut.h"

static void usage(FILE *f) {
    fprintf(f, "usage: tailcut build MODEL.onnx -o MODEL.plan [options]\n%s", cli_build_usage());
    fprintf(f, "optimisation passes (--disable-pass NAME):\n");
    for (int k = 0; k < tc_pass_count(); k++) fprintf(f, "  %-22s %s\n", tc_pass_name(k), tc_pass_description(k));
}

int tc_cli_build(int argc, char **argv) {
    cli_build_args a = {0};
    const char *model = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        int r = cli_build_arg(&a, argc, argv, &i, "build");
        if (r < 0) return 2;
        if (r > 0) continue;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (++i >= argc) {
                usage(stderr);
                return 2;
            }
            out = argv[i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "tailcut build: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (model == NULL) {
            model = argv[i];
        } else {
            fprintf(stderr, "tailcut build: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (model == NULL || out == NULL) {
        usage(stderr);
        return 2;
    }
    if (cli_is_plan(model)) {
        fprintf(stderr, "tailcut build: '%s' is already a plan; give the .onnx model\n", model);
        return 2;
    }
    tc_engine *e = NULL;
    double ms = 0;
    int rc = cli_open_engine(model, &a, "build", &e, &ms);
    if (rc) return rc;
    tc_error err;
    if (tc_engine_save(e, out, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut build: %s\n", err.message);
        tc_engine_destroy(e);
        return 1;
    }
    tc_memory_info mem;
    tc_engine_memory_info(e, 0, &mem);
    printf("built %s -> %s in %.0f ms: %d steps, %d profile(s), arena %.2f MiB (naive %.2f MiB), weights %.2f MiB\n",
           model, out, ms, tc_engine_num_steps(e), tc_engine_num_profiles(e), (double)mem.arena_bytes / 1048576.0,
           (double)mem.naive_bytes / 1048576.0, (double)mem.weight_bytes / 1048576.0);
    tc_engine_destroy(e);
    return 0;
}
