/* cli.h - entry points of the tailcut subcommands (each in its own file). */
#ifndef TC_CLI_H
#define TC_CLI_H

int tc_cli_run(int argc, char **argv);
int tc_cli_inspect(int argc, char **argv);
int tc_cli_build(int argc, char **argv);
int tc_cli_calibrate(int argc, char **argv);
int tc_cli_bench(int argc, char **argv);
int tc_cli_serve(int argc, char **argv);
int tc_cli_loadgen(int argc, char **argv);
int tc_cli_compare(int argc, char **argv);
int tc_cli_inspect_plan(const char *path, int json, int verbose);

#endif
