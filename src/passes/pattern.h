/*
 * pattern.h - small matching and rewriting helpers shared by the optimisation passes:
 * who produces or reads a value, known constants, and "producer takes over the consumer's
 * output" rewrites that keep value producers consistent while a pass runs.
 *
 * All helpers ignore nodes marked removed. None keeps a pointer after it returns.
 */
#ifndef TC_PASSES_PATTERN_H
#define TC_PASSES_PATTERN_H

#include <stdbool.h>

#include "graph/graph.h"

/* True when node is live, of the default ONNX domain and of type op. */
bool tc__pat_is(const tc__node *node, const char *op);
/* The live node producing v when its type is op (any type when op is NULL); -1 otherwise. */
int32_t tc__pat_producer(const tc__graph *g, int32_t v, const char *op);
/* The only live node reading v, when v is read exactly once and is not a graph output; -1 otherwise. */
int32_t tc__pat_sole_consumer(const tc__graph *g, int32_t v);
/* True when v is read by exactly one live node input and is not a graph output. */
bool tc__pat_single_use(const tc__graph *g, int32_t v);
/* Known contents of v (initializer or value found by inference), or NULL. */
const tc__tensor *tc__pat_const(const tc__graph *g, int32_t v);
/* True when v is a known float tensor of one element, of rank <= max_rank, within tol (relative) of target. */
bool tc__pat_scalar_near(const tc__graph *g, int32_t v, double target, double tol, int32_t max_rank);
/* True when node has no fused epilogue and no epilogue operands. */
bool tc__pat_plain(const tc__node *node);
/* True when value v (-1: none) is a graph output (a pass keeps its name). */
bool tc__pat_is_graph_output(const tc__graph *g, int32_t v);
/* For a plain binary node reading v, the index (0 or 1) of v among its op inputs, else -1. */
int tc__pat_operand_of(const tc__node *node, int32_t v);
/* If node n (-1: none) is a plain binary node of type op with a constant one-element operand within tol of target
 * (rank <= max_rank), the other operand; -1 otherwise. With const_second_only the constant must be input 1 (Div). */
int32_t tc__pat_with_scalar(const tc__graph *g, int32_t n, const char *op, double target, double tol,
                            bool const_second_only, int32_t max_rank);
/* True when both shapes have a known rank and provably equal dims (known or the same symbol). */
bool tc__pat_same_shape(const tc__shape *a, const tc__shape *b);
/* True when v's dtype is a floating-point type (epilogues need one). */
bool tc__pat_is_float(const tc__graph *g, int32_t v);
/*
 * Node p takes over the output of node c: p's output slot o now writes c's output 0 (whose
 * consumers and graph-output status are kept), c is marked removed and its op is noted in
 * p's fused text. p's old output value is left without a producer.
 */
tc_status tc__pat_absorb(tc__graph *g, int32_t p, int o, int32_t c, tc__err *err);
/* Makes node n write value v in output slot o, fixing the producers of the old and new values. */
void tc__pat_set_output(tc__graph *g, int32_t n, int o, int32_t v);
/*
 * True when node q is a per-tensor QuantizeLinear (float32 input, constant one-element scale and zero
 * point) and node dq the DequantizeLinear of its output with the same scale and zero point: together they
 * fake-quantize q's input. *scale and *qmin (the lowest code minus the zero point) describe it as
 * TC__ACT_FAKE_QUANT. (fold_qdq.c)
 */
bool tc__qdq_pair(const tc__graph *g, int32_t q, int32_t dq, float *scale, float *qmin);
/* Sets attribute a on node n (replacing one of the same name); the attribute, its name and its ints, floats
 * or string are copied into the graph. */
tc_status tc__pat_set_attr(tc__graph *g, int32_t n, const tc__attr *a, tc__err *err);

#endif
