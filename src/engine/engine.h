/*
 * engine.h - the internal shape of an engine (immutable after build or load) and of the
 * per-profile memory plan. Built engines and loaded plans are the same object: a build
 * serializes its result and reads it back, so there is one code path to trust.
 */
#ifndef TC_ENGINE_ENGINE_H
#define TC_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/backend.h"
#include "backends/epilogue.h"
#include "graph/graph.h"
#include "tactics/tuner.h"

#define TC__NOT_IN_ARENA UINT64_MAX

typedef enum tc__step_kind {
    TC__STEP_COMPUTE = 0, /* runs in tc_context_run */
    TC__STEP_SHAPE = 1,   /* shape arithmetic: evaluated when input shapes are set */
    TC__STEP_VIEW = 2,    /* reshape-like: output aliases its input's memory, nothing runs */
} tc__step_kind;

typedef struct tc__step {
    int32_t node;         /* index into the graph's nodes */
    uint8_t kind;         /* tc__step_kind */
    uint8_t backend;      /* TC__BACKEND_* of the tactic that runs it (the reference kernels: the CPU's) */
    char tactic[32];
    char precision[8];
} tc__step;

typedef struct tc__range {
    int32_t value;        /* graph input value index */
    int32_t rank;
    int64_t min[TC_MAX_RANK], opt[TC_MAX_RANK], max[TC_MAX_RANK];
} tc__range;

typedef struct tc__profile {
    int32_t n_ranges;
    tc__range *ranges;    /* one per graph input, in graph input order */
    uint64_t arena_bytes, naive_bytes, scratch_bytes;
    uint64_t *offset;     /* per value: arena offset or TC__NOT_IN_ARENA */
    uint64_t *capacity;   /* per value: bytes reserved (size at the max shapes) */
} tc__profile;

struct tc_engine {
    tc__graph *g;
    int32_t n_steps;
    tc__step *steps;
    int32_t n_profiles;
    tc__profile *profiles;
    int32_t threads;
    uint64_t weight_bytes;
    /* Backing bytes of the plan: a malloc'd buffer (built) or an mmap (loaded). */
    void *bytes;
    size_t n_bytes;
    bool mapped;
    char **step_ops;      /* per step: "Conv+BatchNormalization+Relu" */
    const char **node_branch; /* per node: the If branch it runs under (tc__branch_labels), "" for none */
    int *node_depth;          /* per node: how many If branches deep */
    tc__tune_result *tuning;            /* per step: candidates and their times */
    const tc__tactic **tactics;         /* per compute step: its tactic (by the plan's name; "ref": the CPU's reference
                                           kernel, a fallback tactic like any other); NULL for the other steps */
    const tc__backend *backend;         /* the backend the engine was built for (its contexts' memory and runs) */
    uint64_t required_caps;             /* the backend's capability bits the steps' tactics need */
    uint32_t target_size;               /* the target record of the build machine (plan TARGET section) */
    unsigned char target[TC__TARGET_RECORD_MAX];
    /* Per (profile p, step k) at [p * n_steps + k]: the tactic's configuration (tc__tactic.config_bytes bytes, inside
     * the plan's bytes) or NULL and 0 for tactics without configurations. */
    const unsigned char **params;
    uint32_t *param_size;
    /* A device backend's engine (backend->mem == TC__MEM_DEVICE): the weights in device memory, uploaded at load
     * (engine_device.c); per value the offset of its initializer there, or UINT64_MAX. NULL on host backends. */
    void *dev_weights;
    uint64_t dev_weight_bytes;
    uint64_t *dev_off;
};

/* Fills label[n] (strings in g's arena; "" outside any If branch decided at run time) and depth[n] for every node of
 * g, for inspect (branch_label.c). */
tc_status tc__branch_labels(tc__graph *g, const char **label, int *depth, tc__err *err);

/* A device backend's engine: every compute step runs one of the backend's tactics (else TC_STATUS_CORRUPT_FILE). */
tc_status tc__engine_device_check(const tc_engine *e, tc__err *err);
/* Uploads the initializers into e->dev_weights (engine_device.c); tc__engine_device_free undoes it (NULL-safe). */
tc_status tc__engine_upload(tc_engine *e, tc__err *err);
void tc__engine_device_free(tc_engine *e);

/* Builds the plan bytes of a model graph (clone, passes, tactics, memory plans, serialize); malloc'd. */
tc_status tc__engine_build_plan(const tc__graph *model_graph, const tc_build_options *o, void **bytes, size_t *n_bytes,
                                tc__err *err);

/* Serializes steps and profiles into the plan's ENGINE section (malloc'd, deterministic). */
tc_status tc__engine_blob_write(const tc_engine *e, void **out, size_t *size, tc__err *err);
/* Parses an ENGINE section into e->steps / e->profiles (validating against e->g). */
tc_status tc__engine_blob_read(tc_engine *e, const void *data, size_t size, tc__err *err);
/* Builds e from plan bytes (takes ownership of bytes: freed or unmapped by tc_engine_destroy). */
tc_status tc__engine_from_plan(void *bytes, size_t n_bytes, bool mapped, uint32_t plan_flags, tc_engine **out,
                               tc__err *err);

/*
 * Concrete shape propagation over the steps, shared by the build (at max shapes, to size the
 * arena) and by contexts (when input shapes change). tensors[v] holds each value's dtype and
 * dims; on entry inputs and initializers are filled. Shape steps are evaluated with `data`
 * pointers that the caller set for their outputs (or allocated here when alloc_shape_values).
 */
typedef struct tc__shape_state {
    tc__tensor *tensors;      /* per value */
    bool *known;              /* per value: contents known before run (initializers, shape steps) */
    const uint64_t *capacity; /* per value: byte limit, or NULL for none */
    bool alloc_shape_values;  /* build: malloc shape-step outputs (caller frees those with owned[v]) */
    bool *owned;
    tc__scratch *scratch;     /* for shape steps' kernels, may be NULL */
    /* Per value, or NULL: set for the outputs of a guarded step (an If branch decided at run time) whose shapes do not
     * infer at these input shapes, instead of failing; such a step may run only if its branch is not taken. NULL:
     * every step must infer. */
    bool *unavail;
} tc__shape_state;

tc_status tc__engine_propagate(const tc__graph *g, const tc__step *steps, int n_steps, tc__shape_state *s,
                               tc__err *err);

#endif
