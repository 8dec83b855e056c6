/* main.c - the tailcut command line: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut <command> [options]\n"
            "commands:\n"
            "  build MODEL.onnx -o MODEL.plan [shape options]            optimise for this machine, write a plan\n"
            "  calibrate MODEL.onnx --data DIR -o CALIB.cache            INT8 ranges of activations (entropy, minmax,\n"
            "                                                            percentile) for build --int8\n"
            "  run MODEL.{onnx,plan} --input NAME=FILE [...] --output-dir DIR\n"
            "                                                            run a model on .npy/.pb inputs\n"
            "  bench MODEL.{onnx,plan} [options]                         latency percentiles and throughput\n"
            "  inspect MODEL.{onnx,plan} [--json]                        inputs, outputs, ops or steps\n"
            "  compare A.{onnx,plan} B.{onnx,plan} --data DIR [--json]  output agreement on input samples\n"
            "                                                            (cosine, errors, top-1/top-5)\n"
            "  serve --model-repository DIR [--http-port N]              KServe v2 HTTP inference server\n"
            "  loadgen --url http://127.0.0.1:PORT --model M (--rate R | --concurrency C) --duration S\n"
            "                                                            load a KServe v2 server, latency percentiles\n"
            "run 'tailcut <command> --help' for the options of one command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return tc_cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "inspect") == 0) return tc_cli_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "build") == 0) return tc_cli_build(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0) return tc_cli_calibrate(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return tc_cli_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0) return tc_cli_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "loadgen") == 0) return tc_cli_loadgen(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0) return tc_cli_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "tailcut: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
