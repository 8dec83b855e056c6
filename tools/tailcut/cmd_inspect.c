/* cmd_inspect.c - `tailcut inspect MODEL.onnx`: inputs, outputs, op histogram and unsupported ops. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_warn.h"
#include "engine_open.h"
#include "tailcut/tailcut.h"

static void print_io(const char *kind, const tc_io_info *info) {
    printf("  %-7s %-32s %-8s ", kind, info->name, tc_dtype_name(info->dtype) ? tc_dtype_name(info->dtype) : "?");
    if (info->rank < 0) {
        printf("[?]\n");
        return;
    }
    printf("[");
    for (int32_t i = 0; i < info->rank; i++) {
        if (i) printf(",");
        if (info->dims[i] >= 0) printf("%lld", (long long)info->dims[i]);
        else printf("%s", info->dim_names[i] ? info->dim_names[i] : "?");
    }
    printf("]\n");
}

typedef struct op_count {
    const char *op;
    int count;
    int supported;
} op_count;

static int by_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return y->count - x->count;
    return strcmp(x->op, y->op);
}

/* The If branches decided at run time (their nodes joined the graph, each running only when its branch is taken):
 * each branch with its nodes, indented by nesting depth (at most MAX_LISTED nodes of a branch by name, Constants not). */
static void print_branches(const tc_model *model, int nn) {
    enum { MAX_LISTED = 16 };
    int guarded = 0;
    for (int i = 0; i < nn; i++) {
        tc_node_info ni;
        tc_model_node_info(model, i, &ni);
        guarded += ni.branch[0] != '\0';
    }
    if (guarded == 0) return;
    printf("If branches decided at run time (%d nodes run only when their branch is taken):\n", guarded);
    for (int i = 0; i < nn; i++) { /* each branch once, at its first node */
        tc_node_info ni;
        tc_model_node_info(model, i, &ni);
        if (ni.branch[0] == '\0') continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            tc_node_info nj;
            tc_model_node_info(model, j, &nj);
            seen = strcmp(nj.branch, ni.branch) == 0;
        }
        if (seen) continue;
        int count = 0;
        for (int j = i; j < nn; j++) {
            tc_node_info nj;
            tc_model_node_info(model, j, &nj);
            count += strcmp(nj.branch, ni.branch) == 0;
        }
        const int ind = 2 * ni.branch_depth;
        printf("%*s%s: %d nodes\n", ind, "", ni.branch, count);
        int listed = 0, consts = 0;
        for (int j = i; j < nn; j++) {
            tc_node_info nj;
            tc_model_node_info(model, j, &nj);
            if (strcmp(nj.branch, ni.branch) != 0) continue;
            if (strcmp(nj.op_type, "Constant") == 0) consts++;
            else if (listed++ < MAX_LISTED) printf("%*s%-20s %s\n", ind + 2, "", nj.op_type, nj.name);
        }
        if (listed > MAX_LISTED || consts > 0)
            printf("%*s(%d more, %d of them Constant)\n", ind + 2, "",
                   consts + (listed > MAX_LISTED ? listed - MAX_LISTED : 0), consts);
    }
}

int tc_cli_inspect(int argc, char **argv) {
    const char *path = NULL;
    int json = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: tailcut inspect MODEL.onnx | MODEL.plan [--json] [--verbose]\n");
            return 0;
        } else if (argv[i][0] != '-' && path == NULL) path = argv[i];
        else {
            fprintf(stderr, "usage: tailcut inspect MODEL.onnx | MODEL.plan [--json] [--verbose]\n");
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(stderr, "usage: tailcut inspect MODEL.onnx | MODEL.plan [--json] [--verbose]\n");
        return 2;
    }
    if (cli_is_plan(path)) return tc_cli_inspect_plan(path, json, verbose);
    if (json) {
        fprintf(stderr, "tailcut inspect: --json is for plans\n");
        return 2;
    }
    argv[1] = (char *)path;
    tc_model_options opts = {sizeof opts, TC_MODEL_ALLOW_UNSUPPORTED};
    tc_model *model = NULL;
    tc_error err;
    if (tc_model_load(argv[1], &opts, &model, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut inspect: %s\n", err.message);
        return 1;
    }
    cli_model_warnings(model, "inspect", NULL);
    int nn = tc_model_num_nodes(model);
    printf("model %s: %d nodes", argv[1], nn);
    if (nn > 0) {
        tc_node_info ni;
        tc_model_node_info(model, 0, &ni);
        printf(", opset %lld", (long long)ni.opset);
    }
    printf("\n");
    for (int i = 0; i < tc_model_num_inputs(model); i++) {
        tc_io_info info;
        tc_model_input_info(model, i, &info);
        print_io("input", &info);
    }
    for (int i = 0; i < tc_model_num_outputs(model); i++) {
        tc_io_info info;
        tc_model_output_info(model, i, &info);
        print_io("output", &info);
    }
    op_count *ops = calloc((size_t)(nn > 0 ? nn : 1), sizeof *ops);
    if (ops == NULL) {
        tc_model_destroy(model);
        return 1;
    }
    int n_ops = 0, n_unsupported = 0;
    for (int i = 0; i < nn; i++) {
        tc_node_info ni;
        tc_model_node_info(model, i, &ni);
        int k = 0;
        while (k < n_ops && strcmp(ops[k].op, ni.op_type) != 0) k++;
        if (k == n_ops) {
            ops[n_ops].op = ni.op_type;
            ops[n_ops].supported = ni.supported;
            n_ops++;
        }
        ops[k].count++;
        if (!ni.supported) n_unsupported++;
    }
    qsort(ops, (size_t)n_ops, sizeof *ops, by_count);
    printf("op histogram (%d op types):\n", n_ops);
    for (int k = 0; k < n_ops; k++)
        printf("  %-24s %5d%s\n", ops[k].op, ops[k].count, ops[k].supported ? "" : "  UNSUPPORTED");
    if (n_unsupported == 0) {
        printf("all %d nodes are supported\n", nn);
    } else {
        printf("%d unsupported nodes:\n", n_unsupported);
        for (int i = 0; i < nn; i++) {
            tc_node_info ni;
            tc_model_node_info(model, i, &ni);
            if (!ni.supported)
                printf("  node '%s': op %s (domain '%s', opset %lld)\n", ni.name, ni.op_type,
                       ni.domain[0] ? ni.domain : "ai.onnx", (long long)ni.opset);
        }
    }
    free(ops);
    print_branches(model, nn);
    tc_model_destroy(model);
    return 0;
}
