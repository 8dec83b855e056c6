/* graph.c - creation and growth of the graph IR: values, nodes, symbols. */
#include "graph/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc__vinfo_init(tc__vinfo *v) {
    memset(v, 0, sizeof *v);
    v->dtype = TC_DTYPE_UNDEFINED;
    v->shape.rank = TC__RANK_UNKNOWN;
    v->symval_len = -1;
}

bool tc__shape_is_concrete(const tc__shape *s) {
    if (s->rank < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->dims[i].value < 0) return false;
    return true;
}

tc__graph *tc__graph_create(void) {
    tc__graph *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->name = "";
    g->producer_name = "";
    return g;
}

void tc__graph_warn(tc__graph *g, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g->n_warnings >= TC__GRAPH_MAX_WARNINGS) return;
    for (int i = 0; i < g->n_warnings; i++)
        if (strcmp(g->warnings[i], msg) == 0) return;
    const char *copy = tc__arena_strdup(&g->arena, msg);
    if (copy != NULL) g->warnings[g->n_warnings++] = copy;
}

void tc__graph_destroy(tc__graph *g) {
    if (g == NULL) return;
    free(g->values);
    free(g->nodes);
    free(g->symbols);
    free(g->name_index);
    tc__arena_free(&g->arena);
    free(g);
}

/* Grows a heap array of elem-size items to hold at least need items. */
static int grow(void **arr, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    int ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > (1 << 28)) return -1;
        ncap *= 2;
    }
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (p == NULL) return -1;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 0;
}

/* FNV-1a of a NUL-terminated string. */
static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Rebuilds the name index with room for at least twice the values. */
static int reindex(tc__graph *g, int need) {
    int cap = g->cap_index ? g->cap_index : 64;
    while (cap < 2 * need) {
        if (cap > (1 << 29)) return -1;
        cap *= 2;
    }
    if (cap == g->cap_index) return 0;
    int32_t *idx = calloc((size_t)cap, sizeof(int32_t));
    if (idx == NULL) return -1;
    for (int v = 0; v < g->n_values; v++) {
        uint32_t h = name_hash(g->values[v].name) & (uint32_t)(cap - 1);
        while (idx[h]) h = (h + 1) & (uint32_t)(cap - 1);
        idx[h] = v + 1;
    }
    free(g->name_index);
    g->name_index = idx;
    g->cap_index = cap;
    return 0;
}

int32_t tc__graph_find_value(const tc__graph *g, const char *name) {
    if (g->cap_index == 0) return -1;
    uint32_t mask = (uint32_t)(g->cap_index - 1);
    for (uint32_t h = name_hash(name) & mask;; h = (h + 1) & mask) {
        int32_t e = g->name_index[h];
        if (e == 0) return -1;
        if (strcmp(g->values[e - 1].name, name) == 0) return e - 1;
    }
}

tc_status tc__graph_add_value(tc__graph *g, const char *name, int32_t *out, tc__err *err) {
    if (tc__graph_find_value(g, name) >= 0)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "tensor name '%s' is defined twice", name);
    if (grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof(tc__value)) ||
        reindex(g, g->n_values + 1))
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name);
    tc__value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = tc__arena_strdup(&g->arena, name);
    if (v->name == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    tc__vinfo_init(&v->info);
    v->producer = -1;
    uint32_t mask = (uint32_t)(g->cap_index - 1), h = name_hash(v->name) & mask;
    while (g->name_index[h]) h = (h + 1) & mask;
    g->name_index[h] = g->n_values + 1;
    *out = g->n_values++;
    return TC_STATUS_OK;
}

tc_status tc__graph_value_by_name(tc__graph *g, const char *name, int32_t *out, tc__err *err) {
    int32_t i = tc__graph_find_value(g, name);
    if (i >= 0) {
        *out = i;
        return TC_STATUS_OK;
    }
    return tc__graph_add_value(g, name, out, err);
}

tc_status tc__graph_add_node(tc__graph *g, const char *name, const char *op_type, const char *domain,
                             int n_in, int n_out, int32_t *out_index, tc__err *err) {
    if (n_in < 0 || n_out < 0 || n_in > 1 << 20 || n_out > 1 << 20)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': bad input/output count", name ? name : "");
    if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(tc__node)))
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory adding a node");
    tc__node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    char gen[64];
    if (name == NULL || name[0] == '\0') {
        snprintf(gen, sizeof gen, "%s_%d", op_type ? op_type : "node", g->n_nodes);
        name = gen;
    }
    n->name = tc__arena_strdup(&g->arena, name);
    n->op_type = tc__arena_strdup(&g->arena, op_type ? op_type : "");
    n->domain = tc__arena_strdup(&g->arena, domain ? domain : "");
    n->n_in = n_in;
    n->n_op_in = n_in;
    n->n_out = n_out;
    n->epi = tc__epilogue_none();
    n->fused = "";
    n->guard = -1;
    n->in = tc__arena_alloc(&g->arena, sizeof(int32_t) * (size_t)(n_in ? n_in : 1), 4);
    n->out = tc__arena_alloc(&g->arena, sizeof(int32_t) * (size_t)(n_out ? n_out : 1), 4);
    if (!n->name || !n->op_type || !n->domain || !n->in || !n->out)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory adding node '%s'", name);
    for (int i = 0; i < n_in; i++) n->in[i] = -1;
    for (int i = 0; i < n_out; i++) n->out[i] = -1;
    n->schema = tc__op_schema_find(n->domain, n->op_type);
    *out_index = g->n_nodes++;
    return TC_STATUS_OK;
}

tc_status tc__graph_node_add_input(tc__graph *g, int32_t n, int32_t v, int *index, tc__err *err) {
    tc__node *node = &g->nodes[n];
    if (node->n_in >= 120) return tc__fail(err, TC_STATUS_INTERNAL, "node '%s': too many inputs", node->name);
    int32_t *in = tc__arena_alloc(&g->arena, sizeof(int32_t) * (size_t)(node->n_in + 1), 4);
    if (in == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (node->n_in) memcpy(in, node->in, sizeof(int32_t) * (size_t)node->n_in);
    in[node->n_in] = v;
    node->in = in;
    *index = node->n_in++;
    return TC_STATUS_OK;
}

tc_status tc__graph_node_note_fused(tc__graph *g, int32_t n, const char *op_type, tc__err *err) {
    tc__node *node = &g->nodes[n];
    size_t a = strlen(node->fused), b = strlen(op_type);
    char *s = tc__arena_alloc(&g->arena, a + b + 2, 1);
    if (s == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    memcpy(s, node->fused, a);
    size_t k = a;
    if (a) s[k++] = '+';
    memcpy(s + k, op_type, b);
    s[k + b] = '\0';
    node->fused = s;
    return TC_STATUS_OK;
}

int32_t tc__graph_symbol(tc__graph *g, const char *name) {
    for (int i = 0; i < g->n_symbols; i++)
        if (strcmp(g->symbols[i], name) == 0) return i;
    if (grow((void **)&g->symbols, &g->cap_symbols, g->n_symbols + 1, sizeof(char *))) return -1;
    const char *s = tc__arena_strdup(&g->arena, name);
    if (s == NULL) return -1;
    g->symbols[g->n_symbols] = s;
    return g->n_symbols++;
}

const char *tc__graph_shape_str(const tc__graph *g, const tc__shape *s, char *buf, size_t size) {
    if (size == 0) return buf;
    buf[0] = '\0';
    if (s->rank < 0) {
        snprintf(buf, size, "?");
        return buf;
    }
    if (s->rank == 0) {
        snprintf(buf, size, "scalar");
        return buf;
    }
    size_t off = 0;
    for (int32_t i = 0; i < s->rank && off < size; i++) {
        const tc__dim d = s->dims[i];
        int w;
        if (d.value >= 0)
            w = snprintf(buf + off, size - off, "%s%lld", i ? "x" : "", (long long)d.value);
        else if (g != NULL && d.sym >= 0 && d.sym < g->n_symbols)
            w = snprintf(buf + off, size - off, "%s%s", i ? "x" : "", g->symbols[d.sym]);
        else
            w = snprintf(buf + off, size - off, "%s?", i ? "x" : "");
        if (w < 0) break;
        off += (size_t)w;
    }
    return buf;
}

void tc__graph_io_info(const tc__graph *g, int32_t v, tc_io_info *info) {
    const tc__value *val = &g->values[v];
    memset(info, 0, sizeof *info);
    info->name = val->name;
    info->dtype = val->info.dtype;
    info->rank = val->info.shape.rank;
    for (int32_t i = 0; i < info->rank && i < TC_MAX_RANK; i++) {
        tc__dim d = val->info.shape.dims[i];
        info->dims[i] = d.value >= 0 ? d.value : -1;
        info->dim_names[i] = (d.value < 0 && d.sym >= 0 && d.sym < g->n_symbols) ? g->symbols[d.sym] : NULL;
    }
}
