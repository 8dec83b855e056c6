/*
 * quantizable.h - which nodes an INT8 layer can be: a Conv with one group or depthwise (4-D weight), a MatMul, or a Gemm
 * without transA (2-D weight), reading a float32 input through a constant float32 weight. One definition
 * for the calibrator (what to observe), the precision pass and the QDQ pass (what to quantize).
 */
#ifndef TC_GRAPH_QUANTIZABLE_H
#define TC_GRAPH_QUANTIZABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"

/* An INT8 layer's data input and its weight's output channels, input channels and taps (kernel positions;
 * 0 where the graph does not know a weight dim yet); depthwise: a Conv with group = C_out and one input channel
 * per group (weight [C, 1, KH, KW]; cin is 1). */
typedef struct tc__qlayer {
    int32_t x;
    int64_t cout, cin, taps;
    bool depthwise;
} tc__qlayer;

/*
 * True when node n is a layer INT8 tactics may take; fills *out. The weight must be an initializer, or with
 * constant_nodes also a Constant node's output (before constant folding turns it into one).
 */
bool tc__quantizable_layer(const tc__graph *g, const tc__node *n, bool constant_nodes, tc__qlayer *out);

/*
 * True when layer n's (tc__quantizable_layer, not depthwise) FP32 weight lies on a grid of at most qmax steps each
 * side: w = q * s with integer |q| <= qmax, s = max|w| / qmax over the whole tensor or over each output channel (how
 * onnxruntime's quantize_static quantizes weights; qmax 64 with reduce_range). A QDQ model's weight, once its
 * DequantizeLinear is folded, is on such a grid; an FP32 weight practically never is.
 */
bool tc__weight_on_grid(const tc__graph *g, const tc__node *n, const tc__qlayer *q, double qmax);

/* True when name is one of names[0..n) (the precision passes' lists of layers kept out). */
bool tc__layer_listed(const char *name, const char *const *names, int n);

#endif
