/*
 * shape.h - symbolic shapes and static value information used by shape
 * inference: a dim is a known size, a named symbol ("batch") or unknown.
 */
#ifndef TC_GRAPH_SHAPE_H
#define TC_GRAPH_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

typedef struct tc__dim {
    int64_t value; /* >= 0: known size; < 0: not known */
    int32_t sym;   /* when value < 0: symbol id (>= 0) or TC__SYM_UNKNOWN */
} tc__dim;

#define TC__SYM_UNKNOWN (-1)
/* sym of a dim whose value is a known NEGATIVE literal (symval elements such as Reshape's -1);
 * code that reads value < 0 as "unknown" stays correct, only symval-aware code uses it. */
#define TC__SYM_LITERAL (-2)
#define TC__RANK_UNKNOWN (-1)

static inline tc__dim tc__dim_known(int64_t v) { return (tc__dim){v, TC__SYM_UNKNOWN}; }
static inline tc__dim tc__dim_unknown(void) { return (tc__dim){-1, TC__SYM_UNKNOWN}; }
static inline bool tc__dim_is_known(tc__dim d) { return d.value >= 0; }
/* A symval element holding the integer v (negative values as literals). */
static inline tc__dim tc__dim_literal(int64_t v) { return v >= 0 ? tc__dim_known(v) : (tc__dim){v, TC__SYM_LITERAL}; }
/* True when a symval element's integer is known (non-negative or a negative literal). */
static inline bool tc__dim_is_literal(tc__dim d) { return d.value >= 0 || d.sym == TC__SYM_LITERAL; }
/* True when both dims are provably equal (same known value or same symbol). */
static inline bool tc__dim_same(tc__dim a, tc__dim b) {
    if (a.value >= 0 || b.value >= 0) return a.value == b.value;
    return a.sym >= 0 && a.sym == b.sym;
}

typedef struct tc__shape {
    int32_t rank; /* TC__RANK_UNKNOWN when not known */
    tc__dim dims[TC_MAX_RANK];
} tc__shape;

/* True when the rank and every dim are known. */
bool tc__shape_is_concrete(const tc__shape *s);

/*
 * Static information about a value during inference.
 * - value: the full contents when known (initializer, Constant, folded shape math).
 * - symval: for a 1-D (or 0-D) int64 tensor of at most TC_MAX_RANK elements whose
 *   contents are partly symbolic (e.g. Shape of a tensor with a batch dim),
 *   the elements as dims; symval_len < 0 when not tracked. When value is known,
 *   symval is filled too (all known) for such small int64 tensors.
 */
typedef struct tc__vinfo {
    tc_dtype dtype; /* TC_DTYPE_UNDEFINED when unknown */
    tc__shape shape;
    const tc__tensor *value;
    int32_t symval_len;
    tc__dim symval[TC_MAX_RANK];
} tc__vinfo;

/* An vinfo with unknown dtype, rank, value and symval. */
void tc__vinfo_init(tc__vinfo *v);

#endif
