/*
 * tactics.c - the reference kernels as tactics of the CPU backend's list (backend_cpu.c puts them after tactics.inc):
 * one per op of core/ops.inc, named "ref" (the name plans have always stored), flagged TC__TACTIC_FALLBACK (the op's
 * last resort: timed against the others where they support the step, taken untimed where none does). They take any
 * step in the plain layout (a kernel refuses at run what it does not compute, with a message naming the node), leave
 * the epilogue to the backend's reference epilogue, and size their scratch from the step's shapes.
 */
#include "backends/ref/ref.h"
#include "backends/tactic.h"

static bool ref_supports(const tc__step_desc *d) {
    (void)d;
    return true;
}

/* Double copies of all inputs (epilogue operands included) and of the output, plus index tables; the engine adds its
 * 4096 bytes of slack. */
static size_t ref_scratch(const tc__step_desc *d) {
    if (!tc__ref_uses_scratch(d->op_type)) return 0;
    uint64_t in = 0, o0 = 0, dims = 0;
    for (int i = 0; i < d->n_in; i++)
        if (d->in[i] != NULL) in += (uint64_t)tc__tensor_numel(d->in[i]);
    if (d->bias != NULL) in += (uint64_t)tc__tensor_numel(d->bias);
    if (d->residual != NULL) in += (uint64_t)tc__tensor_numel(d->residual);
    if (d->n_out > 0 && d->out[0] != NULL) {
        const tc__tensor *t = d->out[0];
        o0 = (uint64_t)tc__tensor_numel(t);
        for (int32_t k = 0; k < t->rank; k++) dims += (uint64_t)t->dims[k];
    }
    return (size_t)(16 * (in + o0) + 64 * dims);
}

#define TC_OP(op)                                                                                                    \
    const tc__tactic tc__tactic_ref_##op = {.name = "ref", .op_type = #op, .backend = TC__BACKEND_CPU,              \
                                            .flags = TC__TACTIC_FALLBACK, .supports = ref_supports,                 \
                                            .scratch_bytes = ref_scratch, .run = tc__ref_##op};
#include "core/ops.inc"
#undef TC_OP
