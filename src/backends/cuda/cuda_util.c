/* cuda_util.c - the CUDA tactics' small host helpers (cuda_exec.h): error mapping, shape records, epilogue
 * activations. */
#include "backends/cuda/cuda_exec.h"

tc_status tc__cuda_fail(cudaError_t e, tc__err *err, const char *what) {
    if (e == cudaSuccess) return TC_STATUS_OK;
    tc_status st = e == cudaErrorMemoryAllocation ? TC_STATUS_OUT_OF_MEMORY : TC_STATUS_INTERNAL;
    return tc__fail(err, st, "%s: CUDA error %d (%s): %s", what, (int)e, cudaGetErrorName(e), cudaGetErrorString(e));
}

bool tc__cuda_shape_of(const tc__tensor *t, tc__cuda_shape *s) {
    memset(s, 0, sizeof *s);
    if (t == NULL || t->rank < 0 || t->rank > TC__CUDA_MAX_RANK) return false;
    s->rank = t->rank;
    int64_t st = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        s->dims[d] = t->dims[d];
        s->strides[d] = st;
        st *= t->dims[d];
    }
    return true;
}

tc__cuda_act tc__cuda_act_of(const tc__epilogue *e) {
    tc__cuda_act a = {TC__ACT_NONE, 0.0f, 0.0f};
    if (e != NULL) a = (tc__cuda_act){e->act, e->alpha, e->beta};
    return a;
}
