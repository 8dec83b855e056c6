/* plan_write.c - serializes a graph, its weights and an engine blob into one model.plan buffer
 * (layout in plan_format.h); deterministic: the same input gives the same bytes. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/plan_format.h"

/* A growable byte buffer; every byte it hands out is zeroed. */
typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} wbuf;

/* Appends n zero bytes (aligned to align first, a power of two) and returns their offset; on
 * failure sets oom and returns 0. */
static size_t wbuf_take(wbuf *b, size_t n, size_t align) {
    if (b->oom) return 0;
    size_t off = (b->len + (align - 1)) & ~(align - 1);
    size_t end;
    if (off < b->len || __builtin_add_overflow(off, n, &end)) {
        b->oom = true;
        return 0;
    }
    if (end > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < end) {
            if (ncap > SIZE_MAX / 2) {
                b->oom = true;
                return 0;
            }
            ncap *= 2;
        }
        uint8_t *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->oom = true;
            return 0;
        }
        b->p = np;
        b->cap = ncap;
    }
    memset(b->p + b->len, 0, end - b->len);
    b->len = end;
    return off;
}

static size_t wbuf_put(wbuf *b, const void *src, size_t n, size_t align) {
    size_t off = wbuf_take(b, n, align);
    if (!b->oom && n) memcpy(b->p + off, src, n);
    return off;
}

/* The STRINGS section under construction: each distinct string once, in first-use order. */
typedef struct strtab {
    wbuf bytes;
    uint32_t *slots; /* open addressing: string offset + 1, 0 = empty */
    size_t n_slots, n_used;
    bool too_big;
} strtab;

static bool strtab_grow(strtab *t) {
    size_t n = t->n_slots ? t->n_slots * 2 : 256;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL) return false;
    for (size_t i = 0; i < t->n_slots; i++) {
        if (t->slots[i] == 0) continue;
        const char *str = (const char *)t->bytes.p + (t->slots[i] - 1);
        size_t h = (size_t)XXH3_64bits(str, strlen(str)) & (n - 1);
        while (s[h] != 0) h = (h + 1) & (n - 1);
        s[h] = t->slots[i];
    }
    free(t->slots);
    t->slots = s;
    t->n_slots = n;
    return true;
}

/* Returns the string reference of s (NULL counts as ""); sets bytes.oom or too_big on failure. */
static uint32_t strtab_ref(strtab *t, const char *s) {
    if (s == NULL) s = "";
    if (t->bytes.oom || t->too_big) return 0;
    if (2 * (t->n_used + 1) > t->n_slots && !strtab_grow(t)) {
        t->bytes.oom = true;
        return 0;
    }
    size_t len = strlen(s);
    size_t mask = t->n_slots - 1, h = (size_t)XXH3_64bits(s, len) & mask;
    for (; t->slots[h] != 0; h = (h + 1) & mask) {
        const char *have = (const char *)t->bytes.p + (t->slots[h] - 1);
        if (strcmp(have, s) == 0) return t->slots[h] - 1;
    }
    size_t off = wbuf_put(&t->bytes, s, len + 1, 1);
    if (t->bytes.oom) return 0;
    if (off >= UINT32_MAX) {
        t->too_big = true;
        return 0;
    }
    t->slots[h] = (uint32_t)off + 1;
    t->n_used++;
    return (uint32_t)off;
}

/* Everything the writer builds before assembling the file. */
typedef struct writer {
    const tc__graph *g;
    strtab strings;
    wbuf weights;
    wbuf tables[TC__PLAN_TABLE_COUNT_];
    uint32_t counts[TC__PLAN_TABLE_COUNT_];
    tc__err *err;
} writer;

static const uint32_t kStride[TC__PLAN_TABLE_COUNT_] = {
    [TC__PLAN_TABLE_SYMBOLS] = sizeof(tc__plan_symbol), [TC__PLAN_TABLE_VALUES] = sizeof(tc__plan_value),
    [TC__PLAN_TABLE_INPUTS] = sizeof(tc__plan_index),   [TC__PLAN_TABLE_OUTPUTS] = sizeof(tc__plan_index),
    [TC__PLAN_TABLE_NODES] = sizeof(tc__plan_node),     [TC__PLAN_TABLE_NODE_IO] = sizeof(tc__plan_index),
    [TC__PLAN_TABLE_ATTRS] = sizeof(tc__plan_attr),     [TC__PLAN_TABLE_TENSORS] = sizeof(tc__plan_tensor),
};

/* Appends one zeroed record to table id and returns a pointer to it (valid until the next append), or NULL. */
static void *add_record(writer *w, tc__plan_table_id id) {
    if (w->counts[id] == UINT32_MAX) {
        w->tables[id].oom = true;
        return NULL;
    }
    size_t off = wbuf_take(&w->tables[id], kStride[id], 1); /* strides keep records aligned */
    if (w->tables[id].oom) return NULL;
    w->counts[id]++;
    return w->tables[id].p + off;
}

static bool add_index(writer *w, tc__plan_table_id id, int32_t v) {
    tc__plan_index *r = add_record(w, id);
    if (r == NULL) return false;
    r->value = v;
    return true;
}

/* Checks a tensor the plan will store and appends its record and data; index in *out. */
/* may_pack: t may be a tactic's packed weight (an initializer), with other bytes than its dims need. */
static tc_status add_tensor(writer *w, const tc__tensor *t, const char *what, bool may_pack, int32_t *out) {
    tc__err *err = w->err;
    if (t == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: tensor is NULL", what);
    size_t es = tc_dtype_size(t->dtype);
    if (es == 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: unsupported data type %d", what, (int)t->dtype);
    if (t->rank < 0 || t->rank > TC_MAX_RANK)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", what, (int)t->rank,
                        TC_MAX_RANK);
    int64_t numel = tc__numel(t->rank, t->dims);
    char shape[160];
    if (numel < 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: invalid or too large shape %s", what,
                        tc__shape_str(t->rank, t->dims, shape, sizeof shape));
    /* other bytes: a tactic's packed weight (an initializer the engine packed), flagged so */
    const bool packed = may_pack && tc__plan_packed_size_ok(t->nbytes, (uint64_t)numel * es);
    if ((uint64_t)numel * es != t->nbytes && !packed)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: %s %s needs %llu bytes, the tensor has %zu", what,
                        tc_dtype_name(t->dtype), tc__shape_str(t->rank, t->dims, shape, sizeof shape),
                        (unsigned long long)numel * es, t->nbytes);
    if (t->nbytes > 0 && t->data == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: %zu bytes of data but no buffer", what, t->nbytes);
    if (w->counts[TC__PLAN_TABLE_TENSORS] >= INT32_MAX)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "too many tensors for a plan");
    size_t off = wbuf_put(&w->weights, t->data, t->nbytes, TC__PLAN_ALIGN);
    int32_t index = (int32_t)w->counts[TC__PLAN_TABLE_TENSORS];
    tc__plan_tensor *r = add_record(w, TC__PLAN_TABLE_TENSORS);
    if (r == NULL || w->weights.oom) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing %s", what);
    r->dtype = (int32_t)t->dtype;
    r->rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) r->dims[i] = t->dims[i];
    r->offset = off;
    r->nbytes = t->nbytes;
    r->flags = packed ? TC__PLAN_TENSOR_PACKED : 0;
    *out = index;
    return TC_STATUS_OK;
}

/* Checks the graph-level invariants the reader enforces, so that every written plan loads. */
static tc_status check_graph(const tc__graph *g, tc__err *err) {
    if (g->n_values < 0 || g->n_nodes < 0 || g->n_inputs < 0 || g->n_outputs < 0 || g->n_symbols < 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "graph has a negative count");
    if (g->opset <= 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "graph has no default-domain opset (got %lld)",
                        (long long)g->opset);
    if (g->n_outputs == 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "graph has no outputs");
    for (int k = 0; k < g->n_inputs; k++)
        if (g->inputs[k] < 0 || g->inputs[k] >= g->n_values || !g->values[g->inputs[k]].is_input)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "graph input %d refers to no input tensor (index %d)", k,
                            (int)g->inputs[k]);
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] < 0 || g->outputs[k] >= g->n_values || !g->values[g->outputs[k]].is_output)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "graph output %d refers to no output tensor (index %d)",
                            k, (int)g->outputs[k]);
    size_t nv = g->n_values > 0 ? (size_t)g->n_values : 1;
    bool *produced = calloc(nv, sizeof *produced);
    if (produced == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory checking the graph");
    tc_status st = TC_STATUS_OK;
    for (int n = 0; n < g->n_nodes && st == TC_STATUS_OK; n++) {
        const tc__node *node = &g->nodes[n];
        const char *name = node->name ? node->name : "";
        if (node->removed) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                          "node '%s' is marked removed: compact the graph (tc__graph_compact) before writing a plan",
                          name);
            break;
        }
        if (node->n_in < 0 || node->n_out < 0 || node->n_in > (1 << 20) || node->n_out > (1 << 20) ||
            node->n_op_in < 0 || node->n_op_in > node->n_in || node->attrs.n < 0 || node->attrs.n > (1 << 20)) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                          "node '%s': bad counts (inputs %d, op inputs %d, outputs %d, attributes %d)", name,
                          node->n_in, node->n_op_in, node->n_out, node->attrs.n);
            break;
        }
        const tc__epilogue *e = &node->epi;
        if (node->guard != -1 && (node->guard < node->n_op_in || node->guard >= node->n_in || node->guard > 254)) {
            st = tc__fail(err, TC_STATUS_INTERNAL, "node '%s': guard input %d is not one of its inputs after the op's",
                          name, (int)node->guard);
            break;
        }
        if (e->bias_input < -1 || e->bias_input >= node->n_in || e->residual_input < -1 ||
            e->residual_input >= node->n_in || e->act >= TC__ACT_COUNT_) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                          "node '%s': epilogue (bias input %d, residual input %d, activation %d) does not fit its %d "
                          "inputs",
                          name, e->bias_input, e->residual_input, e->act, node->n_in);
            break;
        }
        for (int i = 0; i < node->n_in && st == TC_STATUS_OK; i++) {
            int32_t v = node->in[i];
            if (v == -1) continue;
            if (v < -1 || v >= g->n_values)
                st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "node '%s': input %d refers to no tensor (index %d)",
                              name, i, (int)v);
            else if (!produced[v] && g->values[v].init == NULL && !g->values[v].is_input)
                st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                              "node '%s': input %d '%s' is not produced before it: sort the graph "
                              "(tc__graph_toposort) before writing a plan",
                              name, i, g->values[v].name);
        }
        for (int o = 0; o < node->n_out && st == TC_STATUS_OK; o++) {
            int32_t v = node->out[o];
            if (v == -1) continue;
            if (v < -1 || v >= g->n_values)
                st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "node '%s': output %d refers to no tensor (index %d)",
                              name, o, (int)v);
            else if (produced[v] || g->values[v].init != NULL || g->values[v].is_input)
                st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                              "node '%s': output '%s' is also produced elsewhere (another node, an input or an "
                              "initializer)",
                              name, g->values[v].name);
            else
                produced[v] = true;
        }
    }
    free(produced);
    return st;
}

static tc_status write_values(writer *w, const bool *used) {
    const tc__graph *g = w->g;
    tc__err *err = w->err;
    for (int s = 0; s < g->n_symbols; s++) {
        tc__plan_symbol *r = add_record(w, TC__PLAN_TABLE_SYMBOLS);
        if (r == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing symbols");
        r->name = strtab_ref(&w->strings, g->symbols[s]);
    }
    for (int v = 0; v < g->n_values; v++) {
        const tc__value *val = &g->values[v];
        const char *name = val->name ? val->name : "";
        const tc__vinfo *info = &val->info;
        if (info->dtype != TC_DTYPE_UNDEFINED && !tc__dtype_valid(info->dtype))
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s': unknown data type %d", name,
                            (int)info->dtype);
        if (info->shape.rank < -1 || info->shape.rank > TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s': rank %d is outside -1..%d", name,
                            (int)info->shape.rank, TC_MAX_RANK);
        for (int32_t i = 0; i < info->shape.rank; i++) {
            int32_t sym = info->shape.dims[i].sym;
            if (sym < -1 || sym >= g->n_symbols)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s': dim %d names symbol %d of %d", name,
                                (int)i, (int)sym, g->n_symbols);
        }
        int32_t tensor = TC__PLAN_NONE;
        if (val->init != NULL && used[v]) {
            const tc__tensor *t = val->init;
            bool same = info->dtype == t->dtype && info->shape.rank == t->rank;
            for (int32_t i = 0; same && i < t->rank; i++) same = info->shape.dims[i].value == t->dims[i];
            if (!same) {
                char a[160], b[160];
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "initializer '%s': its value info says %s %s but its data is %s %s", name,
                                tc_dtype_name(info->dtype) ? tc_dtype_name(info->dtype) : "undefined",
                                tc__graph_shape_str(g, &info->shape, a, sizeof a),
                                tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "undefined",
                                tc__shape_str(t->rank, t->dims, b, sizeof b));
            }
            char what[320];
            snprintf(what, sizeof what, "initializer '%.256s'", name);
            tc_status st = add_tensor(w, t, what, true, &tensor);
            if (st) return st;
        }
        tc__plan_value *r = add_record(w, TC__PLAN_TABLE_VALUES);
        if (r == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing tensor '%s'", name);
        r->name = strtab_ref(&w->strings, name);
        r->dtype = (int32_t)info->dtype;
        r->rank = info->shape.rank;
        r->flags = (val->is_input ? TC__PLAN_VALUE_INPUT : 0u) | (val->is_output ? TC__PLAN_VALUE_OUTPUT : 0u);
        r->init_tensor = tensor;
        for (int32_t i = 0; i < info->shape.rank; i++) {
            r->dims[i].value = info->shape.dims[i].value >= 0 ? info->shape.dims[i].value : -1;
            r->dims[i].sym = info->shape.dims[i].sym;
        }
    }
    for (int k = 0; k < g->n_inputs; k++)
        if (!add_index(w, TC__PLAN_TABLE_INPUTS, g->inputs[k]))
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing graph inputs");
    for (int k = 0; k < g->n_outputs; k++)
        if (!add_index(w, TC__PLAN_TABLE_OUTPUTS, g->outputs[k]))
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing graph outputs");
    return TC_STATUS_OK;
}

/* Appends an attribute array's elements to WEIGHTS (8-byte aligned); offset in *off. */
static tc_status put_array(writer *w, const void *src, size_t n, size_t es, const char *what, uint64_t *off) {
    size_t bytes;
    if (tc__mul_overflow_size(n, es, &bytes))
        return tc__fail(w->err, TC_STATUS_INVALID_ARGUMENT, "%s: %zu elements overflow", what, n);
    if (n > 0 && src == NULL)
        return tc__fail(w->err, TC_STATUS_INVALID_ARGUMENT, "%s: %zu elements but no array", what, n);
    *off = n ? wbuf_put(&w->weights, src, bytes, TC__PLAN_ARRAY_ALIGN) : 0;
    return w->weights.oom ? tc__fail(w->err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing %s", what) : TC_STATUS_OK;
}

static tc_status write_attr(writer *w, const tc__node *node, const tc__attr *a) {
    tc__err *err = w->err;
    char what[600];
    snprintf(what, sizeof what, "node '%.256s': attribute '%.256s'", node->name ? node->name : "",
             a->name ? a->name : "");
    tc__plan_attr rec;
    memset(&rec, 0, sizeof rec);
    rec.name = strtab_ref(&w->strings, a->name);
    rec.kind = (uint32_t)a->kind;
    rec.tensor = TC__PLAN_NONE;
    tc_status st = TC_STATUS_OK;
    switch (a->kind) {
    case TC__ATTR_FLOAT: rec.f = a->f; break;
    case TC__ATTR_INT: rec.i = a->i; break;
    case TC__ATTR_STRING: rec.s = strtab_ref(&w->strings, a->s); break;
    case TC__ATTR_TENSOR: st = add_tensor(w, a->t, what, false, &rec.tensor); break;
    case TC__ATTR_GRAPH: break;
    case TC__ATTR_FLOATS:
        rec.n = a->n;
        st = put_array(w, a->floats, a->n, sizeof(float), what, &rec.data_offset);
        break;
    case TC__ATTR_INTS:
        rec.n = a->n;
        st = put_array(w, a->ints, a->n, sizeof(int64_t), what, &rec.data_offset);
        break;
    case TC__ATTR_STRINGS: {
        rec.n = a->n;
        if (a->n > 0 && a->strings == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: no strings", what);
        uint32_t *refs = calloc(a->n ? a->n : 1, sizeof *refs);
        if (refs == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing %s", what);
        for (size_t k = 0; k < a->n; k++) refs[k] = strtab_ref(&w->strings, a->strings[k]);
        st = put_array(w, refs, a->n, sizeof(uint32_t), what, &rec.data_offset);
        free(refs);
        break;
    }
    default: return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: unknown kind %d", what, (int)a->kind);
    }
    if (st) return st;
    tc__plan_attr *r = add_record(w, TC__PLAN_TABLE_ATTRS);
    if (r == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing %s", what);
    *r = rec;
    return TC_STATUS_OK;
}

static tc_status write_nodes(writer *w) {
    const tc__graph *g = w->g;
    tc__err *err = w->err;
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        tc__plan_node rec;
        memset(&rec, 0, sizeof rec);
        rec.name = strtab_ref(&w->strings, node->name);
        rec.op_type = strtab_ref(&w->strings, node->op_type);
        rec.domain = strtab_ref(&w->strings, node->domain);
        rec.fused = strtab_ref(&w->strings, node->fused);
        rec.n_in = (uint32_t)node->n_in;
        rec.n_op_in = (uint32_t)node->n_op_in;
        rec.n_out = (uint32_t)node->n_out;
        rec.n_attrs = (uint32_t)node->attrs.n;
        rec.io_first = w->counts[TC__PLAN_TABLE_NODE_IO];
        rec.attr_first = w->counts[TC__PLAN_TABLE_ATTRS];
        rec.bias_input = node->epi.bias_input;
        rec.residual_input = node->epi.residual_input;
        rec.act = node->epi.act;
        rec.guard = node->guard >= 0 ? (uint8_t)(node->guard + 1) : 0;
        rec.alpha = node->epi.alpha;
        rec.beta = node->epi.beta;
        for (int i = 0; i < node->n_in; i++)
            if (!add_index(w, TC__PLAN_TABLE_NODE_IO, node->in[i]))
                return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing node '%s'", node->name);
        for (int o = 0; o < node->n_out; o++)
            if (!add_index(w, TC__PLAN_TABLE_NODE_IO, node->out[o]))
                return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing node '%s'", node->name);
        if (node->attrs.n > 0 && node->attrs.items == NULL)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "node '%s': %d attributes but no array", node->name,
                            node->attrs.n);
        for (int a = 0; a < node->attrs.n; a++) {
            tc_status st = write_attr(w, node, &node->attrs.items[a]);
            if (st) return st;
        }
        tc__plan_node *r = add_record(w, TC__PLAN_TABLE_NODES);
        if (r == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing node '%s'", node->name);
        *r = rec;
    }
    return TC_STATUS_OK;
}

/* Lays out the GRAPH section: the graph record, then each table 8-byte aligned. */
static tc_status build_graph_section(writer *w, wbuf *out) {
    tc__plan_graph rec;
    memset(&rec, 0, sizeof rec);
    rec.name = strtab_ref(&w->strings, w->g->name);
    rec.producer_name = strtab_ref(&w->strings, w->g->producer_name);
    rec.opset = w->g->opset;
    rec.ir_version = w->g->ir_version;
    rec.table_count = TC__PLAN_TABLE_COUNT_;
    wbuf_take(out, sizeof rec, TC__PLAN_ARRAY_ALIGN);
    for (int t = 0; t < TC__PLAN_TABLE_COUNT_; t++) {
        if (w->tables[t].oom) return tc__fail(w->err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing the graph");
        rec.tables[t].offset = wbuf_put(out, w->tables[t].p, w->tables[t].len, TC__PLAN_ARRAY_ALIGN);
        rec.tables[t].count = w->counts[t];
        rec.tables[t].stride = kStride[t];
    }
    if (out->oom) return tc__fail(w->err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing the graph");
    memcpy(out->p, &rec, sizeof rec);
    return TC_STATUS_OK;
}

/* Assembles header, section table and sections into one 64-byte-aligned buffer. */
static tc_status assemble(writer *w, const wbuf *graph, const tc__plan_target_info *target, const void *engine_blob,
                          size_t engine_size, void **out, size_t *out_size) {
    unsigned char tsec[sizeof(tc__plan_target) + TC__TARGET_RECORD_MAX];
    tc__plan_target trec = {.backend = target->backend, .record_size = target->record_size,
                            .required_caps = target->required_caps};
    memcpy(tsec, &trec, sizeof trec);
    if (target->record_size) memcpy(tsec + sizeof trec, target->record, target->record_size);
    const void *src[TC__PLAN_SECTION_COUNT] = {tsec, w->strings.bytes.p, graph->p, w->weights.p, engine_blob};
    const size_t len[TC__PLAN_SECTION_COUNT] = {sizeof trec + target->record_size, w->strings.bytes.len, graph->len,
                                                w->weights.len, engine_size};
    const uint32_t kind[TC__PLAN_SECTION_COUNT] = {TC__PLAN_SECTION_TARGET, TC__PLAN_SECTION_STRINGS,
                                                   TC__PLAN_SECTION_GRAPH, TC__PLAN_SECTION_WEIGHTS,
                                                   TC__PLAN_SECTION_ENGINE};
    tc__plan_section table[TC__PLAN_SECTION_COUNT];
    memset(table, 0, sizeof table);
    size_t pos = sizeof(tc__plan_header) + sizeof table;
    for (int s = 0; s < TC__PLAN_SECTION_COUNT; s++) {
        pos = (pos + TC__PLAN_ALIGN - 1) & ~(size_t)(TC__PLAN_ALIGN - 1);
        table[s].kind = kind[s];
        table[s].offset = pos;
        table[s].size = len[s];
        table[s].checksum = XXH3_64bits(len[s] ? src[s] : "", len[s]);
        if (__builtin_add_overflow(pos, len[s], &pos) || pos > SIZE_MAX - TC__PLAN_ALIGN)
            return tc__fail(w->err, TC_STATUS_OUT_OF_MEMORY, "plan size overflows");
    }
    size_t total = (pos + TC__PLAN_ALIGN - 1) & ~(size_t)(TC__PLAN_ALIGN - 1);
    uint8_t *file = aligned_alloc(TC__PLAN_ALIGN, total);
    if (file == NULL) return tc__fail(w->err, TC_STATUS_OUT_OF_MEMORY, "out of memory allocating a %zu-byte plan", total);
    memset(file, 0, total);
    for (int s = 0; s < TC__PLAN_SECTION_COUNT; s++)
        if (len[s]) memcpy(file + table[s].offset, src[s], len[s]);
    memcpy(file + sizeof(tc__plan_header), table, sizeof table);

    tc__plan_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TC__PLAN_MAGIC, TC__PLAN_MAGIC_SIZE);
    h.version = TC__PLAN_VERSION;
    h.header_size = sizeof h;
    h.file_size = total;
    h.section_count = TC__PLAN_SECTION_COUNT;
    h.section_table_offset = sizeof h;
    h.section_table_checksum = XXH3_64bits(table, sizeof table);
    h.header_checksum = XXH3_64bits(&h, sizeof h);
    memcpy(file, &h, sizeof h);
    *out = file;
    *out_size = total;
    return TC_STATUS_OK;
}

tc_status tc__plan_serialize(const tc__graph *g, const tc__plan_target_info *target, const void *engine_blob,
                             size_t engine_size, void **out, size_t *out_size, tc__err *err) {
    if (out == NULL || out_size == NULL || g == NULL || target == NULL || (engine_size > 0 && engine_blob == NULL))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc__plan_serialize: NULL argument");
    *out = NULL;
    *out_size = 0;
    if (target->record_size > TC__TARGET_RECORD_MAX || (target->record_size > 0 && target->record == NULL) ||
        strcmp(tc__backend_name(target->backend), "unknown") == 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc__plan_serialize: bad target (backend %u, %u-byte record)",
                        target->backend, target->record_size);
    tc_status st = check_graph(g, err);
    if (st) return st;

    /* Initializers worth storing: read by some node input or a graph output. */
    bool *used = calloc(g->n_values > 0 ? (size_t)g->n_values : 1, sizeof *used);
    if (used == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing a plan");
    for (int n = 0; n < g->n_nodes; n++)
        for (int i = 0; i < g->nodes[n].n_in; i++)
            if (g->nodes[n].in[i] >= 0) used[g->nodes[n].in[i]] = true;
    for (int k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = true;

    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.err = err;
    wbuf graph = {0};
    (void)strtab_ref(&w.strings, ""); /* reference 0 is "" */
    st = write_values(&w, used);
    if (!st) st = write_nodes(&w);
    if (!st) st = build_graph_section(&w, &graph);
    if (!st && (w.strings.bytes.oom || w.weights.oom))
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing a plan");
    if (!st && w.strings.too_big) st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "plan strings exceed 4 GiB");
    if (!st) st = assemble(&w, &graph, target, engine_blob, engine_size, out, out_size);
    free(used);
    free(graph.p);
    free(w.strings.bytes.p);
    free(w.strings.slots);
    free(w.weights.p);
    for (int t = 0; t < TC__PLAN_TABLE_COUNT_; t++) free(w.tables[t].p);
    return st;
}
