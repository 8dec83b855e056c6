/* repo.h - the model repository of `tailcut serve`: for every DIR/<model>/config.json, its engine
 * (1/model.plan, or 1/model.onnx built and cached as the plan), its instances (one context and one
 * thread each), its request queue and its metrics. */
#ifndef TC_SERVER_REPO_H
#define TC_SERVER_REPO_H

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "request.h"
#include "tailcut/tailcut.h"

typedef struct srv_instance {
    struct srv_model *model;
    tc_context *ctx;
    pthread_t thread;
    int started;
    void *staging[SRV_MAX_IO]; /* 64-byte aligned input buffers for gathered batches, profile max size */
    size_t staging_bytes[SRV_MAX_IO];
    srv_request **batch;       /* requests of the batch being run (max_batch_size + 1 entries) */
} srv_instance;

typedef struct srv_model {
    char name[SRV_NAME_MAX];
    srv_config cfg;
    tc_engine *engine;
    int n_in, n_out;
    tc_io_info in[SRV_MAX_IO], out[SRV_MAX_IO]; /* strings belong to the engine */
    tc_input_range range[SRV_MAX_IO];           /* profile 0 range of each input */
    int64_t max_values;                         /* most numbers a valid JSON request can hold */
    srv_metrics metrics;
    /* queue (batcher.c) */
    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    srv_request *qhead[SRV_MAX_PRIORITY_LEVELS], *qtail[SRV_MAX_PRIORITY_LEVELS]; /* srv_config_levels() used */
    int64_t qlen;
    int stopping;
    int n_inst;
    bool on_gpu;        /* the plan runs on the CUDA backend (instance_group KIND_GPU) */
    srv_instance *inst;
} srv_model;

typedef struct srv_repo {
    srv_model **models;
    int n;
} srv_repo;

/* Loads every model and starts its instances; on failure prints a message naming the file and field
 * and returns non-zero. engine_threads > 0 overrides the per-instance thread count. */
int srv_repo_load(srv_repo *repo, const char *dir, int engine_threads);
/* Stops every model's instances after they finished the queued requests. */
void srv_repo_stop(srv_repo *repo);
void srv_repo_free(srv_repo *repo);
srv_model *srv_repo_find(const srv_repo *repo, const char *name);
/* True when name is a valid model name ([A-Za-z0-9_.-]+, not "." or ".."). */
int srv_valid_name(const char *name);
/* KServe datatype ("FP32", ...) of a dtype, or NULL. */
const char *srv_dtype_kserve(tc_dtype dt);
/* dtype of a KServe datatype name (prefix "TYPE_" required when triton_config), or UNDEFINED. */
tc_dtype srv_dtype_parse(const char *s, int triton_config);

#endif
