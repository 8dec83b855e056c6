/*
 * export_qdq.c - writes a calibrated model as a standard QDQ ONNX file (the format onnxruntime's
 * quantize_static produces and TensorRT's explicit quantization reads): every calibrated activation
 * that a Conv (one group or depthwise), MatMul or Gemm reads gets QuantizeLinear -> DequantizeLinear (int8, zero
 * point 0, the calibrated scale; or uint8 with the zero point and scale of the asymmetric codes tailcut's engine gives
 * the outputs of GELU, SiLU and HardSwish), and those nodes' constant FP32 weights become int8 initializers
 * behind a DequantizeLinear (symmetric, per output channel from opset 13, per tensor before). The rest
 * of the model is written as it was read. Models with external data are refused.
 *
 * The original message is unpacked, the new node and initializer lists are swapped in for packing
 * and swapped back before the message is freed; everything added lives in one allocation list.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "core/quant_attr.h"
#include "onnx.pb-c.h"
#include "onnx/onnx_import.h"

#define XP_MAX_MODEL ((size_t)1 << 31)

/* Every block the export allocates, freed together. */
typedef struct xp_pool {
    void **blocks;
    size_t n, cap;
    bool failed;
} xp_pool;

static void *xp_alloc(xp_pool *p, size_t bytes) {
    if (p->failed) return NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        void **b = realloc(p->blocks, cap * sizeof *b);
        if (b == NULL) return p->failed = true, NULL;
        p->blocks = b, p->cap = cap;
    }
    void *m = calloc(1, bytes ? bytes : 1);
    if (m == NULL) return p->failed = true, NULL;
    return p->blocks[p->n++] = m;
}

static void xp_free(xp_pool *p) {
    for (size_t i = 0; i < p->n; i++) free(p->blocks[i]);
    free(p->blocks);
}

static char *xp_name(xp_pool *p, const char *base, const char *suffix) {
    size_t a = strlen(base), b = strlen(suffix);
    char *s = xp_alloc(p, a + b + 1);
    if (s) memcpy(s, base, a), memcpy(s + a, suffix, b + 1);
    return s;
}

/* A tensor initializer: float32 or int8 data (raw), dims. */
static Onnx__TensorProto *xp_tensor(xp_pool *p, const char *name, int32_t dtype, int rank, const int64_t *dims,
                                    const void *data, size_t bytes) {
    Onnx__TensorProto *t = xp_alloc(p, sizeof *t);
    int64_t *d = xp_alloc(p, sizeof(int64_t) * (size_t)(rank + 1));
    uint8_t *raw = xp_alloc(p, bytes);
    if (t == NULL || d == NULL || raw == NULL) return NULL;
    *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
    if (rank > 0) memcpy(d, dims, sizeof(int64_t) * (size_t)rank);
    if (bytes > 0) memcpy(raw, data, bytes);
    t->n_dims = (size_t)rank, t->dims = d;
    t->has_data_type = 1, t->data_type = dtype;
    t->name = (char *)name;
    t->has_raw_data = 1, t->raw_data.len = bytes, t->raw_data.data = raw;
    return t;
}

static Onnx__NodeProto *xp_node(xp_pool *p, const char *op, const char *name, const char *in0, const char *in1,
                                const char *in2, const char *out, int64_t axis) {
    Onnx__NodeProto *n = xp_alloc(p, sizeof *n);
    char **ins = xp_alloc(p, 3 * sizeof(char *)), **outs = xp_alloc(p, sizeof(char *));
    if (n == NULL || ins == NULL || outs == NULL) return NULL;
    *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    ins[0] = (char *)in0, ins[1] = (char *)in1, ins[2] = (char *)in2, outs[0] = (char *)out;
    n->n_input = 3, n->input = ins, n->n_output = 1, n->output = outs;
    n->name = (char *)name, n->op_type = (char *)op, n->domain = (char *)"";
    if (axis >= 0) {
        Onnx__AttributeProto *a = xp_alloc(p, sizeof *a), **as = xp_alloc(p, sizeof *as);
        if (a == NULL || as == NULL) return NULL;
        *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
        a->name = (char *)"axis", a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1, a->i = axis;
        as[0] = a, n->n_attribute = 1, n->attribute = as;
    }
    return n;
}

static int64_t node_int_attr(const Onnx__NodeProto *n, const char *name, int64_t dflt) {
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0 && n->attribute[i]->has_i)
            return n->attribute[i]->i;
    return dflt;
}

/* The index of the calibrated tensor name, or -1. */
static int find_act(const char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}
/* The calibrated scale of name, or 0. */
static float find_scale(const char *const *names, const float *scales, int n, const char *name) {
    const int i = find_act(names, n, name);
    return i >= 0 ? scales[i] : 0.0f;
}

/* What the export decided for one node of the original graph. */
typedef struct xp_node_plan {
    bool quantize;    /* reads a calibrated activation and a constant float32 weight */
    const char *w_dq; /* the weight's DequantizeLinear output */
} xp_node_plan;

/* Adds the int8 weight of node n (its input 1, float32 in g) behind a DequantizeLinear, once per weight. */
static tc_status add_weight(xp_pool *p, const tc__graph *g, const Onnx__NodeProto *n, bool per_channel, double qmax,
                            Onnx__NodeProto **nodes, size_t *n_nodes, Onnx__TensorProto **inits, size_t *n_inits,
                            const char **w_dq, tc__err *err) {
    const char *wname = n->input[1];
    const tc__tensor *w = g->values[tc__graph_find_value((tc__graph *)g, wname)].init;
    /* Output channels: Conv W [C_out, ...] and Gemm transB W [N, K] along axis 0; MatMul / Gemm W [K, N] axis 1. */
    const bool axis1 = strcmp(n->op_type, "MatMul") == 0 || (strcmp(n->op_type, "Gemm") == 0 && node_int_attr(n, "transB", 0) == 0);
    const int64_t channels = per_channel ? (axis1 ? w->dims[1] : w->dims[0]) : 1;
    const int64_t numel = tc__tensor_numel(w), inner = axis1 ? 1 : numel / (w->dims[0] ? w->dims[0] : 1);
    float *scale = xp_alloc(p, sizeof(float) * (size_t)channels);
    int8_t *q = xp_alloc(p, (size_t)numel), *zp = xp_alloc(p, (size_t)channels);
    if (scale == NULL || q == NULL || zp == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    const float *wv = w->data;
    /* Channel of element i: axis 0 (blocks of inner elements) or axis 1 of a 2-D [K, N] (i % N). */
#define XP_CH(i) (channels == 1 ? 0 : axis1 ? (i) % channels : (i) / inner)
    double *amax = xp_alloc(p, sizeof(double) * (size_t)channels);
    if (amax == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < numel; i++)
        if (isfinite(wv[i])) amax[XP_CH(i)] = fmax(amax[XP_CH(i)], fabs((double)wv[i]));
    for (int64_t c = 0; c < channels; c++) scale[c] = amax[c] > 0 ? (float)(amax[c] / qmax) : 1.0f;
    for (int64_t i = 0; i < numel; i++) {
        double v = nearbyint((double)wv[i] / scale[XP_CH(i)]);
        q[i] = (int8_t)(isnan(v) ? 0 : v < -qmax ? -qmax : v > qmax ? qmax : v);
    }
#undef XP_CH
    const char *qn = xp_name(p, wname, "_quantized"), *sn = xp_name(p, wname, "_scale"),
               *zn = xp_name(p, wname, "_zero_point"), *dn = xp_name(p, wname, "_DequantizeLinear_Output"),
               *nn = xp_name(p, wname, "_DequantizeLinear");
    const int64_t cdims[1] = {channels};
    Onnx__TensorProto *tq = xp_tensor(p, qn, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, w->rank, w->dims, q, (size_t)numel);
    Onnx__TensorProto *ts = xp_tensor(p, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, per_channel ? 1 : 0, cdims, scale,
                                      sizeof(float) * (size_t)channels);
    Onnx__TensorProto *tz = xp_tensor(p, zn, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, per_channel ? 1 : 0, cdims, zp,
                                      (size_t)channels);
    Onnx__NodeProto *dq = xp_node(p, "DequantizeLinear", nn, qn, sn, zn, dn, per_channel ? (axis1 ? 1 : 0) : -1);
    if (!tq || !ts || !tz || !dq || !qn || !sn || !zn || !dn || !nn)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    inits[(*n_inits)++] = tq, inits[(*n_inits)++] = ts, inits[(*n_inits)++] = tz;
    nodes[(*n_nodes)++] = dq;
    *w_dq = dn;
    return TC_STATUS_OK;
}

/* Adds QuantizeLinear -> DequantizeLinear of activation name with scale s and zero point z (0: int8, else uint8);
 * *out is the DQ output. */
static tc_status add_act(xp_pool *p, const char *name, float s, uint8_t z, Onnx__NodeProto **nodes, size_t *n_nodes,
                         Onnx__TensorProto **inits, size_t *n_inits, const char **out, tc__err *err) {
    const uint8_t zero = z;
    const char *sn = xp_name(p, name, "_scale"), *zn = xp_name(p, name, "_zero_point"),
               *qo = xp_name(p, name, "_QuantizeLinear_Output"), *dqo = xp_name(p, name, "_DequantizeLinear_Output"),
               *qnn = xp_name(p, name, "_QuantizeLinear"), *dqn = xp_name(p, name, "_DequantizeLinear");
    Onnx__TensorProto *ts = xp_tensor(p, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &s, sizeof s);
    Onnx__TensorProto *tz = xp_tensor(p, zn, z ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
                                      0, NULL, &zero, 1);
    Onnx__NodeProto *q = xp_node(p, "QuantizeLinear", qnn, name, sn, zn, qo, -1);
    Onnx__NodeProto *dq = xp_node(p, "DequantizeLinear", dqn, qo, sn, zn, dqo, -1);
    if (!ts || !tz || !q || !dq || !sn || !zn || !qo || !dqo || !qnn || !dqn)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    inits[(*n_inits)++] = ts, inits[(*n_inits)++] = tz;
    nodes[(*n_nodes)++] = q, nodes[(*n_nodes)++] = dq;
    *out = dqo;
    return TC_STATUS_OK;
}

static tc_status write_atomic(const char *path, const void *data, size_t size, tc__err *err) {
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "output path too long");
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write '%s': %s", tmp, strerror(errno));
    bool ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write '%s'", path);
    }
    return TC_STATUS_OK;
}

tc_status tc__onnx_export_qdq(const char *model_path, const tc__graph *g, const char *const *names, const float *scales,
                              const uint8_t *zero_points, int n_scales, bool reduce_range, const char *out_path,
                              tc__err *err) {
    void *data = NULL;
    size_t size = 0;
    tc_status st = tc__read_file(model_path, XP_MAX_MODEL, &data, &size, err);
    if (st) return st;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (m == NULL || m->graph == NULL) {
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "'%s' is not a valid ONNX model", model_path);
    }
    Onnx__GraphProto *gp = m->graph;
    int64_t opset = 0;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (m->opset_import[i]->domain == NULL || m->opset_import[i]->domain[0] == '\0' ||
            strcmp(m->opset_import[i]->domain, "ai.onnx") == 0)
            opset = m->opset_import[i]->version;
    for (size_t i = 0; i < gp->n_initializer && st == TC_STATUS_OK; i++)
        if (gp->initializer[i]->has_data_location &&
            gp->initializer[i]->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            st = tc__fail(err, TC_STATUS_UNSUPPORTED, "--export-qdq: '%s' keeps weights in external data files",
                          model_path);
    if (st == TC_STATUS_OK && opset < 10)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "--export-qdq needs opset 10 or later (the model has %lld)",
                      (long long)opset);
    xp_pool pool = {0};
    const size_t cap_nodes = gp->n_node * 3 + (size_t)n_scales * 2 + 8, cap_inits = gp->n_initializer + gp->n_node * 3 + (size_t)n_scales * 2 + 8;
    Onnx__NodeProto **nodes = xp_alloc(&pool, sizeof *nodes * cap_nodes);
    Onnx__TensorProto **inits = xp_alloc(&pool, sizeof *inits * cap_inits);
    xp_node_plan *plan = xp_alloc(&pool, sizeof *plan * (gp->n_node + 1));
    const char **act_done = xp_alloc(&pool, sizeof(char *) * 2 * ((size_t)n_scales + 1)); /* name, dq output */
    const char **w_done = xp_alloc(&pool, sizeof(char *) * 2 * (gp->n_node + 1));
    size_t n_nodes = 0, n_inits = 0, n_act = 0, n_w = 0;
    if (st == TC_STATUS_OK && (!nodes || !inits || !plan || !act_done || !w_done))
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    /* Which nodes are quantized: a calibrated input 0 and a float32 initializer weight. */
    for (size_t k = 0; st == TC_STATUS_OK && k < gp->n_node; k++) {
        const Onnx__NodeProto *n = gp->node[k];
        const bool conv = strcmp(n->op_type, "Conv") == 0;
        const bool dense = strcmp(n->op_type, "MatMul") == 0 ||
                           (strcmp(n->op_type, "Gemm") == 0 && node_int_attr(n, "transA", 0) == 0);
        if ((n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) || (!conv && !dense) || n->n_input < 2)
            continue;
        const int32_t wv = tc__graph_find_value((tc__graph *)g, n->input[1]);
        const tc__tensor *w = wv >= 0 ? g->values[wv].init : NULL;
        if (w == NULL || w->dtype != TC_DTYPE_FLOAT32 || w->data == NULL || (conv ? w->rank != 4 : w->rank != 2)) continue;
        const int64_t group = conv ? node_int_attr(n, "group", 1) : 1; /* one group, or depthwise [C, 1, KH, KW] */
        if (group != 1 && !(group == w->dims[0] && w->dims[1] == 1)) continue;
        if (find_scale(names, scales, n_scales, n->input[0]) <= 0.0f) continue;
        plan[k].quantize = true;
    }
    /* Weights first (their DQ nodes read only initializers), then activations that are graph inputs or
     * initializers, then each original node followed by the Q/DQ of its calibrated outputs. */
    for (size_t k = 0; st == TC_STATUS_OK && k < gp->n_node; k++) {
        if (!plan[k].quantize) continue;
        for (size_t i = 0; i < n_w && plan[k].w_dq == NULL; i++)
            if (strcmp(w_done[2 * i], gp->node[k]->input[1]) == 0) plan[k].w_dq = w_done[2 * i + 1];
        if (plan[k].w_dq != NULL) continue;
        const bool dw = strcmp(gp->node[k]->op_type, "Conv") == 0 && node_int_attr(gp->node[k], "group", 1) != 1;
        st = add_weight(&pool, g, gp->node[k], opset >= 13, reduce_range && !dw ? (double)TC__INT8_W7_MAX : 127.0, nodes, &n_nodes, inits,
                        &n_inits, &plan[k].w_dq, err);
        if (st == TC_STATUS_OK) w_done[2 * n_w] = gp->node[k]->input[1], w_done[2 * n_w + 1] = plan[k].w_dq, n_w++;
    }
    /* The producer of each quantized node's input 0 (-1: a graph input). */
    int64_t *prod = xp_alloc(&pool, sizeof(int64_t) * (gp->n_node + 1));
    if (st == TC_STATUS_OK && prod == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (size_t c = 0; st == TC_STATUS_OK && c < gp->n_node; c++) {
        prod[c] = -1;
        for (size_t q = 0; plan[c].quantize && q < gp->n_node; q++)
            for (size_t o = 0; o < gp->node[q]->n_output; o++)
                if (strcmp(gp->node[q]->output[o], gp->node[c]->input[0]) == 0) prod[c] = (int64_t)q;
    }
    /* The calibrated activations some quantized node reads, produced where they are produced. */
    for (size_t k = 0; st == TC_STATUS_OK && k <= gp->n_node; k++) {
        /* k == 0: values no node produces (graph inputs); k > 0: outputs of node k - 1, after it. */
        if (k > 0) {
            Onnx__NodeProto *n = gp->node[k - 1], *copy = n;
            if (plan[k - 1].quantize) {
                copy = xp_alloc(&pool, sizeof *copy);
                char **ins = xp_alloc(&pool, sizeof(char *) * n->n_input);
                if (copy == NULL || ins == NULL) {
                    st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
                    break;
                }
                *copy = *n;
                memcpy(ins, n->input, sizeof(char *) * n->n_input);
                for (size_t i = 0; i < n_act; i++)
                    if (strcmp(act_done[2 * i], n->input[0]) == 0) ins[0] = (char *)act_done[2 * i + 1];
                ins[1] = (char *)plan[k - 1].w_dq;
                copy->input = ins;
            }
            nodes[n_nodes++] = copy;
        }
        /* Candidate activations: for k == 0 every quantized node's input 0 without a producer. */
        for (size_t c = 0; st == TC_STATUS_OK && c < gp->n_node; c++) {
            if (!plan[c].quantize) continue;
            const char *a = gp->node[c]->input[0];
            if (prod[c] != (int64_t)k - 1) continue; /* k == 0: no producer */
            bool done = false;
            for (size_t i = 0; i < n_act; i++) done |= strcmp(act_done[2 * i], a) == 0;
            if (done) continue;
            const char *dq = NULL;
            const int ai = find_act(names, n_scales, a);
            st = add_act(&pool, a, scales[ai], zero_points ? zero_points[ai] : 0, nodes, &n_nodes, inits, &n_inits, &dq,
                         err);
            if (st == TC_STATUS_OK) act_done[2 * n_act] = a, act_done[2 * n_act + 1] = dq, n_act++;
        }
    }
    /* Original initializers that some node still reads (FP32 weights replaced everywhere are dropped). */
    for (size_t i = 0; st == TC_STATUS_OK && i < gp->n_initializer; i++) {
        bool used = false;
        for (size_t k = 0; k < n_nodes && !used; k++)
            for (size_t j = 0; j < nodes[k]->n_input && !used; j++)
                used = nodes[k]->input[j] && strcmp(nodes[k]->input[j], gp->initializer[i]->name) == 0;
        for (size_t o = 0; o < gp->n_output && !used; o++) used = strcmp(gp->output[o]->name, gp->initializer[i]->name) == 0;
        if (used) inits[n_inits++] = gp->initializer[i];
    }
    if (st == TC_STATUS_OK && pool.failed) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (st == TC_STATUS_OK && n_w == 0)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "--export-qdq: no Conv, MatMul or Gemm with an initializer weight "
                                                  "reads a calibrated tensor");
    if (st == TC_STATUS_OK) {
        Onnx__NodeProto **old_nodes = gp->node;
        Onnx__TensorProto **old_inits = gp->initializer;
        const size_t old_n_nodes = gp->n_node, old_n_inits = gp->n_initializer;
        gp->node = nodes, gp->n_node = n_nodes, gp->initializer = inits, gp->n_initializer = n_inits;
        const size_t bytes = onnx__model_proto__get_packed_size(m);
        uint8_t *buf = malloc(bytes ? bytes : 1);
        if (buf == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        else {
            onnx__model_proto__pack(m, buf);
            st = write_atomic(out_path, buf, bytes, err);
            free(buf);
        }
        gp->node = old_nodes, gp->n_node = old_n_nodes, gp->initializer = old_inits, gp->n_initializer = old_n_inits;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    xp_free(&pool);
    return st;
}
