/*
 * tailcut.h - the only header users of libtailcut include.
 *
 * tailcut imports an ONNX model, verifies it, infers its shapes and runs it.
 * All handles are opaque. Every fallible call returns a tc_status (0 = success);
 * calls that create a handle also fill an optional caller-owned tc_error with a
 * human-readable reason naming the file, node, op or tensor at fault.
 * The library never aborts or exits on bad input.
 *
 * Ownership: unless a comment says otherwise, the library keeps no pointer the
 * caller passed in after a call returns, and whoever creates a handle destroys it.
 */
#ifndef TAILCUT_TAILCUT_H
#define TAILCUT_TAILCUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TAILCUT_BUILDING_LIBRARY)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

/* Largest tensor rank the library handles. */
#define TC_MAX_RANK 8

/* Status codes: one X-macro is the single list (name, value, description). */
#define TC_STATUS_MAP(X)                                                   \
    X(OK, 0, "success")                                                    \
    X(INVALID_ARGUMENT, 1, "invalid argument")                             \
    X(UNSUPPORTED, 2, "unsupported operator, attribute or data type")      \
    X(UNSUPPORTED_HARDWARE, 3, "unsupported hardware")                     \
    X(CORRUPT_FILE, 4, "corrupt or truncated file")                        \
    X(OUT_OF_MEMORY, 5, "out of memory")                                   \
    X(IO_ERROR, 6, "I/O error")                                            \
    X(INVALID_GRAPH, 7, "invalid graph")                                   \
    X(INTERNAL, 8, "internal error")

typedef enum tc_status {
#define TC_STATUS_ENUM_(name, value, text) TC_STATUS_##name = value,
    TC_STATUS_MAP(TC_STATUS_ENUM_)
#undef TC_STATUS_ENUM_
} tc_status;

/* Returns a static description of a status code. */
TC_API const char *tc_status_str(tc_status status);

/* Element types. The values are those of ONNX TensorProto.DataType. */
typedef enum tc_dtype {
    TC_DTYPE_UNDEFINED = 0,
    TC_DTYPE_FLOAT32 = 1,
    TC_DTYPE_UINT8 = 2,
    TC_DTYPE_INT8 = 3,
    TC_DTYPE_UINT16 = 4,
    TC_DTYPE_INT16 = 5,
    TC_DTYPE_INT32 = 6,
    TC_DTYPE_INT64 = 7,
    TC_DTYPE_BOOL = 9,
    TC_DTYPE_FLOAT16 = 10,
    TC_DTYPE_FLOAT64 = 11,
    TC_DTYPE_UINT32 = 12,
    TC_DTYPE_UINT64 = 13,
    TC_DTYPE_BFLOAT16 = 16,
} tc_dtype;

/* Name of a dtype ("float32", ...), or NULL when the value is not a supported dtype. */
TC_API const char *tc_dtype_name(tc_dtype dtype);
/* Size of one element in bytes, or 0 when the value is not a supported dtype. */
TC_API size_t tc_dtype_size(tc_dtype dtype);

/* A caller-owned buffer that receives the reason for a failure. */
typedef struct tc_error {
    char message[1024];
} tc_error;

/*
 * A dense, row-major tensor. The struct is plain data: whoever filled `data`
 * owns it. Tensors filled by tc_tensor_alloc / tc_tensor_load / tc_model_run_reference
 * own a heap buffer that tc_tensor_free releases.
 */
typedef struct tc_tensor {
    tc_dtype dtype;
    int32_t rank;
    int64_t dims[TC_MAX_RANK];
    void *data;
    size_t nbytes;
} tc_tensor;

/* Allocates a zeroed tensor of the given type and shape (sizes overflow-checked). */
TC_API tc_status tc_tensor_alloc(tc_dtype dtype, int32_t rank, const int64_t *dims,
                                 tc_tensor *tensor, tc_error *error);
/* Frees the buffer of a tensor filled by the library and zeroes the struct. NULL-safe. */
TC_API void tc_tensor_free(tc_tensor *tensor);
/*
 * Reads a tensor from a NumPy .npy file or an ONNX TensorProto .pb file
 * (chosen by the file's contents). If name_out is not NULL and the file carries
 * a name (.pb), up to name_size-1 bytes of it are copied there.
 */
TC_API tc_status tc_tensor_load(const char *path, tc_tensor *tensor, char *name_out,
                                size_t name_size, tc_error *error);
/* Writes a tensor as a NumPy .npy file (format 1.0, little-endian, C order). */
TC_API tc_status tc_tensor_save_npy(const char *path, const tc_tensor *tensor, tc_error *error);

/* ---- Models ---------------------------------------------------------------- */

typedef struct tc_model tc_model;

enum {
    /* Import succeeds even when some nodes use ops tailcut does not support
     * (used by `tailcut inspect`); such a model cannot be run. */
    TC_MODEL_ALLOW_UNSUPPORTED = 1u << 0,
};

typedef struct tc_model_options {
    uint32_t struct_size; /* sizeof(tc_model_options) */
    uint32_t flags;       /* TC_MODEL_* */
} tc_model_options;

/*
 * Imports an ONNX model file (external-data files are resolved relative to its
 * folder), verifies it and infers its shapes. options may be NULL.
 */
TC_API tc_status tc_model_load(const char *path, const tc_model_options *options, tc_model **model,
                               tc_error *error);
/*
 * Imports an ONNX model from memory; base_dir (may be NULL) is where external
 * data files are looked up. The buffer is not kept after the call.
 */
TC_API tc_status tc_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                      const tc_model_options *options, tc_model **model,
                                      tc_error *error);
TC_API void tc_model_destroy(tc_model *model);

/* Description of a graph input or output. Strings belong to the model. */
typedef struct tc_io_info {
    const char *name;
    tc_dtype dtype;
    int32_t rank;                        /* -1 when unknown */
    int64_t dims[TC_MAX_RANK];           /* -1 for a symbolic or unknown dim */
    const char *dim_names[TC_MAX_RANK];  /* symbol name of a symbolic dim, else NULL */
} tc_io_info;

TC_API int tc_model_num_inputs(const tc_model *model);
TC_API int tc_model_num_outputs(const tc_model *model);
TC_API tc_status tc_model_input_info(const tc_model *model, int index, tc_io_info *info);
TC_API tc_status tc_model_output_info(const tc_model *model, int index, tc_io_info *info);

/* Description of a node. Strings belong to the model. */
typedef struct tc_node_info {
    const char *name;
    const char *op_type;
    const char *domain;
    int64_t opset;  /* opset version of the node's domain */
    int supported;  /* 1 when tailcut can run this node */
    /* The If branch decided at run time that the node belongs to ("If_0:then", nested "If_0:else > inner:then"; the
     * branches join the graph as nodes that run only when their branch is taken), "" for none; and how deep. */
    const char *branch;
    int branch_depth;
} tc_node_info;

TC_API int tc_model_num_nodes(const tc_model *model);
TC_API tc_status tc_model_node_info(const tc_model *model, int index, tc_node_info *info);

/*
 * What loading let through with a warning (a graph output declared with another shape than it computes: the
 * computed one is used, as onnxruntime does): the index-th warning, or NULL past the last. The string belongs to
 * the model.
 */
TC_API const char *tc_model_warning(const tc_model *model, int index);

/*
 * Runs the model with the reference executor (plain C, wide accumulation).
 * inputs[i] is the tensor for graph input input_names[i], of that input's dtype
 * (another is refused, as by tc_context_set_input); every graph input
 * without an initializer must be given. On success outputs[0..num_outputs-1]
 * are filled, in graph output order, with library-allocated tensors that the
 * caller frees with tc_tensor_free. On failure, no output is left allocated.
 */
TC_API tc_status tc_model_run_reference(const tc_model *model, int num_inputs,
                                        const char *const *input_names, const tc_tensor *inputs,
                                        tc_tensor *outputs, tc_error *error);

/* ---- INT8 calibration ------------------------------------------------------- */

/* How a calibrated tensor's range (amax, scale = amax / 127) is chosen from its histogram of |x|. */
typedef enum tc_calib_method {
    TC_CALIB_ENTROPY = 0,    /* the threshold minimizing KL divergence over 128 levels (TensorRT's) */
    TC_CALIB_MINMAX = 1,     /* the largest |x| seen */
    TC_CALIB_PERCENTILE = 2, /* a percentile of |x| (e.g. 99.99) */
} tc_calib_method;

typedef struct tc_calibrator tc_calibrator;

/*
 * Prepares to calibrate the model: every float tensor that an INT8 layer may read (the data input of
 * Conv, MatMul and Gemm nodes with constant weights) is observed in FP32 on the samples given to
 * tc_calibrator_add, in histograms of at least 2048 bins. The model must outlive the calibrator.
 */
TC_API tc_status tc_calibrator_create(const tc_model *model, tc_calibrator **calibrator, tc_error *error);
/* Runs one sample (a tensor per graph input, of its dtype: another is refused). Samples may differ in shape (e.g. sequence length): the FP32
 * engine that observes them is rebuilt for each new set of shapes. */
TC_API tc_status tc_calibrator_add(tc_calibrator *calibrator, int num_inputs, const char *const *input_names,
                                   const tc_tensor *inputs, tc_error *error);
TC_API int tc_calibrator_num_samples(const tc_calibrator *calibrator);
/* Where tc_calibrator_add's time went so far, in seconds of wall time: building the FP32 engine of the observed graph
 * (at the first sample, and again for each new input shape), running it, and adding the observed tensors to their
 * histograms (one tensor per thread, on the CPU budget's threads). The range search runs later, in
 * tc_calibrator_tensor and tc_calibrator_save. */
typedef struct tc_calib_timing {
    double build_s, run_s, observe_s;
    int engines_built;
} tc_calib_timing;
TC_API void tc_calibrator_timing(const tc_calibrator *calibrator, tc_calib_timing *timing);
/* Number of tensors observed (after at least one sample). */
TC_API int tc_calibrator_num_tensors(const tc_calibrator *calibrator);

/* What calibration found for one tensor, by a method. Strings belong to the calibrator. */
typedef struct tc_calib_tensor_info {
    const char *name;
    double amax;               /* the range chosen (scale = amax / 127) */
    double sqnr_db;            /* estimated signal-to-quantization-noise ratio at that range (+inf: all zero) */
    int num_layers;            /* the nodes that read it as their quantized input */
    const char *const *layers; /* their names (as in the model) */
} tc_calib_tensor_info;
TC_API tc_status tc_calibrator_tensor(const tc_calibrator *calibrator, int index, tc_calib_method method,
                                      double percentile, tc_calib_tensor_info *info, tc_error *error);
/* Writes the calibration cache (one scale per tensor, keyed to this model) atomically to path. */
TC_API tc_status tc_calibrator_save(const tc_calibrator *calibrator, tc_calib_method method, double percentile,
                                    const char *path, tc_error *error);
/*
 * Writes the calibrated model as a standard QDQ ONNX file that other runtimes load: model_path is the
 * .onnx the calibrator's model was imported from; each calibrated tensor a Conv (one group), MatMul or
 * Gemm reads gets QuantizeLinear -> DequantizeLinear (int8, zero point 0, its scale by the method), and
 * those nodes' float32 initializer weights become int8 (symmetric; per output channel from opset 13).
 * Models with external data are refused.
 */
TC_API tc_status tc_calibrator_export_qdq(const tc_calibrator *calibrator, tc_calib_method method, double percentile,
                                          const char *model_path, const char *out_path, tc_error *error);
/* The same with TC_EXPORT_* flags (0: tc_calibrator_export_qdq). */
TC_API tc_status tc_calibrator_export_qdq_flags(const tc_calibrator *calibrator, tc_calib_method method,
                                                double percentile, const char *model_path, const char *out_path,
                                                uint32_t flags, tc_error *error);
enum {
    /* The weights of Conv (one group), MatMul and Gemm layers on onnxruntime's reduce_range grid (|q| <= 64, scale
     * max|w| / 64), as TC_BUILD_INT8_REDUCE_RANGE quantizes them; depthwise weights keep 8 bits (as there). tailcut
     * builds such an export with its 7-bit-weight kernels, as the --int8 --int8-reduce-range plan. */
    TC_EXPORT_QDQ_REDUCE_RANGE = 1u << 0,
};
TC_API void tc_calibrator_destroy(tc_calibrator *calibrator);

/* ---- Comparing outputs ------------------------------------------------------------ */

/*
 * Agreement of a tensor computed twice (a: the reference, b: the candidate), accumulated over samples, as
 * `tailcut compare` reports it. Plain data: zero it before the first tc_compare_add. Float tensors
 * (float32/64, float16, bfloat16) sum figures over their finite pairs, in double; other types count the
 * elements that differ (exact = 1).
 */
typedef struct tc_compare_stats {
    int exact;        /* set by tc_compare_add: 1 for a non-float dtype */
    int values_only;  /* the caller's switch: no top-1/top-5 rows (intermediate tensors) */
    uint64_t elements, finite, mismatches, nan_mismatches; /* nan_mismatches: pairs where only one is NaN/Inf, or
                                                              the Infs differ */
    double dot, sum_a2, sum_b2, sum_d2, sum_abs; /* sums of a*b, a*a, b*b, (a-b)^2, |a-b| over the finite pairs */
    double max_abs, max_rel;   /* max |a-b|, max |a-b| / max(|a|, |b|, 1e-6) */
    uint64_t rows, top1;       /* rows of the last dim (>= 2) and those where argmax(a) == argmax(b) */
    uint64_t rows5, top5;      /* rows of a last dim >= 5 and those where argmax(b) is among a's 5 largest */
} tc_compare_stats;

/* Adds one sample: a and b must have the same dtype and shape (else TC_STATUS_INVALID_ARGUMENT and why). */
TC_API tc_status tc_compare_add(tc_compare_stats *stats, const tc_tensor *a, const tc_tensor *b, tc_error *error);
/* sum(a*b) / sqrt(sum(a*a) * sum(b*b)) over the finite pairs (1 when both are all zero). */
TC_API double tc_compare_cosine(const tc_compare_stats *stats);
/* ||a - b|| / ||a|| (0 when both are zero, +inf when only a is). */
TC_API double tc_compare_rel_l2(const tc_compare_stats *stats);
/* 10 * log10(sum(a*a) / sum((a - b)^2)) in dB: +inf when b equals a, -inf when a is all zero and b is not. */
TC_API double tc_compare_sqnr_db(const tc_compare_stats *stats);

/* ---- Engines ------------------------------------------------------------------ */

/*
 * The single list of optimisation passes, each with its off switch in tc_build_options.disabled_passes:
 * X(SYMBOL, bit, "name", "what it does"). TC_PASS_<SYMBOL> = 1 << bit; the name is --disable-pass's.
 * Graph passes run in rounds to a fixpoint (their order is the library's); the others run while the
 * engine is built (layout, and after the tactics are chosen: lowp_chain, the residual images, qdq_elide).
 */
#define TC_PASS_LIST(X)                                                                                                \
    X(ELIMINATE_NOOPS, 0, "eliminate_noops", "remove Identity, inference Dropout, no-op Reshape/Cast/Flatten")         \
    X(FOLD_CONSTANTS, 1, "fold_constants", "evaluate nodes whose inputs are all constant, Shape of static dims included") \
    X(FOLD_BATCHNORM, 2, "fold_batchnorm", "fold BatchNormalization into the preceding Conv or Gemm")                   \
    X(FUSE_GELU, 3, "fuse_gelu", "rewrite the Erf pattern x*0.5*(1+erf(x/sqrt2)) into one Gelu node")                  \
    X(FUSE_MATMUL_BIAS, 4, "fuse_matmul_bias", "MatMul + Add(constant bias over the last dim) -> MatMul with a bias "   \
      "epilogue")                                                                                                      \
    X(FUSE_RESIDUAL, 5, "fuse_residual", "Add(producer output, other) -> residual epilogue of the producer")           \
    X(FUSE_ACTIVATION, 6, "fuse_activation", "Relu, Clip, Sigmoid, SiLU, HardSwish, Gelu, LeakyRelu, Tanh, "           \
      "QuantizeLinear+DequantizeLinear -> epilogue of the producer")                                                   \
    X(ELIMINATE_DEAD, 7, "eliminate_dead", "remove nodes and initializers that no graph output depends on")            \
    X(LAYOUT, 8, "layout", "keep activations in a blocked layout (NCHW16c on AVX-512 CPUs) between blocked kernels; "  \
      "the build times it against the plain layout")                                                                   \
    X(FOLD_QDQ, 9, "fold_qdq", "Conv/MatMul/Gemm reading a QuantizeLinear+DequantizeLinear output take its scale and " \
      "zero point (INT8 tactics)")                                                                                     \
    X(LOWP_CHAIN, 10, "lowp_chain", "after tactic choice (one static profile): an INT8 (FP16, BF16) Conv read only "   \
      "by another of the same precision writes that one's input image in that type; on CUDA (any profiles) FP16 " \
      "values between cuDNN convolutions stay FP16 NHWC")                                                           \
    X(INT8_RESIDUAL_IMAGE, 11, "int8_residual_image", "with lowp_chain: a value several INT8 Convs read, as input or " \
      "fused residual, is written once as their image")                                                                \
    X(FUSE_NAN_GUARD, 12, "fuse_nan_guard", "Softmax -> Where(IsNaN(s), c, s) (transformers' guard of fully masked "   \
      "rows) -> Softmax writing c for NaN")                                                                            \
    X(FUSE_MATMUL_VIEWS, 13, "fuse_matmul_views", "MatMul of two computed operands reads Transpose/scalar-Mul inputs " \
      "and writes a last-dim-keeping Transpose output itself")                                                         \
    X(FUSE_HARDSWISH, 14, "fuse_hardswish", "rewrite x*Clip(x+3,0,6)/6 (HardSwish written without the operator) into " \
      "one HardSwish node")                                                                                            \
    X(QDQ_ELIDE, 15, "qdq_elide", "after tactic choice (QDQ models): a QuantizeLinear -> DequantizeLinear pair whose "  \
      "readers are all INT8 steps with its scale and zero point goes; they read its input")                           \
    X(HALF_RESIDUAL_IMAGE, 16, "half_residual_image", "with lowp_chain: a value several FP16 (BF16) Convs read, as "   \
      "input or fused residual, is written once as their image")                                                       \
    X(ELIMINATE_COMMON, 17, "eliminate_common", "remove a node that repeats an earlier one (same op, attributes, and " \
      "inputs or equal constants)")                                                                                    \
    X(FUSE_SOFTMAX_MASK, 18, "fuse_softmax_mask", "Add(x, broadcast mask) -> Softmax over the last axis (attention) " \
      "-> Softmax adding the mask's rows as it loads x's")                                                          \
    X(FUSE_ATTENTION, 19, "fuse_attention", "on device backends: Reshape heads -> MatMul(Q, K^T) -> Softmax [+ mask] " \
      "-> MatMul(P, V) -> Reshape -> one Attention node (a fused attention kernel)")                                 \
    X(MERGE_QKV, 20, "merge_qkv", "on device backends, after fuse_attention: the Q, K and V projections of an "      \
      "Attention node (MatMuls of one input by constant weights) -> one MatMul, its weights side by side, whose "     \
      "output the Attention node reads as packed Q|K|V")                                                         \
    X(FUSE_EMBED_LAYERNORM, 21, "fuse_embed_layernorm", "on device backends: Gather(constant table, ids) [+ constant " \
      "addends] -> LayerNormalization -> one TcEmbedLayerNorm node (an embedding layer in one kernel)")

enum {
#define TC_PASS_ENUM_(sym, bit, name, text) TC_PASS_##sym = 1u << (bit),
    TC_PASS_LIST(TC_PASS_ENUM_)
#undef TC_PASS_ENUM_
};

/* The passes by index, 0..tc_pass_count()-1 in TC_PASS_LIST order: name, off-switch bit, description (NULL and 0
 * past the end; strings belong to the library). For --disable-pass and --help. */
TC_API int tc_pass_count(void);
TC_API const char *tc_pass_name(int index);
TC_API uint32_t tc_pass_flag(int index);
TC_API const char *tc_pass_description(int index);


typedef struct tc_engine tc_engine;
typedef struct tc_context tc_context;

/*
 * The CPUs this process may use, which every default thread count (0 in tc_build_options.threads, a context's pool,
 * the tuner, the calibrator, tailcut serve's instances) takes: the smaller of the affinity mask (taskset, numactl,
 * cpusets) and the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us, rounded up, at least
 * one: a container's CPU limit), else the online CPUs. Strings belong to the library.
 */
typedef struct tc_cpu_budget_info {
    int cpus;           /* the budget, at least 1 */
    const char *source; /* where it came from: "affinity", "cgroup" or "online" */
    int online;         /* online CPUs of the machine */
    int affinity;       /* CPUs in the affinity mask */
    double cgroup_quota; /* the cgroup quota in CPUs, 0 when none */
} tc_cpu_budget_info;

TC_API void tc_cpu_budget(tc_cpu_budget_info *info);

/* The shapes one input may take in an optimization profile (like TensorRT's min/opt/max). */
typedef struct tc_input_range {
    const char *name;
    int32_t rank;
    int64_t min[TC_MAX_RANK];
    int64_t opt[TC_MAX_RANK];
    int64_t max[TC_MAX_RANK];
} tc_input_range;

/* One optimization profile: a range for every input that has symbolic dims (others may be listed). */
typedef struct tc_profile {
    int32_t num_inputs;
    const tc_input_range *inputs; /* not kept after the call that takes it */
} tc_profile;

/*
 * Progress of long work, for a bar or a log line (tc_build_options.progress). Called on the thread that does the work,
 * with phase one of the TC_PROGRESS_* words, done of total items finished (0 <= done <= total; total stays the same
 * within one run of a phase), and item naming the item under way (for "tune": the step's node name and op, as
 * "conv1 (Conv)"), NULL on the last call of a phase, which has done == total (a build that fails stops without it).
 * Strings are valid during the call only. The callback must not call back into the library on the object being built;
 * it cannot stop the work. The CLI draws its progress bar and lines from it (tools/tailcut/progress.c).
 */
typedef void (*tc_progress_fn)(void *user_data, const char *phase, int done, int total, const char *item);

/* tc_engine_build: choosing each compute step's tactic (timing candidates unless TC_BUILD_TACTICS_FIXED). It runs once
 * per layout the build times (twice on AVX-512 CPUs: the NCHW16c graph, then the plain one), each run from done 0. */
#define TC_PROGRESS_TUNE "tune"

typedef struct tc_build_options {
    uint32_t struct_size;        /* sizeof(tc_build_options) */
    int32_t threads;             /* threads a context runs with; 0 = the CPU budget (tc_cpu_budget) */
    int32_t num_profiles;        /* 0: one profile from the model's static shapes */
    const tc_profile *profiles;  /* not kept after tc_engine_build returns */
    uint32_t disabled_passes;    /* TC_PASS_* bits */
    uint32_t flags;              /* TC_BUILD_* bits */
    const char *timing_cache;    /* timing cache file read and updated by the tuner, or NULL */
    const char *calib_cache;     /* TC_BUILD_INT8: the calibration cache (tc_calibrator_save) of this model */
    int32_t num_fp32_layers;     /* TC_BUILD_INT8/FP16/BF16: nodes (by name) that keep FP32 whatever the flags say */
    const char *const *fp32_layers;
    int32_t num_no_int8_layers;  /* TC_BUILD_INT8: nodes kept out of INT8 only: they still take FP16/BF16 where
                                    those flags allow it (tailcut's accuracy fallback moves layers here) */
    const char *const *no_int8_layers;
    int32_t num_int8_w8_layers;  /* TC_BUILD_INT8_REDUCE_RANGE: INT8 nodes that keep 8-bit weights (tailcut's accuracy
                                    fallback moves layers here before it moves any to FP32) */
    const char *const *int8_w8_layers;
    const char *backend;         /* the backend the engine runs on: "cpu" (NULL: cpu) or "cuda"; a build without it, or
                                    a machine without its device, fails with TC_STATUS_UNSUPPORTED(_HARDWARE) and why */
    tc_progress_fn progress;     /* or NULL: called as tc_engine_build makes progress (see tc_progress_fn) */
    void *progress_user_data;    /* passed to progress as is; not used by the library otherwise */
} tc_build_options;

enum {
    /* Choose each step's tactic by the heuristic order (no timing): fast builds. */
    TC_BUILD_TACTICS_FIXED = 1u << 0,
    /*
     * Allow INT8 for Conv (one group), MatMul and Gemm layers with constant weights whose data input
     * has a scale in calib_cache: weights symmetric per output channel, activations per tensor. The
     * tuner times each such layer's INT8 and FP32 tactics and keeps the faster (--tactics-fixed: INT8).
     */
    TC_BUILD_INT8 = 1u << 1,
    /*
     * Allow FP16 for the same layers (CPUs with AVX512-FP16): X and W rounded to FP16, products summed in
     * FP16 over chunks of 64 and the chunks in FP32, FP32 epilogue and FP32 tensors between layers. The
     * tuner times each layer's FP16, INT8 (with TC_BUILD_INT8) and FP32 tactics and keeps the fastest
     * (--tactics-fixed: INT8, else FP16, else BF16). Values beyond FP16's range (65504) become Inf.
     */
    TC_BUILD_FP16 = 1u << 2,
    /*
     * Allow BF16 for the same layers (CPUs with AVX512-BF16): X and W rounded to BF16, products summed in
     * FP32 (vdpbf16ps), FP32 epilogue and tensors. Timed against the other allowed precisions like FP16.
     */
    TC_BUILD_BF16 = 1u << 3,
    /*
     * With TC_BUILD_INT8: INT8 layers may quantize their weights to 7 bits (per output channel, |q| <= 64, onnxruntime's
     * reduce_range) where a kernel is faster with them. On CPUs without VNNI, the AVX2 kernel for non-negative inputs then
     * sums two vpmaddubsw results in 16 bits before widening (exact: 2 * 2 * 127 * 64 < 2^15), about 1.3x its multiply
     * rate. It changes results: the weights' quantization step doubles (tailcut compare shows by how much).
     */
    TC_BUILD_INT8_REDUCE_RANGE = 1u << 4,
};

/*
 * Optimizes the model for this machine and returns an engine (the same object a saved
 * plan loads into). The model is not modified and may be destroyed afterwards.
 */
TC_API tc_status tc_engine_build(const tc_model *model, const tc_build_options *options, tc_engine **engine,
                                 tc_error *error);
/* How tc_engine_build_accurate measures agreement with the FP32 engine. */
typedef enum tc_accuracy_metric {
    TC_ACCURACY_COSINE = 0, /* the lowest cosine similarity of a float output, over all samples */
    TC_ACCURACY_TOP1 = 1,   /* the lowest top-1 agreement of a float output (argmax over its last dim) */
} tc_accuracy_metric;

typedef struct tc_accuracy_options {
    uint32_t struct_size;             /* sizeof(tc_accuracy_options) */
    const tc_calibrator *calibrator;  /* of the model, with its samples added: orders the layers (not kept) */
    tc_calib_method method;           /* the method and percentile the calibration cache was written with */
    double percentile;
    tc_accuracy_metric metric;
    double threshold;                 /* in (0, 1] */
    int32_t num_samples, num_inputs;  /* samples[k * num_inputs + i]: input input_names[i] of sample k (not kept) */
    const char *const *input_names;
    const tc_tensor *samples;
    void (*log)(void *user, const char *line); /* each round's report, one line without '\n' (NULL: silent) */
    void *log_user;
} tc_accuracy_options;

/*
 * tc_engine_build with TC_BUILD_INT8 and an accuracy target (`tailcut build --accuracy-threshold`): runs the FP32
 * engine and INT8 engines on the samples and keeps the INT8 layers whose input has the lowest estimated SQNR
 * (calibrator, method) out of INT8, 1, 2, 4, ... at a time, until the metric against the FP32 engine reaches the
 * threshold: in FP32 (options->fp32_layers, the caller's kept), or with TC_BUILD_FP16/BF16 in the no-INT8 list (FP16 /
 * BF16 where faster). With TC_BUILD_INT8_REDUCE_RANGE the layers first get 8-bit weights, in the same order. When
 * even every layer out of INT8 misses the threshold, that engine is returned (the log says so). *achieved (may be
 * NULL) receives the metric of the returned engine. Options are not kept after the call.
 */
TC_API tc_status tc_engine_build_accurate(const tc_model *model, const tc_build_options *options,
                                          const tc_accuracy_options *accuracy, tc_engine **engine, double *achieved,
                                          tc_error *error);
/* Writes the engine as one plan file (byte-identical for identical builds). */
TC_API tc_status tc_engine_save(const tc_engine *engine, const char *path, tc_error *error);
/* Maps a plan file; refuses a corrupt file, another format version or another machine type. */
TC_API tc_status tc_engine_load(const char *path, tc_engine **engine, tc_error *error);
TC_API void tc_engine_destroy(tc_engine *engine);

TC_API int tc_engine_num_inputs(const tc_engine *engine);
TC_API int tc_engine_num_outputs(const tc_engine *engine);
TC_API tc_status tc_engine_input_info(const tc_engine *engine, int index, tc_io_info *info);
TC_API tc_status tc_engine_output_info(const tc_engine *engine, int index, tc_io_info *info);
TC_API int tc_engine_num_profiles(const tc_engine *engine);
/* The range of input `input` (engine input order) in profile `profile`. */
TC_API tc_status tc_engine_profile_range(const tc_engine *engine, int profile, int input, tc_input_range *range);

/* One step of the engine: a node with everything fused into it. Strings belong to the engine. */
typedef struct tc_step_info {
    const char *name;
    const char *ops;       /* e.g. "Conv+BatchNormalization+Add+Relu" */
    const char *tactic;    /* the kernel implementation chosen */
    const char *precision; /* "fp32", ... */
    int runs_at_reshape;   /* 1 for shape arithmetic evaluated when input shapes are set */
    char output_shape[96]; /* first output's shape, e.g. "batchx64x56x56" */
    const char *layout;    /* first output's memory layout: "nchw16c" (blocked) or "" (as the model
                              says); "nchw16c->nchw" for a reorder the layout pass inserted; "u8-chain"
                              ("f16-chain", "bf16-chain") for a step that writes the next step's input in its
                              reduced type (TC_PASS_LOWP_CHAIN) */
    int is_reorder;        /* 1 for such a reorder */
    const char *output;    /* name of the first output tensor ("" if none): what tc_context_tensor reads
                              after a run with tc_context_keep_tensors; a fused step's output is that of
                              its last fused op (e.g. the Relu's of Conv+Relu) */
    const char *backend;   /* the backend whose kernel runs it: "cpu", ... */
    const char *branch;    /* the If branch decided at run time that the step belongs to (as tc_node_info.branch: it
                              runs only when that branch is taken), "" for none */
    int branch_depth;      /* how many such branches deep */
} tc_step_info;

TC_API int tc_engine_num_steps(const tc_engine *engine);
TC_API tc_status tc_engine_step_info(const tc_engine *engine, int index, tc_step_info *info);

/* A candidate tactic the auto-tuner considered for a step, with its measured times. */
typedef struct tc_tactic_timing {
    const char *name;
    double median_ms; /* < 0: not timed (heuristic choice or cut off early) */
    double max_ms;
    int chosen;
} tc_tactic_timing;

/* Number of candidates recorded for a step, and candidate i. */
TC_API int tc_engine_step_num_candidates(const tc_engine *engine, int step);
TC_API tc_status tc_engine_step_candidate(const tc_engine *engine, int step, int index, tc_tactic_timing *timing);

/* A tactic of the step's op that was no candidate, and why ("needs amx_tile,amx_int8 (not usable here)", "no INT8 input
 * scale ..."), as the build found them (oneDNN's verbose mode). Strings belong to the engine. */
typedef struct tc_tactic_rejection {
    const char *name;
    const char *reason;
} tc_tactic_rejection;

TC_API int tc_engine_step_num_rejected(const tc_engine *engine, int step);
TC_API tc_status tc_engine_step_rejected(const tc_engine *engine, int step, int index, tc_tactic_rejection *rejection);

/* The backend an engine runs on and the machine it was built for (a plan's TARGET section). */
typedef struct tc_target_info {
    const char *backend;    /* "cpu", ...; belongs to the library */
    char target[384];       /* the build machine in words, e.g. "AuthenticAMD family 26 model 2 (...), kernel
                               revision 5, ISA sse42,avx,..." */
    uint64_t required_caps; /* the backend's capability bits the engine's kernels need (CPU: ISA bits) */
} tc_target_info;

TC_API tc_status tc_engine_target_info(const tc_engine *engine, tc_target_info *info);
/* The threads its contexts run with by default (tc_build_options.threads; 0: the CPU budget of the running process). */
TC_API int tc_engine_threads(const tc_engine *engine);

typedef struct tc_memory_info {
    uint64_t arena_bytes;   /* activation arena of one context at the profile's max shapes */
    uint64_t naive_bytes;   /* sum of all activation sizes at the max shapes (no reuse) */
    uint64_t scratch_bytes; /* kernel scratch of one context */
    uint64_t weight_bytes;  /* constant data in the plan */
} tc_memory_info;

TC_API tc_status tc_engine_memory_info(const tc_engine *engine, int profile, tc_memory_info *info);

/*
 * A context runs an engine. It allocates everything it needs here, once, sized for the
 * profile's max shapes; tc_context_run then allocates nothing, takes no lock shared with
 * other contexts and never logs. Contexts of one engine may run concurrently on different
 * threads; one context is used by one thread at a time. The engine must outlive its contexts.
 */
TC_API tc_status tc_context_create(const tc_engine *engine, int profile, tc_context **context, tc_error *error);
TC_API void tc_context_destroy(tc_context *context);
/* The threads a context's kernels run on (its own pool's, or a shared tc_thread_pool's). */
TC_API int tc_context_threads(const tc_context *context);
/* Replaces the context's thread pool by one of `threads` threads (0 = the CPU budget, tc_cpu_budget); the engine's
 * setting is the default. Call it between runs, not during one. */
TC_API tc_status tc_context_set_threads(tc_context *context, int threads);
/*
 * A thread pool that several contexts share, so that contexts running at the same time never use
 * more kernel threads than the pool has (no oversubscription): their parallel regions take turns on
 * the pool's threads (pthreadpool serializes them), where separate pools would each claim every core.
 * `threads` 0 means all cores. The pool must outlive every context that uses it.
 */
typedef struct tc_thread_pool tc_thread_pool;
TC_API tc_status tc_thread_pool_create(int threads, tc_thread_pool **pool, tc_error *error);
TC_API void tc_thread_pool_destroy(tc_thread_pool *pool);
TC_API int tc_thread_pool_threads(const tc_thread_pool *pool);
/* Runs the context's kernels on a shared pool (kept, not owned) instead of its own, whose threads are
 * released. Call it between runs. tc_context_set_threads gives the context its own pool again. */
TC_API tc_status tc_context_set_thread_pool(tc_context *context, tc_thread_pool *pool);
/* Sets an input's shape; it must lie within the profile. Inputs with static shapes need no call. */
TC_API tc_status tc_context_set_input_shape(tc_context *context, const char *name, int32_t rank, const int64_t *dims);
/*
 * Binds a caller-owned buffer of `bytes` bytes to an input or output; the pointer is kept until
 * rebound or the context is destroyed. Unbound outputs stay readable with tc_context_tensor.
 * The buffer carries no type: the bytes are read as the input's dtype (tc_engine_input_info), so
 * a caller whose data may be of another type binds inputs with tc_context_set_input.
 */
TC_API tc_status tc_context_set_tensor(tc_context *context, const char *name, void *data, size_t bytes);
/*
 * On a GPU context: the page-locked (pinned) host buffer through which the context stages input or output `name`
 * (owned by the context, valid until it is destroyed) and its capacity in bytes (the profile's largest shape).
 * Bound with tc_context_set_tensor, it spares tc_context_run the host copy of that tensor: write an input there
 * before the run, read an output there after it. TC_STATUS_UNSUPPORTED on a CPU context (any buffer is used as
 * bound).
 */
TC_API tc_status tc_context_pinned_buffer(tc_context *context, const char *name, void **data, size_t *bytes);
/*
 * Sets an input's shape and binds its data from a tensor (tensor->data is kept as tc_context_set_tensor
 * keeps it), after checking that the tensor's dtype is the input's: a tensor of another type (a float64
 * or int64 array for a float32 input) is refused with TC_STATUS_INVALID_ARGUMENT and a reason naming the
 * input, both types and the cast to apply, never reinterpreted. nbytes must match dims and dtype.
 */
TC_API tc_status tc_context_set_input(tc_context *context, const char *name, const tc_tensor *tensor);
/*
 * The current dtype, shape and data of a tensor (after shapes were set), by name: an input or output, or,
 * while the context keeps tensors (tc_context_keep_tensors), any step's output (tc_step_info.output),
 * holding what the last run computed. The tensor is in the model's logical layout: a tensor the engine
 * stores in blocked NCHW16c is converted to NCHW into a buffer the context owns (allocated when keeping
 * was enabled; this call allocates nothing). tensor->data belongs to the context (or is the caller's
 * bound buffer): it stays valid until the context is destroyed or keeping is switched, and an
 * intermediate's contents until the next run. A name the engine does not have (a tensor of the model
 * that the optimizer fused away, or a misspelt one) and an intermediate while tensors are not kept are
 * refused with TC_STATUS_INVALID_ARGUMENT and a reason (tc_context_error).
 */
TC_API tc_status tc_context_tensor(tc_context *context, const char *name, tc_tensor *tensor);
/*
 * Keep-tensors mode (enable != 0), for debugging accuracy layer by layer: the context moves its
 * activations to a second arena that it allocates now, planned so that no buffer is reused (every step's
 * output stays live until the end of the run), plus the NCHW copies of its blocked tensors; each run then
 * leaves every step's output readable with tc_context_tensor. Runs still allocate nothing; the context's memory
 * grows by about tc_memory_info.naive_bytes (every activation at once) plus the NCHW copies. enable == 0 frees
 * those buffers and returns to the engine's arena plan. Call it between runs; buffers bound with
 * tc_context_set_tensor stay where they are; other outputs and intermediates read before must be read
 * again. Enabling twice, or disabling while off, changes nothing. On failure (TC_STATUS_OUT_OF_MEMORY)
 * the context is unchanged and tc_context_error says why.
 */
TC_API tc_status tc_context_keep_tensors(tc_context *context, int enable);
/* Runs the engine on the bound inputs. */
TC_API tc_status tc_context_run(tc_context *context);
/* Reason for the last failure of a call on this context ("" if none). */
TC_API const char *tc_context_error(const tc_context *context);
/* Per-step timing: enable, then read nanoseconds of the last run for each step (count = num steps). */
TC_API tc_status tc_context_set_profiling(tc_context *context, int enable);
TC_API tc_status tc_context_step_times(const tc_context *context, uint64_t *ns, int count);

#ifdef __cplusplus
}
#endif

#endif /* TAILCUT_TAILCUT_H */
