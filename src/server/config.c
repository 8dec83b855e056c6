/* config.c - parses and validates a model's config.json (see config.h). Integers may be JSON numbers
 * or decimal strings (protobuf's JSON mapping writes int64 fields as strings, as Triton does). */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason.h"
#include "repo.h"

static char *read_small_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap > (1u << 24)) { /* config.json above 16 MiB: refuse */
                free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Reads an integer (number or decimal string) in [lo, hi]. Returns 0 ok, 1 bad. */
static int json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out) {
    double d;
    if (cJSON_IsNumber(v)) {
        d = v->valuedouble;
    } else if (cJSON_IsString(v) && v->valuestring[0]) {
        char *end = NULL;
        errno = 0;
        long long x = strtoll(v->valuestring, &end, 10);
        if (*end || errno) return 1;
        d = (double)x;
    } else {
        return 1;
    }
    if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) return 1;
    *out = (int64_t)d;
    return 0;
}

/* Optional integer field: absent leaves *out unchanged. */
static int opt_int(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out, const char *path,
                   const char *prefix) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    if (json_int(v, lo, hi, out)) {
        srv_fail( "%s: field \"%s%s\" must be an integer in [%lld, %lld]", path, prefix, key,
                (long long)lo, (long long)hi);
        return 1;
    }
    return 0;
}

static int parse_io_array(const cJSON *root, const char *key, srv_cfg_io *ios, int *n, const char *path) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    *n = 0;
    if (!arr) return 0;
    if (!cJSON_IsArray(arr)) {
        srv_fail( "%s: field \"%s\" must be an array", path, key);
        return 1;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (i >= SRV_MAX_IO) {
            srv_fail( "%s: field \"%s\" has more than %d entries", path, key, SRV_MAX_IO);
            return 1;
        }
        srv_cfg_io *c = &ios[i];
        memset(c, 0, sizeof *c);
        c->rank = -1;
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsObject(e) || !cJSON_IsString(nm) || strlen(nm->valuestring) >= SRV_NAME_MAX) {
            srv_fail( "%s: field \"%s[%d].name\" missing or not a string", path, key, i);
            return 1;
        }
        snprintf(c->name, sizeof c->name, "%s", nm->valuestring);
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "data_type");
        if (dt) {
            c->dt = cJSON_IsString(dt) ? srv_dtype_parse(dt->valuestring, 1) : TC_DTYPE_UNDEFINED;
            if (c->dt == TC_DTYPE_UNDEFINED) {
                srv_fail(
                        "%s: field \"%s[%d].data_type\" is not a known type (e.g. \"TYPE_FP32\")",
                        path, key, i);
                return 1;
            }
        }
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(e, "dims");
        if (dims) {
            int r = 0;
            const cJSON *d;
            if (!cJSON_IsArray(dims)) goto bad_dims;
            cJSON_ArrayForEach(d, dims) {
                int64_t v = 0;
                if (r >= TC_MAX_RANK || json_int(d, -1, INT64_C(1) << 40, &v) || v == 0) goto bad_dims;
                c->dims[r++] = v;
            }
            c->rank = r;
        }
        i++;
        continue;
    bad_dims:
        srv_fail(
                "%s: field \"%s[%d].dims\" must be an array of at most %d integers (>= 1 or -1)",
                path, key, i, TC_MAX_RANK);
        return 1;
    }
    *n = i;
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int parse_dynamic_batching(const cJSON *db, srv_config *c, const char *path) {
    if (!cJSON_IsObject(db)) {
        srv_fail( "%s: field \"dynamic_batching\" must be an object", path);
        return 1;
    }
    if (c->max_batch_size < 1) {
        srv_fail( "%s: field \"dynamic_batching\" needs \"max_batch_size\" >= 1", path);
        return 1;
    }
    c->dynamic_batching = 1;
    const char *P = "dynamic_batching.";
    int64_t v;
    if (opt_int(db, "max_queue_delay_microseconds", 0, 10000000, &c->max_queue_delay_us, path, P)) return 1;
    const cJSON *pref = cJSON_GetObjectItemCaseSensitive(db, "preferred_batch_size");
    if (pref) {
        const cJSON *e;
        if (!cJSON_IsArray(pref) || cJSON_GetArraySize(pref) > SRV_MAX_PREFERRED) goto bad_pref;
        cJSON_ArrayForEach(e, pref) {
            if (json_int(e, 1, c->max_batch_size, &v)) goto bad_pref;
            c->preferred[c->n_preferred++] = (int)v;
        }
        qsort(c->preferred, (size_t)c->n_preferred, sizeof c->preferred[0], cmp_int);
    }
    /* Triton keeps the queue bound and timeout in default_queue_policy; accept them there too. */
    const cJSON *policies[2] = {db, cJSON_GetObjectItemCaseSensitive(db, "default_queue_policy")};
    if (policies[1] && !cJSON_IsObject(policies[1])) {
        srv_fail( "%s: field \"dynamic_batching.default_queue_policy\" must be an object", path);
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        if (!policies[k]) continue;
        const char *pp = k ? "dynamic_batching.default_queue_policy." : P;
        if (opt_int(policies[k], "max_queue_size", 0, 1000000, &c->max_queue_size, path, pp) ||
            opt_int(policies[k], "default_timeout_microseconds", 0, INT64_C(3600000000), &c->default_timeout_us, path,
                    pp))
            return 1;
    }
    v = 0;
    if (opt_int(db, "priority_levels", 0, SRV_MAX_PRIORITY_LEVELS, &v, path, P)) return 1;
    c->priority_levels = (int)v;
    v = 0;
    if (opt_int(db, "default_priority_level", 0, c->priority_levels, &v, path, P)) return 1;
    /* Unset: requests without a priority go to the lowest level. */
    c->default_priority_level = v > 0 ? (int)v : (c->priority_levels > 0 ? c->priority_levels : 1);
    return 0;
bad_pref:
    srv_fail(
            "%s: field \"dynamic_batching.preferred_batch_size\" must be an array of at most %d "
            "integers in [1, max_batch_size]",
            path, SRV_MAX_PREFERRED);
    return 1;
}

/* One group's "kind" and "gpus" (Triton's): KIND_CPU, KIND_GPU (device 0 of the process: CUDA_VISIBLE_DEVICES
 * chooses it, so "gpus" may only name 0) or KIND_AUTO; every group of a model must agree. */
static int parse_group_kind(const cJSON *e, srv_config *c, const char *path, const char *prefix, int idx) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "kind");
    int k = SRV_KIND_AUTO;
    if (kind && cJSON_IsString(kind) && strcmp(kind->valuestring, "KIND_CPU") == 0) k = SRV_KIND_CPU;
    else if (kind && cJSON_IsString(kind) && strcmp(kind->valuestring, "KIND_GPU") == 0) k = SRV_KIND_GPU;
    else if (kind && !(cJSON_IsString(kind) && strcmp(kind->valuestring, "KIND_AUTO") == 0)) {
        srv_fail( "%s: field \"%skind\": KIND_CPU, KIND_GPU or KIND_AUTO", path, prefix);
        return 1;
    }
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(e, "gpus"), *g;
    if (gpus) {
        if (!cJSON_IsArray(gpus) || k != SRV_KIND_GPU) {
            srv_fail( "%s: field \"%sgpus\" must be an array, with \"kind\": \"KIND_GPU\"",
                    path, prefix);
            return 1;
        }
        cJSON_ArrayForEach(g, gpus) {
            if (!cJSON_IsNumber(g) || g->valuedouble != 0.0) {
                srv_fail( "%s: field \"%sgpus\": this server runs on GPU 0 of the process only "
                        "(choose the device with CUDA_VISIBLE_DEVICES)", path, prefix);
                return 1;
            }
        }
    }
    if (idx > 0 && k != c->instance_kind) {
        srv_fail( "%s: field \"%skind\": every instance group of a model must have the same kind",
                path, prefix);
        return 1;
    }
    c->instance_kind = k;
    return 0;
}

static int parse_instance_group(const cJSON *ig, srv_config *c, const char *path) {
    /* Triton: an array of groups; the counts add up. An object is read as one group. */
    const cJSON *e;
    int total = 0, idx = 0;
    if (cJSON_IsObject(ig)) {
        int64_t v = 1;
        if (opt_int(ig, "count", 1, SRV_MAX_INSTANCES, &v, path, "instance_group.")) return 1;
        if (parse_group_kind(ig, c, path, "instance_group.", 0)) return 1;
        c->instance_count = (int)v;
        return 0;
    }
    if (!cJSON_IsArray(ig)) {
        srv_fail( "%s: field \"instance_group\" must be an array of {\"count\": N}", path);
        return 1;
    }
    cJSON_ArrayForEach(e, ig) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "instance_group[%d].", idx);
        int64_t v = 1;
        if (!cJSON_IsObject(e)) {
            srv_fail( "%s: field \"instance_group[%d]\" must be an object", path, idx);
            return 1;
        }
        if (opt_int(e, "count", 1, SRV_MAX_INSTANCES, &v, path, prefix)) return 1;
        if (parse_group_kind(e, c, path, prefix, idx)) return 1;
        total += (int)v;
        idx++;
    }
    if (total > SRV_MAX_INSTANCES) {
        srv_fail( "%s: field \"instance_group\": more than %d instances in all", path,
                SRV_MAX_INSTANCES);
        return 1;
    }
    if (total > 0) c->instance_count = total;
    return 0;
}

static int parse_tailcut_block(const cJSON *t, srv_config *c, const char *path) {
    if (!cJSON_IsObject(t)) {
        srv_fail( "%s: field \"tailcut\" must be an object", path);
        return 1;
    }
    int64_t v = 0;
    if (opt_int(t, "engine_threads", 0, 1024, &v, path, "tailcut.")) return 1;
    c->engine_threads = (int)v;
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(t, "precision");
    if (prec && !(cJSON_IsString(prec) &&
                  (strcmp(prec->valuestring, "fp32") == 0 || strcmp(prec->valuestring, "int8") == 0 ||
                   strcmp(prec->valuestring, "fp16") == 0 || strcmp(prec->valuestring, "bf16") == 0))) {
        srv_fail(
                "%s: field \"tailcut.precision\": \"fp32\", \"fp16\", \"bf16\" or \"int8\" (or serve a prebuilt "
                "model.plan)",
                path);
        return 1;
    }
    c->int8 = prec != NULL && strcmp(prec->valuestring, "int8") == 0;
    c->fp16 = prec != NULL && strcmp(prec->valuestring, "fp16") == 0;
    c->bf16 = prec != NULL && strcmp(prec->valuestring, "bf16") == 0;
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(t, "calibration_cache");
    if (cache != NULL || c->int8) {
        /* A plain file name in the model's version folder (next to model.onnx): no path, no "." / "..". */
        const char *s = cJSON_IsString(cache) ? cache->valuestring : NULL;
        if (!c->int8 || s == NULL || s[0] == '\0' || s[0] == '.' || strchr(s, '/') != NULL ||
            strlen(s) >= sizeof c->calib_cache) {
            srv_fail(
                    "%s: field \"tailcut.calibration_cache\": with \"precision\": \"int8\", the "
                    "name of the calibration cache file (from tailcut calibrate) in the version folder",
                    path);
            return 1;
        }
        snprintf(c->calib_cache, sizeof c->calib_cache, "%s", s);
    }
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(t, "int8_reduce_range");
    if (rr != NULL && (!cJSON_IsBool(rr) || (cJSON_IsTrue(rr) && !c->int8))) {
        srv_fail( "%s: field \"tailcut.int8_reduce_range\": true or false, true only with "
                        "\"precision\": \"int8\"", path);
        return 1;
    }
    c->int8_reduce_range = rr != NULL && cJSON_IsTrue(rr);
    const cJSON *tac = cJSON_GetObjectItemCaseSensitive(t, "tactics");
    if (tac) {
        if (cJSON_IsString(tac) && strcmp(tac->valuestring, "fixed") == 0) c->tactics_fixed = 1;
        else if (cJSON_IsString(tac) && strcmp(tac->valuestring, "tuned") == 0) c->tactics_fixed = 0;
        else {
            srv_fail( "%s: field \"tailcut.tactics\" must be \"tuned\" or \"fixed\"", path);
            return 1;
        }
    }
    return 0;
}

int srv_config_parse(const char *path, srv_config *c) {
    size_t len = 0;
    char *text = read_small_file(path, &len);
    if (!text) {
        srv_fail( "%s: cannot read: %s", path, strerror(errno));
        return 1;
    }
    int rc = srv_config_parse_text(text, len, path, c);
    free(text);
    return rc;
}

int srv_config_parse_text(const char *text, size_t len, const char *path, srv_config *c) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    int rc = 1;
    memset(c, 0, sizeof *c);
    c->instance_count = 1;
    if (!root || !cJSON_IsObject(root)) {
        srv_fail( "%s: not a valid JSON object", path);
        goto done;
    }
    int64_t mbs = -1;
    if (json_int(cJSON_GetObjectItemCaseSensitive(root, "max_batch_size"), 0, 1000000, &mbs)) {
        srv_fail( "%s: field \"max_batch_size\" missing or not an integer >= 0", path);
        goto done;
    }
    c->max_batch_size = (int)mbs;
    if (parse_io_array(root, "input", c->in, &c->n_in, path) || parse_io_array(root, "output", c->out, &c->n_out, path))
        goto done;
    const cJSON *db = cJSON_GetObjectItemCaseSensitive(root, "dynamic_batching");
    if (db && parse_dynamic_batching(db, c, path)) goto done;
    const cJSON *ig = cJSON_GetObjectItemCaseSensitive(root, "instance_group");
    if (ig && parse_instance_group(ig, c, path)) goto done;
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(root, "tailcut");
    if (tb && parse_tailcut_block(tb, c, path)) goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}
