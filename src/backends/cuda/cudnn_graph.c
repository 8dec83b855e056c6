/*
 * cudnn_graph.c - the fused FP16 NHWC convolution as a cuDNN operation graph (cudnn_graph.h): descriptors built with
 * cuDNN's backend API, the heuristics' engine configurations (each rebuilt from its engine index and knobs alone and
 * finalized before it is offered), and the process-wide cache of execution plans that tc__dnn_graph_run builds on
 * first use.
 *
 * The variant pack (the data pointers) is created, finalized and destroyed on every run: it is host-only work of a
 * few microseconds, run() is called on the engine's first runs and while capturing (never on graph replays), and a
 * fresh pack can never carry a stale pointer, which a pack cached with the plan could after the caller's buffers move.
 */
#include "backends/cuda/cudnn_graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_exec.h"
#include "backends/cuda/cudnn.h"

_Static_assert(sizeof(tc__dnn_graph_cfg) == TC__DNN_GRAPH_CFG_BYTES, "tc__dnn_graph_cfg has padding or grew");

/* The tensors' unique ids (the variant pack's keys) and the virtual intermediates'. */
enum { UID_X = 1, UID_W = 2, UID_Y = 3, UID_BIAS = 4, UID_Z = 5, UID_VIRTUAL = 100 };

#define DG_SET_CAP 40   /* descriptors of one graph, one plan (engine, knobs, config, plan) or one heuristic query */
#define DG_CACHE 256    /* execution plans (and refusals) kept for the process */
#define DG_HEUR_MAX 32  /* heuristic results examined per mode */
#define DG_KNOB_READ 64 /* knob choices read from a heuristic configuration (more than cuDNN has knob types) */

static _Thread_local char g_why[320];

const char *tc__dnn_graph_why(void) { return g_why; }

/* ---- descriptor building: the first failing call is remembered, later calls do nothing ------------------------- */

typedef struct dg_set {
    cudnnBackendDescriptor_t d[DG_SET_CAP];
    int n;
} dg_set;

typedef struct dg_ctx {
    const tc__cudnn *dn;
    cudnnStatus_t s;
    const char *what; /* the call that failed */
} dg_ctx;

static void set_destroy(const tc__cudnn *dn, dg_set *set) {
    for (int i = set->n - 1; i >= 0; i--) dn->BackendDestroyDescriptor(set->d[i]);
    set->n = 0;
}

static void note(dg_ctx *c, cudnnStatus_t s, const char *what) {
    if (c->s == CUDNN_STATUS_SUCCESS && s != CUDNN_STATUS_SUCCESS) c->s = s, c->what = what;
}

static cudnnBackendDescriptor_t create(dg_ctx *c, dg_set *set, cudnnBackendDescriptorType_t type, const char *what) {
    if (c->s != CUDNN_STATUS_SUCCESS) return NULL;
    if (set->n >= DG_SET_CAP) {
        note(c, CUDNN_STATUS_INTERNAL_ERROR, "tailcut's descriptor set is full");
        return NULL;
    }
    cudnnBackendDescriptor_t d = NULL;
    note(c, c->dn->BackendCreateDescriptor(type, &d), what);
    if (c->s != CUDNN_STATUS_SUCCESS) return NULL;
    set->d[set->n++] = d;
    return d;
}

static void set_attr(dg_ctx *c, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                     cudnnBackendAttributeType_t type, int64_t count, const void *v, const char *what) {
    if (c->s == CUDNN_STATUS_SUCCESS) note(c, c->dn->BackendSetAttribute(d, name, type, count, v), what);
}

static void get_attr(dg_ctx *c, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                     cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *v, const char *what) {
    if (c->s == CUDNN_STATUS_SUCCESS) note(c, c->dn->BackendGetAttribute(d, name, type, requested, count, v), what);
}

static void finalize(dg_ctx *c, cudnnBackendDescriptor_t d, const char *what) {
    if (c->s == CUDNN_STATUS_SUCCESS) note(c, c->dn->BackendFinalize(d), what);
}

#define CREATE(c, set, type) create(c, set, type, "cudnnBackendCreateDescriptor(" #type ")")
#define SET(c, d, name, type, count, v) set_attr(c, d, name, type, count, v, "cudnnBackendSetAttribute(" #name ")")
#define GET(c, d, name, type, req, cnt, v)                                                                            \
    get_attr(c, d, name, type, req, cnt, v, "cudnnBackendGetAttribute(" #name ")")
#define FINALIZE(c, d, what) finalize(c, d, "cudnnBackendFinalize(" what ")")

/* "what: cuDNN error N (status string); last error: ..." of the failure c holds. */
static void describe(const dg_ctx *c, char *buf, size_t size) {
    char last[192] = "";
    if (c->dn->GetLastErrorString != NULL) {
        c->dn->GetLastErrorString(last, sizeof last);
        last[sizeof last - 1] = '\0';
    }
    snprintf(buf, size, "%s: cuDNN error %d (%s)%s%.190s", c->what, (int)c->s, c->dn->GetErrorString(c->s),
             last[0] ? "; cuDNN's last error: " : "", last);
}

/* Whether cuDNN declined (rather than failed): a status of the NOT_SUPPORTED or BAD_PARAM category. */
static bool declined(cudnnStatus_t s) {
    const int cat = (int)s / 1000 * 1000;
    return s == CUDNN_STATUS_NOT_SUPPORTED || s == CUDNN_STATUS_BAD_PARAM || cat == (int)CUDNN_STATUS_NOT_SUPPORTED ||
           cat == (int)CUDNN_STATUS_BAD_PARAM;
}

/* ---- the geometry --------------------------------------------------------------------------------------------- */

static bool geometry_ok(const tc__dnn_graph_conv *g, char *why, size_t size) {
    if (g == NULL) return snprintf(why, size, "no geometry"), false;
    const int32_t pos[] = {g->n, g->c, g->h, g->w, g->k, g->r, g->s, g->oh, g->ow, g->sh, g->sw, g->dh, g->dw};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i] < 1) return snprintf(why, size, "a size, stride or dilation below 1"), false;
    if (g->ph < 0 || g->pw < 0) return snprintf(why, size, "a negative pad"), false;
    const int64_t oh = ((int64_t)g->h + 2 * (int64_t)g->ph - (int64_t)g->dh * (g->r - 1) - 1) / g->sh + 1;
    const int64_t ow = ((int64_t)g->w + 2 * (int64_t)g->pw - (int64_t)g->dw * (g->s - 1) - 1) / g->sw + 1;
    if (oh != g->oh || ow != g->ow)
        return snprintf(why, size, "output %dx%d is not the convolution's %lldx%lld", g->oh, g->ow, (long long)oh,
                        (long long)ow),
               false;
    const int64_t lim = INT32_MAX;
    if ((int64_t)g->n * g->h * g->w > lim / g->c || (int64_t)g->n * g->oh * g->ow > lim / g->k ||
        (int64_t)g->r * g->s * g->c > lim / g->k)
        return snprintf(why, size, "a tensor of 2^31 elements or more"), false;
    return true;
}

/* ---- the operation graph -------------------------------------------------------------------------------------- */

static cudnnBackendDescriptor_t tensor(dg_ctx *c, dg_set *set, int64_t uid, cudnnDataType_t type, int64_t n,
                                       int64_t ch, int64_t h, int64_t w, bool is_virtual) {
    /* dims in NCHW order, strides of an NHWC layout */
    const int64_t dims[4] = {n, ch, h, w}, strides[4] = {h * w * ch, 1, w * ch, ch}, align = 16;
    cudnnBackendDescriptor_t d = CREATE(c, set, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    SET(c, d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    SET(c, d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    SET(c, d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    SET(c, d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(c, d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    SET(c, d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    FINALIZE(c, d, "tensor");
    return d;
}

/* A pointwise operation y = mode(x[, b]) (FP32 math). */
static cudnnBackendDescriptor_t pointwise(dg_ctx *c, dg_set *set, cudnnPointwiseMode_t mode,
                                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                          cudnnBackendDescriptor_t y) {
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t pw = CREATE(c, set, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    SET(c, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(c, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    FINALIZE(c, pw, "pointwise");
    cudnnBackendDescriptor_t op = CREATE(c, set, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    SET(c, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
    SET(c, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (b != NULL) SET(c, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    SET(c, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    FINALIZE(c, op, "pointwise operation");
    return op;
}

/* The finalized operation graph of g (its descriptors in set), or NULL with the failure in c. */
static cudnnBackendDescriptor_t graph_build(dg_ctx *c, dg_set *set, const tc__dnn_graph_conv *g) {
    const int nodes = 1 + g->bias + g->residual + g->relu;
    const cudnnBackendDescriptor_t x = tensor(c, set, UID_X, CUDNN_DATA_HALF, g->n, g->c, g->h, g->w, false);
    const cudnnBackendDescriptor_t w = tensor(c, set, UID_W, CUDNN_DATA_HALF, g->k, g->c, g->r, g->s, false);
    const cudnnBackendDescriptor_t y = tensor(c, set, UID_Y, CUDNN_DATA_HALF, g->n, g->k, g->oh, g->ow, false);
    /* out[i]: node i's output, the last one y (FP16), the others FP32 virtual */
    cudnnBackendDescriptor_t out[4];
    for (int i = 0; i < nodes; i++)
        out[i] = i == nodes - 1 ? y
                                : tensor(c, set, UID_VIRTUAL + i, CUDNN_DATA_FLOAT, g->n, g->k, g->oh, g->ow, true);

    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t dims = 2, pad[2] = {g->ph, g->pw}, stride[2] = {g->sh, g->sw}, dil[2] = {g->dh, g->dw};
    cudnnBackendDescriptor_t conv = CREATE(c, set, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    SET(c, conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    FINALIZE(c, conv, "convolution");

    cudnnBackendDescriptor_t ops[4];
    const float one = 1.0f, zero = 0.0f;
    ops[0] = CREATE(c, set, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out[0]);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one);
    SET(c, ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero);
    FINALIZE(c, ops[0], "convolution forward operation");
    int i = 1;
    if (g->bias) {
        const cudnnBackendDescriptor_t b = tensor(c, set, UID_BIAS, CUDNN_DATA_HALF, 1, g->k, 1, 1, false);
        ops[i] = pointwise(c, set, CUDNN_POINTWISE_ADD, out[i - 1], b, out[i]);
        i++;
    }
    if (g->residual) {
        const cudnnBackendDescriptor_t z = tensor(c, set, UID_Z, CUDNN_DATA_HALF, g->n, g->k, g->oh, g->ow, false);
        ops[i] = pointwise(c, set, CUDNN_POINTWISE_ADD, out[i - 1], z, out[i]);
        i++;
    }
    if (g->relu) {
        ops[i] = pointwise(c, set, CUDNN_POINTWISE_RELU_FWD, out[i - 1], NULL, out[i]);
        i++;
    }
    cudnnBackendDescriptor_t graph = CREATE(c, set, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    SET(c, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, i, ops);
    SET(c, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->dn->handle);
    FINALIZE(c, graph, "operation graph");
    return c->s == CUDNN_STATUS_SUCCESS ? graph : NULL;
}

/* ---- configurations and plans --------------------------------------------------------------------------------- */

/* The finalized execution plan of cfg over graph (its descriptors in set, the engine first) and its workspace, or
 * NULL with the failure in c. */
static cudnnBackendDescriptor_t plan_build(dg_ctx *c, dg_set *set, cudnnBackendDescriptor_t graph,
                                           const tc__dnn_graph_cfg *cfg, int64_t *ws) {
    cudnnBackendDescriptor_t engine = CREATE(c, set, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    SET(c, engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    SET(c, engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cfg->engine);
    FINALIZE(c, engine, "engine");
    cudnnBackendDescriptor_t knobs[TC__DNN_GRAPH_MAX_KNOBS];
    for (int i = 0; i < cfg->n_knobs; i++) {
        const cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)cfg->knobs[i].type;
        const int64_t value = cfg->knobs[i].value;
        knobs[i] = CREATE(c, set, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        SET(c, knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
        SET(c, knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
        FINALIZE(c, knobs[i], "knob choice");
    }
    cudnnBackendDescriptor_t ecfg = CREATE(c, set, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    SET(c, ecfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    if (cfg->n_knobs > 0)
        SET(c, ecfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, cfg->n_knobs, knobs);
    FINALIZE(c, ecfg, "engine configuration");
    cudnnBackendDescriptor_t plan = CREATE(c, set, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    SET(c, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->dn->handle);
    SET(c, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ecfg);
    FINALIZE(c, plan, "execution plan");
    int64_t got = 0;
    *ws = -1;
    GET(c, plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, ws);
    if (c->s == CUDNN_STATUS_SUCCESS && (got != 1 || *ws < 0))
        note(c, CUDNN_STATUS_INTERNAL_ERROR, "the execution plan's workspace size");
    return c->s == CUDNN_STATUS_SUCCESS ? plan : NULL;
}

/* The engine index and knob choices of a heuristic result hcfg into cfg; false with why when they cannot be read or
 * do not fit the record. */
static bool cfg_extract(const tc__cudnn *dn, cudnnBackendDescriptor_t hcfg, tc__dnn_graph_cfg *cfg, char *why,
                        size_t size) {
    dg_ctx c = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
    dg_set set = {.n = 0};
    memset(cfg, 0, sizeof *cfg);
    cudnnBackendDescriptor_t engine = CREATE(&c, &set, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t got = 0;
    GET(&c, hcfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine);
    GET(&c, engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &cfg->engine);
    /* the knob choices, read into descriptors created for them (in a second set: more than DG_SET_CAP) */
    cudnnBackendDescriptor_t knobs[DG_KNOB_READ];
    int made = 0;
    for (; made < DG_KNOB_READ && c.s == CUDNN_STATUS_SUCCESS; made++)
        note(&c, dn->BackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[made]),
             "cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)");
    if (c.s != CUDNN_STATUS_SUCCESS) made--; /* the failed one was not created */
    int64_t n_knobs = 0;
    GET(&c, hcfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, DG_KNOB_READ, &n_knobs, knobs);
    bool ok = c.s == CUDNN_STATUS_SUCCESS;
    if (!ok) describe(&c, why, size);
    if (ok && (n_knobs < 0 || n_knobs > TC__DNN_GRAPH_MAX_KNOBS)) {
        snprintf(why, size, "engine %lld has %lld knob choices (at most %d kept)", (long long)cfg->engine,
                 (long long)n_knobs, TC__DNN_GRAPH_MAX_KNOBS);
        ok = false;
    }
    for (int64_t i = 0; ok && i < n_knobs; i++) {
        cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
        int64_t value = 0;
        GET(&c, knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &got, &type);
        GET(&c, knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &got, &value);
        if (c.s != CUDNN_STATUS_SUCCESS) {
            describe(&c, why, size);
            ok = false;
        } else if ((int)type < 0 || value < INT32_MIN || value > INT32_MAX) {
            snprintf(why, size, "engine %lld: knob %d's value %lld is outside int32", (long long)cfg->engine,
                     (int)type, (long long)value);
            ok = false;
        } else {
            cfg->knobs[i].type = (int32_t)type;
            cfg->knobs[i].value = (int32_t)value;
        }
    }
    cfg->n_knobs = ok ? (int32_t)n_knobs : 0;
    for (int i = made - 1; i >= 0; i--) dn->BackendDestroyDescriptor(knobs[i]);
    set_destroy(dn, &set);
    return ok;
}

/* Whether the engine (a plan set's first descriptor) carries a numerical note that rules it out. */
static bool engine_noted(const tc__cudnn *dn, cudnnBackendDescriptor_t engine) {
    cudnnBackendNumericalNote_t notes[32];
    int64_t n = 0;
    if (dn->BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 32, &n, notes) !=
        CUDNN_STATUS_SUCCESS)
        return false;
    for (int64_t i = 0; i < n && i < 32; i++)
        if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return true;
    return false;
}

bool tc__dnn_graph_cfg_check(const tc__dnn_graph_cfg *cfg, tc__err *err) {
    if (cfg == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuDNN graph configuration: none"), false;
    if (cfg->engine < 0 || cfg->engine > INT32_MAX)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "cuDNN graph configuration: engine %lld out of range",
                        (long long)cfg->engine),
               false;
    if (cfg->n_knobs < 0 || cfg->n_knobs > TC__DNN_GRAPH_MAX_KNOBS || cfg->reserved != 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "cuDNN graph configuration: %d knobs (at most %d), reserved %d",
                        cfg->n_knobs, TC__DNN_GRAPH_MAX_KNOBS, cfg->reserved),
               false;
    for (int i = 0; i < cfg->n_knobs; i++)
        if (cfg->knobs[i].type < 0 || cfg->knobs[i].type >= 4096)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "cuDNN graph configuration: knob %d has type %d", i,
                            cfg->knobs[i].type),
                   false;
    for (int i = cfg->n_knobs; i < TC__DNN_GRAPH_MAX_KNOBS; i++)
        if (cfg->knobs[i].type != 0 || cfg->knobs[i].value != 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "cuDNN graph configuration: unused knob %d is not zero", i),
                   false;
    return true;
}

/* The library with the backend API, or NULL with why. */
static const tc__cudnn *backend_api(char *why, size_t size) {
    tc__err lerr = {0};
    const tc__cudnn *dn = tc__cudnn_get(&lerr);
    if (dn == NULL) {
        snprintf(why, size, "%.300s", lerr.msg);
        return NULL;
    }
    if (dn->BackendCreateDescriptor == NULL) {
        snprintf(why, size, "cuDNN %zu lacks the backend (graph) API", dn->version);
        return NULL;
    }
    return dn;
}

/* A stream of its own for the plans tc__dnn_graph_configs builds (a finalize may run device work; the handle's last
 * stream may be another thread's, under capture). Under the lock. */
static cudaStream_t build_stream(void) {
    static cudaStream_t s;
    static bool made;
    if (!made && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) made = true;
    return made ? s : NULL;
}

int tc__dnn_graph_configs(const tc__dnn_graph_conv *g, size_t max_ws, tc__dnn_graph_cfg *out, int cap, char *why,
                          size_t why_size) {
    char local[320];
    if (why == NULL || why_size == 0) why = local, why_size = sizeof local;
    why[0] = '\0';
    if (out == NULL || cap < 1) return snprintf(why, why_size, "no room for a configuration"), 0;
    if (!geometry_ok(g, why, why_size)) return 0;
    const tc__cudnn *dn = backend_api(why, why_size);
    if (dn == NULL) return 0;
    tc__cudnn_lock();
    dg_ctx c = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
    dg_set gset = {.n = 0};
    cudaStream_t stream = build_stream();
    if (stream == NULL) note(&c, CUDNN_STATUS_ALLOC_FAILED, "cudaStreamCreateWithFlags for the plans' builds");
    note(&c, dn->SetStream(dn->handle, stream), "cudnnSetStream");
    cudnnBackendDescriptor_t graph = graph_build(&c, &gset, g);
    int n = 0, offered = 0;
    char last[320] = "";
    if (graph == NULL) describe(&c, last, sizeof last);
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    for (int m = 0; graph != NULL && m < 2 && n == 0; m++) {
        dg_ctx hc = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
        dg_set hset = {.n = 0};
        cudnnBackendDescriptor_t heur = CREATE(&hc, &hset, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        SET(&hc, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
        SET(&hc, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[m]);
        FINALIZE(&hc, heur, "engine heuristics");
        int64_t count = 0;
        GET(&hc, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL);
        if (count > DG_HEUR_MAX) count = DG_HEUR_MAX;
        cudnnBackendDescriptor_t results[DG_HEUR_MAX];
        for (int64_t i = 0; i < count; i++) results[i] = CREATE(&hc, &hset, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        int64_t got = 0;
        if (count > 0)
            GET(&hc, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, results);
        if (hc.s != CUDNN_STATUS_SUCCESS) describe(&hc, last, sizeof last);
        for (int64_t i = 0; hc.s == CUDNN_STATUS_SUCCESS && i < got && i < count && n < cap; i++) {
            offered++;
            tc__dnn_graph_cfg cfg;
            if (!cfg_extract(dn, results[i], &cfg, last, sizeof last)) continue;
            bool dup = false;
            for (int j = 0; j < n; j++) dup = dup || memcmp(&out[j], &cfg, sizeof cfg) == 0;
            if (dup) continue;
            dg_ctx pc = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
            dg_set pset = {.n = 0};
            int64_t ws = 0;
            if (plan_build(&pc, &pset, graph, &cfg, &ws) == NULL)
                describe(&pc, last, sizeof last);
            else if ((uint64_t)ws > max_ws)
                snprintf(last, sizeof last, "engine %lld needs %lld bytes of workspace (at most %zu)",
                         (long long)cfg.engine, (long long)ws, max_ws);
            else if (engine_noted(dn, pset.d[0]))
                snprintf(last, sizeof last, "engine %lld reduces in reduced precision", (long long)cfg.engine);
            else
                out[n++] = cfg;
            set_destroy(dn, &pset);
        }
        set_destroy(dn, &hset);
    }
    set_destroy(dn, &gset);
    tc__cudnn_unlock();
    if (n == 0)
        snprintf(why, why_size, "cuDNN's heuristics offered %d configurations, none usable%s%.260s", offered,
                 last[0] ? "; last: " : "", last);
    return n;
}

/* ---- the plan cache and the run ------------------------------------------------------------------------------- */

typedef struct dg_key {
    int32_t geo[16];
    tc__dnn_graph_cfg cfg;
} dg_key;

typedef struct dg_entry {
    dg_key key;
    dg_set graph, plan_set; /* kept alive with the plan */
    cudnnBackendDescriptor_t plan;
    int64_t ws;
    char refused[256]; /* why cuDNN refused the configuration ("" when the plan was built) */
} dg_entry;

static dg_entry *g_cache[DG_CACHE];
static int g_cached;

static void key_of(const tc__dnn_graph_conv *g, const tc__dnn_graph_cfg *cfg, dg_key *k) {
    memset(k, 0, sizeof *k);
    const int32_t v[16] = {g->n, g->c, g->h, g->w, g->k, g->r, g->s, g->oh, g->ow, g->ph, g->pw, g->sh, g->sw, g->dh,
                           g->dw, (int32_t)g->bias | (int32_t)g->residual << 1 | (int32_t)g->relu << 2};
    memcpy(k->geo, v, sizeof v);
    k->cfg.engine = cfg->engine;
    k->cfg.n_knobs = cfg->n_knobs;
    for (int i = 0; i < cfg->n_knobs; i++) k->cfg.knobs[i] = cfg->knobs[i];
}

/* (under the lock) */
static dg_entry *cache_find(const dg_key *k) {
    for (int i = 0; i < g_cached; i++)
        if (memcmp(&g_cache[i]->key, k, sizeof *k) == 0) return g_cache[i];
    return NULL;
}

/* Builds the plan of k into a new cache entry (under the lock, the handle on a stream that is not capturing): the
 * entry (with refused set when cuDNN declined), or NULL with a failure in err. */
static dg_entry *cache_build(const tc__cudnn *dn, const dg_key *k, const tc__dnn_graph_conv *g, tc__err *err) {
    dg_entry *e = calloc(1, sizeof *e);
    if (e == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "cuDNN graph: out of memory for a plan"), NULL;
    e->key = *k;
    dg_ctx c = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
    cudnnBackendDescriptor_t graph = graph_build(&c, &e->graph, g);
    if (graph != NULL) e->plan = plan_build(&c, &e->plan_set, graph, &k->cfg, &e->ws);
    if (c.s != CUDNN_STATUS_SUCCESS && !declined(c.s)) {
        tc__cudnn_fail(c.s, err, c.what);
        set_destroy(dn, &e->plan_set);
        set_destroy(dn, &e->graph);
        free(e);
        return NULL;
    }
    if (c.s != CUDNN_STATUS_SUCCESS) { /* declined: remembered, its descriptors released */
        describe(&c, e->refused, sizeof e->refused);
        set_destroy(dn, &e->plan_set);
        set_destroy(dn, &e->graph);
        e->plan = NULL;
    }
    g_cache[g_cached++] = e;
    return e;
}

/* TC_STATUS_UNSUPPORTED with the reason in this thread's g_why. */
__attribute__((format(printf, 1, 2))) static tc_status refuse(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_why, sizeof g_why, fmt, ap);
    va_end(ap);
    return TC_STATUS_UNSUPPORTED;
}

tc_status tc__dnn_graph_run(const tc__dnn_graph_conv *g, const tc__dnn_graph_cfg *cfg, const void *x, const void *w,
                            const void *bias, const void *z, void *y, void *workspace, size_t ws_bytes,
                            cudaStream_t stream, tc__err *err) {
    g_why[0] = '\0';
    char why[320];
    if (!geometry_ok(g, why, sizeof why))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuDNN graph convolution: %s", why);
    if (!tc__dnn_graph_cfg_check(cfg, err)) return err != NULL ? err->status : TC_STATUS_CORRUPT_FILE;
    if (x == NULL || w == NULL || y == NULL || (g->bias && bias == NULL) || (g->residual && z == NULL))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuDNN graph convolution: a tensor's data is missing");
    const tc__cudnn *dn = backend_api(why, sizeof why);
    if (dn == NULL) return refuse("%s", why);
    const void *ptrs[5] = {x, w, y, g->bias ? bias : NULL, g->residual ? z : NULL};
    for (int i = 0; i < 5; i++)
        if ((uintptr_t)ptrs[i] % 16 != 0) return refuse("tensor %d (x, w, y, bias, z) is not 16-byte aligned", i);
    if (workspace != NULL && (uintptr_t)workspace % 16 != 0)
        return refuse("the workspace is not 16-byte aligned");
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    const cudaError_t ce = cudaStreamIsCapturing(stream, &cs);
    if (ce != cudaSuccess) return tc__cuda_fail(ce, err, "cudaStreamIsCapturing");
    dg_key k;
    key_of(g, cfg, &k);

    tc__cudnn_lock();
    dg_entry *e = cache_find(&k);
    tc_status st = TC_STATUS_OK;
    if (e == NULL) {
        if (cs != cudaStreamCaptureStatusNone) {
            tc__cudnn_unlock();
            return refuse("the execution plan is not built yet and the stream is capturing");
        }
        if (g_cached >= DG_CACHE) {
            tc__cudnn_unlock();
            return refuse("the cache of execution plans is full (%d plans)", DG_CACHE);
        }
        const cudnnStatus_t s = dn->SetStream(dn->handle, stream);
        if (s != CUDNN_STATUS_SUCCESS) {
            tc__cudnn_unlock();
            return tc__cudnn_fail(s, err, "cudnnSetStream");
        }
        e = cache_build(dn, &k, g, err);
        if (e == NULL) {
            tc__cudnn_unlock();
            return err != NULL ? err->status : TC_STATUS_INTERNAL;
        }
    }
    if (e->plan == NULL) {
        st = refuse("cuDNN refuses engine %lld: %.250s", (long long)cfg->engine, e->refused);
    } else if ((uint64_t)e->ws > ws_bytes || (e->ws > 0 && workspace == NULL)) {
        st = refuse("engine %lld needs %lld bytes of workspace, %zu given", (long long)cfg->engine, (long long)e->ws,
                    workspace == NULL ? (size_t)0 : ws_bytes);
    } else {
        int64_t uids[5];
        void *data[5];
        int n = 0;
        for (int i = 0; i < 5; i++)
            if (ptrs[i] != NULL) uids[n] = UID_X + i, data[n++] = (void *)ptrs[i];
        dg_ctx c = {.dn = dn, .s = CUDNN_STATUS_SUCCESS, .what = ""};
        dg_set vset = {.n = 0};
        cudnnBackendDescriptor_t vp = CREATE(&c, &vset, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        SET(&c, vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
        SET(&c, vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, data);
        SET(&c, vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
        FINALIZE(&c, vp, "variant pack");
        if (c.s == CUDNN_STATUS_SUCCESS) note(&c, dn->SetStream(dn->handle, stream), "cudnnSetStream");
        if (c.s == CUDNN_STATUS_SUCCESS) note(&c, dn->BackendExecute(dn->handle, e->plan, vp), "cudnnBackendExecute");
        st = tc__cudnn_fail(c.s, err, c.what);
        set_destroy(dn, &vset);
    }
    tc__cudnn_unlock();
    return st;
}
