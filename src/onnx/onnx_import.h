/*
 * onnx_import.h - the ONNX importer: a serialized ModelProto into a graph IR, and a serialized
 * TensorProto (.pb file) into a tensor. Neither keeps a pointer to the caller's buffer.
 */
#ifndef TC_ONNX_ONNX_IMPORT_H
#define TC_ONNX_ONNX_IMPORT_H

#include <stddef.h>

#include "core/error.h"
#include "core/tensor.h"
#include "graph/graph.h"

/* Parses a serialized ModelProto into a new graph (values, nodes, attributes, initializers, declared input and
 * output types). Does not toposort, verify or infer shapes. base_dir (may be NULL = ".") is where external data
 * files are looked up. */
tc_status tc__onnx_import(const void *data, size_t size, const char *base_dir, tc__graph **out, tc__err *err);
/* Replaces If node n of g by the nodes of its then_branch (cond true) or else_branch, their outputs reaching the If's
 * outputs through Identity nodes, and marks n removed; the caller compacts and toposorts (import_branch.c). */
tc_status tc__onnx_inline_if(tc__graph *g, int32_t n, bool cond, tc__err *err);
/* Most outputs of an If that tc__onnx_import_branch takes. */
#define TC__ONNX_MAX_IF_OUTPUTS 64
/* Adds the initializers and nodes of If node n's then_branch (cond true) or else_branch to g (names as in the
 * branch) and sets src[k] to the value of the branch's output k (n's n_out of them, at most
 * TC__ONNX_MAX_IF_OUTPUTS); n stays (engine/model_predicate_if.c). */
tc_status tc__onnx_import_branch(tc__graph *g, int32_t n, bool cond, int32_t *src, tc__err *err);
/* Bounds on an unrolled Loop: iterations, and iterations x body nodes. */
#define TC__ONNX_MAX_LOOP_TRIPS 4096
#define TC__ONNX_MAX_LOOP_NODES 200000
/* Replaces Loop node n of g, whose trip count is trip (known before the run) and whose condition is absent or true,
 * by its body unrolled trip times (import_loop.c); fails naming the Loop and why when its body computes its condition,
 * holds a subgraph, or the bounds are passed. Marks n removed; the caller compacts and toposorts. */
tc_status tc__onnx_unroll_loop(tc__graph *g, int32_t n, int64_t trip, tc__err *err);
/* Parses a serialized TensorProto (.pb file contents) into a tensor with malloc'd data (free with
 * tc__tensor_free); copies its name (may be empty) into name[name_size] when name != NULL. */
tc_status tc__onnx_tensor_from_pb(const void *data, size_t size, tc__tensor *out, char *name, size_t name_size, tc__err *err);

/*
 * Writes the model at model_path (imported as g) as a QDQ model to out_path: the n calibrated tensors
 * names[i] with scales[i] that Conv / MatMul / Gemm nodes read get QuantizeLinear -> DequantizeLinear (int8 with zero
 * point 0, or uint8 with zero_points[i] when that is not 0; zero_points may be NULL: all 0), and
 * those nodes' float32 initializer weights int8 + DequantizeLinear (per output channel from opset 13; with
 * reduce_range |q| <= 64 except depthwise weights: tailcut's --int8-reduce-range). See
 * export_qdq.c. Written atomically.
 */
tc_status tc__onnx_export_qdq(const char *model_path, const tc__graph *g, const char *const *names, const float *scales,
                              const uint8_t *zero_points, int n_scales, bool reduce_range, const char *out_path,
                              tc__err *err);

#endif
