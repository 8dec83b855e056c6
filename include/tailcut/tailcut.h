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
} tc_node_info;

TC_API int tc_model_num_nodes(const tc_model *model);
TC_API tc_status tc_model_node_info(const tc_model *model, int index, tc_node_info *info);

/*
 * Runs the model with the reference executor (plain C, wide accumulation).
 * inputs[i] is the tensor for graph input input_names[i]; every graph input
 * without an initializer must be given. On success outputs[0..num_outputs-1]
 * are filled, in graph output order, with library-allocated tensors that the
 * caller frees with tc_tensor_free. On failure, no output is left allocated.
 */
TC_API tc_status tc_model_run_reference(const tc_model *model, int num_inputs,
                                        const char *const *input_names, const tc_tensor *inputs,
                                        tc_tensor *outputs, tc_error *error);

/* ---- Engines ------------------------------------------------------------------ */

/* Graph optimisation passes; each can be switched off with tc_build_options.disabled_passes. */
enum {
    TC_PASS_ELIMINATE_NOOPS = 1u << 0,
    TC_PASS_FOLD_CONSTANTS = 1u << 1,
    TC_PASS_FOLD_BATCHNORM = 1u << 2,
    TC_PASS_FUSE_GELU = 1u << 3,
    TC_PASS_FUSE_MATMUL_BIAS = 1u << 4,
    TC_PASS_FUSE_RESIDUAL = 1u << 5,
    TC_PASS_FUSE_ACTIVATION = 1u << 6,
    TC_PASS_ELIMINATE_DEAD = 1u << 7,
};

#ifdef __cplusplus
}
#endif

#endif /* TAILCUT_TAILCUT_H */
