/*
 * tactic.h - a tactic is one implementation of one operator with a fixed configuration
 * (oneDNN's "primitive descriptor" in spirit): it says whether it supports a step, how it
 * wants its constant weights laid out, how much scratch it needs, and runs it.
 * Per backend and op, an ordered list of tactics (backends/<name>/tactics.inc, best first, the
 * reference kernel last) is exactly what the auto-tuner times. Tactics depend only on core types
 * and the kernel contract (kernel.h).
 */
#ifndef TC_BACKENDS_TACTIC_H
#define TC_BACKENDS_TACTIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backend_id.h"
#include "backends/kernel.h"

/* What a tactic sees of a step when asked whether it supports it, and when packing. */
typedef struct tc__step_desc {
    const char *op_type;
    int64_t opset;
    const tc__attrs *attrs;
    int n_in;                      /* the op's own inputs (epilogue operands excluded) */
    const tc__tensor *const *in;   /* dtype and shape always set (the profile's opt shape); data set only
                                      for constant inputs (in_const[i]), NULL for absent inputs */
    const bool *in_const;
    int n_out;
    const tc__tensor *const *out;  /* dtype and shape */
    const tc__epilogue *epi;       /* what the step must apply after the op (never NULL) */
    const tc__tensor *bias;        /* epilogue bias (shape; data if constant) or NULL */
    const tc__tensor *residual;    /* epilogue residual (shape) or NULL */
    /* When set (the build asks, for inspect --verbose), a supports() that refuses may say why here (tc__refuse). */
    char *why;
    size_t why_size;
} tc__step_desc;

/* Writes why a tactic refuses step d into d->why (when the caller asked) and returns false, so that a supports()
 * can `return tc__refuse(d, "...")`. The first reason written stands. */
bool tc__refuse(const tc__step_desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum {
    /* run() applies the step's epilogue itself (ctx->epi, ctx->bias, ctx->residual). Without this
     * flag the engine applies it after run() with the reference epilogue. */
    TC__TACTIC_FUSES_EPILOGUE = 1u << 0,
    /* run() reads and writes the NCHW16c tensors that the node's layout attributes name
     * (core/layout.h); only such tactics (and TC__TACTIC_ANY_LAYOUT ones) run nodes that have
     * blocked tensors, and they never run nodes that have none. */
    TC__TACTIC_BLOCKED = 1u << 1,
    /* Elementwise over tensors of the output's shape: byte order does not matter, so the tactic
     * runs nodes in either layout (the engine offers it only when every data input has the
     * output's shape). */
    TC__TACTIC_ANY_LAYOUT = 1u << 2,
    /* On a device backend: when this tactic supports a step it takes it untimed, ahead of the others. For tactics whose
     * worth lies in what they enable between steps (images chained from step to step, which timing one step alone
     * does not see). */
    TC__TACTIC_CHAIN_FIRST = 1u << 3,
    /* With TC__TACTIC_BLOCKED: its blocked tensors are NCHW8c (tc.layout_block 8), not NCHW16c. */
    TC__TACTIC_BLOCK8 = 1u << 4,
    /* The op's last resort (the CPU's reference kernels): a candidate like the others where others support the step,
     * taken untimed where none does, and never the rival of a reduced-precision tactic in the chain choice
     * (engine_tactics.c). Also what a step runs whose shapes are unknown at build (an If branch's). */
    TC__TACTIC_FALLBACK = 1u << 5,
    /* The reduced-precision chain pass (engine/lowp_chain.c) may give it a step whose readers read an INT8 image, which
     * it then writes (chain_geometry gives the step's output); its supports() takes only such steps, so it is never
     * a tuning candidate. */
    TC__TACTIC_IMAGE_WRITER = 1u << 6,
};

/* Reduced-precision chain families (tc__tactic.chain): a step whose tactic has one writes, for a reader of the same
 * family (dense layers with dense layers), that reader's input image in its reduced type instead of an FP32 tensor
 * (the engine's lowp_chain pass). */
enum {
    TC__CHAIN_NONE = 0,
    TC__CHAIN_INT8 = 1,     /* u8 codes (VNNI and AMX-INT8) */
    TC__CHAIN_FP16 = 2,     /* FP16 values */
    TC__CHAIN_BF16 = 3,     /* BF16 values (AVX512-BF16 and AMX-BF16) */
    TC__CHAIN_INT8_S16 = 4, /* 16-bit centred codes (AVX2) */
    TC__CHAIN_INT8_U7 = 5,  /* bytes of 7-bit codes, non-negative inputs (AVX2) */
    TC__CHAIN_INT8_U8 = 6,  /* bytes of codes with their zero point (AVX2 u8w7) */
    TC__CHAIN_FP16_NHWC = 7, /* FP16 NHWC values without padding (device convolutions: engine/nhwc16_chain.c) */
    TC__CHAIN_FP16_ROWS = 8, /* FP16 values in the tensor's own order (device dense layers, LayerNorm, attention:
                                engine/row16_chain.c) */
    TC__CHAIN_COUNT_
};

/*
 * What the reduced-precision chain pass (engine/lowp_chain.c) needs to know of a step that a chaining tactic runs: the
 * layer's input and output (a MatMul/Gemm is one image of one row: its pixels are the rows), the padded input image the
 * tactic reads (its own conversion of X), and for INT8 the codes of that image. Filled by tc__tactic.chain_geometry.
 */
typedef struct tc__chain_geom {
    size_t batch, cin, cout, ih, iw, oh, ow;
    size_t hp, wp, cp, pt, pl;   /* the padded input image: rows, columns, channels per pixel, top and left padding */
    bool x_nchw;                 /* X is a plain NCHW tensor (not blocked, not rows) */
    bool in_image, out_image;    /* the step already reads / writes an image (its chain attributes) */
    float x_scale;               /* INT8: the input's scale, zero point and lowest and highest codes */
    uint8_t zero_point, lo, hi;
} tc__chain_geom;

#define TC__TACTIC_CONFIG_MAX 256u /* bytes of one configuration (tc__tactic.config_bytes) */
#define TC__TACTIC_MAX_CONFIGS 8   /* configurations of one tactic the tuner times for a step */

typedef struct tc__tactic {
    const char *name;              /* "conv_im2col_avx512", ...; stored in plans, <= 31 chars */
    const char *op_type;
    uint32_t backend;              /* TC__BACKEND_* (backend_id.h): whose list it is on, whose memory it uses */
    uint64_t caps;                 /* capability bits of its backend it needs (CPU: TC__ISA_* bits; 0 = baseline) */
    uint32_t flags;                /* TC__TACTIC_* */
    uint8_t chain;                 /* TC__CHAIN_*: the reduced-precision chain family of its images, or none */
    /* With chain (or TC__TACTIC_IMAGE_WRITER): the geometry of a step it supports; false when it does not take it. */
    bool (*chain_geometry)(const struct tc__step_desc *d, tc__chain_geom *g);
    const char *precision;         /* arithmetic it computes in: "int8", "bf16"; NULL: "fp32" */
    /* True when the tactic computes this step exactly (dtype, attributes, shapes, epilogue). */
    bool (*supports)(const tc__step_desc *d);
    /*
     * Optional. Rewrites constant input `index` from the ONNX layout (src) into the layout run()
     * expects (dst), at build time; the plan stores dst. Dims and dtype stay the source's; the bytes are
     * the source's size, or packed_bytes() when the tactic gives it. packs_input returns false when this
     * input is used as is.
     */
    bool (*packs_input)(const tc__step_desc *d, int index);
    tc_status (*pack)(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err);
    /*
     * Optional: the bytes pack() writes for input `index` when they are not the source's (fewer: INT8 codes and
     * scales, 16-bit halves; more: channels padded with zeros up to a blocked layout's block): the plan stores
     * exactly these (dst holds this many), and only this step reads them. The packed tensor keeps the source's
     * dtype and dims, which shape inference reads; its bytes are the tactic's alone. NULL: the packing is a
     * permutation of the source's bytes. At most 256 times the source's bytes plus 64 KiB
     * (tc__plan_packed_size_ok, engine/plan_format.h).
     */
    size_t (*packed_bytes)(const tc__step_desc *d, int index);
    /* Optional. Scratch bytes run() needs at these shapes (0 when NULL). */
    size_t (*scratch_bytes)(const tc__step_desc *d);
    /* Runs the step. Must not allocate (use ctx->scratch), lock or log. May use ctx->exec. */
    tc_status (*run)(const tc__kernel_ctx *ctx);
    /*
     * Optional: a tactic that computes the same bytes for every step this one supports (the same arithmetic on
     * other instructions). The builder runs both on this machine on each step's random inputs before this one may
     * be chosen, and drops it for that step where their outputs differ: for kernels that could not be tested on
     * their hardware where they were written (the AMX ones, emulated in the tests).
     */
    const struct tc__tactic *proof;
    /* 0: the same bytes; else outputs within proof_tol times the proof's largest magnitude (floating-point sums in
     * another order; a 16-bit out image (tc.half_out_image) is compared as BF16 values, an ulp of which is allowed) */
    float proof_tol;
    /*
     * Optional: configurations the tuner times as separate candidates (a library's algorithm list, tile sizes).
     * A configuration is config_bytes opaque bytes (at most TC__TACTIC_CONFIG_MAX). configs fills up to cap of them
     * into out (cap * config_bytes bytes) and returns how many the step admits (0: none, the tactic then does not
     * take the step), the default first (what an untimed choice, --tactics-fixed, takes). It reads the step's shapes
     * and attributes only (its constant inputs may be packed already), per step and per profile's shapes. The tuner
     * times each one (candidates "name#index"), keeps the fastest; the plan stores its bytes per (step, profile) and
     * run() finds them in ctx->config. check_config validates such bytes read from a plan (a plan is input from
     * outside). pack(), packed_bytes() and scratch_bytes() must not depend on the configuration.
     */
    uint32_t config_bytes;
    int (*configs)(const tc__step_desc *d, void *out, int cap);
    bool (*check_config)(const void *config, tc__err *err);
} tc__tactic;

#endif
