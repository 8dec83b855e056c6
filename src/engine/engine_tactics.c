/* engine_tactics.c - tactic choice, weight packing and scratch sizing at build time (see engine_tactics.h). */
#include "engine/engine_tactics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "engine/chain_choice.h"
#include "engine/plan_format.h"

tc_status tc__shapes_at(const tc__graph *g, const tc__step *steps, const tc__range *ranges, int which, tc__shapes *s,
                        tc__err *err) {
    int nv = g->n_values;
    memset(s, 0, sizeof *s);
    s->n = nv;
    s->t = calloc((size_t)nv + 1, sizeof *s->t);
    s->known = calloc((size_t)nv + 1, sizeof *s->known);
    s->owned = calloc((size_t)nv + 1, sizeof *s->owned);
    s->unavail = calloc((size_t)nv + 1, sizeof *s->unavail);
    if (!s->t || !s->known || !s->owned || !s->unavail) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int v = 0; v < nv; v++)
        if (g->values[v].init) {
            s->t[v] = *g->values[v].init;
            s->known[v] = true;
        }
    for (int k = 0; k < g->n_inputs; k++) {
        const tc__range *r = &ranges[k];
        tc__tensor *x = &s->t[r->value];
        x->dtype = g->values[r->value].info.dtype;
        x->rank = r->rank;
        for (int32_t d = 0; d < r->rank; d++) x->dims[d] = which == 0 ? r->min[d] : which == 1 ? r->opt[d] : r->max[d];
        int64_t n = tc__numel(x->rank, x->dims);
        if (n < 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' is too large", g->values[r->value].name);
        x->nbytes = (size_t)n * tc_dtype_size(x->dtype);
    }
    tc__shape_state st = {.tensors = s->t, .known = s->known, .capacity = NULL, .alloc_shape_values = true,
                          .owned = s->owned, .scratch = NULL, .unavail = s->unavail};
    return tc__engine_propagate(g, steps, g->n_nodes, &st, err);
}

void tc__shapes_free(tc__shapes *s) {
    if (s->t && s->owned)
        for (int v = 0; v < s->n; v++)
            if (s->owned[v]) free(s->t[v].data);
    free(s->t);
    free(s->known);
    free(s->owned);
    free(s->unavail);
    memset(s, 0, sizeof *s);
}

void tc__desc_build(const tc__graph *g, const tc__node *node, const tc__shapes *s, tc__desc_store *ds) {
    memset(ds, 0, sizeof *ds);
    int n_in = node->n_op_in < 64 ? node->n_op_in : 64;
    for (int i = 0; i < n_in; i++) {
        int32_t v = node->in[i];
        ds->in[i] = v >= 0 ? &s->t[v] : NULL;
        ds->in_const[i] = v >= 0 && g->values[v].init != NULL;
    }
    for (int o = 0; o < node->n_out && o < 16; o++) ds->out[o] = node->out[o] >= 0 ? &s->t[node->out[o]] : NULL;
    const tc__epilogue *e = &node->epi;
    ds->d = (tc__step_desc){.op_type = node->op_type,
                            .opset = g->opset,
                            .attrs = &node->attrs,
                            .n_in = n_in,
                            .in = ds->in,
                            .in_const = ds->in_const,
                            .n_out = node->n_out,
                            .out = ds->out,
                            .epi = e,
                            .bias = e->bias_input >= 0 ? &s->t[node->in[e->bias_input]] : NULL,
                            .residual = e->residual_input >= 0 ? &s->t[node->in[e->residual_input]] : NULL};
}

void tc__desc_build_packed(const tc__graph *g, const tc__node *node, const tc__shapes *s, tc__desc_store *ds) {
    tc__desc_build(g, node, s, ds);
    for (int i = 0; i < ds->d.n_in; i++)
        if (node->in[i] >= 0 && g->values[node->in[i]].init != NULL) ds->in[i] = g->values[node->in[i]].init;
}

const tc__tactic *tc__step_tactic(const tc__step *step, const char *op_type) {
    const tc__backend *be = tc__backend_get(step->backend);
    return be != NULL ? tc__tactic_find(be, step->tactic, op_type) : NULL;
}

uint64_t tc__step_scratch_bytes(const tc__graph *g, const tc__step *step, const tc__shapes *s) {
    const tc__node *node = &g->nodes[step->node];
    const tc__tactic *t = tc__step_tactic(step, node->op_type);
    if (t == NULL || t->scratch_bytes == NULL) return 0;
    tc__desc_store ds;
    tc__desc_build(g, node, s, &ds);
    return (uint64_t)t->scratch_bytes(&ds.d) + 4096;
}

/* Replaces constant input i of node n by a copy packed for tactic t. */
static tc_status pack_input(tc__graph *g, int32_t n, int i, const tc__tactic *t, const tc__step_desc *d, tc__err *err) {
    int32_t v = g->nodes[n].in[i];
    const tc__tensor *src = g->values[v].init;
    char name[256];
    snprintf(name, sizeof name, "%.180s/packed_%s", g->values[v].name, t->name);
    int32_t nv;
    const size_t packed = t->packed_bytes ? t->packed_bytes(d, i) : src->nbytes;
    if (packed != src->nbytes && !tc__plan_packed_size_ok(packed, src->nbytes))
        return tc__fail(err, TC_STATUS_INTERNAL, "tactic %s packs input %d of node '%s' into %zu bytes (the source has %zu)",
                        t->name, i, g->nodes[n].name, packed, src->nbytes);
    tc_status st = packed == src->nbytes ? tc__graph_add_initializer(g, name, src, &nv, err)
                                         : tc__graph_add_packed(g, name, src, packed, &nv, err);
    if (st) return st;
    tc__tensor *dst = (tc__tensor *)g->values[nv].init;
    st = t->pack(d, i, src->data, dst->data, err);
    if (st) return st;
    g->nodes[n].in[i] = nv;
    return TC_STATUS_OK;
}


/* The candidate named `name`, or NULL. */
static const tc__tactic *cand_named(const tc__tactic *const *cands, int n, const char *name) {
    for (int c = 0; c < n; c++)
        if (strcmp(cands[c]->name, name) == 0) return cands[c];
    return NULL;
}

/* Times the candidates of one step at one profile's shapes, or takes them from the cache (packed: the step's constant
 * inputs are packed already: tc__tune_step_packed). */
static tc_status tune_at(const tc__step_desc *d, const tc__tactic *const *cands, int n, const tc__backend *be,
                         void *pool, bool packed, tc__timing_cache *cache, bool *cache_dirty,
                         tc__tune_result *res, tc__err *err) {
    uint64_t sig = tc__step_signature(d);
    const tc__tune_result *hit = tc__timing_cache_find(cache, sig);
    /* (an entry whose winner is no candidate here, from a build that named its tactics otherwise, is timed again) */
    if (hit != NULL && hit->winner >= 0 && hit->winner < hit->n && cand_named(cands, n, hit->cand[hit->winner].name)) {
        *res = *hit;
        return TC_STATUS_OK;
    }
    tc_status st = packed ? tc__tune_step_packed(d, cands, n, 5, be, pool, res, err)
                          : tc__tune_step(d, cands, n, 5, be, pool, res, err);
    if (st == TC_STATUS_OK && cache) {
        st = tc__timing_cache_put(cache, sig, res, err);
        *cache_dirty = true;
    }
    return st;
}

/* Adds a rejected tactic and its reason (as many as fit). */
static void add_reject(tc__tune_reject *r, int *n, const char *name, const char *why) {
    if (*n >= TC__TUNE_MAX_CANDIDATES) return;
    snprintf(r[*n].name, sizeof r[*n].name, "%s", name);
    const size_t len = strnlen(why, sizeof r[*n].why - 1); /* cut to the record's size */
    memcpy(r[*n].why, why, len);
    r[*n].why[len] = '\0';
    (*n)++;
}

/* The tactics of be for op whose capability bits this machine (or TAILCUT_MAX_ISA) lacks, with the missing bits. */
static void reject_missing_caps(const tc__backend *be, const char *op, uint64_t caps, tc__tune_reject *r, int *n) {
    for (size_t i = 0; be->tactics[i] != NULL; i++) {
        const tc__tactic *t = be->tactics[i];
        if (strcmp(t->op_type, op) != 0 || (t->caps & ~caps) == 0) continue;
        char why[160], names[96];
        be->caps_describe(t->caps & ~caps, names, sizeof names);
        snprintf(why, sizeof why, "needs %s (not usable here)", names);
        add_reject(r, n, t->name, why);
    }
}

/* Adds the times of `add` (another profile) to `sum` by candidate (name and configuration); a candidate missing in
 * `add` becomes UINT64_MAX. Then picks the winner with the least total. */
static void merge_profile(tc__tune_result *sum, const tc__tune_result *add) {
    for (int c = 0; c < sum->n; c++) {
        const tc__tune_entry *m = NULL;
        for (int j = 0; j < add->n; j++)
            if (strcmp(add->cand[j].name, sum->cand[c].name) == 0 && add->cand[j].config == sum->cand[c].config)
                m = &add->cand[j];
        sum->cand[c].min_ns = tc__add_sat_u64(sum->cand[c].min_ns, m ? m->min_ns : UINT64_MAX);
        sum->cand[c].median_ns = tc__add_sat_u64(sum->cand[c].median_ns, m ? m->median_ns : UINT64_MAX);
        uint64_t mx = m ? m->max_ns : UINT64_MAX;
        if (mx > sum->cand[c].max_ns) sum->cand[c].max_ns = mx;
    }
    int w = 0;
    for (int c = 1; c < sum->n; c++)
        if (sum->cand[c].min_ns < sum->cand[w].min_ns) w = c;
    sum->winner = w;
}

/* True when tactic t may run a node with (blocked) or without NCHW16c/NCHW8c tensors: blocked tactics only run
 * blocked nodes of their block; layout-agnostic elementwise ones also run blocked nodes whose non-constant inputs all
 * have the output's shape, that have no bias over the last dim and whose channels are not padded (a loop over the
 * bytes would make f(0) of the padding lanes, core/layout.h). */
static bool layout_fits(const tc__tactic *t, bool blocked, const tc__step_desc *d) {
    if (t->flags & TC__TACTIC_BLOCKED)
        return blocked && tc__layout_block(d->attrs) ==
                              ((t->flags & TC__TACTIC_BLOCK8) ? TC__LAYOUT_BLOCK_AVX2 : TC__LAYOUT_BLOCK);
    if (!blocked) return true;
    if (!(t->flags & TC__TACTIC_ANY_LAYOUT) || d->bias != NULL || d->n_out < 1 || d->out[0] == NULL) return false;
    const tc__tensor *y = d->out[0];
    if (y->rank != 4 || y->dims[1] % tc__layout_block(d->attrs) != 0) return false;
    for (int i = 0; i < d->n_in; i++) {
        const tc__tensor *x = d->in[i];
        if (x == NULL || d->in_const[i]) continue;
        if (x->rank != y->rank || memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0) return false;
    }
    return true;
}

/* A step's winner, and (tuned) its best INT8 candidate that chains, its best INT8 candidate that does not (solo), and
 * its best other candidate, with their times. */
typedef struct step_choice {
    const tc__tactic *win, *int8, *solo, *other;
    uint64_t t_int8, t_solo, t_other;
    int i_int8, i_solo, i_other; /* their indices in the step's tune result */
} step_choice;

static bool is_int8(const tc__tactic *t) { return t->precision != NULL && strcmp(t->precision, "int8") == 0; }

/* The best INT8 (chaining, solo) and other candidates of a tuned step (cands: its n candidates, timed in res by name). */
static void best_of(const tc__tactic *const *cands, int n, const tc__tune_result *res, step_choice *c) {
    c->t_int8 = c->t_solo = c->t_other = UINT64_MAX;
    for (int j = 0; j < res->n; j++) {
        const tc__tactic *t = NULL;
        for (int i = 0; i < n; i++)
            if (strcmp(cands[i]->name, res->cand[j].name) == 0) t = cands[i];
        if (t == NULL || (t->flags & TC__TACTIC_FALLBACK)) continue; /* (a last resort is no rival) */
        const bool q = is_int8(t), chains = q && tc__lowp_tactic_chains(t->name);
        uint64_t *best = chains ? &c->t_int8 : q ? &c->t_solo : &c->t_other;
        const tc__tactic **who = chains ? &c->int8 : q ? &c->solo : &c->other;
        int *at = chains ? &c->i_int8 : q ? &c->i_solo : &c->i_other;
        if (res->cand[j].min_ns < *best || *who == NULL) *best = res->cand[j].min_ns, *who = t, *at = j;
    }
}

/* The time of INT8 tactic t on step k with n_extra more attributes (a chained input or output image). */
static tc_status time_chained(const tc__graph *g, const tc__step *step, const tc__shapes *s, const tc__tactic *t,
                              const tc__attr *extra, int n_extra, void *pool, tc__timing_cache *cache,
                              bool *cache_dirty, uint64_t *ns, tc__err *err) {
    const tc__node *node = &g->nodes[step->node];
    tc__attr *items = malloc(sizeof *items * (size_t)(node->attrs.n + n_extra));
    if (items == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    memcpy(items, node->attrs.items, sizeof *items * (size_t)node->attrs.n);
    memcpy(items + node->attrs.n, extra, sizeof *items * (size_t)n_extra);
    const tc__attrs attrs = {node->attrs.n + n_extra, items};
    tc__desc_store ds;
    tc__desc_build(g, node, s, &ds);
    ds.d.attrs = &attrs;
    tc__tune_result r;
    tc_status st = TC_STATUS_OK;
    *ns = UINT64_MAX;
    if (t->supports(&ds.d)) {
        st = tune_at(&ds.d, &t, 1, tc__backend_get(t->backend), pool, false, cache, cache_dirty, &r, err);
        for (int j = 0; st == TC_STATUS_OK && j < r.n; j++) /* (its fastest configuration) */
            if (r.cand[j].min_ns < *ns) *ns = r.cand[j].min_ns;
    }
    free(items);
    return st;
}

/* What a rival of a chaining INT8 candidate is charged: its time plus TC__CHAIN_MARGIN_PCT percent. */
#define TC__CHAIN_MARGIN_PCT 10
static uint64_t with_margin(uint64_t t) { return tc__add_sat_u64(t, t / 100 * TC__CHAIN_MARGIN_PCT); }

/* Re-chooses FP32, chaining INT8 or solo INT8 for the tuned steps that have more than one of them, along the paths of
 * steps that could chain (chain_choice.h); the tune results' winners follow. */
static tc_status choose_along_chains(const tc__graph *g, const tc__step *steps, const tc__shapes *s, void *pool,
                                     tc__timing_cache *cache, bool *cache_dirty, step_choice *choice,
                                     tc__tune_result *results, tc__err *err) {
    const int n = g->n_nodes;
    tc__chain_cost *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    uint8_t *lowp = calloc((size_t)(n > 0 ? n : 1), sizeof *lowp);
    int32_t *step_of = malloc(sizeof *step_of * (size_t)(n > 0 ? n : 1));
    tc_status st = c && lowp && step_of ? TC_STATUS_OK : tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; k < n && st == TC_STATUS_OK; k++) step_of[k] = -1;
    for (int k = 0; k < n && st == TC_STATUS_OK; k++)
        if (steps[k].node >= 0 && steps[k].node < n) step_of[steps[k].node] = k;
    for (int k = 0; k < n && st == TC_STATUS_OK; k++) {
        const step_choice *ch = &choice[k];
        /* An FP32 (or solo INT8) rival must beat a chaining INT8 candidate by TC__CHAIN_MARGIN_PCT: the chain also forms
         * residual images between AVX2 INT8 steps (lowp_chain.c's multi-reader values), which this choice does not
         * time, and the tuner's few runs are noisy on a shared host. */
        const bool margin = ch->int8 != NULL;
        c[k] = (tc__chain_cost){ch->t_int8, UINT64_MAX, margin ? with_margin(ch->t_other) : ch->t_other, -1,
                                margin ? with_margin(ch->t_solo) : ch->t_solo};
        if (steps[k].kind != TC__STEP_COMPUTE || ch->int8 == NULL || g->nodes[steps[k].node].n_in < 1) continue;
        const int32_t v = g->nodes[steps[k].node].in[0], pn = v >= 0 ? g->values[v].producer : -1;
        const int32_t p = pn >= 0 ? step_of[pn] : -1;
        if (p < 0 || p >= k || choice[p].int8 == NULL ||
            !tc__lowp_may_link(g, pn, choice[p].int8->name, steps[k].node, ch->int8->name))
            continue;
        c[k].link = p;
        /* k with its input image, and p with its output image: what each saves goes to the link */
        const tc__attr in_img = {.name = TC__ATTR_INT8_IN_IMAGE, .kind = TC__ATTR_INT, .i = 1};
        st = time_chained(g, &steps[k], s, ch->int8, &in_img, 1, pool, cache, cache_dirty, &c[k].lowp_chained, err);
        int64_t img[9];
        float scale;
        uint64_t p_out = UINT64_MAX;
        size_t n_img = 0;
        if (st == TC_STATUS_OK &&
            (n_img = tc__lowp_link_out_image(g, pn, choice[p].int8->name, steps[k].node, ch->int8->name, s, img, &scale))) {
            const tc__attr out[2] = {{.name = TC__ATTR_INT8_OUT_IMAGE, .kind = TC__ATTR_INTS, .n = n_img, .ints = img},
                                     {.name = TC__ATTR_INT8_OUT_SCALE, .kind = TC__ATTR_FLOAT, .f = scale}};
            st = time_chained(g, &steps[p], s, choice[p].int8, out, 2, pool, cache, cache_dirty, &p_out, err);
        }
        const uint64_t p_saves = p_out < choice[p].t_int8 ? choice[p].t_int8 - p_out : 0;
        if (c[k].lowp_chained != UINT64_MAX) c[k].lowp_chained = c[k].lowp_chained > p_saves ? c[k].lowp_chained - p_saves : 0;
    }
    if (st == TC_STATUS_OK) {
        tc__chain_choose(n, c, lowp);
        for (int k = 0; k < n; k++) {
            step_choice *ch = &choice[k];
            const tc__tactic *t = lowp[k] == TC__CHAIN_LOWP ? ch->int8 : lowp[k] == TC__CHAIN_SOLO ? ch->solo : ch->other;
            /* (a step its last resort won, the reference kernel, keeps it: the others are chosen among) */
            if (t == NULL || ch->win == NULL || (ch->win->flags & TC__TACTIC_FALLBACK)) continue;
            ch->win = t;
            results[k].winner = lowp[k] == TC__CHAIN_LOWP ? ch->i_int8 : lowp[k] == TC__CHAIN_SOLO ? ch->i_solo : ch->i_other;
        }
    }
    free(c), free(lowp), free(step_of);
    return st;
}

/* On a device backend, after the FP16 chains gave steps their image attributes (FP16 NHWC or row images in and out):
 * the configurations of each step's chosen tactic are timed again as the step now runs, with its packed weights, and
 * the fastest is taken. Before chaining, a chained convolution was taken untimed (TC__TACTIC_CHAIN_FIRST) and a dense
 * step was timed with FP32 output, where a configuration can differ from the one its FP16 output gets. The step's tune
 * result becomes this timing (its rejected tactics kept). Skipped with fixed tactics and for a step with one
 * configuration. */
static tc_status retune_chained_configs(const tc__graph *g, const tc__step *steps, const tc__shapes *s,
                                        const tc__backend *be, void *pool, tc__timing_cache *cache, bool *cache_dirty,
                                        tc__tune_result *results, tc__err *err) {
    tc_status st = TC_STATUS_OK;
    unsigned char *some = malloc((size_t)TC__TACTIC_MAX_CONFIGS * TC__TACTIC_CONFIG_MAX);
    if (some == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        const tc__step *step = &steps[k];
        if (step->kind != TC__STEP_COMPUTE) continue;
        const tc__node *node = &g->nodes[step->node];
        const tc__tactic *t = tc__step_tactic(step, node->op_type);
        if (t == NULL || t->configs == NULL || t->config_bytes == 0 || t->config_bytes > TC__TACTIC_CONFIG_MAX) continue;
        tc__desc_store ds;
        tc__desc_build_packed(g, node, s, &ds);
        if (!t->supports(&ds.d) || t->configs(&ds.d, some, TC__TACTIC_MAX_CONFIGS) < 2) continue;
        tc__tune_result r;
        st = tune_at(&ds.d, &t, 1, be, pool, true, cache, cache_dirty, &r, err);
        if (st != TC_STATUS_OK) {
            tc__err_prefix(err, "timing the configurations of step '%s' (%s) as chained: ", node->name, node->op_type);
            break;
        }
        tc__tune_result *res = &results[k];
        res->n = r.n;
        memcpy(res->cand, r.cand, sizeof r.cand[0] * (size_t)r.n);
        res->winner = r.winner;
    }
    free(some);
    return st;
}

/* The steps whose tactic has a proof (tactic.h) are checked again with the attributes the reduced-precision chain gave
 * them (images in and out: other code paths); where one differs, the step takes the proof, which packs its weights the
 * same way (else the build fails). Then *required_isa: the ISA bits of the steps' final tactics. */
static tc_status reprove_chained(const tc__graph *g, tc__step *steps, const tc__shapes *s, void *pool, bool device,
                                 uint64_t *required_isa, tc__err *err) {
    uint64_t isa = 0;
    tc_status st = TC_STATUS_OK;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        tc__step *step = &steps[k];
        if (step->kind != TC__STEP_COMPUTE) continue;
        const tc__node *node = &g->nodes[step->node];
        const tc__tactic *t = tc__step_tactic(step, node->op_type);
        if (t != NULL && t->proof != NULL && !device) { /* (proofs run on host memory) */
            /* the weights are packed by now (into new values s does not cover): both run on those */
            tc__desc_store ds;
            tc__desc_build_packed(g, node, s, &ds);
            bool same = false;
            st = tc__tactic_proven_packed(&ds.d, t, pool, &same, err);
            if (st) tc__err_prefix(err, "step '%s': ", node->name);
            if (st == TC_STATUS_OK && !same) {
                t = t->proof;
                snprintf(step->tactic, sizeof step->tactic, "%s", t->name);
                step->backend = (uint8_t)t->backend;
            }
        }
        if (t != NULL) isa |= t->caps;
    }
    if (st == TC_STATUS_OK) *required_isa = isa;
    return st;
}

tc_status tc__engine_choose_tactics(tc__graph *g, tc__step *steps, const tc__range *const *ranges, int n_profiles,
                                    const tc__tactic_opts *o, tc__tune_result *results, uint64_t *required_isa,
                                    tc__err *err) {
    *required_isa = 0;
    tc__shapes s[TC__MAX_TUNE_PROFILES];
    memset(s, 0, sizeof s);
    if (n_profiles < 1 || n_profiles > TC__MAX_TUNE_PROFILES)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%d profiles to tune (1..%d)", n_profiles,
                        TC__MAX_TUNE_PROFILES);
    tc__timing_cache *cache = NULL;
    const tc__backend *be = o->backend;
    void *pool = NULL; /* the backend's execution handle for the tuner and the proofs */
    tc_status st = TC_STATUS_OK;
    for (int p = 0; p < n_profiles && st == TC_STATUS_OK; p++) st = tc__shapes_at(g, steps, ranges[p], 1, &s[p], err);
    if (st == TC_STATUS_OK && o->cache_path) st = tc__timing_cache_load(o->cache_path, be->fingerprint(), &cache, err);
    if (st == TC_STATUS_OK && !o->fixed) st = be->exec_create(o->threads, &pool, err);
    const bool device = be->mem == TC__MEM_DEVICE; /* (no proof is checked on device memory) */
    const uint64_t isa = be->caps();
    bool cache_dirty = false;
    step_choice *choice = calloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1), sizeof *choice);
    if (choice == NULL && st == TC_STATUS_OK) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    int n_compute = 0, n_done = 0;
    for (int k = 0; k < g->n_nodes; k++) n_compute += steps[k].kind == TC__STEP_COMPUTE;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        tc__step *step = &steps[k];
        tc__tune_result *res = &results[k];
        memset(res, 0, sizeof *res);
        res->winner = 0;
        if (step->kind != TC__STEP_COMPUTE) continue;
        const tc__node *node = &g->nodes[step->node];
        /* a step of an If branch that cannot run at a profile's opt shapes takes its backend's fallback (below) */
        bool unavail = false;
        for (int p = 0; p < n_profiles; p++)
            for (int j = 0; j < node->n_out; j++) unavail = unavail || (node->out[j] >= 0 && s[p].unavail[node->out[j]]);
        if (unavail) continue;
        if (o->progress != NULL) {
            char item[160];
            snprintf(item, sizeof item, "%s (%s)", node->name, node->op_type);
            o->progress(o->progress_user_data, TC_PROGRESS_TUNE, n_done, n_compute, item);
        }
        n_done++;
        tc__desc_store ds[TC__MAX_TUNE_PROFILES];
        for (int p = 0; p < n_profiles; p++) tc__desc_build(g, node, &s[p], &ds[p]);
        const tc__tactic *all[TC__TUNE_MAX_CANDIDATES], *cands[TC__TUNE_MAX_CANDIDATES];
        int n_all = tc__tactics_for(be, node->op_type, isa, all, TC__TUNE_MAX_CANDIDATES), n = 0;
        const bool blocked = tc__layout_any_blocked(&node->attrs);
        /* the tactics that are no candidate, and why (inspect --verbose) */
        tc__tune_reject rejected[TC__TUNE_MAX_CANDIDATES];
        int n_rejected = 0;
        reject_missing_caps(be, node->op_type, isa, rejected, &n_rejected);
        for (int c = 0; c < n_all && st == TC_STATUS_OK; c++) {
            char why[96] = "";
            bool ok = layout_fits(all[c], blocked, &ds[0].d);
            if (!ok)
                snprintf(why, sizeof why, "%s",
                         !(all[c]->flags & TC__TACTIC_BLOCKED)  ? "runs plain-layout steps only"
                         : (all[c]->flags & TC__TACTIC_BLOCK8) ? "runs NCHW8c steps only"
                                                               : "runs NCHW16c steps only");
            for (int p = 0; p < n_profiles && ok; p++) {
                ds[p].d.why = why, ds[p].d.why_size = sizeof why;
                ok = all[c]->supports(&ds[p].d);
                ds[p].d.why = NULL, ds[p].d.why_size = 0;
                if (!ok && why[0] == '\0') snprintf(why, sizeof why, "does not take this step%s", p ? " at a profile" : "");
                if (!ok && p > 0) snprintf(why + strlen(why), sizeof why - strlen(why), " (profile %d)", p);
            }
            /* a tactic with a proof (tactic.h) must match it here first, tuned or not (at the opt shapes of the first
             * profile): it runs on the proof's arithmetic, and where it differs it is not offered */
            if (ok && all[c]->proof != NULL && !device) {
                st = tc__tactic_proven(&ds[0].d, all[c], pool, &ok, err);
                if (!ok) snprintf(why, sizeof why, "its output differs from %s's on this machine", all[c]->proof->name);
            }
            if (ok) cands[n++] = all[c];
            else add_reject(rejected, &n_rejected, all[c]->name, why);
        }
        if (st) {
            tc__err_prefix(err, "checking the tactics of step '%s' (%s): ", node->name, node->op_type);
            break;
        }
        const tc__tactic *win = NULL;
        bool last_resort = n > 0; /* every candidate a fallback (the reference kernel alone): nothing to time */
        for (int c = 0; c < n; c++) last_resort = last_resort && (cands[c]->flags & TC__TACTIC_FALLBACK);
        if (n == 0 && blocked) {
            st = tc__fail(err, TC_STATUS_INTERNAL, "node '%s' (%s): the layout pass made it blocked (NCHW16c or NCHW8c) but no tactic runs it",
                          node->name, node->op_type);
            break;
        } else if (n == 0) {
            char why[512];
            int len = snprintf(why, sizeof why, "%s", n_rejected ? "" : "the backend has no kernel for this op");
            for (int r = 0; r < n_rejected && len >= 0 && (size_t)len < sizeof why; r++)
                len += snprintf(why + len, sizeof why - (size_t)len, "%s%s: %s", r ? "; " : "", rejected[r].name,
                                rejected[r].why);
            st = tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s) cannot run on the %s backend (%s)", node->name,
                          node->op_type, be->name, why);
            break;
        } else if (o->fixed || last_resort || (device && (n == 1 || (cands[0]->flags & TC__TACTIC_CHAIN_FIRST)))) {
            /* untimed: the first supporting tactic runs the step (the op's last resort alone; a device backend's only
             * candidate: nothing to time it against; or one that chains images from step to step) */
            win = cands[0];
            res->n = n;
            for (int c = 0; c < res->n; c++) {
                snprintf(res->cand[c].name, sizeof res->cand[c].name, "%s", cands[c]->name);
                res->cand[c].config = cands[c]->configs != NULL && cands[c]->config_bytes > 0 ? 0 : -1; /* default */
                res->cand[c].min_ns = res->cand[c].median_ns = res->cand[c].max_ns = UINT64_MAX;
            }
        } else {
            st = tune_at(&ds[0].d, cands, n, be, pool, false, cache, &cache_dirty, res, err);
            for (int p = 1; p < n_profiles && st == TC_STATUS_OK; p++) {
                tc__tune_result other;
                st = tune_at(&ds[p].d, cands, n, be, pool, false, cache, &cache_dirty, &other, err);
                if (st == TC_STATUS_OK) merge_profile(res, &other);
            }
            if (st) {
                tc__err_prefix(err, "tuning step '%s' (%s): ", node->name, node->op_type);
                break;
            }
            const char *wname = res->cand[res->winner].name;
            win = cand_named(cands, n, wname);
            if (win == NULL) { /* (never the op's last resort in its place: the plan would silently run slower) */
                st = tc__fail(err, TC_STATUS_INTERNAL, "tuning step '%s' (%s): the winner '%s' is none of its candidates",
                              node->name, node->op_type, wname);
                break;
            }
        }
        choice[k].win = win;
        res->n_rejected = n_rejected;
        memcpy(res->rejected, rejected, sizeof rejected[0] * (size_t)n_rejected);
        if (!o->fixed && !device && n > 0) best_of(cands, n, res, &choice[k]);
    }
    if (st == TC_STATUS_OK && o->progress != NULL) o->progress(o->progress_user_data, TC_PROGRESS_TUNE, n_compute, n_compute, NULL);
    /* INT8 steps that would chain are timed with their input image, then chosen along their paths */
    if (st == TC_STATUS_OK && !o->fixed && o->lowp_chain && n_profiles == 1)
        st = choose_along_chains(g, steps, &s[0], pool, cache, &cache_dirty, choice, results, err);
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        tc__step *step = &steps[k];
        const tc__tactic *win = choice[k].win;
        if (step->kind != TC__STEP_COMPUTE) continue;
        if (win == NULL) { /* shapes unknown at build (an If branch's): the op's last resort */
            win = tc__tactic_fallback(be, g->nodes[step->node].op_type);
            if (win == NULL) {
                st = tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s): its shapes are unknown at build (an If "
                              "branch's) and the %s backend has no fallback tactic for it", g->nodes[step->node].name,
                              g->nodes[step->node].op_type, be->name);
                break;
            }
        }
        tc__desc_store ds;
        tc__desc_build(g, &g->nodes[step->node], &s[0], &ds);
        snprintf(step->tactic, sizeof step->tactic, "%s", win->name);
        step->backend = (uint8_t)win->backend;
        snprintf(step->precision, sizeof step->precision, "%s", win->precision ? win->precision : "fp32");
        for (int i = 0; i < ds.d.n_in && st == TC_STATUS_OK; i++)
            if (ds.in_const[i] && win->packs_input != NULL && win->packs_input(&ds.d, i))
                st = pack_input(g, step->node, i, win, &ds.d, err);
    }
    free(choice);
    if (st == TC_STATUS_OK && o->qdq_elide) tc__elide_qdq(g, steps, results);
    if (st == TC_STATUS_OK && o->lowp_chain && n_profiles == 1) {
        int chained = 0;
        st = tc__lowp_chain(g, steps, &s[0], o->int8_residual_image, o->half_residual_image, &chained, err);
        if (st == TC_STATUS_OK) st = tc__lowp_chain_images(g, steps, &s[0], &chained, err);
    }
    if (st == TC_STATUS_OK && o->nhwc16_chain && device) {
        int chained = 0;
        st = tc__nhwc16_chain(g, steps, &s[0], &chained, err);
        if (st == TC_STATUS_OK) st = tc__row16_chain(g, steps, &s[0], &chained, err);
        if (st == TC_STATUS_OK && !o->fixed)
            st = retune_chained_configs(g, steps, &s[0], be, pool, cache, &cache_dirty, results, err);
    }
    if (st == TC_STATUS_OK) st = reprove_chained(g, steps, &s[0], pool, device, required_isa, err);
    if (st == TC_STATUS_OK && cache && cache_dirty) st = tc__timing_cache_save(cache, o->cache_path, err);
    if (pool) be->exec_destroy(pool);
    tc__timing_cache_free(cache);
    for (int p = 0; p < n_profiles; p++) tc__shapes_free(&s[p]);
    return st;
}

tc_status tc__engine_step_configs(const tc__graph *g, const tc__step *steps, const tc__tune_result *results,
                                  const tc__range *const *ranges, int n_profiles, tc__step_configs *out, tc__err *err) {
    const int ns = g->n_nodes;
    const size_t n = (size_t)n_profiles * (size_t)(ns > 0 ? ns : 1);
    memset(out, 0, sizeof *out);
    out->params = calloc(n, sizeof *out->params);
    out->sizes = calloc(n, sizeof *out->sizes);
    int n_conf = 0; /* steps whose tactic has configurations */
    for (int k = 0; k < ns; k++) {
        const tc__tactic *t =
            steps[k].kind == TC__STEP_COMPUTE ? tc__step_tactic(&steps[k], g->nodes[steps[k].node].op_type) : NULL;
        n_conf += t != NULL && t->configs != NULL && t->config_bytes > 0;
    }
    out->bytes = calloc((size_t)n_profiles * (size_t)(n_conf ? n_conf : 1), TC__TACTIC_CONFIG_MAX);
    unsigned char *some = malloc((size_t)TC__TACTIC_MAX_CONFIGS * TC__TACTIC_CONFIG_MAX);
    tc_status st = out->params && out->sizes && out->bytes && some
                       ? TC_STATUS_OK
                       : tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    size_t used = 0;
    for (int p = 0; p < n_profiles && st == TC_STATUS_OK && n_conf > 0; p++) {
        tc__shapes s;
        st = tc__shapes_at(g, steps, ranges[p], 1, &s, err);
        for (int k = 0; k < ns && st == TC_STATUS_OK; k++) {
            const tc__step *step = &steps[k];
            if (step->kind != TC__STEP_COMPUTE) continue;
            const tc__node *node = &g->nodes[step->node];
            const tc__tactic *t = tc__step_tactic(step, node->op_type);
            if (t == NULL || t->configs == NULL || t->config_bytes == 0) continue;
            /* the tuner's winner when it is this tactic's configuration (else, as untimed: the default) */
            const tc__tune_result *r = &results[k];
            const tc__tune_entry *w = r->n > 0 && r->winner >= 0 && r->winner < r->n ? &r->cand[r->winner] : NULL;
            int j = w != NULL && strcmp(w->name, t->name) == 0 && w->config >= 0 ? w->config : 0;
            tc__desc_store ds;
            tc__desc_build_packed(g, node, &s, &ds);
            const int m =
                t->config_bytes <= TC__TACTIC_CONFIG_MAX ? t->configs(&ds.d, some, TC__TACTIC_MAX_CONFIGS) : 0;
            if (m < 1) {
                st = tc__fail(err, TC_STATUS_INTERNAL, "step '%s': tactic %s offers no configuration at profile %d",
                              node->name, t->name, p);
                break;
            }
            if (j >= m || j >= TC__TACTIC_MAX_CONFIGS) j = 0; /* (fewer at this profile's shapes) */
            unsigned char *dst = out->bytes + used;
            memcpy(dst, some + (size_t)j * t->config_bytes, t->config_bytes);
            used += TC__TACTIC_CONFIG_MAX;
            const size_t i = (size_t)p * (size_t)ns + (size_t)k;
            out->params[i] = dst;
            out->sizes[i] = t->config_bytes;
        }
        tc__shapes_free(&s);
    }
    free(some);
    if (st != TC_STATUS_OK) tc__step_configs_free(out);
    return st;
}

void tc__step_configs_free(tc__step_configs *c) {
    free(c->params);
    free(c->sizes);
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

int tc__step_chain_family(const tc__graph *g, const tc__step *st) {
    if (st->kind != TC__STEP_COMPUTE) return TC__CHAIN_NONE;
    const tc__tactic *t = tc__step_tactic(st, g->nodes[st->node].op_type);
    return t != NULL ? t->chain : TC__CHAIN_NONE;
}

bool tc__step_still_supported(const tc__graph *g, const tc__step *st, const tc__shapes *s) {
    const tc__tactic *t = tc__step_tactic(st, g->nodes[st->node].op_type);
    tc__desc_store ds;
    tc__desc_build_packed(g, &g->nodes[st->node], s, &ds);
    return t != NULL && t->supports(&ds.d);
}
