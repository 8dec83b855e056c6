/*
 * conf.h - declarations shared by the files of the ONNX node-test conformance
 * runner (tc_conformance). Only the runner includes it; the runner itself uses
 * nothing of libtailcut but the public header.
 */
#ifndef TC_CONFORMANCE_CONF_H
#define TC_CONFORMANCE_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

/* The result of one test case. */
typedef enum conf_outcome {
    CONF_PASS = 0,
    CONF_FAIL = 1,
    CONF_SKIP = 2,
} conf_outcome;

/* Room for the message of one case (reason of a skip, first mismatch of a fail). */
#define CONF_MESSAGE_SIZE 2048

/* ---- onnx_peek.c: just enough of an ONNX ModelProto to classify a test ---- */

/* What a graph input or output is, from its TypeProto. */
typedef enum conf_type_kind {
    CONF_TYPE_UNKNOWN = 0, /* no type, or a kind this reader does not name */
    CONF_TYPE_TENSOR,
    CONF_TYPE_SEQUENCE,
    CONF_TYPE_MAP,
    CONF_TYPE_OPTIONAL,
    CONF_TYPE_SPARSE_TENSOR,
} conf_type_kind;

typedef struct conf_value {
    char name[256];
    conf_type_kind kind;
    int32_t elem_type; /* ONNX TensorProto.DataType of a tensor, else 0 */
} conf_value;

typedef struct conf_node {
    char op_type[128];
    char domain[128];
} conf_node;

/* The nodes and the graph inputs/outputs of a model, in file order. */
typedef struct conf_peek {
    conf_node *nodes;
    int num_nodes;
    conf_value *inputs;
    int num_inputs;
    conf_value *outputs;
    int num_outputs;
} conf_peek;

/* Reads the model file at path into peek. Returns 0 on success, else -1 with a reason in err. */
int conf_peek_model(const char *path, conf_peek *peek, char *err, size_t err_size);
/* Frees what conf_peek_model filled and zeroes the struct. NULL-safe. */
void conf_peek_free(conf_peek *peek);
/* Name of an ONNX element type ("float", "string", "float8e4m3fn", ...), never NULL. */
const char *conf_onnx_type_name(int32_t elem_type);
/* Name of a type kind ("tensor", "sequence", ...), never NULL. */
const char *conf_type_kind_name(conf_type_kind kind);

/* ---- compare.c: expected-vs-got tensor comparison ---- */

/* Tolerances: a float element matches when |got - expected| <= atol + rtol * |expected|. */
typedef struct conf_tolerance {
    double rtol;
    double atol;
} conf_tolerance;

/*
 * Compares got with expected: dtype and shape must be equal; float elements within
 * the tolerance (NaN matches NaN, an infinity only the same infinity); other
 * elements exactly. Returns 1 when they match, else 0 with the first mismatch,
 * the count of differing elements and the max abs error written to msg.
 */
int conf_compare(const tc_tensor *got, const tc_tensor *expected, conf_tolerance tol, char *msg,
                 size_t msg_size);
/* Formats a shape as "[2,3,4]" into buf. */
void conf_format_shape(const tc_tensor *tensor, char *buf, size_t size);

/* ---- case.c: one test case, run in the current process ---- */

/* Runs the test in folder dir (holding model.onnx and test_data_set_*); writes the reason of a
 * skip or fail to msg. Never exits; a crash or hang is the caller's to catch. */
conf_outcome conf_run_case(const char *dir, char *msg, size_t msg_size);

/* ---- scheduler.c: each case in its own process, with a timeout ---- */

typedef struct conf_case {
    const char *name; /* folder name, test_* */
    const char *dir;  /* full path of the folder */
    const char *op;   /* op the case is attributed to */
    conf_outcome outcome;
    char *message;  /* heap string, "" when nothing to say */
    double seconds; /* wall time of the case */
} conf_case;

typedef struct conf_sched_options {
    int jobs;       /* cases run at once, >= 1 */
    double timeout; /* seconds before a case is killed */
    int fork;       /* 0 runs every case in this process (for debuggers) */
    int verbose;    /* print one line per case as it ends */
} conf_sched_options;

/* What conf_schedule returns in a forked child after it has run its case: the caller frees
 * what it holds and exits with status 0 (so that a sanitizer sees only the library's leaks). */
#define CONF_SCHED_CHILD 1

/* Runs every case and fills its outcome and message. Returns 0, -1 on a system error, or
 * CONF_SCHED_CHILD in a forked child. */
int conf_schedule(conf_case *cases, int num_cases, const conf_sched_options *options);

/* ---- report.c: the per-op table, the failures, the skips and the totals ---- */

void conf_report(const conf_case *cases, int num_cases, int list_skips);

#endif /* TC_CONFORMANCE_CONF_H */
