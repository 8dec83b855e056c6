/*
 * epilogue.h - the reference application of a fused epilogue, y = act(y + bias + residual) in double precision:
 * what a backend applies after a kernel that does not fuse its step's epilogue, and the formulas that fast kernels
 * which do fuse it follow. Part of the kernel contract (below tactics and the engine); depends on core types only.
 */
#ifndef TC_BACKENDS_EPILOGUE_H
#define TC_BACKENDS_EPILOGUE_H

#include "core/epilogue.h"
#include "core/error.h"
#include "core/tensor.h"

/* An activation on one value (double precision), as fused epilogues apply it. */
double tc__act_eval(tc__act act, double x, double alpha, double beta);
/* Applies y = act(y + bias + residual) in place; bias/residual may be NULL. */
tc_status tc__epilogue_apply(const tc__epilogue *e, tc__tensor *y, const tc__tensor *bias, const tc__tensor *residual,
                             tc__err *err);

#endif
