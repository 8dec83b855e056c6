/* codec.c - KServe v2 JSON tensor codec for `tailcut serve`: validates every request field (names,
 * datatypes, shapes, element counts, value ranges) before touching the context, runs under the
 * model's mutex and encodes outputs as {"model_name", "outputs": [{name, datatype, shape, data}]}. */
#include "codec.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *srv_error_json(const char *msg) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "error", msg);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static char *fail(int *status, int code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *status = code;
    return srv_error_json(msg);
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

/* Writes element i of dtype dt from a JSON number/bool; returns 0 or -1 when out of range / not integral. */
static int store(void *buf, int64_t i, tc_dtype dt, const cJSON *e) {
    double v = cJSON_IsBool(e) ? (cJSON_IsTrue(e) ? 1.0 : 0.0) : e->valuedouble;
    if (cJSON_IsBool(e) && dt != TC_DTYPE_BOOL) return -1;
    if (dt == TC_DTYPE_FLOAT32) { ((float *)buf)[i] = (float)v; return 0; }
    if (dt == TC_DTYPE_FLOAT64) { ((double *)buf)[i] = v; return 0; }
    if (!isfinite(v) || v != floor(v)) return -1;
#define INT_CASE(T, C, LO, HI)                          \
    case C:                                             \
        if (v < (double)(LO) || v > (double)(HI)) return -1; \
        ((T *)buf)[i] = (T)v;                           \
        return 0;
    switch (dt) {
        INT_CASE(int8_t, TC_DTYPE_INT8, INT8_MIN, INT8_MAX)
        INT_CASE(int16_t, TC_DTYPE_INT16, INT16_MIN, INT16_MAX)
        INT_CASE(int32_t, TC_DTYPE_INT32, INT32_MIN, INT32_MAX)
        INT_CASE(uint8_t, TC_DTYPE_UINT8, 0, UINT8_MAX)
        INT_CASE(uint16_t, TC_DTYPE_UINT16, 0, UINT16_MAX)
        INT_CASE(uint32_t, TC_DTYPE_UINT32, 0, UINT32_MAX)
        INT_CASE(uint8_t, TC_DTYPE_BOOL, 0, 1)
    case TC_DTYPE_INT64:
        if (v < -9223372036854775808.0 || v >= 9223372036854775808.0) return -1;
        ((int64_t *)buf)[i] = (int64_t)v;
        return 0;
    case TC_DTYPE_UINT64:
        if (v < 0 || v >= 18446744073709551616.0) return -1;
        ((uint64_t *)buf)[i] = (uint64_t)v;
        return 0;
    default:
        return -1;
    }
#undef INT_CASE
}

static int fill_data(const cJSON *a, void *buf, int64_t *i, tc_dtype dt) {
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsArray(e)) {
            if (fill_data(e, buf, i, dt)) return -1;
        } else {
            if (store(buf, *i, dt, e)) return -1;
            (*i)++;
        }
    }
    return 0;
}

static cJSON *encode_data(const tc_tensor *t, int64_t count) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a && i < count; i++) {
        cJSON *v;
        switch (t->dtype) {
        case TC_DTYPE_FLOAT32: v = cJSON_CreateNumber((double)((const float *)t->data)[i]); break;
        case TC_DTYPE_FLOAT64: v = cJSON_CreateNumber(((const double *)t->data)[i]); break;
        case TC_DTYPE_INT8: v = cJSON_CreateNumber(((const int8_t *)t->data)[i]); break;
        case TC_DTYPE_INT16: v = cJSON_CreateNumber(((const int16_t *)t->data)[i]); break;
        case TC_DTYPE_INT32: v = cJSON_CreateNumber(((const int32_t *)t->data)[i]); break;
        case TC_DTYPE_INT64: v = cJSON_CreateNumber((double)((const int64_t *)t->data)[i]); break;
        case TC_DTYPE_UINT8: v = cJSON_CreateNumber(((const uint8_t *)t->data)[i]); break;
        case TC_DTYPE_UINT16: v = cJSON_CreateNumber(((const uint16_t *)t->data)[i]); break;
        case TC_DTYPE_UINT32: v = cJSON_CreateNumber(((const uint32_t *)t->data)[i]); break;
        case TC_DTYPE_UINT64: v = cJSON_CreateNumber((double)((const uint64_t *)t->data)[i]); break;
        case TC_DTYPE_BOOL: v = cJSON_CreateBool(((const uint8_t *)t->data)[i] != 0); break;
        default: v = NULL; break;
        }
        if (!v) {
            cJSON_Delete(a);
            return NULL;
        }
        /* JSON has no NaN/Inf: cJSON prints them as null, which clients read as missing. */
        cJSON_AddItemToArray(a, v);
    }
    return a;
}

typedef struct req_input {
    const tc_io_info *io;
    int32_t rank;
    int64_t dims[TC_MAX_RANK];
    void *buf;
    size_t bytes;
} req_input;

char *srv_infer_json(srv_model *m, const char *body, size_t len, int *status) {
    req_input ins[SRV_MAX_IO];
    memset(ins, 0, sizeof ins);
    int want_out[SRV_MAX_IO];
    char *res = NULL;
    cJSON *resp = NULL;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root) return fail(status, 400, "malformed JSON in request body");
    if (!cJSON_IsObject(root)) { res = fail(status, 400, "request body must be a JSON object"); goto done; }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (!cJSON_IsArray(inputs)) { res = fail(status, 400, "field 'inputs' missing or not an array"); goto done; }
    int idx = 0;
    const cJSON *in;
    cJSON_ArrayForEach(in, inputs) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(in, "shape");
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(in, "datatype");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(in, "data");
        if (!cJSON_IsObject(in) || !cJSON_IsString(nm)) { res = fail(status, 400, "inputs[%d]: 'name' missing or not a string", idx); goto done; }
        int k = -1;
        for (int j = 0; j < m->n_in; j++)
            if (strcmp(m->in[j].name, nm->valuestring) == 0) k = j;
        if (k < 0) { res = fail(status, 400, "inputs[%d]: model '%s' has no input named '%.200s'", idx, m->name, nm->valuestring); goto done; }
        req_input *r = &ins[k];
        if (r->io) { res = fail(status, 400, "input '%s' given twice", m->in[k].name); goto done; }
        r->io = &m->in[k];
        if (!cJSON_IsString(dt)) { res = fail(status, 400, "input '%s': 'datatype' missing or not a string", r->io->name); goto done; }
        tc_dtype want = r->io->dtype;
        if (srv_dtype_parse(dt->valuestring, 0) != want) {
            res = fail(status, 400, "input '%s': datatype '%.32s' does not match the model's %s", r->io->name, dt->valuestring,
                       srv_dtype_kserve(want) ? srv_dtype_kserve(want) : "?");
            goto done;
        }
        if (!cJSON_IsArray(sh)) { res = fail(status, 400, "input '%s': 'shape' missing or not an array", r->io->name); goto done; }
        int rank = cJSON_GetArraySize(sh);
        if (rank != r->io->rank) { res = fail(status, 400, "input '%s': shape has rank %d, the model expects %d", r->io->name, rank, (int)r->io->rank); goto done; }
        int64_t count = 1;
        int d = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, sh) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e12 || e->valuedouble != floor(e->valuedouble)) {
                res = fail(status, 400, "input '%s': shape[%d] is not a non-negative integer", r->io->name, d);
                goto done;
            }
            r->dims[d] = (int64_t)e->valuedouble;
            if (r->io->dims[d] >= 0 && r->dims[d] != r->io->dims[d]) {
                res = fail(status, 400, "input '%s': shape[%d] is %lld, the model expects %lld", r->io->name, d,
                           (long long)r->dims[d], (long long)r->io->dims[d]);
                goto done;
            }
            /* Saturate at 2^41 elements (far above any body limit) so the product cannot overflow. */
            if (r->dims[d] == 0) count = 0;
            else if (count > (INT64_C(1) << 41) / r->dims[d]) count = INT64_C(1) << 41;
            else count *= r->dims[d];
            d++;
        }
        r->rank = rank;
        if (!cJSON_IsArray(data)) { res = fail(status, 400, "input '%s': 'data' missing or not an array", r->io->name); goto done; }
        int64_t have = count_data(data, 0);
        if (have < 0) { res = fail(status, 400, "input '%s': 'data' must hold only numbers (or booleans for BOOL)", r->io->name); goto done; }
        if (have != count) {
            res = fail(status, 400, "input '%s': shape holds %lld elements but 'data' has %lld", r->io->name, (long long)count, (long long)have);
            goto done;
        }
        size_t esz = tc_dtype_size(want);
        if (esz == 0 || want == TC_DTYPE_FLOAT16 || want == TC_DTYPE_BFLOAT16) {
            res = fail(status, 400, "input '%s': datatype %s is not supported by the JSON codec", r->io->name, dt->valuestring);
            goto done;
        }
        r->bytes = (size_t)count * esz;
        r->buf = malloc(r->bytes ? r->bytes : 1);
        if (!r->buf) { res = fail(status, 500, "out of memory"); goto done; }
        int64_t pos = 0;
        if (fill_data(data, r->buf, &pos, want)) {
            res = fail(status, 400, "input '%s': a value in 'data' does not fit datatype %s", r->io->name, dt->valuestring);
            goto done;
        }
        idx++;
    }
    for (int k = 0; k < m->n_in; k++)
        if (!ins[k].io) { res = fail(status, 400, "input '%s' is missing", m->in[k].name); goto done; }
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    for (int k = 0; k < m->n_out; k++) want_out[k] = outs ? 0 : 1;
    if (outs) {
        if (!cJSON_IsArray(outs)) { res = fail(status, 400, "field 'outputs' must be an array"); goto done; }
        const cJSON *o;
        int oi = 0;
        cJSON_ArrayForEach(o, outs) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
            if (!cJSON_IsObject(o) || !cJSON_IsString(nm)) { res = fail(status, 400, "outputs[%d]: 'name' missing or not a string", oi); goto done; }
            int k = -1;
            for (int j = 0; j < m->n_out; j++)
                if (strcmp(m->out[j].name, nm->valuestring) == 0) k = j;
            if (k < 0) { res = fail(status, 400, "outputs[%d]: model '%s' has no output named '%.200s'", oi, m->name, nm->valuestring); goto done; }
            want_out[k] = 1;
            oi++;
        }
    }

    resp = cJSON_CreateObject();
    cJSON *oarr = resp ? cJSON_AddArrayToObject(resp, "outputs") : NULL;
    if (!resp || !oarr) { res = fail(status, 500, "out of memory"); goto done; }
    cJSON_AddStringToObject(resp, "model_name", m->name);
    cJSON_AddStringToObject(resp, "model_version", "1");

    pthread_mutex_lock(&m->lock);
    for (int k = 0; k < m->n_in; k++) {
        if (tc_context_set_input_shape(m->context, ins[k].io->name, ins[k].rank, ins[k].dims) != TC_STATUS_OK) {
            res = fail(status, 400, "input '%s': %s", ins[k].io->name, tc_context_error(m->context));
            pthread_mutex_unlock(&m->lock);
            goto done;
        }
    }
    for (int k = 0; k < m->n_in; k++) {
        if (tc_context_set_tensor(m->context, ins[k].io->name, ins[k].buf, ins[k].bytes) != TC_STATUS_OK) {
            res = fail(status, 400, "input '%s': %s", ins[k].io->name, tc_context_error(m->context));
            pthread_mutex_unlock(&m->lock);
            goto done;
        }
    }
    if (tc_context_run(m->context) != TC_STATUS_OK) {
        res = fail(status, 500, "inference failed: %s", tc_context_error(m->context));
        pthread_mutex_unlock(&m->lock);
        goto done;
    }
    for (int k = 0; k < m->n_out; k++) {
        if (!want_out[k]) continue;
        tc_tensor t;
        if (tc_context_tensor(m->context, m->out[k].name, &t) != TC_STATUS_OK) {
            res = fail(status, 500, "output '%s': %s", m->out[k].name, tc_context_error(m->context));
            pthread_mutex_unlock(&m->lock);
            goto done;
        }
        int64_t count = 1;
        for (int d = 0; d < t.rank; d++) count *= t.dims[d];
        cJSON *o = cJSON_CreateObject();
        cJSON *shape = cJSON_CreateArray();
        cJSON *data = encode_data(&t, count);
        const char *dtn = srv_dtype_kserve(t.dtype);
        if (!o || !shape || !data || !dtn) {
            cJSON_Delete(o);
            cJSON_Delete(shape);
            cJSON_Delete(data);
            res = fail(status, 500, "output '%s': cannot encode (datatype or memory)", m->out[k].name);
            pthread_mutex_unlock(&m->lock);
            goto done;
        }
        for (int d = 0; d < t.rank; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t.dims[d]));
        cJSON_AddStringToObject(o, "name", m->out[k].name);
        cJSON_AddStringToObject(o, "datatype", dtn);
        cJSON_AddItemToObject(o, "shape", shape);
        cJSON_AddItemToObject(o, "data", data);
        cJSON_AddItemToArray(oarr, o);
    }
    pthread_mutex_unlock(&m->lock);
    res = cJSON_PrintUnformatted(resp);
    if (!res) res = fail(status, 500, "out of memory");
    else *status = 200;
done:
    for (int k = 0; k < SRV_MAX_IO; k++) free(ins[k].buf);
    cJSON_Delete(resp);
    cJSON_Delete(root);
    return res;
}
