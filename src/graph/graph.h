/*
 * graph.h - the graph IR: values (tensors flowing between nodes, graph inputs,
 * initializers), nodes with attributes, symbols for named dims, and the
 * entry points that build, verify, order and infer shapes on a graph.
 *
 * A graph owns all its memory through one arena; tc__graph_destroy frees it.
 * Values and nodes are referred to by index. Nodes are kept in topological
 * order once tc__graph_toposort has succeeded.
 */
#ifndef TC_GRAPH_GRAPH_H
#define TC_GRAPH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/attr.h"
#include "core/epilogue.h"
#include "core/error.h"
#include "graph/op_schema.h"
#include "graph/shape.h"

/* A STRING attribute on a node the model load could not rewrite (a Loop it cannot unroll): why, naming the node,
 * which tc__graph_fail_unsupported quotes. */
#define TC__ATTR_WHY "tc.why"

typedef struct tc__value {
    const char *name;
    tc__vinfo info;          /* dtype, (symbolic) shape, known value */
    const tc__tensor *init;  /* initializer data or NULL */
    int32_t producer;        /* index of the producing node, -1 for inputs/initializers */
    bool is_input;           /* graph input (without initializer) */
    bool is_output;          /* graph output */
} tc__value;

typedef struct tc__node {
    const char *name;        /* never NULL; generated when the model has none */
    const char *op_type;
    const char *domain;      /* "" for the default ONNX domain */
    int n_in, n_out;
    int n_op_in;             /* inputs the op itself takes: in[0..n_op_in); epilogue operands follow */
    int32_t *in;             /* value indices; -1 for an absent optional input */
    int32_t *out;            /* value indices; -1 for an absent optional output */
    tc__attrs attrs;
    const tc__op_schema *schema; /* NULL when unsupported */
    tc__epilogue epi;        /* fused into this node's output; none after import */
    const char *fused;       /* "+"-joined ops folded or fused into this node, e.g. "BatchNormalization+Relu"; "" if none */
    bool removed;            /* set by a pass; dropped by tc__graph_compact */
    /* -1, or the index (>= n_op_in) of the input that guards this node: a one-element bool that says whether the
     * node runs (a node of an If branch decided at run time, engine/model_predicate_if.c). As an input it orders
     * the node after its guard and keeps the guard alive; kernels never see it. */
    int32_t guard;
} tc__node;

/* Warnings kept per graph; later ones are dropped. */
#define TC__GRAPH_MAX_WARNINGS 16

typedef struct tc__graph {
    tc__arena arena;
    const char *name;
    int64_t opset;           /* version of the default domain */
    int64_t ir_version;
    const char *producer_name;

    tc__value *values;
    int n_values, cap_values;
    tc__node *nodes;
    int n_nodes, cap_nodes;
    int32_t *inputs;         /* graph inputs without initializers, in model order */
    int n_inputs;
    int32_t *outputs;
    int n_outputs;
    const char **symbols;    /* names of symbolic dims, indexed by tc__dim.sym */
    int n_symbols, cap_symbols;
    int32_t *name_index;     /* open-addressing hash of value names -> value index + 1 (0 = empty) */
    int cap_index;           /* power of two, kept at least twice n_values */
    const char *warnings[TC__GRAPH_MAX_WARNINGS]; /* what loading let through (in the arena; not cloned) */
    int n_warnings;
} tc__graph;

tc__graph *tc__graph_create(void);
void tc__graph_destroy(tc__graph *g);

/* Deep copy (strings, attributes, initializer data) into a new graph; inferred values are not copied. */
tc_status tc__graph_clone(const tc__graph *src, tc__graph **out, tc__err *err);

/* Records a warning (formatted like printf) once: a repeat of one already recorded is dropped. */
void tc__graph_warn(tc__graph *g, const char *fmt, ...);

/* Looks up a value by name; -1 when absent (hashed). */
int32_t tc__graph_find_value(const tc__graph *g, const char *name);
/* Adds a value (name copied); fails on a duplicate name. Returns index in *out. */
tc_status tc__graph_add_value(tc__graph *g, const char *name, int32_t *out, tc__err *err);
/* Returns the value named name, adding it when absent. */
tc_status tc__graph_value_by_name(tc__graph *g, const char *name, int32_t *out, tc__err *err);
/* Appends a node with room for n_in inputs and n_out outputs (filled by the caller). */
tc_status tc__graph_add_node(tc__graph *g, const char *name, const char *op_type, const char *domain,
                             int n_in, int n_out, int32_t *out_index, tc__err *err);
/* Appends an epilogue operand (value index v) to node n's inputs; returns its input index in *index. */
tc_status tc__graph_node_add_input(tc__graph *g, int32_t n, int32_t v, int *index, tc__err *err);
/* Records that op_type was folded or fused into node n (for inspection). */
tc_status tc__graph_node_note_fused(tc__graph *g, int32_t n, const char *op_type, tc__err *err);

/*
 * Rewriting helpers for passes (src/graph/rewrite.c).
 */
/* Number of node inputs (of nodes not removed) reading value v, plus 1 if v is a graph output. */
int tc__graph_use_count(const tc__graph *g, int32_t v);
/* Makes every node input that reads old_v read new_v instead (graph outputs are not touched). */
void tc__graph_replace_uses(tc__graph *g, int32_t old_v, int32_t new_v);
/* Drops nodes marked removed, keeping the order of the others and fixing producers. */
void tc__graph_compact(tc__graph *g);
/* Adds an initializer holding a copy of t, named after base_name (made unique). Index in *out. */
tc_status tc__graph_add_initializer(tc__graph *g, const char *base_name, const tc__tensor *t, int32_t *out,
                                    tc__err *err);
/* Adds an initializer of t's dtype and dims whose data is nbytes zeroed bytes (a tactic's packed weight: fewer bytes
 * than the dims say, which only the tactic that packed them reads); otherwise as tc__graph_add_initializer. */
tc_status tc__graph_add_packed(tc__graph *g, const char *base_name, const tc__tensor *like, size_t nbytes, int32_t *out,
                               tc__err *err);

/* Interns a symbol name; returns its id or -1 on allocation failure. */
int32_t tc__graph_symbol(tc__graph *g, const char *name);

/* Orders nodes topologically (stable), sets producers; fails on cycles, undefined inputs,
 * values produced twice. */
tc_status tc__graph_toposort(tc__graph *g, tc__err *err);

/*
 * Checks structure: every node input defined, every output produced once, graph
 * outputs reachable, known ops (unless allow_unsupported), domains.
 */
tc_status tc__graph_verify(tc__graph *g, bool allow_unsupported, tc__err *err);
/* TC_STATUS_UNSUPPORTED naming every node of g whose op this build lacks, grouped by op (verify.c). */
tc_status tc__graph_fail_unsupported(const tc__graph *g, tc__err *err);

/*
 * Evaluates a node whose inputs are all known, for constant propagation of small
 * tensors during inference. Supplied by a layer above (the engine), so the graph
 * layer need not call backends. On success fills outs[0..n_out) with tensors the
 * graph takes ownership of (allocated with malloc; the graph frees them).
 */
typedef tc_status (*tc__eval_fn)(void *user, const tc__node *node, const tc__tensor *const *in,
                                 tc__tensor *outs, tc__err *err);

/*
 * Static shape and type inference over the whole graph in topological order.
 * Graph inputs keep their declared (symbolic) shapes. When eval is not NULL,
 * nodes whose inputs are all known and small are evaluated so that shape
 * arithmetic (Shape -> Gather -> Concat -> Reshape) resolves.
 * Declared output shapes/dtypes are checked against inferred ones where both are known.
 */
tc_status tc__graph_infer_shapes(tc__graph *g, bool allow_unsupported, tc__eval_fn eval, void *user,
                                 tc__err *err);

/* Describes value v for the public API (strings belong to the graph). */
void tc__graph_io_info(const tc__graph *g, int32_t v, tc_io_info *info);

/* Formats a vinfo's shape as "batchx3x224x224" with "?" for unknown dims. */
const char *tc__graph_shape_str(const tc__graph *g, const tc__shape *s, char *buf, size_t size);

#endif
