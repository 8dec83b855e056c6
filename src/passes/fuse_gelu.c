/*
 * fuse_gelu.c - rewrites the exact (Erf) GELU as exporters write it into one Gelu node
 * (approximate = "none"):
 *     d = x / 1.41421 (or x * 0.70710), e = Erf(d), a = e + 1,
 *     y = (x * 0.5) * a  |  (x * a) * 0.5  |  x * (a * 0.5)     (halving may be Div by 2),
 * with operands of the commutative ops in either order. Every intermediate value must be
 * used only inside the pattern; x may have other consumers.
 */
#include <math.h>

#include "passes/passes.h"
#include "passes/pattern.h"

#define TOL 1e-4

/* If node n halves some value (Mul by 0.5 either order, or Div by 2), returns that value; else -1. */
static int32_t halves(const tc__graph *g, int32_t n, int32_t max_rank) {
    int32_t v = tc__pat_with_scalar(g, n, "Mul", 0.5, TOL, false, max_rank);
    return v >= 0 ? v : tc__pat_with_scalar(g, n, "Div", 2.0, TOL, true, max_rank);
}

/* The other operand of the plain Mul node m, given one of them; -1 when m is not such a Mul. */
static int32_t mul_other(const tc__graph *g, int32_t m, int32_t v) {
    if (m < 0 || !tc__pat_is(&g->nodes[m], "Mul")) return -1;
    int k = tc__pat_operand_of(&g->nodes[m], v);
    if (k < 0) return -1;
    return g->nodes[m].in[1 - k];
}

/*
 * Matches from Erf node e. On success returns the node computing y (which becomes the Gelu) and
 * lists the other pattern nodes in others[0..*n_others); x in *x_out.
 */
static int32_t match(const tc__graph *g, int32_t e, int32_t *x_out, int32_t *others, int *n_others) {
    const tc__node *en = &g->nodes[e];
    if (en->n_op_in != 1 || !tc__pat_plain(en) || en->n_out != 1 || en->in[0] < 0) return -1;
    int32_t dv = en->in[0];
    int32_t dn = tc__pat_producer(g, dv, NULL);
    if (dn < 0 || !tc__pat_single_use(g, dv)) return -1;
    int32_t x = tc__pat_with_scalar(g, dn, "Div", sqrt(2.0), TOL, true, TC_MAX_RANK);
    if (x < 0) x = tc__pat_with_scalar(g, dn, "Mul", sqrt(0.5), TOL, false, TC_MAX_RANK);
    if (x < 0) return -1;
    /* Scalar constants of rank <= rank(x) broadcast without changing x's shape, so every value of
     * the pattern has x's shape whether or not its dims are known. */
    const int32_t xrank = g->values[x].info.shape.rank;
    if (xrank < 0 || g->values[dv].info.shape.rank != xrank) return -1;
    /* a = e + 1 */
    int32_t ev = en->out[0];
    int32_t an = tc__pat_sole_consumer(g, ev);
    if (an < 0 || tc__pat_with_scalar(g, an, "Add", 1.0, TOL, false, xrank) != ev) return -1;
    int32_t av = g->nodes[an].out[0];
    int32_t m1 = tc__pat_sole_consumer(g, av);
    int32_t m1_other = mul_other(g, m1, av);
    if (m1_other < 0 || g->nodes[m1].n_out != 1) return -1;
    int32_t m1v = g->nodes[m1].out[0];
    int32_t last = -1, extra = -1;
    if (m1_other == x) {
        /* (x * a) * 0.5 */
        int32_t h = tc__pat_sole_consumer(g, m1v);
        if (h >= 0 && halves(g, h, xrank) == m1v) last = h;
    } else if (tc__pat_scalar_near(g, m1_other, 0.5, TOL, xrank)) {
        /* x * (a * 0.5) */
        int32_t h = tc__pat_sole_consumer(g, m1v);
        if (h >= 0 && mul_other(g, h, m1v) == x) last = h;
    } else {
        /* (x * 0.5) * a: m1_other is x halved */
        int32_t h = tc__pat_producer(g, m1_other, NULL);
        if (h >= 0 && halves(g, h, xrank) == x && tc__pat_single_use(g, m1_other)) {
            last = m1;
            extra = h;
        }
    }
    if (last < 0 || g->nodes[last].n_out != 1 || g->nodes[last].out[0] < 0) return -1;
    if (g->values[g->nodes[last].out[0]].info.shape.rank != xrank) return -1;
    *n_others = 0;
    others[(*n_others)++] = dn;
    others[(*n_others)++] = e;
    others[(*n_others)++] = an;
    if (last != m1) others[(*n_others)++] = m1;
    if (extra >= 0) others[(*n_others)++] = extra;
    *x_out = x;
    return last;
}

/* Turns node n into Gelu(x, approximate="none"). */
static tc_status make_gelu(tc__graph *g, int32_t n, int32_t x, tc__err *err) {
    tc__node *node = &g->nodes[n];
    int32_t *in = tc__arena_alloc(&g->arena, sizeof(int32_t), 4);
    tc__attr *attr = tc__arena_alloc(&g->arena, sizeof(tc__attr), 8);
    const char *op = tc__arena_strdup(&g->arena, "Gelu");
    if (in == NULL || attr == NULL || op == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    in[0] = x;
    *attr = (tc__attr){.name = "approximate", .kind = TC__ATTR_STRING, .s = "none"};
    node->op_type = op;
    node->domain = "";
    node->in = in;
    node->n_in = node->n_op_in = 1;
    node->attrs = (tc__attrs){.n = 1, .items = attr};
    node->schema = tc__op_schema_find("", "Gelu");
    if (node->schema == NULL) return tc__fail(err, TC_STATUS_INTERNAL, "no schema for Gelu");
    return TC_STATUS_OK;
}

tc_status tc__pass_fuse_gelu(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (!tc__pat_is(&g->nodes[n], "Erf")) continue;
        int32_t x = -1, others[8];
        int n_others = 0;
        int32_t last = match(g, n, &x, others, &n_others);
        if (last < 0 || !tc__pat_is_float(g, x)) continue;
        for (int k = 0; k < n_others; k++) g->nodes[others[k]].removed = true;
        tc_status st = make_gelu(g, last, x, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
