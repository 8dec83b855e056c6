/* amx_panel.c - the AMX kernels' panel plan (amx_panel.h): which layers they take and where each panel's windows
 * and runs lie in the padded image. Plain C. */
#include <string.h>

#include "backends/cpu/amx_panel.h"

bool tc__amx_plan_of(const tc__lowp_shape *s, size_t px_bytes, tc__amx_plan *p) {
    memset(p, 0, sizeof *p);
    if (s->ow == 0 || s->oh == 0 || s->batch == 0) return false;
    const bool rows = s->dw == 1; /* a kernel row's taps are adjacent pixels: one run */
    p->runs = rows ? s->kh : s->kh * s->kw;
    p->run_len = (rows ? s->kw : 1) * px_bytes;
    /* at least one whole 64-byte chunk per run (a shorter run would be all copies, amx_panel_amx.c's tail) */
    if (p->run_len < 64 || p->run_len % 4 != 0 || p->runs > TC__AMX_MAX_RUNS) return false;
    for (size_t a = 0; a < s->kh; a++)
        for (size_t c = 0; c < (rows ? 1 : s->kw); c++)
            p->run_off[a * (rows ? 1 : s->kw) + c] = (a * s->dh * s->wp + c * s->dw) * px_bytes;
    p->batch = s->batch, p->oh = s->oh, p->ow = s->ow, p->sh = s->sh, p->sw = s->sw, p->hp = s->hp, p->wp = s->wp;
    p->px_bytes = px_bytes;
    p->stride = s->sw * px_bytes;
    /* the plane is one run of windows when the next row's first window follows the row's last at the same stride */
    const bool flat = s->oh == 1 || s->sh * s->wp == s->sw * s->ow;
    p->row_px = flat ? s->oh * s->ow : s->ow;
    p->rows = flat ? 1 : s->oh;
    p->per_row = (p->row_px + TC__AMX_PANEL - 1) / TC__AMX_PANEL;
    p->panels = s->batch * p->rows * p->per_row; /* at most the batch's pixels (the geometries keep those below 2^31) */
    return true;
}
