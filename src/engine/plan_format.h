/*
 * plan_format.h - the byte layout of model.plan (format version 2) and the
 * functions that write and read it (plan_write.c, plan_read.c).
 *
 * A plan holds one optimised graph, its weights and an opaque engine blob, for
 * one backend on one target machine. Loading is an mmap plus validation: the rebuilt graph's
 * initializers point into the mapped bytes.
 *
 * General rules
 *   - Little-endian; every multi-byte field is naturally aligned; the structs
 *     below are the exact on-disk records (sizes and offsets pinned by
 *     _Static_assert), with explicit reserved fields and no implicit padding.
 *     Reserved fields and all padding are zero.
 *   - Offsets are in bytes. File offsets are from the start of the file; offsets
 *     inside a section are from the start of that section.
 *   - Checksums are XXH3-64 (XXH3_64bits, seed 0).
 *   - Writing is deterministic: the same graph, target, ISA and engine blob give
 *     byte-identical files (no pointers, no time stamps, stable order).
 *   - A reader needs the file 64-byte aligned in memory (mmap gives page alignment).
 *
 * File layout
 *
 *   offset 0    tc__plan_header (128 bytes)
 *   offset 128  section table: section_count x tc__plan_section (32 bytes each)
 *   then        the sections, each at a 64-byte-aligned offset, in the order
 *               TARGET, STRINGS, GRAPH, WEIGHTS, ENGINE; zero bytes between them
 *               and up to file_size, which is a multiple of 64.
 *
 *   Header (all covered by header_checksum, computed with that field zeroed):
 *     magic "\x89TCPLAN\n" (the high byte catches 7-bit transfers, the newline
 *     text-mode conversions), version TC__PLAN_VERSION, header_size 128,
 *     file_size, section_count and section_table_offset, the XXH3 of the section
 *     table bytes.
 *
 *   Sections (kind, each exactly once in version 2):
 *     TARGET   a tc__plan_target record (the backend id, the capability bits of that
 *              backend the engine's kernels need, the size of the backend's target
 *              record) and then the backend's own target record: for the CPU
 *              backend a tc__cpu_target (backends/cpu/cpu_target.h: vendor, family,
 *              model, stepping, its kernel revision, the build machine's ISA). The
 *              backend checks it at load (backend.h check_target): the CPU requires
 *              its kernel revision, vendor, family and model equal to this machine's
 *              and the required ISA bits usable here.
 *     STRINGS  NUL-terminated UTF-8 strings back to back. A string reference
 *              (u32) is a byte offset into this section; offset 0 is "" (the
 *              section starts with a NUL and ends with one). Strings are stored once.
 *     GRAPH    a tc__plan_graph record at offset 0 (graph name, producer, opset,
 *              IR version, and a table descriptor per record table), then the
 *              tables, each 8-byte aligned: SYMBOLS, VALUES, INPUTS, OUTPUTS,
 *              NODES, NODE_IO, ATTRS, TENSORS (see the record structs below).
 *              Nodes are in topological order.
 *     WEIGHTS  tensor data (initializers and TENSOR attributes), each at a
 *              64-byte-aligned offset, raw little-endian elements in row-major
 *              order; and attribute arrays (INTS as int64, FLOATS as float32,
 *              STRINGS as u32 string references), each 8-byte aligned.
 *     ENGINE   an opaque blob produced by the engine (engine_blob.c: steps with their
 *              backend and tactic, profiles, a parameter blob per step and profile);
 *              stored and returned as is.
 *
 * Version 1 (no TARGET section; the CPU target in the header) is refused: rebuild.
 *
 * What a plan does not keep: values' known contents other than initializers and
 * their symbolic contents (tc__vinfo.value/.symval; re-run shape inference to
 * recover them), producers (recomputed from the nodes), initializers no node
 * input or graph output reads (their value record stays, without data), and
 * removed nodes (the writer refuses a graph that still has any).
 */
#ifndef TC_ENGINE_PLAN_FORMAT_H
#define TC_ENGINE_PLAN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "core/error.h"
#include "graph/graph.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the plan format is little-endian; this host is not");

#define TC__PLAN_MAGIC "\x89TCPLAN\n" /* 8 bytes, no terminating NUL in the file */
#define TC__PLAN_MAGIC_SIZE 8
#define TC__PLAN_VERSION 3u          /* 3: nodes may have a guard input (If decided at run time) */
#define TC__PLAN_VERSION_MIN 2u      /* version 2 plans (no guards) are still read */
#define TC__PLAN_ALIGN 64u         /* sections, tensor data, file size */
#define TC__PLAN_ARRAY_ALIGN 8u    /* graph tables, attribute arrays */
#define TC__PLAN_NONE (-1)         /* absent index (initializer tensor, node input/output, ...) */

/* ---- Header ---------------------------------------------------------------- */

typedef struct tc__plan_header {
    uint8_t magic[8];               /* TC__PLAN_MAGIC */
    uint32_t version;               /* TC__PLAN_VERSION */
    uint32_t header_size;           /* sizeof(tc__plan_header) = 128 */
    uint64_t file_size;             /* total bytes, a multiple of 64 */
    uint32_t section_count;         /* entries in the section table */
    uint32_t flags;                 /* reserved, 0 */
    uint64_t section_table_offset;  /* file offset of the section table (128 in version 1) */
    uint64_t section_table_checksum; /* XXH3 of section_count * 32 table bytes */
    uint8_t reserved[72];           /* zero (version 1 kept its CPU target here) */
    uint64_t header_checksum;       /* XXH3 of these 128 bytes with this field zeroed */
} tc__plan_header;

_Static_assert(sizeof(tc__plan_header) == 128, "plan header size");
_Static_assert(offsetof(tc__plan_header, magic) == 0, "plan header layout");
_Static_assert(offsetof(tc__plan_header, version) == 8, "plan header layout");
_Static_assert(offsetof(tc__plan_header, header_size) == 12, "plan header layout");
_Static_assert(offsetof(tc__plan_header, file_size) == 16, "plan header layout");
_Static_assert(offsetof(tc__plan_header, section_count) == 24, "plan header layout");
_Static_assert(offsetof(tc__plan_header, flags) == 28, "plan header layout");
_Static_assert(offsetof(tc__plan_header, section_table_offset) == 32, "plan header layout");
_Static_assert(offsetof(tc__plan_header, section_table_checksum) == 40, "plan header layout");
_Static_assert(offsetof(tc__plan_header, reserved) == 48, "plan header layout");
_Static_assert(offsetof(tc__plan_header, header_checksum) == 120, "plan header layout");

/* ---- Section table ----------------------------------------------------------- */

typedef enum tc__plan_section_kind {
    TC__PLAN_SECTION_STRINGS = 1,
    TC__PLAN_SECTION_GRAPH = 2,
    TC__PLAN_SECTION_WEIGHTS = 3,
    TC__PLAN_SECTION_ENGINE = 4,
    TC__PLAN_SECTION_TARGET = 5,
} tc__plan_section_kind;
#define TC__PLAN_SECTION_COUNT 5 /* sections in a version-2 plan */

/* ---- TARGET section ------------------------------------------------------------ */

typedef struct tc__plan_target {
    uint32_t backend;       /* TC__BACKEND_* (backends/backend_id.h) */
    uint32_t record_size;   /* bytes of the backend's target record that follow (<= TC__TARGET_RECORD_MAX) */
    uint64_t required_caps; /* capability bits of that backend the engine's kernels need (CPU: TC__ISA_* bits) */
    uint64_t reserved[2];
} tc__plan_target;

_Static_assert(sizeof(tc__plan_target) == 32, "plan target record size");
_Static_assert(offsetof(tc__plan_target, backend) == 0, "plan target layout");
_Static_assert(offsetof(tc__plan_target, record_size) == 4, "plan target layout");
_Static_assert(offsetof(tc__plan_target, required_caps) == 8, "plan target layout");
_Static_assert(offsetof(tc__plan_target, reserved) == 16, "plan target layout");

/* The TARGET section in memory: what a plan was built for (record points into the plan or the writer's buffer). */
typedef struct tc__plan_target_info {
    uint32_t backend;
    uint32_t record_size;
    uint64_t required_caps;
    const void *record;
} tc__plan_target_info;

typedef struct tc__plan_section {
    uint32_t kind;     /* tc__plan_section_kind */
    uint32_t flags;    /* reserved, 0 */
    uint64_t offset;   /* file offset, a multiple of 64 */
    uint64_t size;     /* bytes (without padding) */
    uint64_t checksum; /* XXH3 of the size bytes at offset */
} tc__plan_section;

_Static_assert(sizeof(tc__plan_section) == 32, "plan section entry size");
_Static_assert(offsetof(tc__plan_section, kind) == 0, "plan section layout");
_Static_assert(offsetof(tc__plan_section, flags) == 4, "plan section layout");
_Static_assert(offsetof(tc__plan_section, offset) == 8, "plan section layout");
_Static_assert(offsetof(tc__plan_section, size) == 16, "plan section layout");
_Static_assert(offsetof(tc__plan_section, checksum) == 24, "plan section layout");

/* ---- GRAPH section ------------------------------------------------------------ */

/* Where a table of fixed-size records lies inside the GRAPH section. */
typedef struct tc__plan_table {
    uint64_t offset; /* from the start of GRAPH; a multiple of 8 */
    uint32_t count;  /* records */
    uint32_t stride; /* bytes per record: exactly the record struct's size in version 1 */
} tc__plan_table;

_Static_assert(sizeof(tc__plan_table) == 16, "plan table descriptor size");
_Static_assert(offsetof(tc__plan_table, offset) == 0, "plan table layout");
_Static_assert(offsetof(tc__plan_table, count) == 8, "plan table layout");
_Static_assert(offsetof(tc__plan_table, stride) == 12, "plan table layout");

typedef enum tc__plan_table_id {
    TC__PLAN_TABLE_SYMBOLS = 0, /* tc__plan_symbol, indexed by tc__dim.sym */
    TC__PLAN_TABLE_VALUES,      /* tc__plan_value, indexed like tc__graph.values */
    TC__PLAN_TABLE_INPUTS,      /* tc__plan_index: graph inputs (value indices) */
    TC__PLAN_TABLE_OUTPUTS,     /* tc__plan_index: graph outputs (value indices) */
    TC__PLAN_TABLE_NODES,       /* tc__plan_node, in topological order */
    TC__PLAN_TABLE_NODE_IO,     /* tc__plan_index: each node's inputs then outputs, -1 when absent */
    TC__PLAN_TABLE_ATTRS,       /* tc__plan_attr: each node's attributes, consecutive */
    TC__PLAN_TABLE_TENSORS,     /* tc__plan_tensor: initializers and TENSOR attributes */
    TC__PLAN_TABLE_COUNT_
} tc__plan_table_id;

typedef struct tc__plan_graph {
    uint32_t name;          /* string reference */
    uint32_t producer_name; /* string reference */
    int64_t opset;          /* default-domain opset version */
    int64_t ir_version;
    uint32_t table_count;   /* TC__PLAN_TABLE_COUNT_ */
    uint32_t reserved;
    tc__plan_table tables[TC__PLAN_TABLE_COUNT_];
} tc__plan_graph;

_Static_assert(TC__PLAN_TABLE_COUNT_ == 8, "plan table count is part of the format");
_Static_assert(sizeof(tc__plan_graph) == 160, "plan graph record size");
_Static_assert(offsetof(tc__plan_graph, name) == 0, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, producer_name) == 4, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, opset) == 8, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, ir_version) == 16, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, table_count) == 24, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, reserved) == 28, "plan graph layout");
_Static_assert(offsetof(tc__plan_graph, tables) == 32, "plan graph layout");

typedef struct tc__plan_symbol {
    uint32_t name; /* string reference */
} tc__plan_symbol;

_Static_assert(sizeof(tc__plan_symbol) == 4, "plan symbol record size");

typedef struct tc__plan_index {
    int32_t value; /* value index, or -1 (TC__PLAN_NONE) for an absent optional node input/output */
} tc__plan_index;

_Static_assert(sizeof(tc__plan_index) == 4, "plan index record size");

typedef struct tc__plan_dim {
    int64_t value;     /* >= 0: known size; -1: not known */
    int32_t sym;       /* symbol index when value is -1, else -1 */
    uint32_t reserved;
} tc__plan_dim;

_Static_assert(sizeof(tc__plan_dim) == 16, "plan dim size");
_Static_assert(offsetof(tc__plan_dim, value) == 0, "plan dim layout");
_Static_assert(offsetof(tc__plan_dim, sym) == 8, "plan dim layout");
_Static_assert(offsetof(tc__plan_dim, reserved) == 12, "plan dim layout");

enum {
    TC__PLAN_VALUE_INPUT = 1u << 0,  /* tc__value.is_input */
    TC__PLAN_VALUE_OUTPUT = 1u << 1, /* tc__value.is_output */
    TC__PLAN_VALUE_FLAGS_ = TC__PLAN_VALUE_INPUT | TC__PLAN_VALUE_OUTPUT,
};

typedef struct tc__plan_value {
    uint32_t name;        /* string reference */
    int32_t dtype;        /* tc_dtype, TC_DTYPE_UNDEFINED when unknown */
    int32_t rank;         /* -1 when unknown, else 0..TC_MAX_RANK */
    uint32_t flags;       /* TC__PLAN_VALUE_* */
    int32_t init_tensor;  /* index into TENSORS, or -1 */
    uint32_t reserved;
    tc__plan_dim dims[TC_MAX_RANK]; /* dims[rank..] are zero */
} tc__plan_value;

_Static_assert(sizeof(tc__plan_value) == 152, "plan value record size");
_Static_assert(offsetof(tc__plan_value, name) == 0, "plan value layout");
_Static_assert(offsetof(tc__plan_value, dtype) == 4, "plan value layout");
_Static_assert(offsetof(tc__plan_value, rank) == 8, "plan value layout");
_Static_assert(offsetof(tc__plan_value, flags) == 12, "plan value layout");
_Static_assert(offsetof(tc__plan_value, init_tensor) == 16, "plan value layout");
_Static_assert(offsetof(tc__plan_value, reserved) == 20, "plan value layout");
_Static_assert(offsetof(tc__plan_value, dims) == 24, "plan value layout");

typedef struct tc__plan_node {
    uint32_t name, op_type, domain, fused; /* string references */
    uint32_t n_in;       /* inputs, epilogue operands included */
    uint32_t n_op_in;    /* inputs the op itself takes (<= n_in) */
    uint32_t n_out;
    uint32_t n_attrs;
    uint32_t io_first;   /* NODE_IO index of input 0; outputs follow the n_in inputs */
    uint32_t attr_first; /* ATTRS index of the first attribute */
    int8_t bias_input;   /* tc__epilogue: input index or -1 */
    int8_t residual_input;
    uint8_t act;         /* tc__act */
    uint8_t guard;       /* 0, or 1 + the input index that guards the node (tc__node.guard; version 3) */
    float alpha, beta;   /* tc__epilogue activation parameters */
    uint32_t flags;      /* reserved, 0 */
    uint64_t reserved1;
} tc__plan_node;

_Static_assert(sizeof(tc__plan_node) == 64, "plan node record size");
_Static_assert(offsetof(tc__plan_node, name) == 0, "plan node layout");
_Static_assert(offsetof(tc__plan_node, op_type) == 4, "plan node layout");
_Static_assert(offsetof(tc__plan_node, domain) == 8, "plan node layout");
_Static_assert(offsetof(tc__plan_node, fused) == 12, "plan node layout");
_Static_assert(offsetof(tc__plan_node, n_in) == 16, "plan node layout");
_Static_assert(offsetof(tc__plan_node, n_op_in) == 20, "plan node layout");
_Static_assert(offsetof(tc__plan_node, n_out) == 24, "plan node layout");
_Static_assert(offsetof(tc__plan_node, n_attrs) == 28, "plan node layout");
_Static_assert(offsetof(tc__plan_node, io_first) == 32, "plan node layout");
_Static_assert(offsetof(tc__plan_node, attr_first) == 36, "plan node layout");
_Static_assert(offsetof(tc__plan_node, bias_input) == 40, "plan node layout");
_Static_assert(offsetof(tc__plan_node, residual_input) == 41, "plan node layout");
_Static_assert(offsetof(tc__plan_node, act) == 42, "plan node layout");
_Static_assert(offsetof(tc__plan_node, guard) == 43, "plan node layout");
_Static_assert(offsetof(tc__plan_node, alpha) == 44, "plan node layout");
_Static_assert(offsetof(tc__plan_node, beta) == 48, "plan node layout");
_Static_assert(offsetof(tc__plan_node, flags) == 52, "plan node layout");
_Static_assert(offsetof(tc__plan_node, reserved1) == 56, "plan node layout");

typedef struct tc__plan_attr {
    uint32_t name;        /* string reference */
    uint32_t kind;        /* tc__attr_kind */
    float f;              /* FLOAT */
    uint32_t s;           /* STRING: string reference */
    int64_t i;            /* INT */
    uint64_t n;           /* FLOATS/INTS/STRINGS: element count */
    uint64_t data_offset; /* FLOATS/INTS/STRINGS: WEIGHTS offset (multiple of 8) of the elements */
    int32_t tensor;       /* TENSOR: index into TENSORS, else -1 */
    uint32_t reserved;
} tc__plan_attr;

_Static_assert(sizeof(tc__plan_attr) == 48, "plan attribute record size");
_Static_assert(offsetof(tc__plan_attr, name) == 0, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, kind) == 4, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, f) == 8, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, s) == 12, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, i) == 16, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, n) == 24, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, data_offset) == 32, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, tensor) == 40, "plan attribute layout");
_Static_assert(offsetof(tc__plan_attr, reserved) == 44, "plan attribute layout");

typedef struct tc__plan_tensor {
    int32_t dtype;            /* tc_dtype (valid) */
    int32_t rank;             /* 0..TC_MAX_RANK */
    int64_t dims[TC_MAX_RANK]; /* >= 0; dims[rank..] are zero */
    uint64_t offset;          /* WEIGHTS offset, a multiple of 64 */
    uint64_t nbytes;          /* = numel * element size; with TC__PLAN_TENSOR_PACKED fewer */
    uint64_t flags;           /* TC__PLAN_TENSOR_* */
} tc__plan_tensor;

enum {
    /* A tactic's packed weight (tactic.h packed_bytes): nbytes differs from what its dims and dtype need
     * (tc__plan_packed_size_ok), and only the one step whose tactic packed it reads it (the engine checks that at
     * load, and the packed size against the tactic). */
    TC__PLAN_TENSOR_PACKED = 1u << 0,
    TC__PLAN_TENSOR_FLAGS_ = TC__PLAN_TENSOR_PACKED,
};

/* The sizes a packed weight may have: not its source's (source_bytes, what its dims and dtype need), not 0, and at
 * most 256 times the source's plus 64 KiB (fewer bytes: INT8 codes, 16-bit halves; more: a blocked layout's channels
 * padded up to the block with zeros, core/layout.h). */
static inline bool tc__plan_packed_size_ok(uint64_t nbytes, uint64_t source_bytes) {
    return nbytes > 0 && nbytes != source_bytes && source_bytes <= ((uint64_t)1 << 50) &&
           nbytes <= source_bytes * 256 + 65536;
}

_Static_assert(sizeof(tc__plan_tensor) == 96, "plan tensor record size");
_Static_assert(offsetof(tc__plan_tensor, dtype) == 0, "plan tensor layout");
_Static_assert(offsetof(tc__plan_tensor, rank) == 4, "plan tensor layout");
_Static_assert(offsetof(tc__plan_tensor, dims) == 8, "plan tensor layout");
_Static_assert(offsetof(tc__plan_tensor, offset) == 72, "plan tensor layout");
_Static_assert(offsetof(tc__plan_tensor, nbytes) == 80, "plan tensor layout");
_Static_assert(offsetof(tc__plan_tensor, flags) == 88, "plan tensor layout");

/* ---- Writing and reading ---------------------------------------------------------- */

/*
 * Serializes g (nodes in topological order, none removed; graph not modified) for
 * target (its backend, required capability bits and the backend's target record,
 * which is copied) and the engine's opaque blob (engine_size bytes; engine_blob
 * may be NULL when 0).
 * On success *out is one 64-byte-aligned malloc'd buffer of *out_size bytes that
 * the caller frees with free(). Nothing is kept after the call.
 */
tc_status tc__plan_serialize(const tc__graph *g, const tc__plan_target_info *target, const void *engine_blob, size_t engine_size, void **out, size_t *out_size,
                             tc__err *err);

enum {
    TC__PLAN_NO_CHECKSUMS = 1u << 0,    /* skip the XXH3 checks (fuzzing); records are still validated */
    TC__PLAN_NO_TARGET_CHECK = 1u << 1, /* load a plan built for another machine (inspection only): the TARGET
                                           record is still validated in form, not against this machine */
};

/*
 * Validates a plan held in memory (data must be 64-byte aligned, e.g. mmap'd) and
 * rebuilds its graph. Checks, in order: size, magic, version, header checksum,
 * file size, section table, section checksums, target, then every record.
 * On success *g is a new graph (destroy with tc__graph_destroy) whose structs live
 * in its arena (or its heap arrays) but whose strings (tensor names excepted: they
 * are copied to index them), initializer and TENSOR-attribute data, and
 * INTS/FLOATS attribute arrays point into data (no copies): the caller keeps data
 * alive and unmodified for the graph's lifetime.
 * *target describes the TARGET section (its record inside data); the backend named
 * there checked it against this machine unless TC__PLAN_NO_TARGET_CHECK.
 * *engine_blob and *engine_size give the ENGINE section, also inside data (NULL
 * and 0 when empty). The graph passes tc__graph_verify(g, true, ...); whether
 * every op is supported is left to the caller (node->schema is NULL otherwise).
 * Errors: TC_STATUS_CORRUPT_FILE (not a plan, damaged, inconsistent),
 * TC_STATUS_UNSUPPORTED (other format version, a backend this build lacks),
 * TC_STATUS_UNSUPPORTED_HARDWARE (built for another machine or needs capabilities
 * this one lacks), TC_STATUS_INVALID_ARGUMENT,
 * TC_STATUS_OUT_OF_MEMORY. Nothing is returned on failure.
 */
tc_status tc__plan_deserialize(const void *data, size_t size, uint32_t flags, tc__graph **g,
                               tc__plan_target_info *target, const void **engine_blob, size_t *engine_size, tc__err *err);

/* Name of a section kind ("GRAPH") for messages; "unknown" otherwise. */
static inline const char *tc__plan_section_name(uint32_t kind) {
    switch (kind) {
    case TC__PLAN_SECTION_STRINGS: return "STRINGS";
    case TC__PLAN_SECTION_GRAPH: return "GRAPH";
    case TC__PLAN_SECTION_WEIGHTS: return "WEIGHTS";
    case TC__PLAN_SECTION_ENGINE: return "ENGINE";
    case TC__PLAN_SECTION_TARGET: return "TARGET";
    default: return "unknown";
    }
}

#endif
