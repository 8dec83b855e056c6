/*
 * report.c - prints what tc_conformance found: a per-op table (ops with a
 * passing test first, each group sorted by op), every failure with its
 * message, the skips grouped by reason (every skipped test under
 * --list-skips), the totals and the final "N passed, N failed, N skipped" line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"

typedef struct op_row {
    const char *op;
    int count[3]; /* indexed by conf_outcome */
} op_row;

typedef struct reason_row {
    const char *reason;
    int count;
} reason_row;

static int cmp_op_name(const char *a, const char *b) {
    int c = strcasecmp(a, b);
    return c ? c : strcmp(a, b);
}

static int cmp_op_row(const void *pa, const void *pb) {
    const op_row *a = pa, *b = pb;
    int a_pass = a->count[CONF_PASS] > 0, b_pass = b->count[CONF_PASS] > 0;
    if (a_pass != b_pass) return b_pass - a_pass;
    return cmp_op_name(a->op, b->op);
}

static int cmp_reason_row(const void *pa, const void *pb) {
    const reason_row *a = pa, *b = pb;
    if (a->count != b->count) return b->count - a->count;
    return strcmp(a->reason, b->reason);
}

/* Cases ordered by op, then by name (qsort of pointers into the case array). */
static int cmp_case_by_op(const void *pa, const void *pb) {
    const conf_case *a = *(const conf_case *const *)pa, *b = *(const conf_case *const *)pb;
    int c = cmp_op_name(a->op, b->op);
    return c ? c : strcmp(a->name, b->name);
}

static const char *text(const conf_case *c) { return c->message ? c->message : ""; }

static void print_table(const conf_case *cases, int num_cases) {
    op_row *rows = calloc((size_t)num_cases + 1, sizeof *rows);
    if (!rows) return;
    int num_rows = 0;
    size_t width = strlen("op");
    for (int i = 0; i < num_cases; i++) {
        int r = 0;
        while (r < num_rows && strcmp(rows[r].op, cases[i].op) != 0) r++;
        if (r == num_rows) {
            rows[num_rows++].op = cases[i].op;
            if (strlen(cases[i].op) > width) width = strlen(cases[i].op);
        }
        rows[r].count[cases[i].outcome]++;
    }
    qsort(rows, (size_t)num_rows, sizeof *rows, cmp_op_row);

    int w = (int)width;
    printf("\n%-*s  %5s  %5s  %5s\n", w, "op", "pass", "fail", "skip");
    int with_pass = 0, with_fail = 0, divider = 0;
    for (int r = 0; r < num_rows; r++) {
        if (rows[r].count[CONF_PASS] == 0 && !divider) {
            printf("-- no passing test --\n");
            divider = 1;
        }
        printf("%-*s  %5d  %5d  %5d\n", w, rows[r].op, rows[r].count[CONF_PASS],
               rows[r].count[CONF_FAIL], rows[r].count[CONF_SKIP]);
        with_pass += rows[r].count[CONF_PASS] > 0;
        with_fail += rows[r].count[CONF_FAIL] > 0;
    }
    printf("\nops: %d (%d with a passing test, %d with a failing test)\n", num_rows, with_pass,
           with_fail);
    free(rows);
}

static void print_cases(const conf_case *cases, int num_cases, conf_outcome which,
                        const char *title) {
    const conf_case **list = calloc((size_t)num_cases + 1, sizeof *list);
    if (!list) return;
    int n = 0;
    for (int i = 0; i < num_cases; i++)
        if (cases[i].outcome == which) list[n++] = &cases[i];
    if (n) {
        qsort(list, (size_t)n, sizeof *list, cmp_case_by_op);
        printf("\n%s (%d):\n", title, n);
        for (int i = 0; i < n; i++)
            printf("  %s [%s]: %s\n", list[i]->name, list[i]->op, text(list[i]));
    }
    free(list);
}

static void print_skip_reasons(const conf_case *cases, int num_cases) {
    reason_row *rows = calloc((size_t)num_cases + 1, sizeof *rows);
    if (!rows) return;
    int num_rows = 0;
    for (int i = 0; i < num_cases; i++) {
        if (cases[i].outcome != CONF_SKIP) continue;
        int r = 0;
        while (r < num_rows && strcmp(rows[r].reason, text(&cases[i])) != 0) r++;
        if (r == num_rows) rows[num_rows++].reason = text(&cases[i]);
        rows[r].count++;
    }
    if (num_rows) {
        qsort(rows, (size_t)num_rows, sizeof *rows, cmp_reason_row);
        printf("\nskipped, by reason (%d reason%s):\n", num_rows, num_rows == 1 ? "" : "s");
        for (int r = 0; r < num_rows; r++) printf("  %5d  %s\n", rows[r].count, rows[r].reason);
    }
    free(rows);
}

void conf_report(const conf_case *cases, int num_cases, int list_skips) {
    int count[3] = {0, 0, 0};
    for (int i = 0; i < num_cases; i++) count[cases[i].outcome]++;
    print_table(cases, num_cases);
    print_cases(cases, num_cases, CONF_FAIL, "FAILED");
    print_skip_reasons(cases, num_cases);
    if (list_skips) print_cases(cases, num_cases, CONF_SKIP, "skipped tests");
    printf("\ntests: %d\n", num_cases);
    printf("%d passed, %d failed, %d skipped\n", count[CONF_PASS], count[CONF_FAIL],
           count[CONF_SKIP]);
    fflush(stdout);
}
