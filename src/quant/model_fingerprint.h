/* model_fingerprint.h - the fingerprint of an imported model that a calibration cache belongs to. */
#ifndef TC_QUANT_MODEL_FINGERPRINT_H
#define TC_QUANT_MODEL_FINGERPRINT_H

#include <stdint.h>

#include "graph/graph.h"

/* A hash of the graph's structure and initializer bytes (0 only when out of memory). */
uint64_t tc__model_fingerprint(const tc__graph *g);

#endif
