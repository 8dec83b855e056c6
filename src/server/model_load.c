/* model_load.c - loading one model of the repository for `tailcut serve` (see model_load.h): validates config.json
 * against the model, loads 1/model.plan or builds 1/model.onnx (caching the plan; a cached plan that is corrupt, for
 * another machine, older than model.onnx or at odds with config.json is rebuilt when model.onnx is beside it),
 * creates the instances (one context, thread count and staging buffers each) and starts the batcher. Failures are
 * recorded with srv_fail, naming the file and field. */
#include "model_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batcher.h"

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* True when a is modified later than b (both exist). */
static int newer_than(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    if (sa.st_mtim.tv_sec != sb.st_mtim.tv_sec) return sa.st_mtim.tv_sec > sb.st_mtim.tv_sec;
    return sa.st_mtim.tv_nsec > sb.st_mtim.tv_nsec;
}

/* Records "FILE: message", or the library's message alone when it names the file already. */
static int fail_file(const char *path, const char *msg) {
    return strstr(msg, path) ? srv_fail("%s", msg) : srv_fail("%s: %s", path, msg);
}

/* Checks config entries against the model's io; the model's rank includes the batch dim when mbs > 0. */
static int check_io(const srv_cfg_io *c, int nc, const tc_io_info *io, int nio, int mbs, const char *key, const char *path) {
    for (int i = 0; i < nc; i++) {
        const tc_io_info *m = NULL;
        for (int k = 0; k < nio; k++)
            if (strcmp(io[k].name, c[i].name) == 0) m = &io[k];
        if (!m)
            return srv_fail("%s: field \"%s[%d].name\": the model has no %s named '%s'", path, key, i,
                            strcmp(key, "input") == 0 ? "input" : "output", c[i].name);
        if (c[i].dt != TC_DTYPE_UNDEFINED && c[i].dt != m->dtype)
            return srv_fail("%s: field \"%s[%d].data_type\": the model's '%s' is TYPE_%s", path, key, i, m->name,
                            srv_dtype_kserve(m->dtype) ? srv_dtype_kserve(m->dtype) : "?");
        if (c[i].rank >= 0 && m->rank >= 0) {
            int off = mbs > 0 ? 1 : 0;
            int ok = c[i].rank + off == m->rank;
            for (int d = 0; ok && d < c[i].rank; d++) {
                int64_t md = m->dims[d + off], cd = c[i].dims[d];
                if (md >= 0 && cd >= 0 && md != cd) ok = 0;
            }
            if (!ok)
                return srv_fail("%s: field \"%s[%d].dims\" does not match the model's '%s' (rank %d%s)", path, key, i,
                                m->name, (int)m->rank, mbs > 0 ? ", batch dim included" : "");
        }
    }
    return 0;
}

/* Saves the plan beside its final name and renames it over: a plan mapped by a loaded engine of the same model is
 * never truncated under it (the old file stays alive until unmapped). */
static void cache_plan(const tc_engine *engine, const char *plan) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", plan, (long)getpid());
    tc_error err;
    if (tc_engine_save(engine, tmp, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut serve: note: cannot cache %s: %s\n", plan, err.message);
        unlink(tmp);
        return;
    }
    if (rename(tmp, plan) != 0) {
        fprintf(stderr, "tailcut serve: note: cannot cache %s: %s\n", plan, strerror(errno));
        unlink(tmp);
    }
}

/* Shape ranges of the build: static dims from config or the model, symbolic batch dim in [1, max(1,
 * max_batch_size)], any other symbolic dim must be given in config. */
static int build_ranges(const tc_io_info *in, int n, const srv_config *c, const char *onnx, const char *cfg_path,
                        tc_input_range *ranges) {
    int64_t maxb = c->max_batch_size > 0 ? c->max_batch_size : 1;
    for (int k = 0; k < n; k++) {
        tc_input_range *r = &ranges[k];
        memset(r, 0, sizeof *r);
        r->name = in[k].name;
        r->rank = in[k].rank;
        if (in[k].rank < 0) return srv_fail("%s: input '%s' has an unknown rank", onnx, in[k].name);
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
                return srv_fail("%s: field \"input\": dim %d of '%s' is dynamic in the model: give \"dims\"", cfg_path, d,
                                in[k].name);
            }
        }
    }
    return 0;
}

/* Builds an engine from an .onnx and caches it as plan. */
static int build_onnx(const char *onnx, const char *plan, const char *calib, const srv_config *c, const char *cfg_path,
                      int threads, tc_engine **engine) {
    tc_error err;
    tc_model *model = NULL;
    if (tc_model_load(onnx, NULL, &model, &err) != TC_STATUS_OK) return fail_file(onnx, err.message);
    const char *warning;
    for (int i = 0; (warning = tc_model_warning(model, i)) != NULL; i++)
        fprintf(stderr, "tailcut serve: %s: warning: %s\n", onnx, warning);
    int rc = 1;
    int n = tc_model_num_inputs(model), no = tc_model_num_outputs(model);
    tc_io_info *in = calloc(SRV_MAX_IO, sizeof *in), *out = calloc(SRV_MAX_IO, sizeof *out);
    tc_input_range *ranges = calloc(SRV_MAX_IO, sizeof *ranges);
    if (!in || !out || !ranges) {
        srv_fail("%s: out of memory", onnx);
        goto done;
    }
    if (n > SRV_MAX_IO || no > SRV_MAX_IO) {
        srv_fail("%s: more than %d inputs or outputs", onnx, SRV_MAX_IO);
        goto done;
    }
    for (int k = 0; k < n; k++) tc_model_input_info(model, k, &in[k]);
    for (int k = 0; k < no; k++) tc_model_output_info(model, k, &out[k]);
    if (check_io(c->in, c->n_in, in, n, c->max_batch_size, "input", cfg_path) ||
        check_io(c->out, c->n_out, out, no, c->max_batch_size, "output", cfg_path) ||
        build_ranges(in, n, c, onnx, cfg_path, ranges))
        goto done;
    tc_profile prof = {.num_inputs = n, .inputs = ranges};
    tc_build_options o = {.struct_size = sizeof o, .threads = threads, .num_profiles = 1, .profiles = &prof,
                          .flags = (c->tactics_fixed ? TC_BUILD_TACTICS_FIXED : 0u) | (c->int8 ? TC_BUILD_INT8 : 0u) |
                                   (c->fp16 ? TC_BUILD_FP16 : 0u) | (c->bf16 ? TC_BUILD_BF16 : 0u) |
                                   (c->int8_reduce_range ? TC_BUILD_INT8_REDUCE_RANGE : 0u),
                          .calib_cache = c->int8 ? calib : NULL,
                          .backend = c->instance_kind == SRV_KIND_GPU ? "cuda" : NULL};
    if (tc_engine_build(model, &o, engine, &err) != TC_STATUS_OK) {
        fail_file(onnx, err.message);
        goto done;
    }
    cache_plan(*engine, plan);
    rc = 0;
done:
    free(in);
    free(out);
    free(ranges);
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
    if (m->n_in > SRV_MAX_IO || m->n_out > SRV_MAX_IO || m->n_in < 0 || m->n_out < 0)
        return srv_fail("%s: more than %d inputs or outputs", what, SRV_MAX_IO);
    int64_t values = 1024;
    for (int k = 0; k < m->n_in; k++) {
        tc_engine_input_info(m->engine, k, &m->in[k]);
        if (tc_engine_profile_range(m->engine, 0, k, &m->range[k]) != TC_STATUS_OK || m->range[k].rank < 0)
            return srv_fail("%s: input '%s' has no shape range", what, m->in[k].name);
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
            if (r->rank < 1 || r->min[0] > 1 || r->max[0] < m->cfg.max_batch_size)
                return srv_fail("model '%s': field \"max_batch_size\" is %d but the plan's input '%s' takes batches "
                                "(dim 0) of %lld..%lld only", m->name, m->cfg.max_batch_size, m->in[k].name,
                                r->rank > 0 ? (long long)r->min[0] : 0LL, r->rank > 0 ? (long long)r->max[0] : 0LL);
        }
    }
    m->max_values = values;
    for (int k = 0; k < m->n_out; k++) tc_engine_output_info(m->engine, k, &m->out[k]);
    return 0;
}

/* Checks a loaded engine against the config: backend kind, batch range, inputs and outputs. */
static int adopt_engine(srv_model *m, const char *plan, const char *cfg_path) {
    const srv_config *c = &m->cfg;
    tc_target_info ti;
    if (tc_engine_target_info(m->engine, &ti) != TC_STATUS_OK) return srv_fail("%s: cannot read the plan's target", plan);
    const bool on_gpu = strcmp(ti.backend, "cuda") == 0;
    if ((c->instance_kind == SRV_KIND_GPU && !on_gpu) || (c->instance_kind == SRV_KIND_CPU && on_gpu))
        return srv_fail("%s: instance_group asks for %s but %s was built for the %s backend: rebuild it with tailcut "
                        "build --backend %s, or change the kind", cfg_path,
                        c->instance_kind == SRV_KIND_GPU ? "KIND_GPU" : "KIND_CPU", plan, ti.backend,
                        on_gpu ? "cpu" : "cuda");
    m->on_gpu = on_gpu;
    if (describe_engine(m, plan)) return 1;
    return check_io(c->in, c->n_in, m->in, m->n_in, c->max_batch_size, "input", cfg_path) ||
           check_io(c->out, c->n_out, m->out, m->n_out, c->max_batch_size, "output", cfg_path);
}

/* Threads per instance: the CLI's --engine-threads, else config, else the CPU budget / (instances x models): the
 * models of one repository share the cores by default, so that two of them busy at once do not oversubscribe the
 * machine (a kernel's threads meet at the end of every step, and one that is descheduled holds up the others: a model
 * of 1 ms took seconds on two cores claimed twice over). */
static int instance_threads(const srv_config *c, int threads_override, int models) {
    int n = (c->instance_count > 0 ? c->instance_count : 1) * (models > 1 ? models : 1);
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
    if (!m->inst) return srv_fail("model '%s': out of memory", m->name);
    m->n_inst = n;
    int max_rows = m->cfg.max_batch_size > 0 ? m->cfg.max_batch_size : 1;
    for (int i = 0; i < n; i++) {
        srv_instance *inst = &m->inst[i];
        inst->model = m;
        tc_error err;
        if (tc_context_create(m->engine, 0, &inst->ctx, &err) != TC_STATUS_OK)
            return srv_fail("model '%s': %s", m->name, err.message);
        if (tc_context_set_threads(inst->ctx, threads) != TC_STATUS_OK)
            return srv_fail("model '%s': %s", m->name, tc_context_error(inst->ctx));
        inst->batch = calloc((size_t)max_rows + 1, sizeof *inst->batch);
        if (!inst->batch) return srv_fail("model '%s': out of memory", m->name);
        for (int k = 0; k < m->n_in; k++) {
            const tc_input_range *r = &m->range[k];
            size_t bytes = tc_dtype_size(m->in[k].dtype);
            for (int d = 0; d < r->rank; d++) {
                if (r->max[d] < 0 || (r->max[d] > 0 && bytes > SIZE_MAX / 2 / (size_t)r->max[d]))
                    return srv_fail("model '%s': input '%s' is too large", m->name, m->in[k].name);
                bytes *= (size_t)r->max[d];
            }
            inst->staging[k] = aligned_alloc64(bytes);
            inst->staging_bytes[k] = bytes;
            if (!inst->staging[k]) return srv_fail("model '%s': out of memory for input buffers", m->name);
        }
    }
    return 0;
}

/* Finds the engine: the cached plan when it is usable, else a build of model.onnx (also when the plan is stale or
 * corrupt and model.onnx is beside it). */
static int open_engine(srv_model *m, const char *dir, const char *name, const char *cfg_path, int threads) {
    char plan[4096], onnx[4096], calib[4400];
    snprintf(plan, sizeof plan, "%s/%s/1/model.plan", dir, name);
    snprintf(onnx, sizeof onnx, "%s/%s/1/model.onnx", dir, name);
    snprintf(calib, sizeof calib, "%s/%s/1/%s", dir, name, m->cfg.calib_cache);
    const int have_onnx = file_exists(onnx);
    if (file_exists(plan)) {
        tc_error err;
        if (have_onnx && newer_than(onnx, plan)) {
            fprintf(stderr, "tailcut serve: model '%s': %s is older than model.onnx beside it: rebuilding\n", name, plan);
        } else if (tc_engine_load(plan, &m->engine, &err) != TC_STATUS_OK) {
            m->engine = NULL;
            if (!have_onnx) return fail_file(plan, err.message);
            fprintf(stderr, "tailcut serve: model '%s': cannot use the cached %s (%s): rebuilding it from model.onnx\n",
                    name, plan, err.message);
        } else if (adopt_engine(m, plan, cfg_path)) {
            tc_engine_destroy(m->engine);
            m->engine = NULL;
            if (!have_onnx) return 1;
            fprintf(stderr, "tailcut serve: model '%s': the cached %s does not fit config.json (%s): rebuilding it from "
                    "model.onnx\n", name, plan, srv_fail_reason());
        } else {
            return 0;
        }
    } else if (!have_onnx) {
        return srv_fail("%s/%s: neither 1/model.plan nor 1/model.onnx exists", dir, name);
    } else {
        fprintf(stderr, "tailcut serve: building %s (cached as %s)\n", onnx, plan);
    }
    if (build_onnx(onnx, plan, calib, &m->cfg, cfg_path, threads, &m->engine)) return 1;
    return adopt_engine(m, plan, cfg_path);
}

srv_model *srv_model_load(const char *dir, const char *name, int engine_threads, int models, srv_metrics *metrics) {
    char cfg_path[4096];
    snprintf(cfg_path, sizeof cfg_path, "%s/%s/config.json", dir, name);
    srv_fail_clear();
    srv_model *m = calloc(1, sizeof *m);
    if (!m) {
        srv_fail("model '%s': out of memory", name);
        return NULL;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->metrics = metrics;
    atomic_init(&m->refs, 1);
    if (srv_batcher_init(m)) {
        free(m);
        srv_fail("model '%s': cannot create its queue", name);
        return NULL;
    }
    /* From here srv_model_free releases whatever was made. */
    const srv_config *c = &m->cfg;
    if (srv_config_parse(cfg_path, &m->cfg)) {
        srv_model_free(m);
        return NULL;
    }
    const int threads = instance_threads(c, engine_threads, models);
    if (open_engine(m, dir, name, cfg_path, threads) || create_instances(m, threads) || srv_batcher_start(m)) {
        srv_model_free(m);
        return NULL;
    }
    tc_cpu_budget_info b;
    tc_cpu_budget(&b);
    char how[64];
    if (engine_threads > 0 || c->engine_threads > 0)
        snprintf(how, sizeof how, "%s", engine_threads > 0 ? "--engine-threads" : "config");
    else if (models > 1)
        snprintf(how, sizeof how, "budget / instances / %d models", models);
    else
        snprintf(how, sizeof how, "budget / instances");
    fprintf(stderr, "tailcut serve: model '%s' ready (%d inputs, %d outputs%s; %d instance(s) x %d thread(s), %s; CPU "
            "budget %d from %s)\n", name, m->n_in, m->n_out, c->dynamic_batching ? ", dynamic batching" : "", m->n_inst,
            threads, how, b.cpus, b.source);
    return m;
}

void srv_model_stop(srv_model *m) { srv_batcher_stop(m); }

void srv_model_free(srv_model *m) {
    if (!m) return;
    srv_batcher_stop(m);
    for (int j = 0; j < m->n_inst; j++) {
        srv_instance *inst = &m->inst[j];
        tc_context_destroy(inst->ctx);
        for (int k = 0; k < SRV_MAX_IO; k++) free(inst->staging[k]);
        free(inst->batch);
    }
    free(m->inst);
    tc_engine_destroy(m->engine);
    srv_batcher_destroy(m);
    free(m);
}
