/* model.h - the internal shape of a tc_model: an imported, verified, shape-inferred graph. */
#ifndef TC_ENGINE_MODEL_H
#define TC_ENGINE_MODEL_H

#include <stdbool.h>

#include "graph/graph.h"

struct tc_model {
    tc__graph *graph;
    bool runnable; /* every node supported */
};

/* True when g has an If node (model_fold_if.c). */
bool tc__model_has_if(const tc__graph *g);
/* Replaces, until none is left, every If whose condition inference knows by the branch it takes (verifying and
 * inferring g with unsupported nodes allowed); g stays toposorted. */
tc_status tc__model_fold_ifs(tc__graph *g, tc__err *err);

#endif
