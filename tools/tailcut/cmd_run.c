/* cmd_run.c - `tailcut run`: placeholder until the executor lands (this session). */
#include <stdio.h>

#include "cli.h"

int tc_cli_run(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "tailcut run: not implemented yet\n");
    return 1;
}
