/*
 * import_internal.h - helpers shared by the files of the ONNX importer (src/onnx/ only):
 * the protobuf-c allocator that lets tensor payloads stay in the graph arena without a copy,
 * TensorProto decoding, external data, attributes and declared value types.
 */
#ifndef TC_ONNX_IMPORT_INTERNAL_H
#define TC_ONNX_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "onnx.pb-c.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX importer reads raw_data in place and assumes a little-endian host"
#endif

/*
 * A protobuf-c allocator for unpacking a model. Blocks of at least TC__ONNX_ARENA_MIN bytes come
 * from the arena, 64-byte aligned, and are never freed individually (they die with the arena), so
 * a tensor payload (raw_data, float_data, ...) can be adopted by the graph as is. Smaller blocks
 * come from malloc and are freed with the message. Call protobuf-c's free_unpacked with the same
 * allocator before the arena is freed.
 */
#define TC__ONNX_ARENA_MIN 4096u

typedef struct tc__onnx_alloc {
    ProtobufCAllocator pc; /* pass &pc to protobuf-c */
    tc__arena *arena;
    bool failed; /* an allocation failed: a NULL from unpack means out of memory */
} tc__onnx_alloc;

void tc__onnx_alloc_init(tc__onnx_alloc *a, tc__arena *arena);
/* True when p (non-NULL, returned by a tc__onnx_alloc) lives in the arena: 64-byte aligned, adoptable. */
bool tc__onnx_alloc_in_arena(const void *p);

/* How tensor payloads are decoded. */
typedef struct tc__onnx_tensor_ctx {
    tc__arena *arena;     /* payload and tc__tensor destination; NULL: payload malloc'd (tc__tensor_free) */
    bool adopt;           /* the message was unpacked with a tc__onnx_alloc on this arena */
    bool external_ok;     /* external data may be read (relative to base_dir) */
    const char *base_dir; /* NULL = "." */
} tc__onnx_tensor_ctx;

/* Maps an ONNX TensorProto.DataType to a tc_dtype; UNSUPPORTED naming `what` and the type otherwise.
 * 0 (UNDEFINED) maps to TC_DTYPE_UNDEFINED without error. */
tc_status tc__onnx_dtype(int32_t onnx_type, const char *what, tc_dtype *out, tc__err *err);
/* Name of an ONNX data type number ("float8e4m3fn"), "unknown" for numbers outside the enum. */
const char *tc__onnx_dtype_name(int32_t onnx_type);

/*
 * Decodes a TensorProto into *out (dtype, rank, dims, data, nbytes). With ctx->arena the data lives
 * in the arena (64-byte aligned, possibly adopted from the message); without it the data is
 * malloc'd and *out must be released with tc__tensor_free. `what` names the tensor in errors.
 */
tc_status tc__onnx_tensor_decode(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp,
                                 const char *what, tc__tensor *out, tc__err *err);

/* Allocates a zeroed payload of bytes (at least 1) in ctx->arena (64-byte aligned) or with malloc. */
tc_status tc__onnx_payload_alloc(const tc__onnx_tensor_ctx *ctx, size_t bytes, const char *what, void **out,
                                 tc__err *err);

/* Reads the external data of tp (exactly nbytes) into a payload from tc__onnx_payload_alloc, allocated
 * only once the file is known to hold that many bytes. Paths are relative to ctx->base_dir (NULL = ".");
 * absolute paths and ".." components are refused. */
tc_status tc__onnx_external_read(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp, const char *what,
                                 size_t nbytes, void **dst, tc__err *err);

/* Converts the attributes of a node into an arena array. node_name names the node in errors. */
tc_status tc__onnx_attrs_import(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__NodeProto *np,
                                const char *node_name, tc__attrs *out, tc__err *err);

/* Fills info (already tc__vinfo_init'ed) from a declared ValueInfoProto type; `what` names the value. */
tc_status tc__onnx_type_import(tc__graph *g, const Onnx__TypeProto *tp, const char *what, tc__vinfo *info,
                               tc__err *err);

/* Adds gp's initializers to g as values holding their tensors (import_model.c). */
tc_status tc__onnx_import_initializers(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__GraphProto *gp,
                                       tc__err *err);
/* Appends node np (the index-th of its graph, for messages) to g; names resolve to g's values, added when new. */
tc_status tc__onnx_import_node(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__NodeProto *np, size_t index,
                               tc__err *err);

/* A protobuf-c string that may be NULL, as a C string. */
static inline const char *tc__onnx_str(const char *s) { return s != NULL ? s : ""; }

#endif
