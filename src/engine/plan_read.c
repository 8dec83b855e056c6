/* plan_read.c - validates a model.plan held in memory (layout in plan_format.h) and rebuilds its
 * graph without copying weights or strings; every size and reference is checked before use. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/plan_format.h"

#define TC__PLAN_MAX_SECTIONS 16
#define TC__PLAN_MAX_NODE_IO (1u << 20) /* inputs or outputs of one node, as tc__graph_add_node allows */
#define TC__PLAN_MAX_NODE_ATTRS (1u << 20)

/* The parts of a plan the record checks need, all inside the caller's buffer. */
typedef struct reader {
    const uint8_t *data;
    const uint8_t *strings, *graph, *weights, *engine, *target;
    uint64_t strings_size, graph_size, weights_size, engine_size, target_size;
    const tc__plan_graph *ghdr;
    const void *tables[TC__PLAN_TABLE_COUNT_];
    uint32_t counts[TC__PLAN_TABLE_COUNT_];
    tc__err *err;
} reader;

/* ---- Header, section table, checksums, target ------------------------------------ */

static tc_status check_header(const uint8_t *data, size_t size, uint32_t flags, tc__plan_header *h, tc__err *err) {
    if (size < sizeof *h)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "plan is %zu bytes, smaller than its %zu-byte header (truncated or not a plan)", size,
                        sizeof *h);
    memcpy(h, data, sizeof *h);
    if (memcmp(h->magic, TC__PLAN_MAGIC, TC__PLAN_MAGIC_SIZE) != 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "not a tailcut plan (bad magic bytes)");
    if (h->version == 1)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan format version 1 was written by an earlier tailcut (before "
                        "backends and the TARGET section); this build reads version %u: rebuild the plan",
                        TC__PLAN_VERSION);
    if (h->version < TC__PLAN_VERSION_MIN || h->version > TC__PLAN_VERSION)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan format version %u, this build reads %u: rebuild the plan",
                        h->version, TC__PLAN_VERSION);
    if (!(flags & TC__PLAN_NO_CHECKSUMS)) {
        tc__plan_header z = *h;
        z.header_checksum = 0;
        if (XXH3_64bits(&z, sizeof z) != h->header_checksum)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan header is corrupt (checksum mismatch)");
    }
    if (h->header_size != sizeof *h)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan header size is %u, expected %zu", h->header_size, sizeof *h);
    if (h->flags != 0) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan header has unknown flags 0x%x", h->flags);
    if (h->file_size != size)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan is %zu bytes but its header says %llu (truncated or extended)",
                        size, (unsigned long long)h->file_size);
    for (size_t i = 0; i < sizeof h->reserved; i++)
        if (h->reserved[i] != 0) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan header has reserved bytes set");
    return TC_STATUS_OK;
}

/* Checks that bytes [from, to) of data are zero (padding). */
static tc_status check_zero(const uint8_t *data, uint64_t from, uint64_t to, tc__err *err) {
    for (uint64_t i = from; i < to; i++)
        if (data[i] != 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan has a non-zero padding byte at offset %llu",
                            (unsigned long long)i);
    return TC_STATUS_OK;
}

static tc_status check_sections(reader *r, size_t size, const tc__plan_header *h, uint32_t flags) {
    tc__err *err = r->err;
    uint64_t n = h->section_count, off = h->section_table_offset;
    if (n < 1 || n > TC__PLAN_MAX_SECTIONS)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan has %llu sections, expected 1..%d", (unsigned long long)n,
                        TC__PLAN_MAX_SECTIONS);
    uint64_t table_end = off + n * sizeof(tc__plan_section); /* n <= 16: no overflow unless off is huge */
    if (off < sizeof(tc__plan_header) || off % 8 != 0 || off > size || table_end > size)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "plan section table (offset %llu, %llu entries) lies outside the %zu-byte file or is misaligned",
                        (unsigned long long)off, (unsigned long long)n, size);
    if (!(flags & TC__PLAN_NO_CHECKSUMS) && XXH3_64bits(r->data + off, table_end - off) != h->section_table_checksum)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section table is corrupt (checksum mismatch)");

    tc__plan_section sec[TC__PLAN_MAX_SECTIONS];
    memcpy(sec, r->data + off, (size_t)(table_end - off));
    bool seen[TC__PLAN_SECTION_COUNT + 1] = {false};
    for (uint64_t i = 0; i < n; i++) {
        const tc__plan_section *s = &sec[i];
        const char *name = tc__plan_section_name(s->kind);
        if (s->kind < TC__PLAN_SECTION_STRINGS || s->kind > TC__PLAN_SECTION_TARGET)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section %llu has unknown kind %u", (unsigned long long)i,
                            s->kind);
        if (seen[s->kind]) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan has two %s sections", name);
        seen[s->kind] = true;
        if (s->flags != 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section %s has unknown flags 0x%x", name, s->flags);
        if (s->offset % TC__PLAN_ALIGN != 0 || s->offset < table_end || s->offset > size || s->size > size - s->offset)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan section %s (offset %llu, %llu bytes) lies outside the %zu-byte file, overlaps its "
                            "header or is not 64-byte aligned",
                            name, (unsigned long long)s->offset, (unsigned long long)s->size, size);
        for (uint64_t j = 0; j < i; j++) {
            const tc__plan_section *t = &sec[j];
            if (s->offset < t->offset + t->size && t->offset < s->offset + s->size)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan sections %s and %s overlap", name,
                                tc__plan_section_name(t->kind));
        }
    }
    for (uint32_t k = TC__PLAN_SECTION_STRINGS; k <= TC__PLAN_SECTION_TARGET; k++)
        if (!seen[k]) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan has no %s section", tc__plan_section_name(k));

    /* Padding: everything between the header, the table and the sections, and after the last
     * section, is zero. Sections in file order (insertion sort; n <= 16). */
    int order[TC__PLAN_MAX_SECTIONS];
    for (int i = 0; i < (int)n; i++) {
        int j = i;
        for (; j > 0 && (sec[order[j - 1]].offset > sec[i].offset ||
                         (sec[order[j - 1]].offset == sec[i].offset && sec[order[j - 1]].size > sec[i].size));
             j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    tc_status st = check_zero(r->data, sizeof(tc__plan_header), off, err);
    uint64_t pos = table_end;
    for (int i = 0; i < (int)n && st == TC_STATUS_OK; i++) {
        const tc__plan_section *s = &sec[order[i]];
        if (s->offset > pos) st = check_zero(r->data, pos, s->offset, err);
        if (s->offset + s->size > pos) pos = s->offset + s->size;
    }
    if (!st) st = check_zero(r->data, pos, size, err);
    if (st) return st;

    for (uint64_t i = 0; i < n; i++) {
        const tc__plan_section *s = &sec[i];
        const uint8_t *p = r->data + s->offset;
        if (!(flags & TC__PLAN_NO_CHECKSUMS) && XXH3_64bits(p, (size_t)s->size) != s->checksum)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section %s is corrupt (checksum mismatch)",
                            tc__plan_section_name(s->kind));
        switch (s->kind) {
        case TC__PLAN_SECTION_STRINGS: r->strings = p, r->strings_size = s->size; break;
        case TC__PLAN_SECTION_GRAPH: r->graph = p, r->graph_size = s->size; break;
        case TC__PLAN_SECTION_WEIGHTS: r->weights = p, r->weights_size = s->size; break;
        case TC__PLAN_SECTION_TARGET: r->target = p, r->target_size = s->size; break;
        default: r->engine = p, r->engine_size = s->size; break;
        }
    }
    return TC_STATUS_OK;
}

/* The TARGET section: its form, then (unless flags say not) the backend's verdict on this machine. */
static tc_status check_target(const reader *r, uint32_t flags, tc__plan_target_info *out, tc__err *err) {
    tc__plan_target t;
    if (r->target_size < sizeof t)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section TARGET is %llu bytes, smaller than its %zu-byte record",
                        (unsigned long long)r->target_size, sizeof t);
    memcpy(&t, r->target, sizeof t);
    if (t.reserved[0] != 0 || t.reserved[1] != 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan TARGET record has reserved bits set");
    if (t.record_size > TC__TARGET_RECORD_MAX || r->target_size != sizeof t + t.record_size)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan TARGET record says %u bytes of backend record, the section "
                        "holds %llu", t.record_size, (unsigned long long)(r->target_size - sizeof t));
    if (strcmp(tc__backend_name(t.backend), "unknown") == 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan TARGET names backend %u, which no tailcut has", t.backend);
    const tc__backend *be = tc__backend_get(t.backend);
    if (be == NULL)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan was built for the %s backend, which this build of tailcut "
                        "does not have (not built with %s): rebuild the plan for this machine",
                        tc__backend_name(t.backend), t.backend == TC__BACKEND_CUDA ? "CUDA" : tc__backend_name(t.backend));
    out->backend = t.backend;
    out->record_size = t.record_size;
    out->required_caps = t.required_caps;
    out->record = r->target + sizeof t;
    if (flags & TC__PLAN_NO_TARGET_CHECK) return TC_STATUS_OK;
    tc__err perr = {0};
    if (be->probe(&perr) != TC_STATUS_OK)
        return tc__fail(err, perr.status, "plan was built for the %s backend, which cannot run here: %s", be->name,
                        perr.msg);
    return be->check_target(out->record, out->record_size, out->required_caps, err);
}

/* ---- Records ------------------------------------------------------------------ */

static const uint32_t kStride[TC__PLAN_TABLE_COUNT_] = {
    [TC__PLAN_TABLE_SYMBOLS] = sizeof(tc__plan_symbol), [TC__PLAN_TABLE_VALUES] = sizeof(tc__plan_value),
    [TC__PLAN_TABLE_INPUTS] = sizeof(tc__plan_index),   [TC__PLAN_TABLE_OUTPUTS] = sizeof(tc__plan_index),
    [TC__PLAN_TABLE_NODES] = sizeof(tc__plan_node),     [TC__PLAN_TABLE_NODE_IO] = sizeof(tc__plan_index),
    [TC__PLAN_TABLE_ATTRS] = sizeof(tc__plan_attr),     [TC__PLAN_TABLE_TENSORS] = sizeof(tc__plan_tensor),
};
static const char *const kTableName[TC__PLAN_TABLE_COUNT_] = {"symbols", "values", "inputs",     "outputs",
                                                              "nodes",   "node inputs/outputs", "attributes",
                                                              "tensors"};

static tc_status check_tables(reader *r) {
    tc__err *err = r->err;
    if (r->graph_size < sizeof(tc__plan_graph))
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section GRAPH is %llu bytes, smaller than its %zu-byte header",
                        (unsigned long long)r->graph_size, sizeof(tc__plan_graph));
    r->ghdr = (const tc__plan_graph *)r->graph;
    if (r->ghdr->table_count != TC__PLAN_TABLE_COUNT_)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan graph has %u tables, expected %d", r->ghdr->table_count,
                        TC__PLAN_TABLE_COUNT_);
    for (int t = 0; t < TC__PLAN_TABLE_COUNT_; t++) {
        const tc__plan_table *d = &r->ghdr->tables[t];
        if (d->stride != kStride[t])
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan graph table of %s has %u-byte records, expected %u",
                            kTableName[t], d->stride, kStride[t]);
        uint64_t bytes = (uint64_t)d->count * d->stride; /* both < 2^32: no overflow */
        if (d->offset % TC__PLAN_ARRAY_ALIGN != 0 || d->offset > r->graph_size || bytes > r->graph_size - d->offset)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan graph table of %s (offset %llu, %u records) lies outside the %llu-byte GRAPH section "
                            "or is misaligned",
                            kTableName[t], (unsigned long long)d->offset, d->count, (unsigned long long)r->graph_size);
        if (d->count > INT32_MAX)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan graph has too many %s (%u)", kTableName[t], d->count);
        r->tables[t] = r->graph + d->offset;
        r->counts[t] = d->count;
    }
    if (r->strings_size < 1 || r->strings[0] != '\0' || r->strings[r->strings_size - 1] != '\0')
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan section STRINGS does not start and end with a NUL byte");
    return TC_STATUS_OK;
}

/* Resolves a string reference (the section ends with a NUL, so every in-bounds offset is terminated). */
static tc_status str_at(const reader *r, uint32_t ref, const char *what, unsigned long long index, const char **out) {
    if (ref >= r->strings_size)
        return tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan %s %llu: string reference %u is outside the %llu-byte "
                        "STRINGS section", what, index, ref, (unsigned long long)r->strings_size);
    *out = (const char *)r->strings + ref;
    return TC_STATUS_OK;
}

/* Checks a WEIGHTS range of n elements of es bytes at off with the given alignment; pointer in *out. */
static tc_status weights_at(const reader *r, uint64_t off, uint64_t n, uint64_t es, uint64_t align, const char *what,
                            const void **out) {
    uint64_t bytes;
    if (__builtin_mul_overflow(n, es, &bytes) || off % align != 0 || off > r->weights_size ||
        bytes > r->weights_size - off)
        return tc__fail(r->err, TC_STATUS_CORRUPT_FILE,
                        "%s: %llu elements of %llu bytes at WEIGHTS offset %llu lie outside the %llu-byte section or "
                        "are not %llu-byte aligned",
                        what, (unsigned long long)n, (unsigned long long)es, (unsigned long long)off,
                        (unsigned long long)r->weights_size, (unsigned long long)align);
    *out = r->weights + off;
    return TC_STATUS_OK;
}

static tc_status read_tensors(const reader *r, tc__graph *g, tc__tensor **out) {
    uint32_t n = r->counts[TC__PLAN_TABLE_TENSORS];
    const tc__plan_tensor *rec = r->tables[TC__PLAN_TABLE_TENSORS];
    tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t * (size_t)(n ? n : 1), 8);
    if (t == NULL) return tc__fail(r->err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
    for (uint32_t k = 0; k < n; k++) {
        const tc__plan_tensor *p = &rec[k];
        size_t es = tc_dtype_size((tc_dtype)p->dtype);
        if (es == 0)
            return tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan tensor %u has unknown data type %d", k, (int)p->dtype);
        if (p->rank < 0 || p->rank > TC_MAX_RANK)
            return tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan tensor %u has rank %d, expected 0..%d", k,
                            (int)p->rank, TC_MAX_RANK);
        int64_t numel = tc__numel(p->rank, p->dims);
        if (numel < 0) return tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan tensor %u has an invalid shape", k);
        if (p->flags & ~(uint64_t)TC__PLAN_TENSOR_FLAGS_)
            return tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan tensor %u has unknown flags 0x%llx", k,
                            (unsigned long long)p->flags);
        const bool packed = (p->flags & TC__PLAN_TENSOR_PACKED) != 0;
        /* numel <= 2^40, es <= 8: no overflow */
        if (packed ? !tc__plan_packed_size_ok(p->nbytes, (uint64_t)numel * es) : (uint64_t)numel * es != p->nbytes)
            return tc__fail(r->err, TC_STATUS_CORRUPT_FILE,
                            "plan tensor %u is %llu bytes, its %s shape needs %s%llu", k,
                            (unsigned long long)p->nbytes, tc_dtype_name((tc_dtype)p->dtype),
                            packed ? "(packed: not 0 and at most 256 x + 64 KiB, but not) " : "",
                            (unsigned long long)numel * es);
        char what[64];
        snprintf(what, sizeof what, "plan tensor %u", k);
        const void *ptr = NULL;
        tc_status st = weights_at(r, p->offset, p->nbytes, 1, TC__PLAN_ALIGN, what, &ptr);
        if (st) return st;
        t[k].dtype = (tc_dtype)p->dtype;
        t[k].rank = p->rank;
        for (int32_t i = 0; i < p->rank; i++) t[k].dims[i] = p->dims[i];
        t[k].data = (void *)(uintptr_t)ptr; /* read-only: points into the caller's plan */
        t[k].nbytes = (size_t)p->nbytes;
    }
    *out = t;
    return TC_STATUS_OK;
}

static tc_status read_values(const reader *r, tc__graph *g, const tc__tensor *tensors) {
    tc__err *err = r->err;
    const tc__plan_graph *gh = r->ghdr;
    tc_status st = str_at(r, gh->name, "graph", 0, &g->name);
    if (!st) st = str_at(r, gh->producer_name, "graph", 0, &g->producer_name);
    if (st) return st;
    if (gh->opset <= 0) /* the writer's rule too: a plan's graph has a default-domain opset */
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan graph has no default-domain opset (got %lld)",
                        (long long)gh->opset);
    g->opset = gh->opset;
    g->ir_version = gh->ir_version;

    uint32_t ns = r->counts[TC__PLAN_TABLE_SYMBOLS];
    const tc__plan_symbol *sym = r->tables[TC__PLAN_TABLE_SYMBOLS];
    if (ns > 0) {
        g->symbols = calloc(ns, sizeof *g->symbols);
        if (g->symbols == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
        g->cap_symbols = (int)ns;
    }
    for (uint32_t s = 0; s < ns; s++) {
        if ((st = str_at(r, sym[s].name, "symbol", s, &g->symbols[s]))) return st;
        g->n_symbols++;
    }

    uint32_t nv = r->counts[TC__PLAN_TABLE_VALUES], nt = r->counts[TC__PLAN_TABLE_TENSORS];
    const tc__plan_value *val = r->tables[TC__PLAN_TABLE_VALUES];
    /* Tensor names are distinct strings, so together they fit in STRINGS; checking that bounds the
     * work of copying and hashing them even when references overlap. */
    uint64_t name_budget = r->strings_size;
    for (uint32_t v = 0; v < nv; v++) {
        const tc__plan_value *p = &val[v];
        const char *name = "";
        if ((st = str_at(r, p->name, "tensor", v, &name))) return st;
        size_t len = strnlen(name, (size_t)name_budget);
        if (len >= name_budget)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan tensor names overlap (tensor %u)", v);
        name_budget -= len + 1;
        int32_t index = -1;
        tc__err aerr = {0};
        if ((st = tc__graph_add_value(g, name, &index, &aerr)))
            return tc__fail(err, st == TC_STATUS_OUT_OF_MEMORY ? st : TC_STATUS_CORRUPT_FILE, "plan: %s", aerr.msg);
        tc__value *out = &g->values[index];
        if (p->dtype != TC_DTYPE_UNDEFINED && !tc__dtype_valid((tc_dtype)p->dtype))
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan tensor '%s' has unknown data type %d", out->name,
                            (int)p->dtype);
        if (p->rank < -1 || p->rank > TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan tensor '%s' has rank %d, expected -1..%d", out->name,
                            (int)p->rank, TC_MAX_RANK);
        if (p->flags & ~(uint32_t)TC__PLAN_VALUE_FLAGS_)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan tensor '%s' has unknown flags 0x%x", out->name, p->flags);
        out->info.dtype = (tc_dtype)p->dtype;
        out->info.shape.rank = p->rank;
        for (int32_t i = 0; i < p->rank; i++) {
            if (p->dims[i].value < -1 || p->dims[i].sym < -1 || p->dims[i].sym >= (int32_t)ns)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                                "plan tensor '%s' dim %d is %lld with symbol %d (of %u symbols)", out->name, (int)i,
                                (long long)p->dims[i].value, (int)p->dims[i].sym, ns);
            out->info.shape.dims[i].value = p->dims[i].value;
            out->info.shape.dims[i].sym = p->dims[i].sym;
        }
        out->is_input = (p->flags & TC__PLAN_VALUE_INPUT) != 0;
        out->is_output = (p->flags & TC__PLAN_VALUE_OUTPUT) != 0;
        if (p->init_tensor == TC__PLAN_NONE) continue;
        if (p->init_tensor < 0 || (uint32_t)p->init_tensor >= nt)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan tensor '%s' refers to initializer data %d of %u",
                            out->name, (int)p->init_tensor, nt);
        const tc__tensor *t = &tensors[p->init_tensor];
        bool same = out->info.dtype == t->dtype && out->info.shape.rank == t->rank;
        for (int32_t i = 0; same && i < t->rank; i++) same = out->info.shape.dims[i].value == t->dims[i];
        if (!same)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan initializer '%s': its type/shape does not match its data (%s rank %d)", out->name,
                            tc_dtype_name(t->dtype), (int)t->rank);
        out->init = t;
        out->info.value = t;
    }

    for (int io = 0; io < 2; io++) {
        tc__plan_table_id id = io ? TC__PLAN_TABLE_OUTPUTS : TC__PLAN_TABLE_INPUTS;
        uint32_t n = r->counts[id], flag = io ? TC__PLAN_VALUE_OUTPUT : TC__PLAN_VALUE_INPUT;
        const tc__plan_index *idx = r->tables[id];
        int32_t *arr = tc__arena_alloc(&g->arena, sizeof(int32_t) * (size_t)(n ? n : 1), 4);
        if (arr == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
        for (uint32_t k = 0; k < n; k++) {
            int32_t v = idx[k].value;
            if (v < 0 || (uint32_t)v >= nv || !(val[v].flags & flag))
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan graph %s %u refers to tensor %d, which is not one",
                                io ? "output" : "input", k, (int)v);
            arr[k] = v;
        }
        if (io) {
            g->outputs = arr;
            g->n_outputs = (int)n;
        } else {
            g->inputs = arr;
            g->n_inputs = (int)n;
        }
    }
    return TC_STATUS_OK;
}

static tc_status read_attr(const reader *r, tc__graph *g, const tc__node *node, uint32_t index,
                           const tc__tensor *tensors, uint64_t *strings_budget, tc__attr *out) {
    tc__err *err = r->err;
    const tc__plan_attr *p = &((const tc__plan_attr *)r->tables[TC__PLAN_TABLE_ATTRS])[index];
    tc_status st = str_at(r, p->name, "attribute", index, &out->name);
    if (st) return st;
    char what[600];
    snprintf(what, sizeof what, "plan node '%.256s' attribute '%.256s'", node->name, out->name);
    out->kind = (tc__attr_kind)p->kind;
    const void *ptr = NULL;
    switch (p->kind) {
    case TC__ATTR_FLOAT: out->f = p->f; return TC_STATUS_OK;
    case TC__ATTR_INT: out->i = p->i; return TC_STATUS_OK;
    case TC__ATTR_STRING: return str_at(r, p->s, "attribute", index, &out->s);
    case TC__ATTR_GRAPH: return TC_STATUS_OK;
    case TC__ATTR_TENSOR:
        if (p->tensor < 0 || (uint32_t)p->tensor >= r->counts[TC__PLAN_TABLE_TENSORS])
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s refers to tensor %d of %u", what, (int)p->tensor,
                            r->counts[TC__PLAN_TABLE_TENSORS]);
        if (((const tc__plan_tensor *)r->tables[TC__PLAN_TABLE_TENSORS])[p->tensor].flags & TC__PLAN_TENSOR_PACKED)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s refers to packed tensor %d (only initializers are packed)",
                            what, (int)p->tensor);
        out->t = &tensors[p->tensor];
        return TC_STATUS_OK;
    case TC__ATTR_FLOATS:
        if ((st = weights_at(r, p->data_offset, p->n, sizeof(float), TC__PLAN_ARRAY_ALIGN, what, &ptr))) return st;
        out->n = (size_t)p->n;
        out->floats = ptr;
        return TC_STATUS_OK;
    case TC__ATTR_INTS:
        if ((st = weights_at(r, p->data_offset, p->n, sizeof(int64_t), TC__PLAN_ARRAY_ALIGN, what, &ptr))) return st;
        out->n = (size_t)p->n;
        out->ints = ptr;
        return TC_STATUS_OK;
    case TC__ATTR_STRINGS: {
        if ((st = weights_at(r, p->data_offset, p->n, sizeof(uint32_t), TC__PLAN_ARRAY_ALIGN, what, &ptr))) return st;
        /* The pointer arrays are bounded by the WEIGHTS size even if records share one range. */
        if (p->n > *strings_budget)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: string arrays exceed the WEIGHTS section", what);
        *strings_budget -= p->n;
        const char **s = tc__arena_alloc(&g->arena, sizeof(char *) * (size_t)(p->n ? p->n : 1), 8);
        if (s == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
        const uint32_t *refs = ptr;
        for (uint64_t k = 0; k < p->n; k++)
            if ((st = str_at(r, refs[k], "attribute", index, &s[k]))) return st;
        out->n = (size_t)p->n;
        out->strings = s;
        return TC_STATUS_OK;
    }
    default: return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has unknown kind %u", what, p->kind);
    }
}

static tc_status read_nodes(const reader *r, tc__graph *g, const tc__tensor *tensors) {
    tc__err *err = r->err;
    uint32_t nn = r->counts[TC__PLAN_TABLE_NODES], nio = r->counts[TC__PLAN_TABLE_NODE_IO];
    uint32_t na = r->counts[TC__PLAN_TABLE_ATTRS];
    const tc__plan_node *rec = r->tables[TC__PLAN_TABLE_NODES];
    const tc__plan_index *io = r->tables[TC__PLAN_TABLE_NODE_IO];
    if (nn > 0) {
        g->nodes = calloc(nn, sizeof *g->nodes);
        if (g->nodes == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
        g->cap_nodes = (int)nn;
    }
    uint64_t strings_budget = r->weights_size / sizeof(uint32_t);
    uint64_t next_io = 0, next_attr = 0;
    for (uint32_t n = 0; n < nn; n++) {
        const tc__plan_node *p = &rec[n];
        tc__node *node = &g->nodes[n];
        tc_status st;
        if ((st = str_at(r, p->name, "node", n, &node->name)) || (st = str_at(r, p->op_type, "node", n, &node->op_type)) ||
            (st = str_at(r, p->domain, "node", n, &node->domain)) || (st = str_at(r, p->fused, "node", n, &node->fused)))
            return st;
        g->n_nodes++;
        if (p->n_in > TC__PLAN_MAX_NODE_IO || p->n_out > TC__PLAN_MAX_NODE_IO || p->n_op_in > p->n_in ||
            p->n_attrs > TC__PLAN_MAX_NODE_ATTRS || p->flags != 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan node '%s' has bad counts (inputs %u, op inputs %u, outputs %u, attributes %u) or "
                            "flags 0x%x",
                            node->name, p->n_in, p->n_op_in, p->n_out, p->n_attrs, p->flags);
        /* Records are consecutive: this bounds what the graph allocates by the file's size. */
        if (p->io_first != next_io || next_io + p->n_in + p->n_out > nio || p->attr_first != next_attr ||
            next_attr + p->n_attrs > na)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan node '%s': inputs/outputs at %u (expected %llu) or attributes at %u (expected "
                            "%llu) are out of order or out of range",
                            node->name, p->io_first, (unsigned long long)next_io, p->attr_first,
                            (unsigned long long)next_attr);
        next_io += (uint64_t)p->n_in + p->n_out;
        next_attr += p->n_attrs;
        if (p->bias_input < -1 || p->bias_input >= (int64_t)p->n_in || p->residual_input < -1 ||
            p->residual_input >= (int64_t)p->n_in || p->act >= TC__ACT_COUNT_)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan node '%s': epilogue (bias input %d, residual input %d, activation %u) does not fit "
                            "its %u inputs",
                            node->name, p->bias_input, p->residual_input, p->act, p->n_in);
        if (p->guard != 0 && (p->guard - 1u < p->n_op_in || p->guard - 1u >= p->n_in))
            return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                            "plan node '%s': its guard is input %d, not one of its %u inputs after the op's %u",
                            node->name, p->guard - 1, p->n_in, p->n_op_in);
        node->guard = (int32_t)p->guard - 1;
        node->n_in = (int)p->n_in;
        node->n_op_in = (int)p->n_op_in;
        node->n_out = (int)p->n_out;
        node->epi = (tc__epilogue){p->bias_input, p->residual_input, p->act, 0, p->alpha, p->beta};
        node->in = tc__arena_alloc(&g->arena, sizeof(int32_t) * (p->n_in ? p->n_in : 1), 4);
        node->out = tc__arena_alloc(&g->arena, sizeof(int32_t) * (p->n_out ? p->n_out : 1), 4);
        tc__attr *attrs = tc__arena_alloc(&g->arena, sizeof(tc__attr) * (p->n_attrs ? p->n_attrs : 1), 8);
        if (node->in == NULL || node->out == NULL || attrs == NULL)
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
        for (uint32_t k = 0; k < p->n_in + p->n_out; k++) {
            int32_t v = io[p->io_first + k].value;
            bool is_in = k < p->n_in;
            if (v < -1 || v >= g->n_values)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan node '%s' %s %u refers to tensor %d of %d",
                                node->name, is_in ? "input" : "output", is_in ? k : k - p->n_in, (int)v, g->n_values);
            if (is_in)
                node->in[k] = v;
            else
                node->out[k - p->n_in] = v;
            if (v < 0) continue;
            tc__value *val = &g->values[v];
            /* Nodes are in topological order: an input is an initializer, a graph input or made earlier. */
            if (is_in && val->producer < 0 && val->init == NULL && !val->is_input)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                                "plan node '%s' input %u '%s' is not produced before it", node->name, k, val->name);
            if (!is_in) {
                if (val->producer >= 0 || val->init != NULL || val->is_input)
                    return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                                    "plan node '%s' writes '%s', which is an input, an initializer or written by "
                                    "another node",
                                    node->name, val->name);
                val->producer = (int32_t)n;
            }
        }
        for (uint32_t a = 0; a < p->n_attrs; a++)
            if ((st = read_attr(r, g, node, p->attr_first + a, tensors, &strings_budget, &attrs[a]))) return st;
        node->attrs.n = (int)p->n_attrs;
        node->attrs.items = attrs;
        node->schema = tc__op_schema_find(node->domain, node->op_type);
    }
    if (next_io != nio || next_attr != na)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "plan graph has %u node inputs/outputs and %u attributes, its nodes use %llu and %llu", nio, na,
                        (unsigned long long)next_io, (unsigned long long)next_attr);
    return TC_STATUS_OK;
}

static tc_status read_graph(reader *r, tc__graph **out) {
    tc_status st = check_tables(r);
    if (st) return st;
    tc__graph *g = tc__graph_create();
    if (g == NULL) return tc__fail(r->err, TC_STATUS_OUT_OF_MEMORY, "out of memory loading a plan");
    tc__tensor *tensors = NULL;
    st = read_tensors(r, g, &tensors);
    if (!st) st = read_values(r, g, tensors);
    if (!st) st = read_nodes(r, g, tensors);
    if (!st) {
        tc__err verr = {0};
        if (tc__graph_verify(g, true, &verr) != TC_STATUS_OK)
            st = tc__fail(r->err, TC_STATUS_CORRUPT_FILE, "plan graph is invalid: %s", verr.msg);
    }
    if (st) {
        tc__graph_destroy(g);
        return st;
    }
    *out = g;
    return TC_STATUS_OK;
}

tc_status tc__plan_deserialize(const void *data, size_t size, uint32_t flags, tc__graph **g,
                               tc__plan_target_info *target, const void **engine_blob, size_t *engine_size,
                               tc__err *err) {
    if (g == NULL || target == NULL || engine_blob == NULL || engine_size == NULL || (data == NULL && size > 0))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc__plan_deserialize: NULL argument");
    *g = NULL;
    memset(target, 0, sizeof *target);
    *engine_blob = NULL;
    *engine_size = 0;
    if ((uintptr_t)data % TC__PLAN_ALIGN != 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "plan data at address %p is not 64-byte aligned (mmap the file or copy it to aligned memory)",
                        data);
    tc__plan_header h;
    tc_status st = check_header(data, size, flags, &h, err);
    if (st) return st;
    reader r;
    memset(&r, 0, sizeof r);
    r.data = data;
    r.err = err;
    if ((st = check_sections(&r, size, &h, flags))) return st;
    if ((st = check_target(&r, flags, target, err))) return st;
    tc__graph *graph = NULL;
    if ((st = read_graph(&r, &graph))) return st;
    *g = graph;
    if (r.engine_size > 0) {
        *engine_blob = r.engine;
        *engine_size = (size_t)r.engine_size;
    }
    return TC_STATUS_OK;
}
