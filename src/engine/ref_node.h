/* ref_node.h - runs one graph node on concrete tensors with the reference kernels (the CPU backend's fallback
 * tactics, backend.h tc__tactic_fallback): run-time shape inference, output allocation, kernel call. */
#ifndef TC_ENGINE_REF_NODE_H
#define TC_ENGINE_REF_NODE_H

#include "backends/kernel.h"
#include "graph/graph.h"

/*
 * Runs node (of a graph whose default-domain opset is opset) on in[0..n_in) (NULL for absent
 * optional inputs). On success outs[0..n_out) hold newly allocated tensors (absent outputs stay
 * zeroed); on failure nothing is left allocated and err names the node.
 */
tc_status tc__ref_run_node(const tc__node *node, int64_t opset, const tc__tensor *const *in, tc__tensor *outs,
                           tc__err *err);

/* The reference kernel of op_type (the CPU backend's fallback tactic's run), or NULL. */
tc__kernel_fn tc__ref_kernel(const char *op_type);

/* Static information of a concrete tensor; with_value also exposes its contents (and symval). */
void tc__vinfo_from_tensor(const tc__tensor *t, bool with_value, tc__vinfo *v);

/* A tc__eval_fn for tc__graph_infer_shapes; user is a pointer to the graph's opset (int64_t). */
tc_status tc__ref_eval(void *user, const tc__node *node, const tc__tensor *const *in, tc__tensor *outs, tc__err *err);

#endif
