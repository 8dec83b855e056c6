/*
 * conformance.c - entry point of tc_conformance, the ONNX backend node-test
 * conformance runner: parses the command line, lists the test folders of
 * onnx/backend/test/data/node, attributes each test to an op, runs them (each
 * in its own process) and prints the report. Exit status: 0 when nothing
 * failed, 1 when a test failed, 2 on a usage or system error.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"

static void usage(FILE *fp) {
    fprintf(
        fp,
        "usage: tc_conformance NODE_DIR [--filter SUBSTR] [--verbose] [--jobs N] [--timeout SEC]\n"
        "                      [--list-skips] [--no-fork]\n"
        "  NODE_DIR      the onnx/backend/test/data/node folder of the onnx package\n"
        "  --filter S    run only the tests whose folder name contains S\n"
        "  --verbose     print one line per test as it ends\n"
        "  --jobs N      run N tests at once (default 1)\n"
        "  --timeout S   kill a test after S seconds (default 60)\n"
        "  --list-skips  list every skipped test with its reason\n"
        "  --no-fork     run every test in this process (for a debugger; a crash ends the run)\n");
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Lists the sub-folders of dir that hold a model.onnx, sorted. Returns the count or -1. */
static int list_tests(const char *dir, char ***out) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        char **bigger = realloc(names, (size_t)(count + 1) * sizeof *names);
        if (!bigger) break;
        names = bigger;
        if (!(names[count] = strdup(e->d_name))) break;
        count++;
    }
    closedir(d);
    if (count) qsort(names, (size_t)count, sizeof *names, cmp_name);
    *out = names;
    return count;
}

/* Whether the test name (without "test_") spells op, ignoring case and '_' in the name,
 * and the op ends where a word of the name ends: test_reduce_sum_square spells ReduceSumSquare. */
static int name_spells_op(const char *test, const char *op) {
    const char *t = test;
    for (const char *o = op; *o; o++) {
        while (*t == '_') t++;
        if (!*t || tolower((unsigned char)*t) != tolower((unsigned char)*o)) return 0;
        t++;
    }
    return *t == '\0' || *t == '_';
}

static int find_name(char *const *names, int count, const char *name) {
    char *const *hit = bsearch(&name, names, (size_t)count, sizeof *names, cmp_name);
    return hit != NULL;
}

/* The op a test counts for: its single node's op; for an expanded function body, the op of
 * its non-expanded twin, as "Op (expanded)"; else a node op the test name spells; else
 * "(multi-node)". */
static char *attribute_op(const char *node_dir, char *const *all, int num_all, const char *test) {
    char path[4096], err[512], op[300] = "(unreadable model)";
    conf_peek pk;
    snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir, test);
    if (conf_peek_model(path, &pk, err, sizeof err) != 0) return strdup(op);
    if (pk.num_nodes == 1) {
        snprintf(op, sizeof op, "%s", pk.nodes[0].op_type);
        conf_peek_free(&pk);
        return strdup(op);
    }
    snprintf(op, sizeof op, "(multi-node)");
    const char *expanded = strstr(test, "_expanded");
    char twin[256];
    conf_peek tpk;
    if (expanded && (size_t)(expanded - test) < sizeof twin) {
        snprintf(twin, sizeof twin, "%.*s", (int)(expanded - test), test);
        snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir, twin);
        if (find_name(all, num_all, twin) && conf_peek_model(path, &tpk, err, sizeof err) == 0) {
            if (tpk.num_nodes == 1) {
                snprintf(op, sizeof op, "%s (expanded)", tpk.nodes[0].op_type);
                conf_peek_free(&tpk);
                conf_peek_free(&pk);
                return strdup(op);
            }
            conf_peek_free(&tpk);
        }
    }
    const char *bare = strncmp(test, "test_", 5) == 0 ? test + 5 : test;
    size_t best = 0;
    for (int i = 0; i < pk.num_nodes; i++) {
        size_t len = strlen(pk.nodes[i].op_type);
        if (len > best && name_spells_op(bare, pk.nodes[i].op_type)) {
            best = len;
            snprintf(op, sizeof op, "%s", pk.nodes[i].op_type);
        }
    }
    conf_peek_free(&pk);
    return strdup(op);
}

static int parse_int(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 1024) return -1;
    *out = (int)v;
    return 0;
}

static void free_cases(conf_case *cases, int num_cases, char **all, int num_all) {
    for (int i = 0; i < num_cases; i++) {
        free((char *)cases[i].dir);
        free((char *)cases[i].op);
        free(cases[i].message);
    }
    free(cases);
    for (int i = 0; i < num_all; i++) free(all[i]);
    free(all);
}

int main(int argc, char **argv) {
    const char *node_dir = NULL, *filter = NULL;
    int list_skips = 0;
    conf_sched_options opts = {.jobs = 1, .timeout = 60.0, .fork = 1, .verbose = 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            opts.verbose = 1;
        } else if (strcmp(a, "--list-skips") == 0) {
            list_skips = 1;
        } else if (strcmp(a, "--no-fork") == 0) {
            opts.fork = 0;
        } else if (strcmp(a, "--filter") == 0 && i + 1 < argc) {
            filter = argv[++i];
        } else if (strcmp(a, "--jobs") == 0 && i + 1 < argc) {
            if (parse_int(argv[++i], &opts.jobs) != 0) {
                fprintf(stderr, "tc_conformance: --jobs wants a number from 1 to 1024\n");
                return 2;
            }
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            char *end;
            opts.timeout = strtod(argv[++i], &end);
            if (*end || !(opts.timeout > 0)) {
                fprintf(stderr, "tc_conformance: --timeout wants a positive number of seconds\n");
                return 2;
            }
        } else if (a[0] != '-' && !node_dir) {
            node_dir = a;
        } else {
            fprintf(stderr, "tc_conformance: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!node_dir) {
        usage(stderr);
        return 2;
    }

    char **all = NULL;
    int num_all = list_tests(node_dir, &all);
    if (num_all < 0) {
        fprintf(stderr, "tc_conformance: cannot read %s\n", node_dir);
        return 2;
    }
    conf_case *cases = calloc((size_t)num_all + 1, sizeof *cases);
    if (!cases) {
        free_cases(NULL, 0, all, num_all);
        return 2;
    }
    int num_cases = 0;
    for (int i = 0; i < num_all; i++) {
        if (filter && !strstr(all[i], filter)) continue;
        conf_case *c = &cases[num_cases++];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", node_dir, all[i]);
        c->name = all[i];
        c->dir = strdup(path);
        c->op = attribute_op(node_dir, all, num_all, all[i]);
        c->outcome = CONF_FAIL;
        c->message = strdup("not run");
        if (!c->dir || !c->op || !c->message) {
            fprintf(stderr, "tc_conformance: out of memory\n");
            free_cases(cases, num_cases, all, num_all);
            return 2;
        }
    }
    if (num_cases == 0) {
        fprintf(stderr, "tc_conformance: no test in %s%s%s\n", node_dir, filter ? " matches " : "",
                filter ? filter : "");
        free_cases(cases, num_cases, all, num_all);
        return 2;
    }
    printf("tc_conformance: %d test%s from %s, %d job%s, timeout %g s\n", num_cases,
           num_cases == 1 ? "" : "s", node_dir, opts.jobs, opts.jobs == 1 ? "" : "s", opts.timeout);
    fflush(stdout);

    int rc = conf_schedule(cases, num_cases, &opts);
    if (rc == CONF_SCHED_CHILD) {
        free_cases(cases, num_cases, all, num_all);
        return 0;
    }
    conf_report(cases, num_cases, list_skips);

    int failed = 0;
    for (int i = 0; i < num_cases; i++) failed += cases[i].outcome == CONF_FAIL;
    free_cases(cases, num_cases, all, num_all);
    if (rc != 0) return 2;
    return failed ? 1 : 0;
}
