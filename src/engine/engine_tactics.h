/*
 * engine_tactics.h - choosing a tactic per step at build time (auto-tuned, from the timing
 * cache, or by heuristic), packing constant weights for the winners, and sizing their scratch.
 */
#ifndef TC_ENGINE_ENGINE_TACTICS_H
#define TC_ENGINE_ENGINE_TACTICS_H

#include "engine/engine.h"
#include "tactics/tuner.h"

/* Concrete tensors of every value at a profile's min (0), opt (1) or max (2) shapes, with
 * shape-step values computed. Free with tc__shapes_free. */
typedef struct tc__shapes {
    tc__tensor *t;
    bool *known, *owned;
    int n;
    bool *unavail; /* per value: an output of a guarded step that does not infer at these shapes (propagate) */
} tc__shapes;

tc_status tc__shapes_at(const tc__graph *g, const tc__step *steps, const tc__range *ranges, int which, tc__shapes *s,
                        tc__err *err);
void tc__shapes_free(tc__shapes *s);

/* Storage behind a tc__step_desc built from a node and concrete tensors. */
typedef struct tc__desc_store {
    tc__step_desc d;
    const tc__tensor *in[64];
    bool in_const[64];
    const tc__tensor *out[16];
} tc__desc_store;

void tc__desc_build(const tc__graph *g, const tc__node *node, const tc__shapes *s, tc__desc_store *ds);
/* The same after the weights were packed (tc__engine_choose_tactics): constant inputs are the graph's initializers,
 * which s, computed before the packing, does not cover. */
void tc__desc_build_packed(const tc__graph *g, const tc__node *node, const tc__shapes *s, tc__desc_store *ds);

#define TC__MAX_TUNE_PROFILES 8 /* profiles the tuner times; later ones use the same tactics */

typedef struct tc__tactic_opts {
    bool fixed;                 /* heuristic choice: the first supported fast tactic, no timing */
    bool lowp_chain;            /* chain consecutive INT8 / FP16 / BF16 convolutions (lowp_chain.c): one static
                                   profile only */
    bool nhwc16_chain;          /* device FP16 NHWC images between convolutions (nhwc16_chain.c; any profiles) */
    bool int8_residual_image;   /* with lowp_chain: values several INT8 Convs read become one image */
    bool half_residual_image;   /* the same for FP16 and BF16 Convs */
    bool qdq_elide;             /* drop the Q/DQ pairs whose readers are all matching INT8 steps (qdq_elide.c) */
    const char *cache_path;     /* timing cache file or NULL */
    int threads;
    const tc__backend *backend; /* whose tactics, clock and execution handle */
    tc_progress_fn progress;    /* or NULL: TC_PROGRESS_TUNE before each compute step and once at the end */
    void *progress_user_data;
} tc__tactic_opts;

/*
 * Chooses every compute step's tactic: candidates are the tactics that support the step at the opt
 * shapes of every profile (ranges[p], n_profiles of them); each is timed at each profile's opt shapes
 * (or found in the timing cache) and the one with the least total time wins - one tactic per step,
 * so packed weights are stored once. results[k] holds the candidates' times summed over profiles.
 * Packs constant inputs for the winners (new initializers) and returns the ISA bits they need.
 */
tc_status tc__engine_choose_tactics(tc__graph *g, tc__step *steps, const tc__range *const *ranges, int n_profiles,
                                    const tc__tactic_opts *o, tc__tune_result *results, uint64_t *required_isa,
                                    tc__err *err);

/*
 * The fake quantization that INT8 steps make redundant (qdq_elide.c), after the tactics are chosen: a QuantizeLinear ->
 * DequantizeLinear pair (or a producer's TC__ACT_FAKE_QUANT epilogue) whose output only INT8 steps read as their data
 * input, each with the pair's scale and zero point, goes; its readers read the pair's input. The removed nodes leave g,
 * steps and results alike (g->n_nodes shrinks). Returns the number of pairs and epilogues elided.
 */
int tc__elide_qdq(tc__graph *g, tc__step *steps, tc__tune_result *results);

/*
 * The reduced-precision chain (lowp_chain.c): marks every pair of INT8 (or FP16, or BF16) Conv steps where the
 * second is the only reader of the first's output (shapes s: the one static profile's), so that the first
 * writes the second's padded input image in that type; with residual_images also the values that several INT8 (AVX2, or
 * VNNI and AMX) Convs read as input or fused residual, with half_residual_images those of several FP16 (BF16) Convs.
 * *chained receives the number of chained values.
 */
tc_status tc__lowp_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, bool residual_images,
                         bool half_residual_images, int *chained, tc__err *err);

/* FP16 NHWC images between device convolutions (nhwc16_chain.c): values whose producer and readers (as input X or
 * fused residual) are all TC__CHAIN_FP16_NHWC tactics are kept as FP16 NHWC (tc.nhwc16_out/_in/_res). Any profiles:
 * the image depends on no shape. *chained receives the number of such values. */
tc_status tc__nhwc16_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, int *chained, tc__err *err);

/* For the chain passes (nhwc16_chain.c, row16_chain.c): the chain family of step st's tactic (TC__CHAIN_NONE for
 * non-compute steps), and whether that tactic still takes its node with the node's current attributes. */
int tc__step_chain_family(const tc__graph *g, const tc__step *st);
bool tc__step_still_supported(const tc__graph *g, const tc__step *st, const tc__shapes *s);

/* FP16 row images between device dense layers, LayerNorms and attention (row16_chain.c): values whose producer and
 * readers are all TC__CHAIN_FP16_ROWS tactics that accept it are kept as FP16 (tc.row16_out / tc.row16_in). Any
 * profiles. *chained counts the values. */
tc_status tc__row16_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, int *chained, tc__err *err);
/* Checks a loaded graph's FP16 row images (row16_chain.c): every reader of a value reads it as an image exactly when
 * its producer writes one, graph outputs are never images, the attributes are well formed (a crafted plan could
 * otherwise make a kernel read a buffer as the wrong type, past its end for float32 read from an FP16 image). */
tc_status tc__row16_check(const tc__graph *g, tc__err *err);
/* The same for the FP16 NHWC images of the device convolutions (nhwc16_chain.c): a value is read as an image (as X
 * with tc.nhwc16_in, as the fused residual with tc.nhwc16_res) exactly when its producer writes one (tc.nhwc16_out),
 * graph outputs never are, the attributes are 0 or 1 and a residual flag names a residual input. */
tc_status tc__nhwc16_check(const tc__graph *g, tc__err *err);

/* The reduced-precision chain's FP32 producers (lowp_chain.c, backends/cpu/qimage.h): a per-channel Mul of a
 * [N][C][H][W] tensor (EfficientNet's squeeze-and-excitation scale) whose readers are AVX2 INT8 Convs of one family that
 * all convert it into the same image takes mul_int8_image_avx2 and writes that image, which the readers take as is. */
tc_status tc__lowp_chain_images(tc__graph *g, tc__step *steps, const tc__shapes *s, int *chained, tc__err *err);

/* True when node c (tactic c_tactic) could take node p's (tactic p_tactic) output image in the chain: families that
 * chain, and c the only reader of p's output (the shapes are checked when the chain is made). */
bool tc__lowp_may_link(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic);

/* True when a step of this tactic may chain (a reduced-precision family that lowp_chain.c links). */
bool tc__lowp_tactic_chains(const char *tactic);

/* The INT8 out image node p would write for node c in the chain (tc.int8_out_image's ints, how many of img's 9 it takes,
 * and tc.int8_out_scale), or 0 when the two do not chain (INT8 tactics only). */
size_t tc__lowp_link_out_image(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic,
                               const tc__shapes *s, int64_t img[9], float *scale);

/* The layout `inspect` shows for a chained step of this tactic with these attributes: its out image's ("u8-chain",
 * "s16-chain", "u7-chain", "f16-chain", "bf16-chain"; "" when the tactic does not chain). */
const char *tc__lowp_chain_label(const tc__attrs *attrs, const char *tactic);

/* The tactic of a step (its backend's, by name: "ref" is the CPU's reference kernel of the op), or NULL for a name this
 * build does not have. */
const tc__tactic *tc__step_tactic(const tc__step *step, const char *op_type);

/* The configuration of every compute step at every profile (tc__tactic.configs): the plan's parameter blobs. */
typedef struct tc__step_configs {
    const unsigned char **params; /* [profile * n_steps + step]: config_bytes bytes, or NULL (none) */
    uint32_t *sizes;              /* the same, their sizes */
    unsigned char *bytes;         /* (what params point into) */
} tc__step_configs;
/* Fills out for the steps' tactics: per profile (its opt shapes, ranges[p]), the configuration the tuner chose
 * (results[k]: the winner's index into the tactic's list; the first when the winner is untimed or another tactic, or
 * when the profile's list is shorter). */
tc_status tc__engine_step_configs(const tc__graph *g, const tc__step *steps, const tc__tune_result *results,
                                  const tc__range *const *ranges, int n_profiles, tc__step_configs *out, tc__err *err);
void tc__step_configs_free(tc__step_configs *c);

/* Scratch bytes a step needs at the shapes in s (its tactic's own figure plus 4096). */
uint64_t tc__step_scratch_bytes(const tc__graph *g, const tc__step *step, const tc__shapes *s);

#endif
