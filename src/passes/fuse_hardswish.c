/*
 * fuse_hardswish.c - rewrites HardSwish as exporters write it without the operator (Paddle's MobileNetV3 exports, and
 * PyTorch's before opset 14) into one HardSwish node, which fuse_activation then puts into its producer's epilogue:
 *     a = x + 3, c = Clip(a, 0, 6) (bounds as inputs or attributes),
 *     y = (x * c) / 6  |  (x * c) * (1/6)  |  x * (c / 6)  |  x * (c * (1/6)),
 * with operands of the commutative ops in either order. Every intermediate value must be used only inside the
 * pattern; x may have other consumers.
 */
#include "passes/passes.h"
#include "passes/pattern.h"

#define TOL 1e-5

/* If node n divides some value by 6 (Div by 6, or Mul by 1/6 either order), returns that value; else -1. */
static int32_t sixth(const tc__graph *g, int32_t n, int32_t max_rank) {
    const int32_t v = tc__pat_with_scalar(g, n, "Div", 6.0, TOL, true, max_rank);
    return v >= 0 ? v : tc__pat_with_scalar(g, n, "Mul", 1.0 / 6.0, TOL, false, max_rank);
}

/* True when Clip node n clamps to [0, 6]: bounds as constant inputs (opset 11+) or attributes (before). */
static bool clips_0_6(const tc__graph *g, int32_t n, int32_t max_rank) {
    const tc__node *node = &g->nodes[n];
    if (!tc__pat_is(node, "Clip") || !tc__pat_plain(node) || node->n_op_in < 1) return false;
    if (node->n_op_in == 3)
        return node->in[1] >= 0 && node->in[2] >= 0 && tc__pat_scalar_near(g, node->in[1], 0.0, TOL, max_rank) &&
               tc__pat_scalar_near(g, node->in[2], 6.0, TOL, max_rank);
    if (node->n_op_in != 1) return false;
    const float lo = tc__attr_float(&node->attrs, "min", -1.0f), hi = tc__attr_float(&node->attrs, "max", -1.0f);
    return lo == 0.0f && hi == 6.0f;
}

/* Matches from Clip node cn. On success returns the node computing y (which becomes the HardSwish) and lists the other
 * pattern nodes in others[0..*n_others); x in *x_out. */
static int32_t match(const tc__graph *g, int32_t cn, int32_t *x_out, int32_t *others, int *n_others) {
    const tc__node *clip = &g->nodes[cn];
    if (clip->n_out != 1 || clip->in[0] < 0) return -1;
    const int32_t av = clip->in[0], an = tc__pat_producer(g, av, NULL);
    if (an < 0 || !tc__pat_single_use(g, av)) return -1;
    const int32_t x = tc__pat_with_scalar(g, an, "Add", 3.0, TOL, false, TC_MAX_RANK);
    if (x < 0) return -1;
    /* scalar constants of rank <= rank(x) broadcast without changing x's shape */
    const int32_t xrank = g->values[x].info.shape.rank;
    if (xrank < 0 || g->values[av].info.shape.rank != xrank || !clips_0_6(g, cn, xrank)) return -1;
    const int32_t cv = clip->out[0], n1 = tc__pat_sole_consumer(g, cv);
    if (n1 < 0 || g->nodes[n1].n_out != 1) return -1;
    const int32_t v1 = g->nodes[n1].out[0];
    int32_t last = -1;
    const int k = tc__pat_is(&g->nodes[n1], "Mul") ? tc__pat_operand_of(&g->nodes[n1], cv) : -1;
    if (k >= 0 && g->nodes[n1].in[1 - k] == x) { /* (x * c) / 6 */
        const int32_t n2 = tc__pat_sole_consumer(g, v1);
        if (n2 >= 0 && sixth(g, n2, xrank) == v1) last = n2;
    } else if (sixth(g, n1, xrank) == cv) { /* x * (c / 6) */
        const int32_t n2 = tc__pat_sole_consumer(g, v1);
        const int k2 = n2 >= 0 && tc__pat_is(&g->nodes[n2], "Mul") ? tc__pat_operand_of(&g->nodes[n2], v1) : -1;
        if (k2 >= 0 && g->nodes[n2].in[1 - k2] == x) last = n2;
    }
    if (last < 0 || g->nodes[last].n_out != 1 || g->nodes[last].out[0] < 0) return -1;
    if (g->values[g->nodes[last].out[0]].info.shape.rank != xrank) return -1;
    *n_others = 0;
    others[(*n_others)++] = an;
    others[(*n_others)++] = cn;
    others[(*n_others)++] = n1;
    *x_out = x;
    return last;
}

/* Turns node n into HardSwish(x). */
static tc_status make_hardswish(tc__graph *g, int32_t n, int32_t x, tc__err *err) {
    tc__node *node = &g->nodes[n];
    int32_t *in = tc__arena_alloc(&g->arena, sizeof(int32_t), 4);
    const char *op = tc__arena_strdup(&g->arena, "HardSwish");
    if (in == NULL || op == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    in[0] = x;
    node->op_type = op;
    node->domain = "";
    node->in = in;
    node->n_in = node->n_op_in = 1;
    node->attrs = (tc__attrs){.n = 0, .items = NULL};
    node->schema = tc__op_schema_find("", "HardSwish");
    if (node->schema == NULL) return tc__fail(err, TC_STATUS_INTERNAL, "no schema for HardSwish");
    return TC_STATUS_OK;
}

tc_status tc__pass_fuse_hardswish(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].removed || !tc__pat_is(&g->nodes[n], "Clip")) continue;
        int32_t x = -1, others[4];
        int n_others = 0;
        const int32_t last = match(g, n, &x, others, &n_others);
        if (last < 0 || !tc__pat_is_float(g, x)) continue;
        for (int k = 0; k < n_others; k++) g->nodes[others[k]].removed = true;
        tc_status st = make_hardswish(g, last, x, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
