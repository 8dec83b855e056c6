/* model.h - the internal shape of a tc_model: an imported, verified, shape-inferred graph. */
#ifndef TC_ENGINE_MODEL_H
#define TC_ENGINE_MODEL_H

#include <stdbool.h>

#include "graph/graph.h"

struct tc_model {
    tc__graph *graph;
    bool runnable; /* every node supported */
};

#endif
