/* main.c - the tailcut command line: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut <command> [options]\n"
            "commands:\n"
            "  run MODEL.onnx --input NAME=FILE [...] --output-dir DIR   run a model on .npy/.pb inputs\n"
            "  inspect MODEL.onnx                                        inputs, outputs, op histogram\n"
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
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "tailcut: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
