/* repo.c - model repository loading for `tailcut serve`: validates config.json against the model,
 * loads 1/model.plan or builds 1/model.onnx (caching the plan), creates one context per model. */
#include "repo.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const double srv_hist_bounds_us[SRV_HIST_BUCKETS - 1] = {100,    250,    500,    1000,    2500,   5000,
                                                         10000,  25000,  100000, 1000000, 10000000};

static const struct {
    tc_dtype dt;
    const char *name;
} k_dtypes[] = {
    {TC_DTYPE_FLOAT32, "FP32"}, {TC_DTYPE_FLOAT64, "FP64"}, {TC_DTYPE_FLOAT16, "FP16"}, {TC_DTYPE_BFLOAT16, "BF16"},
    {TC_DTYPE_INT8, "INT8"},    {TC_DTYPE_INT16, "INT16"},  {TC_DTYPE_INT32, "INT32"},  {TC_DTYPE_INT64, "INT64"},
    {TC_DTYPE_UINT8, "UINT8"},  {TC_DTYPE_UINT16, "UINT16"}, {TC_DTYPE_UINT32, "UINT32"}, {TC_DTYPE_UINT64, "UINT64"},
    {TC_DTYPE_BOOL, "BOOL"},
};

const char *srv_dtype_kserve(tc_dtype dt) {
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (k_dtypes[i].dt == dt) return k_dtypes[i].name;
    return NULL;
}

tc_dtype srv_dtype_parse(const char *s, int triton_config) {
    if (!s) return TC_DTYPE_UNDEFINED;
    if (triton_config) {
        if (strncmp(s, "TYPE_", 5) != 0) return TC_DTYPE_UNDEFINED;
        s += 5;
    }
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (strcmp(k_dtypes[i].name, s) == 0) return k_dtypes[i].dt;
    return TC_DTYPE_UNDEFINED;
}

int srv_valid_name(const char *name) {
    if (!name || !*name || strlen(name) >= SRV_NAME_MAX) return 0;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return 1;
}

void srv_metrics_record(srv_model *m, int ok, double us) {
    pthread_mutex_lock(&m->mlock);
    if (ok) m->metrics.success++;
    else m->metrics.failure++;
    for (int b = 0; b < SRV_HIST_BUCKETS; b++)
        if (b == SRV_HIST_BUCKETS - 1 || us <= srv_hist_bounds_us[b]) m->metrics.buckets[b]++;
    m->metrics.sum_us += us;
    pthread_mutex_unlock(&m->mlock);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap > (1u << 24)) { free(buf); buf = NULL; break; } /* config.json above 16 MiB: refuse */
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    if (buf) { buf[n] = '\0'; *len = n; }
    return buf;
}

/* A config input/output entry after parsing. */
typedef struct cfg_io {
    const char *name;
    tc_dtype dt;
    int rank; /* -1: dims not given */
    int64_t dims[TC_MAX_RANK];
} cfg_io;

typedef struct cfg {
    int max_batch_size;
    int n_in, n_out;
    cfg_io in[SRV_MAX_IO], out[SRV_MAX_IO];
} cfg;

static int parse_io_array(const cJSON *root, const char *key, cfg_io *ios, int *n, const char *path) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    *n = 0;
    if (!arr) return 0;
    if (!cJSON_IsArray(arr)) {
        fprintf(stderr, "tailcut serve: %s: field \"%s\" must be an array\n", path, key);
        return 1;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (i >= SRV_MAX_IO) {
            fprintf(stderr, "tailcut serve: %s: field \"%s\" has more than %d entries\n", path, key, SRV_MAX_IO);
            return 1;
        }
        cfg_io *c = &ios[i];
        memset(c, 0, sizeof *c);
        c->rank = -1;
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsObject(e) || !cJSON_IsString(nm)) {
            fprintf(stderr, "tailcut serve: %s: field \"%s[%d].name\" missing or not a string\n", path, key, i);
            return 1;
        }
        c->name = nm->valuestring;
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "data_type");
        if (dt) {
            c->dt = cJSON_IsString(dt) ? srv_dtype_parse(dt->valuestring, 1) : TC_DTYPE_UNDEFINED;
            if (c->dt == TC_DTYPE_UNDEFINED) {
                fprintf(stderr, "tailcut serve: %s: field \"%s[%d].data_type\" is not a known type (e.g. \"TYPE_FP32\")\n",
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
                if (r >= TC_MAX_RANK || !cJSON_IsNumber(d) || d->valuedouble != (double)(int64_t)d->valuedouble ||
                    (d->valuedouble < 1 && d->valuedouble != -1) || d->valuedouble > 1e12)
                    goto bad_dims;
                c->dims[r++] = (int64_t)d->valuedouble;
            }
            c->rank = r;
        }
        i++;
        continue;
    bad_dims:
        fprintf(stderr, "tailcut serve: %s: field \"%s[%d].dims\" must be an array of at most %d integers (>= 1 or -1)\n",
                path, key, i, TC_MAX_RANK);
        return 1;
    }
    *n = i;
    return 0;
}

/* Checks config entries against the model's io; the model's rank includes the batch dim when mbs > 0. */
static int check_io(const cfg_io *c, int nc, const tc_io_info *io, int nio, int mbs, const char *key, const char *path) {
    for (int i = 0; i < nc; i++) {
        const tc_io_info *m = NULL;
        for (int k = 0; k < nio; k++)
            if (strcmp(io[k].name, c[i].name) == 0) m = &io[k];
        if (!m) {
            fprintf(stderr, "tailcut serve: %s: field \"%s[%d].name\": the model has no %s named '%s'\n", path, key, i,
                    strcmp(key, "input") == 0 ? "input" : "output", c[i].name);
            return 1;
        }
        if (c[i].dt != TC_DTYPE_UNDEFINED && c[i].dt != m->dtype) {
            fprintf(stderr, "tailcut serve: %s: field \"%s[%d].data_type\": the model's '%s' is TYPE_%s\n", path, key, i,
                    m->name, srv_dtype_kserve(m->dtype) ? srv_dtype_kserve(m->dtype) : "?");
            return 1;
        }
        if (c[i].rank >= 0 && m->rank >= 0) {
            int off = mbs > 0 ? 1 : 0;
            int ok = c[i].rank + off == m->rank;
            for (int d = 0; ok && d < c[i].rank; d++) {
                int64_t md = m->dims[d + off], cd = c[i].dims[d];
                if (md >= 0 && cd >= 0 && md != cd) ok = 0;
            }
            if (!ok) {
                fprintf(stderr, "tailcut serve: %s: field \"%s[%d].dims\" does not match the model's '%s' (rank %d%s)\n",
                        path, key, i, m->name, (int)m->rank, mbs > 0 ? ", batch dim included" : "");
                return 1;
            }
        }
    }
    return 0;
}

static int parse_config(const char *path, cJSON **root_out, cfg *c) {
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "tailcut serve: %s: cannot read: %s\n", path, strerror(errno));
        return 1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        fprintf(stderr, "tailcut serve: %s: not a valid JSON object\n", path);
        cJSON_Delete(root);
        return 1;
    }
    memset(c, 0, sizeof *c);
    const cJSON *mbs = cJSON_GetObjectItemCaseSensitive(root, "max_batch_size");
    if (!cJSON_IsNumber(mbs) || mbs->valuedouble < 0 || mbs->valuedouble > 1e6 ||
        mbs->valuedouble != (double)(int)mbs->valuedouble) {
        fprintf(stderr, "tailcut serve: %s: field \"max_batch_size\" missing or not an integer >= 0\n", path);
        cJSON_Delete(root);
        return 1;
    }
    c->max_batch_size = (int)mbs->valuedouble;
    if (parse_io_array(root, "input", c->in, &c->n_in, path) ||
        parse_io_array(root, "output", c->out, &c->n_out, path)) {
        cJSON_Delete(root);
        return 1;
    }
    *root_out = root;
    return 0;
}

/* Builds an engine from an .onnx: static dims from config or the model, symbolic batch dim in
 * [1, max(1, max_batch_size)] (opt 1), any other symbolic dim must be given in config. */
static int build_onnx(const char *onnx, const char *plan, const cfg *c, const char *cfg_path, int threads,
                      tc_engine **engine) {
    tc_error err;
    tc_model *model = NULL;
    if (tc_model_load(onnx, NULL, &model, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut serve: %s: %s\n", onnx, err.message);
        return 1;
    }
    int rc = 1;
    int n = tc_model_num_inputs(model), no = tc_model_num_outputs(model);
    static tc_io_info in[SRV_MAX_IO], out[SRV_MAX_IO];
    tc_input_range ranges[SRV_MAX_IO];
    if (n > SRV_MAX_IO || no > SRV_MAX_IO) {
        fprintf(stderr, "tailcut serve: %s: more than %d inputs or outputs\n", onnx, SRV_MAX_IO);
        goto done;
    }
    for (int k = 0; k < n; k++) tc_model_input_info(model, k, &in[k]);
    for (int k = 0; k < no; k++) tc_model_output_info(model, k, &out[k]);
    if (check_io(c->in, c->n_in, in, n, c->max_batch_size, "input", cfg_path) ||
        check_io(c->out, c->n_out, out, no, c->max_batch_size, "output", cfg_path))
        goto done;
    int64_t maxb = c->max_batch_size > 0 ? c->max_batch_size : 1;
    for (int k = 0; k < n; k++) {
        tc_input_range *r = &ranges[k];
        memset(r, 0, sizeof *r);
        r->name = in[k].name;
        r->rank = in[k].rank;
        if (in[k].rank < 0) {
            fprintf(stderr, "tailcut serve: %s: input '%s' has an unknown rank\n", onnx, in[k].name);
            goto done;
        }
        const cfg_io *ci = NULL;
        for (int j = 0; j < c->n_in; j++)
            if (strcmp(c->in[j].name, in[k].name) == 0 && c->in[j].rank >= 0) ci = &c->in[j];
        int off = c->max_batch_size > 0 ? 1 : 0;
        for (int d = 0; d < in[k].rank; d++) {
            int64_t v = in[k].dims[d];
            if (ci && d >= off && ci->dims[d - off] > 0) v = ci->dims[d - off];
            if (v >= 0) {
                r->min[d] = r->opt[d] = r->max[d] = v;
            } else if (d == 0) {
                r->min[d] = 1;
                r->opt[d] = 1;
                r->max[d] = maxb;
            } else {
                fprintf(stderr, "tailcut serve: %s: field \"input\": dim %d of '%s' is dynamic in the model: give \"dims\"\n",
                        cfg_path, d, in[k].name);
                goto done;
            }
        }
    }
    tc_profile prof = {.num_inputs = n, .inputs = ranges};
    tc_build_options o = {.struct_size = sizeof o, .threads = threads, .num_profiles = 1, .profiles = &prof,
                          .flags = TC_BUILD_TACTICS_FIXED};
    if (tc_engine_build(model, &o, engine, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut serve: %s: %s\n", onnx, err.message);
        goto done;
    }
    if (tc_engine_save(*engine, plan, &err) != TC_STATUS_OK)
        fprintf(stderr, "tailcut serve: note: cannot cache %s: %s\n", plan, err.message);
    rc = 0;
done:
    tc_model_destroy(model);
    return rc;
}

static int load_model(srv_repo *repo, const char *dir, const char *name, int threads) {
    char cfg_path[4096], plan[4096], onnx[4096];
    snprintf(cfg_path, sizeof cfg_path, "%s/%s/config.json", dir, name);
    snprintf(plan, sizeof plan, "%s/%s/1/model.plan", dir, name);
    snprintf(onnx, sizeof onnx, "%s/%s/1/model.onnx", dir, name);
    cJSON *root = NULL;
    static cfg c;
    if (parse_config(cfg_path, &root, &c)) return 1;
    srv_model *m = calloc(1, sizeof *m);
    if (!m) { cJSON_Delete(root); return 1; }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->max_batch_size = c.max_batch_size;
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->mlock, NULL);
    /* Register first so srv_repo_free releases it on any failure below. */
    srv_model **nm = realloc(repo->models, (size_t)(repo->n + 1) * sizeof *nm);
    if (!nm) { free(m); cJSON_Delete(root); return 1; }
    repo->models = nm;
    repo->models[repo->n++] = m;
    tc_error err;
    int rc = 1;
    if (file_exists(plan)) {
        if (tc_engine_load(plan, &m->engine, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut serve: %s: %s\n", plan, err.message);
            goto done;
        }
    } else if (file_exists(onnx)) {
        fprintf(stderr, "tailcut serve: building %s (cached as %s)\n", onnx, plan);
        if (build_onnx(onnx, plan, &c, cfg_path, threads, &m->engine)) goto done;
    } else {
        fprintf(stderr, "tailcut serve: %s/%s: neither 1/model.plan nor 1/model.onnx exists\n", dir, name);
        goto done;
    }
    m->n_in = tc_engine_num_inputs(m->engine);
    m->n_out = tc_engine_num_outputs(m->engine);
    if (m->n_in > SRV_MAX_IO || m->n_out > SRV_MAX_IO || m->n_in < 0 || m->n_out < 0) {
        fprintf(stderr, "tailcut serve: %s: more than %d inputs or outputs\n", plan, SRV_MAX_IO);
        goto done;
    }
    for (int k = 0; k < m->n_in; k++) tc_engine_input_info(m->engine, k, &m->in[k]);
    for (int k = 0; k < m->n_out; k++) tc_engine_output_info(m->engine, k, &m->out[k]);
    if (check_io(c.in, c.n_in, m->in, m->n_in, c.max_batch_size, "input", cfg_path) ||
        check_io(c.out, c.n_out, m->out, m->n_out, c.max_batch_size, "output", cfg_path))
        goto done;
    if (tc_context_create(m->engine, 0, &m->context, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut serve: model '%s': %s\n", name, err.message);
        goto done;
    }
    fprintf(stderr, "tailcut serve: model '%s' ready (%d inputs, %d outputs)\n", name, m->n_in, m->n_out);
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int srv_repo_load(srv_repo *repo, const char *dir, int engine_threads) {
    memset(repo, 0, sizeof *repo);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "tailcut serve: --model-repository %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/config.json", dir, e->d_name);
        if (!file_exists(p)) continue;
        if (!srv_valid_name(e->d_name)) {
            fprintf(stderr, "tailcut serve: %s/%s: model names may only use [A-Za-z0-9_.-]\n", dir, e->d_name);
            rc = 1;
            break;
        }
        char **nn = realloc(names, (size_t)(n + 1) * sizeof *nn);
        if (!nn || !(nn[n] = strdup(e->d_name))) { names = nn ? nn : names; rc = 1; break; }
        names = nn;
        n++;
    }
    closedir(d);
    if (rc == 0 && n > 1) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; rc == 0 && i < n; i++) rc = load_model(repo, dir, names[i], engine_threads);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc == 0 && repo->n == 0) {
        fprintf(stderr, "tailcut serve: %s: no model folders with a config.json\n", dir);
        rc = 1;
    }
    if (rc) srv_repo_free(repo);
    return rc;
}

void srv_repo_free(srv_repo *repo) {
    for (int i = 0; i < repo->n; i++) {
        srv_model *m = repo->models[i];
        tc_context_destroy(m->context);
        tc_engine_destroy(m->engine);
        pthread_mutex_destroy(&m->lock);
        pthread_mutex_destroy(&m->mlock);
        free(m);
    }
    free(repo->models);
    memset(repo, 0, sizeof *repo);
}

srv_model *srv_repo_find(const srv_repo *repo, const char *name) {
    for (int i = 0; i < repo->n; i++)
        if (strcmp(repo->models[i]->name, name) == 0) return repo->models[i];
    return NULL;
}
