/* model_fold_if.c - at model load, before the op check: every If whose condition is known once constants are
 * evaluated (a Constant, or shape arithmetic on static dims) is replaced by the branch it takes, round after round
 * (a branch may hold another If), so that only what remains is checked. When a round folds nothing, every If left is
 * decided at run time: it is predicated (model_predicate_if.c), and the rounds go on with the Ifs of its branches. */
#include <stdio.h>
#include <string.h>

#include "engine/model.h"
#include "engine/ref_node.h"
#include "onnx/onnx_import.h"

/* Most rounds of inlining (If nested in a branch, nested ...): a bound against hostile files. */
#define TC__MAX_IF_ROUNDS 64

/* An If as imported: its branches still graph attributes (a predicated one has none). */
static bool is_if(const tc__node *node) {
    return strcmp(node->op_type, "If") == 0 && (node->domain[0] == '\0' || strcmp(node->domain, "ai.onnx") == 0) &&
           tc__attr_find(&node->attrs, "then_branch") != NULL;
}

/* The condition of If node `node` when inference knows it: 1 true, 0 false, -1 unknown. */
static int known_cond(const tc__graph *g, const tc__node *node) {
    const int k = strcmp(node->op_type, "Loop") == 0; /* a Loop's condition is its input 1 */
    if (node->n_in < k + 1 || node->in[k] < 0) return -1;
    const tc__tensor *t = g->values[node->in[k]].info.value;
    if (t == NULL || tc__tensor_numel(t) != 1) return -1;
    if (t->dtype == TC_DTYPE_BOOL) return ((const uint8_t *)t->data)[0] != 0;
    return tc__dtype_is_int(t->dtype) ? tc__tensor_get_i64(t, 0) != 0 : -1;
}

/* A Loop as imported, not yet given up on (tc.why: the reason it cannot be unrolled, for the op check's message). */
static bool is_loop(const tc__node *node) {
    return strcmp(node->op_type, "Loop") == 0 && (node->domain[0] == '\0' || strcmp(node->domain, "ai.onnx") == 0) &&
           tc__attr_find(&node->attrs, "body") != NULL && tc__attr_find(&node->attrs, TC__ATTR_WHY) == NULL;
}

bool tc__model_has_if(const tc__graph *g) {
    for (int n = 0; n < g->n_nodes; n++)
        if (is_if(&g->nodes[n]) || is_loop(&g->nodes[n])) return true;
    return false;
}

/* Records on node n why it stays (attribute TC__ATTR_WHY, which the op check's message quotes). */
static tc_status note_why(tc__graph *g, int32_t n, const char *why, tc__err *err) {
    tc__node *node = &g->nodes[n];
    tc__attr *items = tc__arena_alloc(&g->arena, sizeof *items * (size_t)(node->attrs.n + 1), 8);
    const char *s = tc__arena_strdup(&g->arena, why);
    if (items == NULL || s == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (node->attrs.n) memcpy(items, node->attrs.items, sizeof *items * (size_t)node->attrs.n);
    items[node->attrs.n] = (tc__attr){.name = TC__ATTR_WHY, .kind = TC__ATTR_STRING, .s = s};
    node->attrs = (tc__attrs){.n = node->attrs.n + 1, .items = items};
    return TC_STATUS_OK;
}

/* Unrolls Loop node n when its trip count is known and its condition absent or known (1: unrolled, 0: left, with
 * its reason noted when final; <0 never: errors go to the status). */
static tc_status try_unroll(tc__graph *g, int32_t n, bool final, int *unrolled, tc__err *err) {
    *unrolled = 0;
    const tc__node *node = &g->nodes[n];
    const tc__tensor *m = node->n_op_in > 0 && node->in[0] >= 0 ? g->values[node->in[0]].info.value : NULL;
    const int c = node->n_op_in > 1 && node->in[1] >= 0 ? known_cond(g, node) : 1;
    const bool m_known = m != NULL && tc__tensor_numel(m) == 1 && tc__dtype_is_int(m->dtype);
    if (!m_known || c < 0) {
        if (!final) return TC_STATUS_OK;
        char why[400];
        snprintf(why, sizeof why, "Loop '%s': %s is not known before the run (a Loop runs unrolled)", node->name,
                 !m_known ? "its trip count M" : "its condition");
        return note_why(g, n, why, err);
    }
    const int32_t first = g->n_nodes, guard = node->guard;
    tc_status st = tc__onnx_unroll_loop(g, n, c == 0 ? 0 : tc__tensor_get_i64(m, 0), err);
    if (st == TC_STATUS_UNSUPPORTED) { /* left for the op check, which quotes why */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        memset(err, 0, sizeof *err);
        return note_why(g, n, why, err);
    }
    if (st == TC_STATUS_OK && guard >= 0) st = tc__model_guard_nodes(g, first, g->n_nodes, g->nodes[n].in[guard], err);
    *unrolled = st == TC_STATUS_OK;
    return st;
}

tc_status tc__model_fold_ifs(tc__graph *g, tc__err *err) {
    for (int round = 0; round < TC__MAX_IF_ROUNDS; round++) {
        /* Structure first, then values: unsupported nodes are let through here and checked by the caller. */
        tc_status st = tc__graph_verify(g, true, err);
        if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, true, tc__ref_eval, &g->opset, err);
        if (st) return st;
        int folded = 0;
        const int n_nodes = g->n_nodes; /* inlining appends nodes after these */
        int left = 0;
        for (int n = 0; n < n_nodes && st == TC_STATUS_OK; n++) {
            int unrolled = 0;
            if (is_loop(&g->nodes[n])) st = try_unroll(g, n, false, &unrolled, err);
            folded += unrolled;
            if (!is_if(&g->nodes[n])) continue;
            int c = known_cond(g, &g->nodes[n]);
            if (c < 0) {
                left++;
                continue;
            }
            const int32_t first = g->n_nodes, guard = g->nodes[n].guard;
            st = tc__onnx_inline_if(g, n, c == 1, err);
            /* the nodes of a branch of a predicated If's branch run under its flag */
            if (st == TC_STATUS_OK && guard >= 0)
                st = tc__model_guard_nodes(g, first, g->n_nodes, g->nodes[n].in[guard], err);
            folded++;
        }
        /* none could be folded: the rest are decided at run time; Loops not unrolled by now stay (noting why) */
        int predicated = 0;
        for (int n = 0; n < n_nodes && st == TC_STATUS_OK && folded == 0 && left > 0; n++) {
            /* a condition of unknown type comes from a node the op check refuses: the If stays as it is */
            const tc__node *node = &g->nodes[n];
            if (!is_if(node) || node->n_op_in < 1 || node->in[0] < 0 ||
                g->values[node->in[0]].info.dtype == TC_DTYPE_UNDEFINED)
                continue;
            st = tc__model_predicate_if(g, n, err);
            predicated++;
        }
        if (folded == 0 && predicated == 0) left = 0; /* nothing more to do with the Ifs left */
        for (int n = 0; n < n_nodes && st == TC_STATUS_OK && folded == 0 && left == 0; n++) {
            int unrolled = 0;
            if (is_loop(&g->nodes[n])) st = try_unroll(g, n, true, &unrolled, err);
        }
        if (st) return st;
        if (folded == 0 && left == 0) return TC_STATUS_OK;
        tc__graph_compact(g);
        if ((st = tc__graph_toposort(g, err))) return st;
    }
    return tc__fail(err, TC_STATUS_UNSUPPORTED, "If nodes nest more than %d deep", TC__MAX_IF_ROUNDS);
}
