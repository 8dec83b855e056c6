/* model.h - the internal shape of a tc_model: an imported, verified, shape-inferred graph. */
#ifndef TC_ENGINE_MODEL_H
#define TC_ENGINE_MODEL_H

#include <stdbool.h>

#include "graph/graph.h"

struct tc_model {
    tc__graph *graph;
    bool runnable; /* every node supported */
    const char **branch; /* per node: the If branch it runs under (tc__branch_labels), "" for none */
    int *depth;          /* per node: how many If branches deep */
};


/* True when g has an If node (model_fold_if.c). */
bool tc__model_has_if(const tc__graph *g);
/* Replaces, until none is left, every If whose condition inference knows by the branch it takes (verifying and
 * inferring g with unsupported nodes allowed); g stays toposorted. */
tc_status tc__model_fold_ifs(tc__graph *g, tc__err *err);
/* Predicates If node n of g, whose condition is known only at run time (model_predicate_if.c): both branches' nodes
 * join g guarded by run flags, n becomes the If that copies the taken branch's outputs (marked removed; a new node
 * replaces it); the caller compacts and toposorts. */
tc_status tc__model_predicate_if(tc__graph *g, int32_t n, tc__err *err);
/* Makes value v the guard of nodes [first, end) of g (tc__node.guard). */
tc_status tc__model_guard_nodes(tc__graph *g, int32_t first, int32_t end, int32_t v, tc__err *err);

#endif
