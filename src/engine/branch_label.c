/*
 * branch_label.c - which If branch decided at run time each node runs under, in words for inspect
 * (tc_node_info.branch, tc_step_info.branch): "If_0:then", nested "If_0:else > inner_if:then", with the nesting depth.
 * Read from the node's guard (model_predicate_if.c names the run flags "<If>/cond" and "<If>/then_run" for the then
 * branch, "<If>/not_cond" and "<If>/else_run" for the else branch; else the If reading the flag as its condition) and,
 * for the depth, the guard of the If itself.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

static const struct { const char *suffix, *side; } flags[] = {
    {"/cond", "then"}, {"/then_run", "then"}, {"/not_cond", "else"}, {"/else_run", "else"}};

/* Node n's label and depth, computed (memo: depth[n] >= 0) from its guard's name and its If's own label. */
static tc_status label_of(tc__graph *g, int32_t n, const char **label, int *depth, int level, tc__err *err) {
    if (depth[n] >= 0) return TC_STATUS_OK;
    const tc__node *node = &g->nodes[n];
    if (node->guard < 0 || node->guard >= node->n_in || node->in[node->guard] < 0 || level > 64) {
        label[n] = "", depth[n] = 0;
        return TC_STATUS_OK;
    }
    const char *flag = g->values[node->in[node->guard]].name;
    size_t len = strlen(flag);
    char if_name[300];
    const char *side = NULL;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0] && side == NULL; k++) {
        size_t sl = strlen(flags[k].suffix);
        if (len > sl && len - sl < sizeof if_name && strcmp(flag + len - sl, flags[k].suffix) == 0) {
            memcpy(if_name, flag, len - sl);
            if_name[len - sl] = '\0';
            side = flags[k].side;
        }
    }
    /* a pass may have replaced the flag by an equal value (a Reshape of a scalar condition removed): then the flag
     * is what an If reads as its own condition */
    for (int32_t m = 0; side == NULL && m < g->n_nodes; m++) {
        const tc__node *s = &g->nodes[m];
        const size_t sl = strlen(s->name);
        const bool flag_node = (sl > 9 && strcmp(s->name + sl - 9, "/then_run") == 0) ||
                               (sl > 9 && strcmp(s->name + sl - 9, "/else_run") == 0); /* run flags, not an If */
        if (strcmp(s->op_type, "If") != 0 || s->n_op_in < 4 || flag_node) continue;
        for (int k = 0; k < 2 && side == NULL; k++)
            if (s->in[k] == node->in[node->guard] && strlen(s->name) < sizeof if_name) {
                strcpy(if_name, s->name);
                side = k == 0 ? "then" : "else";
            }
    }
    const char *parent = "";
    int parent_depth = 0;
    for (int32_t m = 0; side != NULL && m < g->n_nodes; m++) /* the If this flag belongs to: its own branch */
        if (m != n && strcmp(g->nodes[m].op_type, "If") == 0 && strcmp(g->nodes[m].name, if_name) == 0) {
            tc_status st = label_of(g, m, label, depth, level + 1, err);
            if (st) return st;
            parent = label[m], parent_depth = depth[m];
            break;
        }
    char buf[1024];
    if (side == NULL) snprintf(buf, sizeof buf, "under '%s'", flag);
    else snprintf(buf, sizeof buf, "%s%s%s:%s", parent, parent[0] ? " > " : "", if_name, side);
    label[n] = tc__arena_strdup(&g->arena, buf);
    if (label[n] == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    depth[n] = parent_depth + 1;
    return TC_STATUS_OK;
}

tc_status tc__branch_labels(tc__graph *g, const char **label, int *depth, tc__err *err) {
    for (int32_t n = 0; n < g->n_nodes; n++) depth[n] = -1;
    tc_status st = TC_STATUS_OK;
    for (int32_t n = 0; n < g->n_nodes && st == TC_STATUS_OK; n++) st = label_of(g, n, label, depth, 0, err);
    return st;
}
