/*
 * context_keep.c - keep-tensors mode of a context (tc_context_keep_tensors): a second activation arena,
 * planned with every buffer live until the last step so that no step overwrites another's output, and the
 * reading of any step's output after a run (values stored NCHW16c are converted to NCHW into a buffer
 * allocated here, so neither run nor tc_context_tensor allocates). For debugging accuracy, not for speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "engine/context.h"
#include "engine/memory_plan.h"

#define KEEP_ALIGN 64

void tc__ctx_keep_free(tc__keep *k) {
    free(k->arena);
    free(k->offset);
    free(k->plain);
    free(k->plain_off);
    memset(k, 0, sizeof *k);
}

/* True when value v is stored blocked (NCHW16c or NCHW8c): output 0 of a node whose tc.layout_out says so. */
static bool value_blocked(const tc__graph *g, int32_t v) {
    int32_t p = g->values[v].producer;
    return p >= 0 && p < g->n_nodes && g->nodes[p].n_out > 0 && g->nodes[p].out[0] == v &&
           tc__layout_out_blocked(&g->nodes[p].attrs);
}

/*
 * Plans k->offset: the engine's arena buffers (same sizes, same view aliases) with every lifetime ending
 * at the last step, so that none shares bytes with another; *bytes receives the arena size.
 */
static tc_status plan_keep(const tc_engine *e, const tc__profile *pr, tc__keep *k, uint64_t *bytes, tc__err *err) {
    const tc__graph *g = e->g;
    int nv = g->n_values;
    tc__mem_req *reqs = calloc((size_t)nv + 1, sizeof *reqs);
    if (reqs == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory planning the kept tensors");
    for (int v = 0; v < nv; v++) {
        bool in_arena = pr->offset[v] != TC__NOT_IN_ARENA;
        reqs[v] = (tc__mem_req){.size = in_arena ? (pr->capacity[v] ? pr->capacity[v] : 1) : 0,
                                .first = 0,
                                .last = e->n_steps,
                                .alias_of = -1};
    }
    for (int s = 0; s < e->n_steps; s++) {
        const tc__node *node = &g->nodes[e->steps[s].node];
        for (int o = 0; o < node->n_out; o++)
            if (node->out[o] >= 0 && e->steps[s].kind != TC__STEP_SHAPE) reqs[node->out[o]].first = s;
        /* A view's output is its input's bytes under another shape: they stay one buffer. */
        if (e->steps[s].kind == TC__STEP_VIEW && node->n_out > 0 && node->n_in > 0 && node->out[0] >= 0 &&
            node->in[0] >= 0 && reqs[node->out[0]].size > 0 && reqs[node->in[0]].size > 0)
            reqs[node->out[0]].alias_of = node->in[0];
    }
    tc_status st = tc__memory_plan(reqs, nv, KEEP_ALIGN, k->offset, bytes, err);
    for (int v = 0; st == TC_STATUS_OK && v < nv; v++)
        if (reqs[v].size == 0) k->offset[v] = TC__NOT_IN_ARENA;
    free(reqs);
    return st;
}

/* Points every arena value that no caller buffer is bound to at base + offset[v]. */
static void relocate(tc_context *c, unsigned char *base, const uint64_t *offset) {
    for (int v = 0; v < c->e->g->n_values; v++)
        if (offset[v] != TC__NOT_IN_ARENA && !c->bound[v]) c->tensors[v].data = base + offset[v];
}

static tc_status keep_enable(tc_context *c) {
    const tc_engine *e = c->e;
    const tc__graph *g = e->g;
    const tc__profile *pr = c->prof;
    int nv = g->n_values;
    tc__keep k = {0};
    tc__err err = {0};
    k.offset = malloc(sizeof(uint64_t) * ((size_t)nv + 1));
    k.plain_off = malloc(sizeof(uint64_t) * ((size_t)nv + 1));
    if (k.offset == NULL || k.plain_off == NULL) {
        tc__ctx_keep_free(&k);
        return tc__fail(&c->err, TC_STATUS_OUT_OF_MEMORY, "out of memory keeping tensors");
    }
    uint64_t arena_bytes = 0, plain_bytes = 0;
    tc_status st = plan_keep(e, pr, &k, &arena_bytes, &err);
    for (int v = 0; st == TC_STATUS_OK && v < nv; v++) {
        k.plain_off[v] = TC__NOT_IN_ARENA;
        if (k.offset[v] == TC__NOT_IN_ARENA || !value_blocked(g, v)) continue;
        k.plain_off[v] = plain_bytes;
        uint64_t size = (pr->capacity[v] + KEEP_ALIGN - 1) & ~(uint64_t)(KEEP_ALIGN - 1);
        if (size < pr->capacity[v] || plain_bytes + size < plain_bytes)
            st = tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s' is too large to keep", g->values[v].name);
        plain_bytes += size;
    }
    if (st == TC_STATUS_OK && (arena_bytes > SIZE_MAX || plain_bytes > SIZE_MAX))
        st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "the kept tensors need more memory than can be addressed");
    if (st == TC_STATUS_OK) {
        k.arena = tc__ctx_alloc64((size_t)arena_bytes);
        k.plain = tc__ctx_alloc64((size_t)plain_bytes);
        if (k.arena == NULL || k.plain == NULL)
            st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory keeping tensors (%llu + %llu bytes)",
                          (unsigned long long)arena_bytes, (unsigned long long)plain_bytes);
    }
    if (st != TC_STATUS_OK) {
        tc__ctx_keep_free(&k);
        c->err = err;
        return st;
    }
    /* Zeroed, so that a tensor read before the first run holds zeros rather than stale bytes. */
    memset(k.arena, 0, (size_t)arena_bytes);
    memset(k.plain, 0, (size_t)plain_bytes);
    c->keep = k;
    c->keeping = true;
    relocate(c, k.arena, k.offset);
    c->dirty = true; /* shape steps write their results into the new buffers at the next reshape */
    return TC_STATUS_OK;
}

tc_status tc_context_keep_tensors(tc_context *c, int enable) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if ((enable != 0) == c->keeping) return TC_STATUS_OK;
    if (enable && c->device) {
        snprintf(c->err.msg, sizeof c->err.msg, "keeping every step's output is not available on the %s backend yet",
                 c->e->backend->name);
        c->err.status = TC_STATUS_UNSUPPORTED;
        return TC_STATUS_UNSUPPORTED;
    }
    if (enable) return keep_enable(c);
    relocate(c, c->arena, c->prof->offset);
    tc__ctx_keep_free(&c->keep);
    c->keeping = false;
    c->dirty = true;
    return TC_STATUS_OK;
}

/* Copies an NCHW<block>c tensor of logical shape t (rank 4) from src into NCHW dst. */
static void unblock(const tc__tensor *t, size_t block, const unsigned char *src, unsigned char *dst) {
    const size_t n_total = (size_t)t->dims[0], c_total = (size_t)t->dims[1], h_total = (size_t)t->dims[2],
                 w_total = (size_t)t->dims[3], es = tc_dtype_size(t->dtype);
    size_t i = 0;
    for (size_t n = 0; n < n_total; n++)
        for (size_t ch = 0; ch < c_total; ch++)
            for (size_t h = 0; h < h_total; h++)
                for (size_t w = 0; w < w_total; w++, i++) {
                    size_t j = tc__nchwc_offset(block, c_total, h_total, w_total, n, ch, h, w);
                    if (es == 4) ((uint32_t *)(void *)dst)[i] = ((const uint32_t *)(const void *)src)[j];
                    else memcpy(dst + i * es, src + j * es, es);
                }
}

tc_status tc__ctx_keep_tensor(tc_context *c, int32_t v, tc__tensor *t) {
    const tc__graph *g = c->e->g;
    const tc__value *val = &g->values[v];
    if (val->init != NULL)
        return tc__fail(&c->err, TC_STATUS_INVALID_ARGUMENT,
                        "'%s' is a constant of the engine (weights), not a tensor a step computes", val->name);
    if (val->producer >= 0 && (tc__attr_has(&g->nodes[val->producer].attrs, TC__ATTR_INT8_OUT_IMAGE) ||
                               tc__attr_has(&g->nodes[val->producer].attrs, TC__ATTR_HALF_OUT_IMAGE) ||
                               tc__attr_has(&g->nodes[val->producer].attrs, TC__ATTR_NHWC16_OUT) ||
                               tc__attr_int(&g->nodes[val->producer].attrs, TC__ATTR_ROW16_OUT, 0) == 1))
        return tc__fail(&c->err, TC_STATUS_INVALID_ARGUMENT,
                        "'%s' holds INT8 codes or 16-bit floats that its producer hands to the next layer, not FP32 "
                        "values (build with "
                        "the lowp_chain pass disabled to read it)", val->name);
    if (c->prof->offset[v] == TC__NOT_IN_ARENA)
        return tc__fail(&c->err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s' has no data in this engine", val->name);
    if (!c->keeping)
        return tc__fail(&c->err, TC_STATUS_INVALID_ARGUMENT,
                        "'%s' is an intermediate tensor, whose memory later steps reuse: call "
                        "tc_context_keep_tensors(context, 1) before the run to read it", val->name);
    const tc__tensor *kept = &c->tensors[v];
    *t = *kept;
    if (c->keep.plain_off[v] == TC__NOT_IN_ARENA) return TC_STATUS_OK;
    t->nbytes = (size_t)tc__numel(kept->rank, kept->dims) * tc_dtype_size(kept->dtype); /* the NCHW copy's */
    /* Stored NCHW<block>c: 4-D, its channels padded up to a multiple of the block (core/layout.h). */
    const int64_t block = tc__layout_block(&g->nodes[val->producer].attrs);
    if (kept->rank != 4 || (block != TC__LAYOUT_BLOCK && block != TC__LAYOUT_BLOCK_AVX2) || tc_dtype_size(kept->dtype) == 0 ||
        (uint64_t)kept->nbytes > c->prof->capacity[v] || tc__nchwc_elems(block, kept->dims) < 0 ||
        (size_t)tc__nchwc_elems(block, kept->dims) * tc_dtype_size(kept->dtype) != kept->nbytes)
        return tc__fail(&c->err, TC_STATUS_INTERNAL, "tensor '%s' is marked NCHW16c but its shape does not allow it",
                        val->name);
    unsigned char *dst = c->keep.plain + c->keep.plain_off[v];
    unblock(kept, (size_t)block, kept->data, dst);
    t->data = dst;
    return TC_STATUS_OK;
}
