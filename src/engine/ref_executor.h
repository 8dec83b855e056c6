/* ref_executor.h - runs a whole graph with the reference backend, node by node,
 * inferring concrete shapes at run time and freeing intermediates after their last use. */
#ifndef TC_ENGINE_REF_EXECUTOR_H
#define TC_ENGINE_REF_EXECUTOR_H

#include "graph/graph.h"

/*
 * inputs[i] binds graph input names[i]; every graph input must be bound exactly once, with
 * its declared dtype, rank and known dims, and consistent sizes for shared symbolic dims.
 * On success outputs[0..g->n_outputs) own newly allocated tensors; on failure none.
 */
tc_status tc__ref_execute(const tc__graph *g, int n_inputs, const char *const *names, const tc__tensor *inputs,
                          tc__tensor *outputs, tc__err *err);

#endif
