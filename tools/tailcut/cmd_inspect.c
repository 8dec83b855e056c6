/* cmd_inspect.c - `tailcut inspect`: placeholder until the importer lands (this session). */
#include <stdio.h>

#include "cli.h"

int tc_cli_inspect(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "tailcut inspect: not implemented yet\n");
    return 1;
}
