/* repo.c - model repository loading for `tailcut serve`: validates config.json against the model,
 * loads 1/model.plan or builds 1/model.onnx (caching the plan), creates the model's instances (one
 * context, thread count and staging buffers each) and starts its batcher. */
#include "repo.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batcher.h"

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

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Checks config entries against the model's io; the model's rank includes the batch dim when mbs > 0. */
static int check_io(const srv_cfg_io *c, int nc, const tc_io_info *io, int nio, int mbs, const char *key, const char *path) {
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

/* Builds an engine from an .onnx: static dims from config or the model, symbolic batch dim in
 * [1, max(1, max_batch_size)] (opt 1), any other symbolic dim must be given in config. */
static int build_onnx(const char *onnx, const char *plan, const char *calib, const srv_config *c, const char *cfg_path,
                      int threads, tc_engine **engine) {
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
        const srv_cfg_io *ci = NULL;
        for (int j = 0; j < c->n_in; j++)
            if (strcmp(c->in[j].name, in[k].name) == 0 && c->in[j].rank >= 0) ci = &c->in[j];
        int off = c->max_batch_size > 0 ? 1 : 0;
        for (int d = 0; d < in[k].rank; d++) {
            int64_t v = in[k].dims[d];
            if (ci && d >= off && ci->dims[d - off] > 0) v = ci->dims[d - off];
            if (v >= 0) {
                r->min[d] = r->opt[d] = r->max[d] = v;
            } else if (d == 0) {
                /* Tune for the batches the batcher aims at. */
                r->min[d] = 1;
                r->opt[d] = c->dynamic_batching ? (c->n_preferred ? c->preferred[c->n_preferred - 1] : maxb) : 1;
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
                          .flags = (c->tactics_fixed ? TC_BUILD_TACTICS_FIXED : 0u) | (c->int8 ? TC_BUILD_INT8 : 0u) |
                                   (c->fp16 ? TC_BUILD_FP16 : 0u) | (c->bf16 ? TC_BUILD_BF16 : 0u) |
                                   (c->int8_reduce_range ? TC_BUILD_INT8_REDUCE_RANGE : 0u),
                          .calib_cache = c->int8 ? calib : NULL,
                          .backend = c->instance_kind == SRV_KIND_GPU ? "cuda" : NULL};
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

static void *aligned_alloc64(size_t n) {
    size_t r = (n + 63) & ~(size_t)63;
    return aligned_alloc(64, r ? r : 64);
}

/* Profile-0 ranges, the JSON number bound and the batch checks of a loaded engine. */
static int describe_engine(srv_model *m, const char *what) {
    m->n_in = tc_engine_num_inputs(m->engine);
    m->n_out = tc_engine_num_outputs(m->engine);
    if (m->n_in > SRV_MAX_IO || m->n_out > SRV_MAX_IO || m->n_in < 0 || m->n_out < 0) {
        fprintf(stderr, "tailcut serve: %s: more than %d inputs or outputs\n", what, SRV_MAX_IO);
        return 1;
    }
    int64_t values = 1024;
    for (int k = 0; k < m->n_in; k++) {
        tc_engine_input_info(m->engine, k, &m->in[k]);
        if (tc_engine_profile_range(m->engine, 0, k, &m->range[k]) != TC_STATUS_OK || m->range[k].rank < 0) {
            fprintf(stderr, "tailcut serve: %s: input '%s' has no shape range\n", what, m->in[k].name);
            return 1;
        }
        /* Elements at the profile's max shape, saturating at 2^40 (far above any body limit). */
        const int64_t cap = INT64_C(1) << 40;
        int64_t n = 1;
        for (int d = 0; d < m->range[k].rank; d++) {
            int64_t dim = m->range[k].max[d];
            n = dim > 0 && n > cap / dim ? cap : n * dim;
        }
        values += n;
        if (m->cfg.max_batch_size > 0) {
            const tc_input_range *r = &m->range[k];
            if (r->rank < 1 || r->min[0] > 1 || r->max[0] < m->cfg.max_batch_size) {
                fprintf(stderr,
                        "tailcut serve: model '%s': field \"max_batch_size\" is %d but the plan's input '%s' takes "
                        "batches (dim 0) of %lld..%lld only\n",
                        m->name, m->cfg.max_batch_size, m->in[k].name, r->rank > 0 ? (long long)r->min[0] : 0LL,
                        r->rank > 0 ? (long long)r->max[0] : 0LL);
                return 1;
            }
        }
    }
    m->max_values = values;
    for (int k = 0; k < m->n_out; k++) tc_engine_output_info(m->engine, k, &m->out[k]);
    return 0;
}

/* Threads per instance: the CLI's --engine-threads, else config, else the CPU budget / instances. */
static int instance_threads(const srv_config *c, int threads_override) {
    int n = c->instance_count > 0 ? c->instance_count : 1;
    tc_cpu_budget_info b;
    tc_cpu_budget(&b);
    long cores = b.cpus;
    int threads = threads_override > 0 ? threads_override : c->engine_threads;
    if (threads <= 0) threads = (int)(cores / n > 0 ? cores / n : 1); /* no oversubscription by default */
    return threads;
}

/* Creates the model's instances: a context each, its thread count and its staging buffers. */
static int create_instances(srv_model *m, int threads) {
    int n = m->cfg.instance_count > 0 ? m->cfg.instance_count : 1;
    m->inst = calloc((size_t)n, sizeof *m->inst);
    if (!m->inst) return 1;
    m->n_inst = n;
    int max_rows = m->cfg.max_batch_size > 0 ? m->cfg.max_batch_size : 1;
    for (int i = 0; i < n; i++) {
        srv_instance *inst = &m->inst[i];
        inst->model = m;
        tc_error err;
        if (tc_context_create(m->engine, 0, &inst->ctx, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut serve: model '%s': %s\n", m->name, err.message);
            return 1;
        }
        if (tc_context_set_threads(inst->ctx, threads) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut serve: model '%s': %s\n", m->name, tc_context_error(inst->ctx));
            return 1;
        }
        inst->batch = calloc((size_t)max_rows + 1, sizeof *inst->batch);
        if (!inst->batch) return 1;
        for (int k = 0; k < m->n_in; k++) {
            const tc_input_range *r = &m->range[k];
            size_t bytes = tc_dtype_size(m->in[k].dtype);
            for (int d = 0; d < r->rank; d++) {
                if (r->max[d] < 0 || (r->max[d] > 0 && bytes > SIZE_MAX / 2 / (size_t)r->max[d])) {
                    fprintf(stderr, "tailcut serve: model '%s': input '%s' is too large\n", m->name, m->in[k].name);
                    return 1;
                }
                bytes *= (size_t)r->max[d];
            }
            inst->staging[k] = aligned_alloc64(bytes);
            inst->staging_bytes[k] = bytes;
            if (!inst->staging[k]) {
                fprintf(stderr, "tailcut serve: model '%s': out of memory for input buffers\n", m->name);
                return 1;
            }
        }
    }
    fprintf(stderr, "tailcut serve: model '%s': %d instance%s x %d thread%s\n", m->name, n, n == 1 ? "" : "s", threads,
            threads == 1 ? "" : "s");
    return 0;
}

static int load_model(srv_repo *repo, const char *dir, const char *name, int threads) {
    char cfg_path[4096], plan[4096], onnx[4096], calib[4400];
    snprintf(cfg_path, sizeof cfg_path, "%s/%s/config.json", dir, name);
    snprintf(plan, sizeof plan, "%s/%s/1/model.plan", dir, name);
    snprintf(onnx, sizeof onnx, "%s/%s/1/model.onnx", dir, name);
    srv_model *m = calloc(1, sizeof *m);
    if (!m) return 1;
    if (srv_config_parse(cfg_path, &m->cfg)) {
        free(m);
        return 1;
    }
    if (srv_metrics_init(&m->metrics)) {
        free(m);
        return 1;
    }
    if (srv_batcher_init(m)) {
        srv_metrics_destroy(&m->metrics);
        free(m);
        return 1;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    /* Register first so srv_repo_free releases it on any failure below. */
    srv_model **nm = realloc(repo->models, (size_t)(repo->n + 1) * sizeof *nm);
    if (!nm) {
        srv_batcher_destroy(m);
        srv_metrics_destroy(&m->metrics);
        free(m);
        return 1;
    }
    repo->models = nm;
    repo->models[repo->n++] = m;
    const srv_config *c = &m->cfg;
    tc_error err;
    if (file_exists(plan)) {
        if (tc_engine_load(plan, &m->engine, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut serve: %s: %s\n", plan, err.message);
            return 1;
        }
    } else if (file_exists(onnx)) {
        fprintf(stderr, "tailcut serve: building %s (cached as %s)\n", onnx, plan);
        snprintf(calib, sizeof calib, "%s/%s/1/%s", dir, name, c->calib_cache);
        if (build_onnx(onnx, plan, calib, c, cfg_path, instance_threads(c, threads), &m->engine)) return 1;
    } else {
        fprintf(stderr, "tailcut serve: %s/%s: neither 1/model.plan nor 1/model.onnx exists\n", dir, name);
        return 1;
    }
    tc_target_info ti;
    if (tc_engine_target_info(m->engine, &ti) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut serve: %s: cannot read the plan's target\n", plan);
        return 1;
    }
    const bool on_gpu = strcmp(ti.backend, "cuda") == 0;
    if ((c->instance_kind == SRV_KIND_GPU && !on_gpu) || (c->instance_kind == SRV_KIND_CPU && on_gpu)) {
        fprintf(stderr, "tailcut serve: %s: instance_group asks for %s but %s was built for the %s backend: rebuild it "
                "with tailcut build --backend %s, or change the kind\n", cfg_path,
                c->instance_kind == SRV_KIND_GPU ? "KIND_GPU" : "KIND_CPU", plan, ti.backend, on_gpu ? "cpu" : "cuda");
        return 1;
    }
    m->on_gpu = on_gpu;
    if (describe_engine(m, plan)) return 1;
    if (check_io(c->in, c->n_in, m->in, m->n_in, c->max_batch_size, "input", cfg_path) ||
        check_io(c->out, c->n_out, m->out, m->n_out, c->max_batch_size, "output", cfg_path))
        return 1;
    if (create_instances(m, instance_threads(c, threads))) return 1;
    if (srv_batcher_start(m)) return 1;
    tc_cpu_budget_info b;
    tc_cpu_budget(&b);
    const int n_inst = c->instance_count > 0 ? c->instance_count : 1, per = instance_threads(c, threads);
    fprintf(stderr, "tailcut serve: model '%s' ready (%d inputs, %d outputs%s; %d instance(s) x %d thread(s), %s; CPU "
            "budget %d from %s)\n", name, m->n_in, m->n_out, c->dynamic_batching ? ", dynamic batching" : "", n_inst, per,
            threads > 0 ? "--engine-threads" : c->engine_threads > 0 ? "config" : "budget / instances", b.cpus,
            b.source);
    return 0;
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

void srv_repo_stop(srv_repo *repo) {
    for (int i = 0; i < repo->n; i++) srv_batcher_stop(repo->models[i]);
}

void srv_repo_free(srv_repo *repo) {
    srv_repo_stop(repo);
    for (int i = 0; i < repo->n; i++) {
        srv_model *m = repo->models[i];
        for (int j = 0; j < m->n_inst; j++) {
            srv_instance *inst = &m->inst[j];
            tc_context_destroy(inst->ctx);
            for (int k = 0; k < SRV_MAX_IO; k++) free(inst->staging[k]);
            free(inst->batch);
        }
        free(m->inst);
        tc_engine_destroy(m->engine);
        srv_batcher_destroy(m);
        srv_metrics_destroy(&m->metrics);
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
