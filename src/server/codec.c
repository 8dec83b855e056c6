/* codec.c - KServe v2 tensor codec for `tailcut serve` (see codec.h): validates every request field
 * (names, datatypes, shapes against the plan's profile, element and byte counts, value ranges,
 * parameters) before a request is queued, and encodes outputs as JSON numbers or raw bytes. */
#include "codec.h"

#include "json_data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *srv_error_json(const char *msg) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "error", msg);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* Sets r->error and returns the HTTP status. */
static int fail(srv_request *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(srv_request *r, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->status = code;
    return code;
}

static cJSON *shape_json(const tc_io_info *io) {
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; a && d < io->rank; d++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)io->dims[d]));
    return a;
}

char *srv_model_metadata_json(const srv_model *m) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON *v = cJSON_AddArrayToObject(o, "versions");
    if (v) cJSON_AddItemToArray(v, cJSON_CreateString("1"));
    cJSON_AddStringToObject(o, "platform", "tailcut");
    for (int pass = 0; pass < 2; pass++) {
        cJSON *arr = cJSON_AddArrayToObject(o, pass ? "outputs" : "inputs");
        int n = pass ? m->n_out : m->n_in;
        for (int k = 0; arr && k < n; k++) {
            const tc_io_info *io = pass ? &m->out[k] : &m->in[k];
            cJSON *t = cJSON_CreateObject();
            if (!t) break;
            cJSON_AddStringToObject(t, "name", io->name);
            const char *dt = srv_dtype_kserve(io->dtype);
            cJSON_AddStringToObject(t, "datatype", dt ? dt : "UNKNOWN");
            cJSON_AddItemToObject(t, "shape", shape_json(io));
            cJSON_AddItemToArray(arr, t);
        }
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* Counts the numbers of a possibly nested data array; -1 if something else is inside. */
static int64_t count_data(const cJSON *a, int depth) {
    if (depth > TC_MAX_RANK + 1) return -1;
    int64_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsArray(e)) {
            int64_t k = count_data(e, depth + 1);
            if (k < 0) return -1;
            n += k;
        } else if (cJSON_IsNumber(e) || cJSON_IsBool(e)) {
            n++;
        } else {
            return -1;
        }
    }
    return n;
}

/* Why a value was not stored. */
enum { VAL_OK = 0, VAL_RANGE, VAL_FRACTION, VAL_INEXACT, VAL_BOOL };

/* The range of an integer datatype (BOOL: 0..1); 0 for other types. */
static int int_range(tc_dtype dt, int64_t *lo, uint64_t *hi) {
    switch (dt) {
    case TC_DTYPE_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return 1;
    case TC_DTYPE_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return 1;
    case TC_DTYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return 1;
    case TC_DTYPE_INT64: *lo = INT64_MIN, *hi = INT64_MAX; return 1;
    case TC_DTYPE_UINT8: *lo = 0, *hi = UINT8_MAX; return 1;
    case TC_DTYPE_UINT16: *lo = 0, *hi = UINT16_MAX; return 1;
    case TC_DTYPE_UINT32: *lo = 0, *hi = UINT32_MAX; return 1;
    case TC_DTYPE_UINT64: *lo = 0, *hi = UINT64_MAX; return 1;
    case TC_DTYPE_BOOL: *lo = 0, *hi = 1; return 1;
    default: return 0;
    }
}

/* Writes an integer already known to lie in dt's range as element i. */
static void put_int(void *buf, int64_t i, tc_dtype dt, int64_t s, uint64_t u) {
    switch (dt) {
    case TC_DTYPE_INT8: ((int8_t *)buf)[i] = (int8_t)s; break;
    case TC_DTYPE_INT16: ((int16_t *)buf)[i] = (int16_t)s; break;
    case TC_DTYPE_INT32: ((int32_t *)buf)[i] = (int32_t)s; break;
    case TC_DTYPE_INT64: ((int64_t *)buf)[i] = s; break;
    case TC_DTYPE_UINT8: case TC_DTYPE_BOOL: ((uint8_t *)buf)[i] = (uint8_t)u; break;
    case TC_DTYPE_UINT16: ((uint16_t *)buf)[i] = (uint16_t)u; break;
    case TC_DTYPE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)u; break;
    case TC_DTYPE_UINT64: ((uint64_t *)buf)[i] = u; break;
    default: break;
    }
}

/* Element i of dt from an exact signed integer (FP32/FP64: correctly rounded). */
static int store_i64(void *buf, int64_t i, tc_dtype dt, int64_t v) {
    if (dt == TC_DTYPE_FLOAT32) { ((float *)buf)[i] = (float)v; return VAL_OK; }
    if (dt == TC_DTYPE_FLOAT64) { ((double *)buf)[i] = (double)v; return VAL_OK; }
    int64_t lo;
    uint64_t hi;
    if (!int_range(dt, &lo, &hi)) return VAL_RANGE;
    if (v < lo || (v > 0 && (uint64_t)v > hi)) return VAL_RANGE;
    put_int(buf, i, dt, v, v < 0 ? 0 : (uint64_t)v);
    return VAL_OK;
}

/* Element i of dt from an exact unsigned integer. */
static int store_u64(void *buf, int64_t i, tc_dtype dt, uint64_t v) {
    if (v <= (uint64_t)INT64_MAX) return store_i64(buf, i, dt, (int64_t)v);
    if (dt == TC_DTYPE_FLOAT32) { ((float *)buf)[i] = (float)v; return VAL_OK; }
    if (dt == TC_DTYPE_FLOAT64) { ((double *)buf)[i] = (double)v; return VAL_OK; }
    if (dt != TC_DTYPE_UINT64) return VAL_RANGE;
    put_int(buf, i, dt, 0, v);
    return VAL_OK;
}

/* Element i of dt from a double. Integer types take only integral values below 2^53 in magnitude, where a double
 * is exact (json_data.c keeps larger integers as integers; only a short array's few digits come here from cJSON). */
static int store_double(void *buf, int64_t i, tc_dtype dt, double v) {
    if (dt == TC_DTYPE_FLOAT32) {
        if (fabs(v) >= 0x1.ffffffp+127) return VAL_RANGE; /* would round to infinity (and the cast is undefined) */
        ((float *)buf)[i] = (float)v;
        return VAL_OK;
    }
    if (dt == TC_DTYPE_FLOAT64) { ((double *)buf)[i] = v; return VAL_OK; }
    if (!isfinite(v) || v != floor(v)) return VAL_FRACTION;
    int64_t lo;
    uint64_t hi;
    if (!int_range(dt, &lo, &hi)) return VAL_RANGE;
    if (v < (double)lo || v >= 18446744073709551616.0 || (v > 0 && (uint64_t)v > hi)) return VAL_RANGE;
    if (fabs(v) > 9007199254740992.0) return VAL_INEXACT;
    return store_i64(buf, i, dt, (int64_t)v);
}

/* Fills buf from a cJSON array (nested arrays flattened) starting at element *i; on failure *i is the element at
 * fault, *bad its value, and the VAL_* reason is returned. */
static int fill_data(const cJSON *a, void *buf, int64_t *i, tc_dtype dt, double *bad) {
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsArray(e)) {
            int st = fill_data(e, buf, i, dt, bad);
            if (st) return st;
            continue;
        }
        int st;
        if (cJSON_IsBool(e)) st = dt != TC_DTYPE_BOOL ? VAL_BOOL : store_i64(buf, *i, dt, cJSON_IsTrue(e) ? 1 : 0);
        else st = store_double(buf, *i, dt, e->valuedouble);
        if (st) {
            *bad = e->valuedouble;
            return st;
        }
        (*i)++;
    }
    return VAL_OK;
}

/* The 400 answer for element idx of input io (value text val) that datatype dt cannot take. */
static int value_error(srv_request *r, const tc_io_info *io, const char *dt_name, int reason, int64_t idx,
                       const char *val) {
    int64_t lo = 0;
    uint64_t hi = 0;
    int is_int = int_range(io->dtype, &lo, &hi);
    switch (reason) {
    case VAL_BOOL:
        return fail(r, 400, "input '%s': 'data' holds true/false, which only datatype BOOL takes (not %s)", io->name,
                    dt_name);
    case VAL_FRACTION:
        return fail(r, 400, "input '%s': data[%lld] = %s is not an integer, which datatype %s needs", io->name,
                    (long long)idx, val, dt_name);
    case VAL_INEXACT:
        return fail(r, 400, "input '%s': data[%lld] = %s cannot be read exactly as %s", io->name, (long long)idx, val,
                    dt_name);
    default:
        if (is_int)
            return fail(r, 400, "input '%s': data[%lld] = %s is outside the range of %s [%lld, %llu]", io->name,
                        (long long)idx, val, dt_name, (long long)lo, (unsigned long long)hi);
        return fail(r, 400, "input '%s': data[%lld] = %s is outside the range of %s", io->name, (long long)idx, val,
                    dt_name);
    }
}

/* Fills buf (count elements of io's dtype) from an array json_data.c extracted; returns 0 or the HTTP status. */
static int fill_extracted(const srv_json_array *fa, void *buf, const tc_io_info *io, const char *dt_name,
                          srv_request *r) {
    tc_dtype dt = io->dtype;
    int64_t lo;
    uint64_t hi;
    int is_int = int_range(dt, &lo, &hi);
    if (fa->any_bool && dt != TC_DTYPE_BOOL) return value_error(r, io, dt_name, VAL_BOOL, 0, "");
    if (is_int && fa->kind == SRV_JSON_DOUBLE) {
        /* Some value is not an integer, or the values span more than any 64-bit integer type holds. */
        if (fa->any_fraction)
            return fail(r, 400, "input '%s': 'data' holds a number that is not an integer, which datatype %s needs",
                        io->name, dt_name);
        return fail(r, 400, "input '%s': 'data' holds an integer outside the range of %s [%lld, %llu]", io->name,
                    dt_name, (long long)lo, (unsigned long long)hi);
    }
    for (int64_t i = 0; i < fa->n; i++) {
        int st;
        char val[32];
        switch (fa->kind) {
        case SRV_JSON_INT64:
            st = store_i64(buf, i, dt, fa->v.i[i]);
            if (st) snprintf(val, sizeof val, "%lld", (long long)fa->v.i[i]);
            break;
        case SRV_JSON_UINT64:
            st = store_u64(buf, i, dt, fa->v.u[i]);
            if (st) snprintf(val, sizeof val, "%llu", (unsigned long long)fa->v.u[i]);
            break;
        default:
            st = store_double(buf, i, dt, fa->v.d[i]);
            if (st) snprintf(val, sizeof val, "%.17g", fa->v.d[i]);
            break;
        }
        if (st) return value_error(r, io, dt_name, st, i, val);
    }
    return 0;
}

/* Formats element i of t as JSON text into buf (at least 32 bytes); returns its length. Floats print
 * with 9 (FP32) or 17 (FP64) significant digits, enough to read back the same value; NaN and
 * infinities, which JSON lacks, print as null. */
static int format_value(const tc_tensor *t, int64_t i, char *buf) {
    switch (t->dtype) {
    case TC_DTYPE_FLOAT32: {
        float v = ((const float *)t->data)[i];
        return isfinite(v) ? snprintf(buf, 32, "%.9g", (double)v) : snprintf(buf, 32, "null");
    }
    case TC_DTYPE_FLOAT64: {
        double v = ((const double *)t->data)[i];
        return isfinite(v) ? snprintf(buf, 32, "%.17g", v) : snprintf(buf, 32, "null");
    }
    case TC_DTYPE_INT8: return snprintf(buf, 32, "%d", ((const int8_t *)t->data)[i]);
    case TC_DTYPE_INT16: return snprintf(buf, 32, "%d", ((const int16_t *)t->data)[i]);
    case TC_DTYPE_INT32: return snprintf(buf, 32, "%d", ((const int32_t *)t->data)[i]);
    case TC_DTYPE_INT64: return snprintf(buf, 32, "%lld", (long long)((const int64_t *)t->data)[i]);
    case TC_DTYPE_UINT8: return snprintf(buf, 32, "%u", ((const uint8_t *)t->data)[i]);
    case TC_DTYPE_UINT16: return snprintf(buf, 32, "%u", ((const uint16_t *)t->data)[i]);
    case TC_DTYPE_UINT32: return snprintf(buf, 32, "%u", ((const uint32_t *)t->data)[i]);
    case TC_DTYPE_UINT64: return snprintf(buf, 32, "%llu", (unsigned long long)((const uint64_t *)t->data)[i]);
    case TC_DTYPE_BOOL: return snprintf(buf, 32, "%s", ((const uint8_t *)t->data)[i] ? "true" : "false");
    default: return -1;
    }
}

/* The flat "data" array of t as a raw JSON item: printed in one pass instead of one cJSON node per value. */
static cJSON *encode_data(const tc_tensor *t, int64_t count) {
    if (count < 0 || (uint64_t)count > SIZE_MAX / 40) return NULL;
    size_t cap = (size_t)count * 33 + 3, len = 0;
    char *text = malloc(cap);
    if (!text) return NULL;
    text[len++] = '[';
    for (int64_t i = 0; i < count; i++) {
        if (i) text[len++] = ',';
        int n = format_value(t, i, text + len);
        if (n < 0 || n >= 32) {
            free(text);
            return NULL;
        }
        len += (size_t)n;
    }
    text[len++] = ']';
    text[len] = '\0';
    cJSON *raw = cJSON_CreateRaw(text);
    free(text);
    return raw;
}

static const cJSON *param(const cJSON *obj, const char *key) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "parameters");
    return cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, key) : NULL;
}

/* An integer parameter in [lo, hi]: 1 when present and valid, 0 when absent, -1 when invalid. */
static int int_param(const cJSON *obj, const char *key, double lo, double hi, int64_t *out) {
    const cJSON *v = param(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return -1;
    *out = (int64_t)v->valuedouble;
    return 1;
}

/* Counts ',' outside strings: an upper bound on the numbers a JSON text can hold, found without parsing. */
/* True when a JSON string in text holds the escape \u0000 (a NUL, which would cut a C string: "input\u0000x" would
 * pass for "input"). Walks the strings, so that an escaped backslash before "u0000" is not taken for one. */
static bool json_has_nul(const char *text, size_t len) {
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        const char ch = text[i];
        if (!in_string) {
            in_string = ch == '"';
            continue;
        }
        if (ch == '"') {
            in_string = false;
        } else if (ch == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0) return true;
            i++; /* the escaped character */
        }
    }
    return false;
}

static size_t count_separators(const char *s, size_t n) {
    size_t c = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\') i++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == ',') {
            c++;
        }
    }
    return c;
}

static int decode_shape(srv_model *m, int k, const cJSON *sh, srv_tensor *t, int64_t *count, srv_request *r) {
    const tc_io_info *io = &m->in[k];
    const tc_input_range *rg = &m->range[k];
    if (!cJSON_IsArray(sh)) return fail(r, 400, "input '%s': 'shape' missing or not an array", io->name);
    int rank = cJSON_GetArraySize(sh);
    if (rank != rg->rank)
        return fail(r, 400, "input '%s': shape has rank %d, the model expects %d", io->name, rank, (int)rg->rank);
    int64_t n = 1;
    int d = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, sh) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e12 || e->valuedouble != floor(e->valuedouble))
            return fail(r, 400, "input '%s': shape[%d] is not a non-negative integer", io->name, d);
        int64_t v = (int64_t)e->valuedouble;
        int64_t lo = rg->min[d], hi = rg->max[d];
        if (d == 0 && m->cfg.max_batch_size > 0 && hi > m->cfg.max_batch_size) hi = m->cfg.max_batch_size;
        if (v < lo || v > hi) {
            if (lo == hi)
                return fail(r, 400, "input '%s': shape[%d] is %lld, the model expects %lld", io->name, d, (long long)v,
                            (long long)lo);
            return fail(r, 400, "input '%s': shape[%d] is %lld, the model takes %lld..%lld%s", io->name, d,
                        (long long)v, (long long)lo, (long long)hi,
                        d == 0 && m->cfg.max_batch_size > 0 ? " (max_batch_size)" : "");
        }
        t->dims[d] = v;
        /* Saturate at 2^41 elements (far above any body limit) so the product cannot overflow. */
        if (v == 0) n = 0;
        else if (n > (INT64_C(1) << 41) / v) n = INT64_C(1) << 41;
        else n *= v;
        d++;
    }
    t->rank = rank;
    *count = n;
    return 0;
}

/* Reads the request-level parameters: priority and timeout. */
static int decode_scheduling(srv_model *m, const cJSON *root, srv_request *r) {
    const srv_config *c = &m->cfg;
    int64_t v = 0;
    int levels = srv_config_levels(c);
    int pr = int_param(root, "priority", 0, 1e9, &v);
    if (pr < 0) return fail(r, 400, "parameter 'priority' must be a non-negative integer");
    if (pr > 0 && v > levels)
        return fail(r, 400, "parameter 'priority' is %lld, model '%s' has %d priority level%s", (long long)v, m->name,
                    levels, levels == 1 ? "" : "s");
    int level = pr > 0 && v > 0 ? (int)v : (c->default_priority_level > 0 ? c->default_priority_level : 1);
    r->priority = level - 1;
    int64_t timeout_us = c->default_timeout_us;
    int to = int_param(root, "timeout", 0, 3.6e9, &v);
    if (to < 0) return fail(r, 400, "parameter 'timeout' must be an integer number of microseconds in [0, 3.6e9]");
    if (to > 0) timeout_us = v;
    r->t_deadline = timeout_us > 0 ? r->t_arrive + (double)timeout_us * 1e-6 : 0;
    return 0;
}

static int decode_outputs(srv_model *m, const cJSON *root, srv_request *r) {
    const cJSON *bo = param(root, "binary_data_output");
    if (bo && !cJSON_IsBool(bo)) return fail(r, 400, "parameter 'binary_data_output' must be a boolean");
    int all_binary = bo && cJSON_IsTrue(bo);
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    for (int k = 0; k < m->n_out; k++) {
        r->want_out[k] = outs ? 0 : 1;
        r->binary_out[k] = (unsigned char)all_binary;
    }
    if (!outs) return 0;
    if (!cJSON_IsArray(outs)) return fail(r, 400, "field 'outputs' must be an array");
    const cJSON *o;
    int oi = 0;
    cJSON_ArrayForEach(o, outs) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
        if (!cJSON_IsObject(o) || !cJSON_IsString(nm))
            return fail(r, 400, "outputs[%d]: 'name' missing or not a string", oi);
        int k = -1;
        for (int j = 0; j < m->n_out; j++)
            if (strcmp(m->out[j].name, nm->valuestring) == 0) k = j;
        if (k < 0)
            return fail(r, 400, "outputs[%d]: model '%s' has no output named '%.200s'", oi, m->name, nm->valuestring);
        if (r->want_out[k]) return fail(r, 400, "output '%s' requested twice", m->out[k].name);
        r->want_out[k] = 1;
        const cJSON *b = param(o, "binary_data");
        if (b && !cJSON_IsBool(b)) return fail(r, 400, "output '%s': parameter 'binary_data' must be a boolean", m->out[k].name);
        if (b) r->binary_out[k] = (unsigned char)cJSON_IsTrue(b);
        if (param(o, "classification"))
            return fail(r, 400, "output '%s': the classification extension is not supported", m->out[k].name);
        oi++;
    }
    return 0;
}

int srv_decode_infer(srv_model *m, char *body, size_t len, size_t header_len, srv_request *r) {
    int binary = header_len != SRV_NO_BINARY;
    if (binary && header_len > len)
        return fail(r, 400, "Inference-Header-Content-Length is %zu but the body has only %zu bytes", header_len, len);
    size_t jlen = binary ? header_len : len;
    if (count_separators(body, jlen) > (size_t)m->max_values + 4096)
        return fail(r, 413, "request holds more values than the inputs of model '%s' can take", m->name);
    const char *bin = body + jlen, *bin_end = body + len;
    srv_json_arrays arrays;
    int xr = srv_json_extract_data(body, jlen, &arrays);
    if (xr) {
        srv_json_arrays_free(&arrays);
        if (xr == 2) return fail(r, 400, "the request has more than %d 'data' arrays", SRV_JSON_MAX_ARRAYS);
        return xr < 0 ? fail(r, 500, "out of memory") : fail(r, 400, "invalid byte 0xFF in a JSON string");
    }
    if (json_has_nul(body, jlen)) {
        srv_json_arrays_free(&arrays);
        return fail(r, 400, "a JSON string of the request holds a NUL character (\\u0000): names and ids may not");
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, jlen, &end, 0);
    int st = 0;
    if (!root) {
        srv_json_arrays_free(&arrays);
        return fail(r, 400, "malformed JSON in request %s", binary ? "header" : "body");
    }
    while (end != NULL && end < body + jlen && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
    if (end == NULL || end < body + jlen) {
        st = fail(r, 400, "request %s has bytes after its JSON value", binary ? "header" : "body");
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        st = fail(r, 400, "request %s must be a JSON object", binary ? "header" : "body");
        goto done;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (id && !cJSON_IsString(id)) {
        st = fail(r, 400, "field 'id' must be a string");
        goto done;
    }
    /* Kept whole (the body limit bounds it): a cut could split a UTF-8 character and break the response's JSON. */
    if (id && !(r->id = strdup(id->valuestring))) {
        st = fail(r, 500, "out of memory");
        goto done;
    }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (!cJSON_IsArray(inputs)) {
        st = fail(r, 400, "field 'inputs' missing or not an array");
        goto done;
    }
    int idx = 0;
    int64_t batch = -1;
    int seen[SRV_MAX_IO] = {0};
    const cJSON *in;
    cJSON_ArrayForEach(in, inputs) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(in, "datatype");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(in, "data");
        if (!cJSON_IsObject(in) || !cJSON_IsString(nm)) {
            st = fail(r, 400, "inputs[%d]: 'name' missing or not a string", idx);
            goto done;
        }
        int k = -1;
        for (int j = 0; j < m->n_in; j++)
            if (strcmp(m->in[j].name, nm->valuestring) == 0) k = j;
        if (k < 0) {
            st = fail(r, 400, "inputs[%d]: model '%s' has no input named '%.200s'", idx, m->name, nm->valuestring);
            goto done;
        }
        const tc_io_info *io = &m->in[k];
        srv_tensor *t = &r->in[k];
        if (seen[k]) {
            st = fail(r, 400, "input '%s' given twice", io->name);
            goto done;
        }
        seen[k] = 1;
        if (!cJSON_IsString(dt)) {
            st = fail(r, 400, "input '%s': 'datatype' missing or not a string", io->name);
            goto done;
        }
        tc_dtype want = io->dtype;
        if (srv_dtype_parse(dt->valuestring, 0) != want) {
            st = fail(r, 400, "input '%s': datatype '%.32s' does not match the model's %s", io->name, dt->valuestring,
                      srv_dtype_kserve(want) ? srv_dtype_kserve(want) : "?");
            goto done;
        }
        t->dtype = want;
        int64_t count = 0;
        if ((st = decode_shape(m, k, cJSON_GetObjectItemCaseSensitive(in, "shape"), t, &count, r))) goto done;
        if (m->cfg.max_batch_size > 0) {
            if (batch >= 0 && t->dims[0] != batch) {
                st = fail(r, 400, "input '%s': batch size (shape[0]) %lld differs from the other inputs' %lld", io->name,
                          (long long)t->dims[0], (long long)batch);
                goto done;
            }
            batch = t->dims[0];
        }
        size_t esz = tc_dtype_size(want);
        int64_t bsize = -1;
        int has_bin = int_param(in, "binary_data_size", 0, 9e15, &bsize);
        if (has_bin < 0) {
            st = fail(r, 400, "input '%s': parameter 'binary_data_size' must be a non-negative integer", io->name);
            goto done;
        }
        if (has_bin > 0) {
            if (!binary) {
                st = fail(r, 400, "input '%s': 'binary_data_size' given but the request has no "
                                  "Inference-Header-Content-Length header", io->name);
                goto done;
            }
            if (data) {
                st = fail(r, 400, "input '%s': give either 'data' or 'binary_data_size', not both", io->name);
                goto done;
            }
            if ((uint64_t)bsize != (uint64_t)count * esz) {
                st = fail(r, 400, "input '%s': binary_data_size is %lld bytes but shape and datatype need %lld", io->name,
                          (long long)bsize, (long long)((uint64_t)count * esz));
                goto done;
            }
            if ((uint64_t)bsize > (uint64_t)(bin_end - bin)) {
                st = fail(r, 400, "input '%s': binary_data_size %lld runs past the end of the body (%zu bytes left)",
                          io->name, (long long)bsize, (size_t)(bin_end - bin));
                goto done;
            }
            t->data = (void *)bin;
            t->borrowed = 1;
            t->bytes = (size_t)bsize;
            bin += bsize;
        } else {
            /* JSON numbers: pre-parsed by json_data.c (a marker string) or, for arrays it left alone, cJSON's. */
            const srv_json_array *fa = cJSON_IsString(data) ? srv_json_marker(&arrays, data->valuestring) : NULL;
            int64_t have;
            if (fa) {
                have = fa->n;
            } else if (!cJSON_IsArray(data)) {
                st = fail(r, 400, "input '%s': 'data' missing or not an array", io->name);
                goto done;
            } else if ((have = count_data(data, 0)) < 0) {
                st = fail(r, 400, "input '%s': 'data' must hold only numbers (or booleans for BOOL)", io->name);
                goto done;
            }
            if (have != count) {
                st = fail(r, 400, "input '%s': shape holds %lld elements but 'data' has %lld", io->name, (long long)count,
                          (long long)have);
                goto done;
            }
            if (esz == 0 || want == TC_DTYPE_FLOAT16 || want == TC_DTYPE_BFLOAT16) {
                st = fail(r, 400, "input '%s': datatype %s needs the binary tensor extension", io->name,
                          dt->valuestring);
                goto done;
            }
            t->bytes = (size_t)count * esz;
            t->data = malloc(t->bytes ? t->bytes : 1);
            if (!t->data) {
                st = fail(r, 500, "out of memory");
                goto done;
            }
            if (fa) {
                if ((st = fill_extracted(fa, t->data, io, dt->valuestring, r))) goto done;
            } else {
                int64_t pos = 0;
                double badv = 0;
                int why = fill_data(data, t->data, &pos, want, &badv);
                if (why) {
                    char val[32];
                    snprintf(val, sizeof val, "%.17g", badv);
                    st = value_error(r, io, dt->valuestring, why, pos, val);
                    goto done;
                }
            }
        }
        idx++;
    }
    for (int k = 0; k < m->n_in; k++)
        if (!seen[k]) {
            st = fail(r, 400, "input '%s' is missing", m->in[k].name);
            goto done;
        }
    if (binary && bin != bin_end) {
        st = fail(r, 400, "the body has %zu bytes after the binary inputs that no input claims", (size_t)(bin_end - bin));
        goto done;
    }
    r->batch = m->cfg.max_batch_size > 0 ? batch : 1;
    if ((st = decode_outputs(m, root, r))) goto done;
    st = decode_scheduling(m, root, r);
done:
    srv_json_arrays_free(&arrays);
    cJSON_Delete(root);
    return st;
}

char *srv_encode_infer(const srv_request *r, size_t *len, size_t *json_len) {
    const srv_model *m = r->model;
    cJSON *resp = cJSON_CreateObject();
    cJSON *oarr = resp ? cJSON_AddArrayToObject(resp, "outputs") : NULL;
    char *text = NULL, *out = NULL;
    size_t bin_bytes = 0;
    int any_binary = 0;
    if (!oarr) goto done;
    if (r->id && r->id[0]) cJSON_AddStringToObject(resp, "id", r->id);
    cJSON_AddStringToObject(resp, "model_name", m->name);
    cJSON_AddStringToObject(resp, "model_version", "1");
    for (int k = 0; k < m->n_out; k++) {
        if (!r->want_out[k]) continue;
        const srv_tensor *t = &r->out[k];
        const char *dtn = srv_dtype_kserve(t->dtype);
        cJSON *o = cJSON_CreateObject();
        cJSON *shape = cJSON_CreateArray();
        if (!o || !shape || !dtn) {
            cJSON_Delete(o);
            cJSON_Delete(shape);
            goto done;
        }
        for (int d = 0; d < t->rank; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
        cJSON_AddStringToObject(o, "name", m->out[k].name);
        cJSON_AddStringToObject(o, "datatype", dtn);
        cJSON_AddItemToObject(o, "shape", shape);
        cJSON_AddItemToArray(oarr, o);
        if (r->binary_out[k]) {
            cJSON *p = cJSON_AddObjectToObject(o, "parameters");
            if (!p || !cJSON_AddNumberToObject(p, "binary_data_size", (double)t->bytes)) goto done;
            bin_bytes += t->bytes;
            any_binary = 1;
        } else {
            int64_t count = 1;
            for (int d = 0; d < t->rank; d++) count *= t->dims[d];
            tc_tensor view = {.dtype = t->dtype, .rank = t->rank, .data = t->data, .nbytes = t->bytes};
            cJSON *data = encode_data(&view, count);
            if (!data) goto done;
            cJSON_AddItemToObject(o, "data", data);
        }
    }
    text = cJSON_PrintUnformatted(resp);
    if (!text) goto done;
    size_t tl = strlen(text);
    if (!any_binary) {
        out = text;
        text = NULL;
        *len = tl;
        *json_len = SRV_NO_BINARY;
        goto done;
    }
    out = malloc(tl + bin_bytes + 1);
    if (!out) goto done;
    memcpy(out, text, tl);
    size_t off = tl;
    for (int k = 0; k < m->n_out; k++) {
        if (!r->want_out[k] || !r->binary_out[k]) continue;
        if (r->out[k].bytes) memcpy(out + off, r->out[k].data, r->out[k].bytes);
        off += r->out[k].bytes;
    }
    out[off] = '\0';
    *len = off;
    *json_len = tl;
done:
    free(text);
    cJSON_Delete(resp);
    return out;
}

/* An int64 field of the model configuration: a JSON number (as Triton's model config JSON writes dims,
 * max_batch_size and the batching fields) when a double holds it exactly, |v| <= 2^53 - which every value the
 * config.json checks allow does; a decimal string (protobuf's JSON mapping of int64) only beyond that. */
static cJSON *int64_json(int64_t v) {
    const int64_t exact = INT64_C(1) << 53;
    if (v >= -exact && v <= exact) return cJSON_CreateNumber((double)v);
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return cJSON_CreateString(text);
}

static cJSON *dims_json(const int64_t *dims, int from, int rank) {
    cJSON *a = cJSON_CreateArray();
    for (int d = from; a && d < rank; d++) cJSON_AddItemToArray(a, int64_json(dims[d]));
    return a;
}

char *srv_model_config_json(const srv_model *m) {
    const srv_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "platform", "tailcut_plan");
    cJSON_AddStringToObject(o, "backend", "tailcut");
    cJSON_AddNumberToObject(o, "max_batch_size", c->max_batch_size);
    int off = c->max_batch_size > 0 ? 1 : 0;
    for (int pass = 0; pass < 2; pass++) {
        cJSON *arr = cJSON_AddArrayToObject(o, pass ? "output" : "input");
        int n = pass ? m->n_out : m->n_in;
        for (int k = 0; arr && k < n; k++) {
            const tc_io_info *io = pass ? &m->out[k] : &m->in[k];
            cJSON *t = cJSON_CreateObject();
            if (!t) break;
            char dt[32];
            snprintf(dt, sizeof dt, "TYPE_%s", srv_dtype_kserve(io->dtype) ? srv_dtype_kserve(io->dtype) : "INVALID");
            cJSON_AddStringToObject(t, "name", io->name);
            cJSON_AddStringToObject(t, "data_type", dt);
            if (!pass) cJSON_AddStringToObject(t, "format", "FORMAT_NONE");
            int rank = io->rank > 0 ? io->rank : 0;
            cJSON_AddItemToObject(t, "dims", dims_json(io->dims, rank > off ? off : rank, rank));
            cJSON_AddItemToArray(arr, t);
        }
    }
    if (c->dynamic_batching) {
        cJSON *db = cJSON_AddObjectToObject(o, "dynamic_batching");
        if (db) {
            cJSON *pref = cJSON_AddArrayToObject(db, "preferred_batch_size");
            for (int i = 0; pref && i < c->n_preferred; i++) cJSON_AddItemToArray(pref, cJSON_CreateNumber(c->preferred[i]));
            cJSON_AddItemToObject(db, "max_queue_delay_microseconds", int64_json(c->max_queue_delay_us));
            cJSON_AddNumberToObject(db, "priority_levels", c->priority_levels);
            cJSON_AddNumberToObject(db, "default_priority_level", c->default_priority_level);
            cJSON *qp = cJSON_AddObjectToObject(db, "default_queue_policy");
            if (qp) {
                cJSON_AddItemToObject(qp, "default_timeout_microseconds", int64_json(c->default_timeout_us));
                cJSON_AddItemToObject(qp, "max_queue_size", int64_json(c->max_queue_size));
            }
        }
    }
    cJSON *ig = cJSON_AddArrayToObject(o, "instance_group");
    cJSON *g = ig ? cJSON_CreateObject() : NULL;
    if (g) {
        char nm[SRV_NAME_MAX + 8];
        snprintf(nm, sizeof nm, "%s_0", m->name);
        cJSON_AddStringToObject(g, "name", nm);
        cJSON_AddStringToObject(g, "kind", m->on_gpu ? "KIND_GPU" : "KIND_CPU");
        if (m->on_gpu) {
            cJSON *gpus = cJSON_AddArrayToObject(g, "gpus");
            if (gpus) cJSON_AddItemToArray(gpus, cJSON_CreateNumber(0));
        }
        cJSON_AddNumberToObject(g, "count", m->n_inst);
        cJSON_AddItemToArray(ig, g);
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
