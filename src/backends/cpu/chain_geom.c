/* chain_geom.c - the CPU layers' geometry as the reduced-precision chain pass reads it (see chain_geom.h). */
#include "backends/cpu/chain_geom.h"

#include <string.h>

#include "backends/cpu/hconv.h"
#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/qimage.h"

bool tc__qconv_chain_geometry(const tc__step_desc *d, tc__chain_geom *g) {
    tc__qconv_geom q;
    memset(g, 0, sizeof *g);
    if (!tc__qconv_geometry(d, &q)) return false;
    *g = (tc__chain_geom){.batch = q.batch, .cin = q.cin, .cout = q.cout, .ih = q.ih, .iw = q.iw, .oh = q.oh,
                          .ow = q.ow, .hp = q.hp, .wp = q.wp, .cp = q.cp, .pt = q.pt, .pl = q.pl,
                          .x_nchw = q.in_layout == TC__Q_NCHW, .in_image = q.in_image, .out_image = q.out_image,
                          .x_scale = q.x_scale, .zero_point = q.zero_point, .lo = q.lo, .hi = q.hi};
    return true;
}

static bool half(const tc__step_desc *d, bool bf16, tc__chain_geom *g) {
    tc__hconv_geom h;
    memset(g, 0, sizeof *g);
    if (!tc__hconv_geometry(d, bf16, &h)) return false;
    *g = (tc__chain_geom){.batch = h.s.batch, .cin = h.s.cin, .cout = h.s.cout, .ih = h.s.ih, .iw = h.s.iw,
                          .oh = h.s.oh, .ow = h.s.ow, .hp = h.s.hp, .wp = h.s.wp, .cp = h.cp, .pt = h.s.pt,
                          .pl = h.s.pl, .x_nchw = h.s.in_layout == TC__LOWP_NCHW, .in_image = h.in_image,
                          .out_image = h.out_image};
    return true;
}
bool tc__hconv_chain_geometry_fp16(const tc__step_desc *d, tc__chain_geom *g) { return half(d, false, g); }
bool tc__hconv_chain_geometry_bf16(const tc__step_desc *d, tc__chain_geom *g) { return half(d, true, g); }

bool tc__qimage_chain_geometry(const tc__step_desc *d, tc__chain_geom *g) {
    tc__qimage_mul m;
    memset(g, 0, sizeof *g);
    if (!tc__qimage_mul_shape(d, &m)) return false;
    *g = (tc__chain_geom){.batch = m.batch, .cin = m.c, .cout = m.c, .ih = m.h, .iw = m.w, .oh = m.h, .ow = m.w,
                          .x_nchw = true};
    return true;
}
