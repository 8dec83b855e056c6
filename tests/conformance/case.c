/*
 * case.c - runs one ONNX backend node test in the current process: loads
 * model.onnx, decides whether the test must be skipped (unsupported op, type or
 * dtype, no data), then for each test_data_set_* loads the inputs, runs the
 * reference executor and compares every output with the expected one.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define NAME_SIZE 256

/* Default tolerances of onnx/backend/test/loader: rtol 1e-3, atol 1e-7, unless
 * the test folder has a data.json that says otherwise. */
static conf_tolerance read_tolerance(const char *dir) {
    conf_tolerance tol = {1e-3, 1e-7};
    char path[4096];
    snprintf(path, sizeof path, "%s/data.json", dir);
    FILE *fp = fopen(path, "rb");
    if (!fp) return tol;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *keys[2] = {"\"rtol\"", "\"atol\""};
    double *vals[2] = {&tol.rtol, &tol.atol};
    for (int k = 0; k < 2; k++) {
        const char *p = strstr(buf, keys[k]);
        if (!p) continue;
        p = strchr(p + strlen(keys[k]), ':');
        if (!p) continue;
        char *end;
        double v = strtod(p + 1, &end);
        if (end != p + 1) *vals[k] = v;
    }
    return tol;
}

/* Writes a skip reason when a graph input or output has a type the library cannot hold. */
static int find_type_problem(const conf_peek *pk, char *msg, size_t msg_size) {
    for (int side = 0; side < 2; side++) {
        const conf_value *vals = side ? pk->outputs : pk->inputs;
        int count = side ? pk->num_outputs : pk->num_inputs;
        for (int i = 0; i < count; i++) {
            const conf_value *v = &vals[i];
            if (v->kind != CONF_TYPE_TENSOR && v->kind != CONF_TYPE_UNKNOWN) {
                snprintf(msg, msg_size, "unsupported type %s", conf_type_kind_name(v->kind));
                return 1;
            }
            if (v->kind == CONF_TYPE_TENSOR && v->elem_type != 0 &&
                tc_dtype_size((tc_dtype)v->elem_type) == 0) {
                snprintf(msg, msg_size, "unsupported dtype %s", conf_onnx_type_name(v->elem_type));
                return 1;
            }
        }
    }
    return 0;
}

/* Writes "unsupported op X, Y" (each op once, in node order) when a node cannot run. */
static int find_unsupported_ops(const tc_model *model, char *msg, size_t msg_size) {
    enum { MAX_LISTED = 16 };
    char ops[MAX_LISTED][300];
    int num_ops = 0;
    int num_nodes = tc_model_num_nodes(model);
    for (int i = 0; i < num_nodes && num_ops < MAX_LISTED; i++) {
        tc_node_info info;
        memset(&info, 0, sizeof info);
        if (tc_model_node_info(model, i, &info) != TC_STATUS_OK || info.supported) continue;
        char op[300];
        const char *domain = info.domain ? info.domain : "";
        const char *op_type = info.op_type ? info.op_type : "?";
        if (domain[0] && strcmp(domain, "ai.onnx") != 0)
            snprintf(op, sizeof op, "%s.%s", domain, op_type);
        else
            snprintf(op, sizeof op, "%s", op_type);
        int seen = 0;
        for (int k = 0; k < num_ops && !seen; k++) seen = strcmp(ops[k], op) == 0;
        if (!seen) memcpy(ops[num_ops++], op, sizeof op);
    }
    size_t n = 0;
    msg[0] = '\0';
    for (int k = 0; k < num_ops && n < msg_size; k++)
        n += (size_t)snprintf(msg + n, msg_size - n, "%s%s", k ? ", " : "unsupported op ", ops[k]);
    return num_ops > 0;
}

static int cmp_str(const void *a, const void *b) {
    return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* Lists the entries of dir whose names start with prefix and end with suffix, in natural
 * order (input_2 before input_10). Returns the count (-1 on error); free with free_list. */
static int list_entries(const char *dir, const char *prefix, const char *suffix, char ***out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    int count = 0;
    struct dirent *e;
    size_t plen = strlen(prefix), slen = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < plen + slen || strncmp(e->d_name, prefix, plen) != 0 ||
            strcmp(e->d_name + len - slen, suffix) != 0)
            continue;
        char **bigger = realloc(names, (size_t)(count + 1) * sizeof *names);
        char *copy = strdup(e->d_name);
        if (!bigger || !copy) {
            free(copy);
            if (bigger) names = bigger;
            for (int i = 0; i < count; i++) free(names[i]);
            free(names);
            closedir(d);
            return -1;
        }
        names = bigger;
        names[count++] = copy;
    }
    closedir(d);
    if (count) qsort(names, (size_t)count, sizeof *names, cmp_str);
    *out = names;
    return count;
}

static void free_list(char **names, int count) {
    for (int i = 0; i < count; i++) free(names[i]);
    free(names);
}

static const char *error_text(const tc_error *err, tc_status status) {
    return err->message[0] ? err->message : tc_status_str(status);
}

/* Loads the tensors <set>/<prefix>*.pb into *tensors and their names into *names.
 * Returns the count, or -1 with the outcome in *outcome and the reason in msg. */
static int load_tensors(const char *set_dir, const char *set_name, const char *prefix,
                        tc_tensor **tensors, char (**names)[NAME_SIZE], conf_outcome *outcome,
                        char *msg, size_t msg_size) {
    char **files;
    int num_files = list_entries(set_dir, prefix, ".pb", &files);
    int count = num_files;
    *tensors = NULL;
    *names = NULL;
    if (count < 0) {
        *outcome = CONF_FAIL;
        snprintf(msg, msg_size, "%s: cannot list %s*.pb", set_name, prefix);
        return -1;
    }
    *tensors = calloc((size_t)count + 1, sizeof **tensors);
    *names = calloc((size_t)count + 1, sizeof **names);
    if (!*tensors || !*names) {
        *outcome = CONF_FAIL;
        snprintf(msg, msg_size, "out of memory");
        count = -1;
        goto done;
    }
    for (int i = 0; i < count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", set_dir, files[i]);
        tc_error err;
        memset(&err, 0, sizeof err);
        tc_status st = tc_tensor_load(path, &(*tensors)[i], (*names)[i], NAME_SIZE, &err);
        if (st != TC_STATUS_OK) {
            *outcome = st == TC_STATUS_UNSUPPORTED ? CONF_SKIP : CONF_FAIL;
            if (st == TC_STATUS_UNSUPPORTED)
                snprintf(msg, msg_size, "%s", error_text(&err, st));
            else
                snprintf(msg, msg_size, "%s/%s: tc_tensor_load: %s: %s", set_name, files[i],
                         tc_status_str(st), error_text(&err, st));
            for (int j = 0; j < i; j++) tc_tensor_free(&(*tensors)[j]);
            count = -1;
            goto done;
        }
    }
done:
    free_list(files, num_files < 0 ? 0 : num_files);
    if (count < 0) {
        free(*tensors);
        free(*names);
        *tensors = NULL;
        *names = NULL;
    }
    return count;
}

static void free_tensors(tc_tensor *tensors, int count) {
    if (!tensors) return;
    for (int i = 0; i < count; i++) tc_tensor_free(&tensors[i]);
    free(tensors);
}

/* Whether name is one of the graph inputs (from the library or the file). */
static int is_graph_input(const tc_model *model, const conf_peek *pk, const char *name) {
    int n = tc_model_num_inputs(model);
    for (int i = 0; i < n; i++) {
        tc_io_info info;
        memset(&info, 0, sizeof info);
        if (tc_model_input_info(model, i, &info) == TC_STATUS_OK && info.name &&
            strcmp(info.name, name) == 0)
            return 1;
    }
    for (int i = 0; i < pk->num_inputs; i++)
        if (strcmp(pk->inputs[i].name, name) == 0) return 1;
    return 0;
}

/* Runs one data set; returns CONF_PASS or the outcome with its reason in msg. */
static conf_outcome run_data_set(const tc_model *model, const conf_peek *pk, const char *dir,
                                 const char *set_name, conf_tolerance tol, char *msg,
                                 size_t msg_size) {
    char set_dir[4096];
    snprintf(set_dir, sizeof set_dir, "%s/%s", dir, set_name);
    conf_outcome outcome = CONF_PASS;
    tc_tensor *inputs = NULL, *expected = NULL, *outputs = NULL;
    char(*in_names)[NAME_SIZE] = NULL, (*out_names)[NAME_SIZE] = NULL;
    const char **names = NULL;
    int num_out = tc_model_num_outputs(model);
    int ran = 0;

    int num_in =
        load_tensors(set_dir, set_name, "input_", &inputs, &in_names, &outcome, msg, msg_size);
    if (num_in < 0) return outcome;
    int num_exp =
        load_tensors(set_dir, set_name, "output_", &expected, &out_names, &outcome, msg, msg_size);
    if (num_exp < 0) goto done;

    /* Inputs by name, else by position (input_i.pb is graph input i, as in ONNX's runner). */
    names = calloc((size_t)num_in + 1, sizeof *names);
    if (!names) {
        outcome = CONF_FAIL;
        snprintf(msg, msg_size, "out of memory");
        goto done;
    }
    for (int i = 0; i < num_in; i++) {
        if (in_names[i][0] && is_graph_input(model, pk, in_names[i])) {
            names[i] = in_names[i];
            continue;
        }
        tc_io_info info;
        memset(&info, 0, sizeof info);
        if (i < pk->num_inputs && pk->inputs[i].name[0])
            names[i] = pk->inputs[i].name;
        else if (tc_model_input_info(model, i, &info) == TC_STATUS_OK && info.name)
            names[i] = info.name;
        else {
            outcome = CONF_FAIL;
            snprintf(msg, msg_size, "%s: input %d ('%s') matches no graph input", set_name, i,
                     in_names[i]);
            goto done;
        }
    }

    if (num_out != num_exp) {
        outcome = CONF_FAIL;
        snprintf(msg, msg_size, "%s: model has %d outputs, data set %d", set_name, num_out,
                 num_exp);
        goto done;
    }
    outputs = calloc((size_t)num_out + 1, sizeof *outputs);
    if (!outputs) {
        outcome = CONF_FAIL;
        snprintf(msg, msg_size, "out of memory");
        goto done;
    }
    tc_error err;
    memset(&err, 0, sizeof err);
    tc_status st = tc_model_run_reference(model, num_in, names, inputs, outputs, &err);
    if (st != TC_STATUS_OK) {
        outcome = st == TC_STATUS_UNSUPPORTED ? CONF_SKIP : CONF_FAIL;
        if (st == TC_STATUS_UNSUPPORTED)
            snprintf(msg, msg_size, "%s", error_text(&err, st));
        else
            snprintf(msg, msg_size, "%s: run: %s: %s", set_name, tc_status_str(st),
                     error_text(&err, st));
        goto done;
    }
    ran = 1;

    for (int k = 0; k < num_exp; k++) {
        /* Expected output k is graph output k unless its name says otherwise. */
        int j = k;
        for (int o = 0; o < num_out && out_names[k][0]; o++) {
            tc_io_info info;
            memset(&info, 0, sizeof info);
            if (tc_model_output_info(model, o, &info) == TC_STATUS_OK && info.name &&
                strcmp(info.name, out_names[k]) == 0) {
                j = o;
                break;
            }
        }
        char why[CONF_MESSAGE_SIZE];
        if (!conf_compare(&outputs[j], &expected[k], tol, why, sizeof why)) {
            outcome = CONF_FAIL;
            snprintf(msg, msg_size, "%s, output %d '%s': %s", set_name, j,
                     out_names[k][0] ? out_names[k] : "?", why);
            goto done;
        }
    }

done:
    if (outputs && ran)
        free_tensors(outputs, num_out);
    else
        free(outputs);
    free(names);
    free_tensors(inputs, num_in);
    free_tensors(expected, num_exp < 0 ? 0 : num_exp);
    free(in_names);
    free(out_names);
    return outcome;
}

conf_outcome conf_run_case(const char *dir, char *msg, size_t msg_size) {
    msg[0] = '\0';
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);

    /* The file's own view of its types; if this small reader fails, the library decides. */
    conf_peek pk;
    char peek_err[512];
    if (conf_peek_model(path, &pk, peek_err, sizeof peek_err) != 0) memset(&pk, 0, sizeof pk);
    char type_reason[256];
    int type_problem = find_type_problem(&pk, type_reason, sizeof type_reason);

    tc_model_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.flags = TC_MODEL_ALLOW_UNSUPPORTED;
    tc_model *model = NULL;
    tc_error err;
    memset(&err, 0, sizeof err);
    tc_status st = tc_model_load(path, &opts, &model, &err);
    conf_outcome outcome = CONF_PASS;
    if (st != TC_STATUS_OK) {
        if (type_problem) {
            outcome = CONF_SKIP;
            snprintf(msg, msg_size, "%s", type_reason);
        } else if (st == TC_STATUS_UNSUPPORTED) {
            outcome = CONF_SKIP;
            snprintf(msg, msg_size, "%s", error_text(&err, st));
        } else {
            outcome = CONF_FAIL;
            snprintf(msg, msg_size, "load: %s: %s", tc_status_str(st), error_text(&err, st));
        }
        conf_peek_free(&pk);
        return outcome;
    }

    char **sets = NULL;
    int num_sets = 0;
    if (find_unsupported_ops(model, msg, msg_size)) {
        outcome = CONF_SKIP;
    } else if (type_problem) {
        outcome = CONF_SKIP;
        snprintf(msg, msg_size, "%s", type_reason);
    } else if ((num_sets = list_entries(dir, "test_data_set_", "", &sets)) <= 0) {
        outcome = CONF_SKIP;
        snprintf(msg, msg_size, "no test data sets");
        num_sets = 0;
    } else {
        conf_tolerance tol = read_tolerance(dir);
        for (int s = 0; s < num_sets && outcome == CONF_PASS; s++)
            outcome = run_data_set(model, &pk, dir, sets[s], tol, msg, msg_size);
        if (outcome == CONF_PASS)
            snprintf(msg, msg_size, "%d data set%s", num_sets, num_sets == 1 ? "" : "s");
    }
    free_list(sets, num_sets);
    tc_model_destroy(model);
    conf_peek_free(&pk);
    return outcome;
}
