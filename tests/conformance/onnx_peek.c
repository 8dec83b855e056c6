/*
 * onnx_peek.c - a small, bounds-checked protobuf wire-format reader that takes
 * from an ONNX model file only what the conformance runner needs before (or
 * without) the library: node op types and domains, and the names and types of
 * the graph inputs and outputs. It lets the runner attribute a test to an op
 * and name input types the library cannot load, even when loading fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* A slice of protobuf bytes being read. */
typedef struct pb_reader {
    const uint8_t *p;
    const uint8_t *end;
} pb_reader;

/* One field: its number, wire type and value (varint, or bytes for wire type 2). */
typedef struct pb_field {
    uint32_t number;
    uint32_t wire;
    uint64_t varint;
    pb_reader bytes;
} pb_field;

static int pb_varint(pb_reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Reads the next field. Returns 1 when one was read, 0 at the end, -1 on malformed input. */
static int pb_next(pb_reader *r, pb_field *f) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (pb_varint(r, &key) != 0) return -1;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->varint = 0;
    f->bytes.p = f->bytes.end = NULL;
    size_t left = (size_t)(r->end - r->p);
    switch (f->wire) {
    case 0: return pb_varint(r, &f->varint) == 0 ? 1 : -1;
    case 1:
        if (left < 8) return -1;
        r->p += 8;
        return 1;
    case 5:
        if (left < 4) return -1;
        r->p += 4;
        return 1;
    case 2: {
        uint64_t len;
        if (pb_varint(r, &len) != 0) return -1;
        if (len > (uint64_t)(r->end - r->p)) return -1;
        f->bytes.p = r->p;
        f->bytes.end = r->p + len;
        r->p += len;
        return 1;
    }
    default: return -1; /* groups (3, 4) are not used by ONNX */
    }
}

static void pb_copy_string(const pb_field *f, char *dst, size_t size) {
    size_t n = (size_t)(f->bytes.end - f->bytes.p);
    if (n >= size) n = size - 1;
    if (n) memcpy(dst, f->bytes.p, n);
    dst[n] = '\0';
}

/* Grows *array (of elem_size items, *count used) by one zeroed item; returns it or NULL. */
static void *grow(void **array, int *count, size_t elem_size) {
    void *bigger = realloc(*array, (size_t)(*count + 1) * elem_size);
    if (!bigger) return NULL;
    *array = bigger;
    void *item = (char *)bigger + (size_t)*count * elem_size;
    memset(item, 0, elem_size);
    (*count)++;
    return item;
}

/* TypeProto: tensor_type = 1, sequence_type = 4, map_type = 5, sparse_tensor_type = 8,
 * optional_type = 9. TypeProto.Tensor: elem_type = 1. */
static int read_type(pb_reader r, conf_value *v) {
    pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.wire != 2) continue;
        switch (f.number) {
        case 1: {
            v->kind = CONF_TYPE_TENSOR;
            pb_reader t = f.bytes;
            pb_field g;
            int rc2;
            while ((rc2 = pb_next(&t, &g)) == 1)
                if (g.number == 1 && g.wire == 0) v->elem_type = (int32_t)g.varint;
            if (rc2 < 0) return -1;
            break;
        }
        case 4: v->kind = CONF_TYPE_SEQUENCE; break;
        case 5: v->kind = CONF_TYPE_MAP; break;
        case 8: v->kind = CONF_TYPE_SPARSE_TENSOR; break;
        case 9: v->kind = CONF_TYPE_OPTIONAL; break;
        default: break;
        }
    }
    return rc;
}

/* ValueInfoProto: name = 1, type = 2. */
static int read_value_info(pb_reader r, conf_value *v) {
    pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.number == 1 && f.wire == 2) pb_copy_string(&f, v->name, sizeof v->name);
        if (f.number == 2 && f.wire == 2 && read_type(f.bytes, v) < 0) return -1;
    }
    return rc;
}

/* NodeProto: op_type = 4, domain = 7. */
static int read_node(pb_reader r, conf_node *n) {
    pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.number == 4 && f.wire == 2) pb_copy_string(&f, n->op_type, sizeof n->op_type);
        if (f.number == 7 && f.wire == 2) pb_copy_string(&f, n->domain, sizeof n->domain);
    }
    return rc;
}

/* GraphProto: node = 1, input = 11, output = 12. */
static int read_graph(pb_reader r, conf_peek *peek) {
    pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.wire != 2) continue;
        if (f.number == 1) {
            conf_node *n = grow((void **)&peek->nodes, &peek->num_nodes, sizeof *n);
            if (!n || read_node(f.bytes, n) < 0) return -1;
        } else if (f.number == 11 || f.number == 12) {
            conf_value **arr = f.number == 11 ? &peek->inputs : &peek->outputs;
            int *count = f.number == 11 ? &peek->num_inputs : &peek->num_outputs;
            conf_value *v = grow((void **)arr, count, sizeof *v);
            if (!v || read_value_info(f.bytes, v) < 0) return -1;
        }
    }
    return rc;
}

static int read_file(const char *path, uint8_t **data, size_t *size, char *err, size_t err_size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_size, "%s: cannot open", path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t used = 0, cap = 0;
    for (;;) {
        if (used == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            uint8_t *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                free(buf);
                fclose(fp);
                snprintf(err, err_size, "%s: out of memory", path);
                return -1;
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t n = fread(buf + used, 1, cap - used, fp);
        used += n;
        if (n == 0) break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(buf);
        snprintf(err, err_size, "%s: read error", path);
        return -1;
    }
    *data = buf;
    *size = used;
    return 0;
}

int conf_peek_model(const char *path, conf_peek *peek, char *err, size_t err_size) {
    memset(peek, 0, sizeof *peek);
    uint8_t *data = NULL;
    size_t size = 0;
    if (read_file(path, &data, &size, err, err_size) != 0) return -1;
    /* ModelProto: graph = 7. */
    pb_reader r = {data, data + size};
    pb_field f;
    int rc, have_graph = 0;
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.number == 7 && f.wire == 2) {
            have_graph = 1;
            if (read_graph(f.bytes, peek) < 0) {
                rc = -1;
                break;
            }
        }
    }
    free(data);
    if (rc < 0 || !have_graph) {
        conf_peek_free(peek);
        snprintf(err, err_size, "%s: %s", path, rc < 0 ? "malformed protobuf" : "no graph");
        return -1;
    }
    return 0;
}

void conf_peek_free(conf_peek *peek) {
    if (!peek) return;
    free(peek->nodes);
    free(peek->inputs);
    free(peek->outputs);
    memset(peek, 0, sizeof *peek);
}

const char *conf_onnx_type_name(int32_t elem_type) {
    static const char *const names[] = {
        "undefined",      "float",      "uint8",          "int8",       "uint16",   "int16",
        "int32",          "int64",      "string",         "bool",       "float16",  "double",
        "uint32",         "uint64",     "complex64",      "complex128", "bfloat16", "float8e4m3fn",
        "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",      "int4",     "float4e2m1",
        "float8e8m0",     "uint2",      "int2",
    };
    if (elem_type >= 0 && (size_t)elem_type < sizeof names / sizeof names[0])
        return names[elem_type];
    return "unknown element type";
}

const char *conf_type_kind_name(conf_type_kind kind) {
    switch (kind) {
    case CONF_TYPE_TENSOR: return "tensor";
    case CONF_TYPE_SEQUENCE: return "sequence";
    case CONF_TYPE_MAP: return "map";
    case CONF_TYPE_OPTIONAL: return "optional";
    case CONF_TYPE_SPARSE_TENSOR: return "sparse tensor";
    case CONF_TYPE_UNKNOWN: break;
    }
    return "untyped";
}
