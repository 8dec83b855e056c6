/* dn_common.c - host helpers of the dn_* CUDA tactics (dn_common.h): broadcast walks and the epilogue check. */
#include <string.h>

#include "backends/cuda/dn_common.h"

void tc__dn_walk_collapse(tc__dn_walk *w) {
    int32_t r = 0;
    int64_t dims[TC__CUDA_MAX_RANK], st[TC__DN_MAX_IN][TC__CUDA_MAX_RANK];
    for (int32_t d = 0; d < w->rank; d++) {
        if (w->dims[d] == 1) continue; /* a dim of 1 adds nothing to any offset */
        bool merge = r > 0;
        for (int k = 0; merge && k < w->n_in; k++) merge = st[k][r - 1] == w->st[k][d] * w->dims[d];
        if (merge) {
            dims[r - 1] *= w->dims[d];
            for (int k = 0; k < w->n_in; k++) st[k][r - 1] = w->st[k][d];
            continue;
        }
        dims[r] = w->dims[d];
        for (int k = 0; k < w->n_in; k++) st[k][r] = w->st[k][d];
        r++;
    }
    if (r == 0) { /* every dim 1 (or a scalar): one element */
        dims[0] = 1;
        for (int k = 0; k < w->n_in; k++) st[k][0] = 0;
        r = 1;
    }
    w->rank = r;
    for (int32_t d = 0; d < r; d++) {
        w->dims[d] = dims[d];
        for (int k = 0; k < w->n_in; k++) w->st[k][d] = st[k][d];
    }
    for (int32_t d = r; d < TC__CUDA_MAX_RANK; d++) {
        w->dims[d] = 1;
        for (int k = 0; k < TC__DN_MAX_IN; k++) w->st[k][d] = 0;
    }
}

bool tc__dn_walk_bcast(int32_t rank, const int64_t *dims, int n_in, const tc__tensor *const *in, tc__dn_walk *w) {
    memset(w, 0, sizeof *w);
    if (rank < 0 || rank > TC__CUDA_MAX_RANK || rank > TC_MAX_RANK || n_in < 1 || n_in > TC__DN_MAX_IN) return false;
    w->rank = rank;
    w->n_in = n_in;
    w->numel = tc__numel(rank, dims);
    if (w->numel < 0) return false;
    for (int32_t d = 0; d < rank; d++) w->dims[d] = dims[d];
    for (int k = 0; k < n_in; k++) {
        int64_t s[TC_MAX_RANK];
        if (in[k] == NULL || !tc__bcast_strides(in[k], rank, dims, s)) return false;
        for (int32_t d = 0; d < rank; d++) w->st[k][d] = s[d];
    }
    tc__dn_walk_collapse(w);
    return true;
}

bool tc__dn_epilogue_ok(const tc__step_desc *d) {
    const tc__epilogue *e = d->epi;
    if (e == NULL) return true;
    if (e->act > TC__ACT_TANH) return tc__refuse(d, "activation %d has no CUDA form", (int)e->act);
    const tc__tensor *y = d->n_out >= 1 ? d->out[0] : NULL;
    if (y == NULL || y->dtype != TC_DTYPE_FLOAT32) return tc__refuse(d, "an epilogue on a non-float32 output");
    const int64_t last = y->rank > 0 ? y->dims[y->rank - 1] : 1;
    if (e->bias_input >= 0 &&
        (d->bias == NULL || d->bias->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(d->bias) != last))
        return tc__refuse(d, "the epilogue bias is not float32 over the output's last dim");
    if (e->bias_input < 0 && d->bias != NULL) return tc__refuse(d, "a bias without an epilogue bias input");
    if (e->residual_input >= 0 &&
        (d->residual == NULL || d->residual->dtype != TC_DTYPE_FLOAT32 ||
         tc__tensor_numel(d->residual) != tc__tensor_numel(y)))
        return tc__refuse(d, "the epilogue residual is not a float32 tensor of the output's size");
    if (e->residual_input < 0 && d->residual != NULL) return tc__refuse(d, "a residual without an epilogue input");
    return true;
}
