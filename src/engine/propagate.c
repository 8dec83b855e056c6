/* propagate.c - concrete shape propagation over an engine's steps, evaluating shape
 * arithmetic on the way (see engine.h). Allocates nothing unless asked to (build time). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "engine/engine.h"
#include "engine/ref_node.h"

#define MAX_IO 64

static tc_status run_shape_step(const tc__graph *g, const tc__node *node, tc__shape_state *s, tc__err *err) {
    const tc__tensor *in[MAX_IO];
    tc__tensor *out[16];
    for (int i = 0; i < node->n_in; i++) in[i] = node->in[i] >= 0 ? &s->tensors[node->in[i]] : NULL;
    for (int o = 0; o < node->n_out; o++) out[o] = node->out[o] >= 0 ? &s->tensors[node->out[o]] : NULL;
    tc__kernel_fn kernel = tc__ref_kernel(node->op_type);
    if (kernel == NULL) return tc__fail(err, TC_STATUS_UNSUPPORTED, "no kernel for %s", node->op_type);
    if (s->scratch) s->scratch->used = 0;
    tc__kernel_ctx kc = {.node_name = node->name,
                         .op_type = node->op_type,
                         .opset = g->opset,
                         .attrs = &node->attrs,
                         .n_in = node->n_op_in,
                         .in = in,
                         .n_out = node->n_out,
                         .out = out,
                         .err = err,
                         .scratch = s->scratch};
    tc_status st = kernel(&kc);
    if (st == TC_STATUS_OK && !tc__epilogue_is_none(&node->epi) && out[0] != NULL)
        st = tc__epilogue_apply(&node->epi, out[0], node->epi.bias_input >= 0 ? in[node->epi.bias_input] : NULL,
                                    node->epi.residual_input >= 0 ? in[node->epi.residual_input] : NULL, err);
    return st;
}

/* The outputs of guarded step node (its branch cannot run at these shapes) become unavailable. */
static void mark_unavail(const tc__node *node, tc__shape_state *s, tc__err *err) {
    for (int o = 0; o < node->n_out; o++) {
        int32_t v = node->out[o];
        if (v < 0) continue;
        s->unavail[v] = true;
        s->tensors[v].rank = 0;
        s->tensors[v].nbytes = 0;
    }
    memset(err, 0, sizeof *err);
}

/* A predicated If (graph/infer_control.c): reads the branch outputs that are available. */
static bool is_select(const tc__node *node) { return strcmp(node->op_type, "If") == 0 && node->domain[0] == '\0'; }

tc_status tc__engine_propagate(const tc__graph *g, const tc__step *steps, int n_steps, tc__shape_state *s,
                               tc__err *err) {
    for (int k = 0; k < n_steps; k++) {
        const tc__node *node = &g->nodes[steps[k].node];
        if (node->n_in > MAX_IO || node->n_out > 16 || node->schema == NULL)
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "step '%s' (%s) cannot be run", node->name, node->op_type);
        /* tolerated: a guarded step that does not infer (unavail set) */
        const bool tolerant = s->unavail != NULL && node->guard >= 0, select = is_select(node);
        for (int o = 0; s->unavail && o < node->n_out; o++)
            if (node->out[o] >= 0) s->unavail[node->out[o]] = false;
        tc__vinfo vin[MAX_IO];
        const tc__vinfo *pin[MAX_IO];
        int32_t missing = -1; /* an input that is unavailable */
        for (int i = 0; i < node->n_op_in; i++) {
            int32_t v = node->in[i];
            if (v >= 0 && s->unavail && s->unavail[v]) {
                if (!select) missing = v;
                v = -1;
            }
            if (v < 0) {
                pin[i] = NULL;
                continue;
            }
            tc__vinfo_from_tensor(&s->tensors[v], s->known[v], &vin[i]);
            pin[i] = &vin[i];
        }
        if (missing >= 0 && tolerant) {
            mark_unavail(node, s, err);
            continue;
        }
        if (missing >= 0)
            return tc__fail(err, TC_STATUS_UNSUPPORTED,
                            "step '%s' (%s) reads '%s', which an If branch computes that cannot run at these input "
                            "shapes", node->name, node->op_type, g->values[missing].name);
        tc__vinfo vout[16];
        for (int o = 0; o < node->n_out; o++) tc__vinfo_init(&vout[o]);
        tc__infer_ctx ictx = {.node_name = node->name,
                              .op_type = node->op_type,
                              .opset = g->opset,
                              .attrs = &node->attrs,
                              .n_in = node->n_op_in,
                              .in = pin,
                              .n_out = node->n_out,
                              .out = vout,
                              .err = err};
        tc_status st = node->schema->infer(&ictx);
        if (st && tolerant) {
            mark_unavail(node, s, err);
            continue;
        }
        if (st) {
            tc__err_prefix(err, "step '%s' (%s): ", node->name, node->op_type);
            return st;
        }
        bool concrete = true;
        for (int o = 0; o < node->n_out; o++)
            if (node->out[o] >= 0 && (!tc__shape_is_concrete(&vout[o].shape) || !tc__dtype_valid(vout[o].dtype)))
                concrete = false;
        if (!concrete && tolerant) {
            mark_unavail(node, s, err);
            continue;
        }
        bool dropped = false;
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) continue;
            const tc__vinfo *vi = &vout[o];
            if (select && (!tc__shape_is_concrete(&vi->shape) || !tc__dtype_valid(vi->dtype))) {
                const int n = node->n_out;
                const int32_t a = node->in[2 + o], b = node->in[2 + n + o];
                const bool a_ok = a >= 0 && !(s->unavail && s->unavail[a]), b_ok = b >= 0 && !(s->unavail && s->unavail[b]);
                char sa[160] = "", sb[160] = "";
                if (a_ok) tc__shape_str(s->tensors[a].rank, s->tensors[a].dims, sa, sizeof sa);
                if (b_ok) tc__shape_str(s->tensors[b].rank, s->tensors[b].dims, sb, sizeof sb);
                const int32_t c = node->in[0]; /* a condition known before the run decides alone */
                const int pick = c >= 0 && s->known[c] && s->tensors[c].data != NULL && s->tensors[c].nbytes > 0
                                     ? ((const uint8_t *)s->tensors[c].data)[0] != 0 : -1;
                if (pick >= 0 || (!a_ok && !b_ok))
                    return tc__fail(err, TC_STATUS_UNSUPPORTED,
                                    "If '%s': %s cannot run at these input shapes (their shapes do not infer)",
                                    node->name, pick == 1 ? "its then branch, which its condition takes,"
                                                : pick == 0 ? "its else branch, which its condition takes," : "neither branch");
                return tc__fail(err, TC_STATUS_UNSUPPORTED,
                                "If '%s': output %d '%s' is %s from the then branch but %s from the else branch at these "
                                "input shapes; outputs are sized before the run, so an If whose output shape depends "
                                "on its condition is not supported", node->name, o, g->values[v].name, sa, sb);
            }
            if (!tc__shape_is_concrete(&vi->shape) || !tc__dtype_valid(vi->dtype))
                return tc__fail(err, TC_STATUS_UNSUPPORTED,
                                "step '%s' (%s): the shape of output '%s' depends on data computed at run time, "
                                "which engines do not support",
                                node->name, node->op_type, g->values[v].name);
            tc__tensor *t = &s->tensors[v];
            t->dtype = vi->dtype;
            t->rank = vi->shape.rank;
            for (int32_t i = 0; i < t->rank; i++) t->dims[i] = vi->shape.dims[i].value;
            int64_t n = tc__numel(t->rank, t->dims);
            /* A blocked output (NCHW<B>c) holds its padding lanes too when C % B != 0 (core/layout.h). */
            if (o == 0 && n >= 0 && t->rank == 4 && tc__layout_out_blocked(&node->attrs))
                n = tc__nchwc_elems(tc__layout_block(&node->attrs), t->dims);
            if (n < 0 || (uint64_t)n > SIZE_MAX / 16)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "step '%s': output too large", node->name);
            t->nbytes = (size_t)n * tc_dtype_size(t->dtype);
            if (s->capacity != NULL && s->capacity[v] != UINT64_MAX && t->nbytes > s->capacity[v] && tolerant) {
                dropped = true; /* not planned for: its branch cannot run at these shapes */
                break;
            }
            if (s->capacity != NULL && s->capacity[v] != UINT64_MAX && t->nbytes > s->capacity[v]) {
                char buf[160];
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "step '%s' (%s): output '%s' of shape %s needs %zu bytes, more than the %llu planned "
                                "for the profile's max shapes",
                                node->name, node->op_type, g->values[v].name, tc__shape_str(t->rank, t->dims, buf, sizeof buf),
                                t->nbytes, (unsigned long long)s->capacity[v]);
            }
            if (steps[k].kind == TC__STEP_SHAPE && s->alloc_shape_values) {
                void *p = calloc(1, t->nbytes ? t->nbytes : 1);
                if (p == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
                if (s->owned[v]) free(t->data);
                t->data = p;
                s->owned[v] = true;
            }
        }
        if (dropped) {
            mark_unavail(node, s, err);
            continue;
        }
        if (steps[k].kind == TC__STEP_SHAPE) {
            st = run_shape_step(g, node, s, err);
            if (st && tolerant) {
                mark_unavail(node, s, err);
                continue;
            }
            if (st) {
                tc__err_prefix(err, "step '%s' (%s): ", node->name, node->op_type);
                return st;
            }
            for (int o = 0; o < node->n_out; o++)
                if (node->out[o] >= 0) s->known[node->out[o]] = true;
        }
    }
    return TC_STATUS_OK;
}
