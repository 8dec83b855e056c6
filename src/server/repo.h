/* repo.h - the model repository of `tailcut serve`: for every DIR/<model>/config.json a slot with its state
 * (READY / UNAVAILABLE with a reason, ...), its metrics and its live model: the engine (1/model.plan, or
 * 1/model.onnx built and cached as the plan), its instances (one context and one thread each) and its request
 * queue. Models load, reload and unload independently (Triton's model control); a live model is reference
 * counted so that a reload or an unload never frees an engine a request still uses. */
#ifndef TC_SERVER_REPO_H
#define TC_SERVER_REPO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "reason.h"
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
    srv_metrics *metrics;                       /* the repository slot's: they outlive reloads */
    atomic_int refs;                            /* the slot's reference + one per HTTP request using the model */
    /* queue (batcher.c) */
    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    srv_request *qhead[SRV_MAX_PRIORITY_LEVELS], *qtail[SRV_MAX_PRIORITY_LEVELS]; /* srv_config_levels() used */
    int64_t qlen;
    int stopping;
    pthread_mutex_t jmu; /* serializes the joins of srv_batcher_stop */
    int n_inst;
    bool on_gpu;        /* the plan runs on the CUDA backend (instance_group KIND_GPU) */
    srv_instance *inst;
} srv_model;

/* Model states, as Triton names them in the repository index. */
typedef enum { SRV_UNAVAILABLE = 0, SRV_LOADING, SRV_READY, SRV_UNLOADING } srv_state_t;

/* One model folder of the repository, from the moment it is found until the server exits (never freed before). */
typedef struct srv_slot {
    char name[SRV_NAME_MAX];
    srv_metrics metrics;         /* kept across loads, unloads and reloads */
    /* under srv_repo.mu: */
    srv_model *model;            /* the live model (the slot holds one reference), NULL when not ready */
    srv_state_t state;
    char reason[SRV_REASON_MAX]; /* why it is not ready ("" when ready) */
    bool wanted;                 /* counts for server readiness: loaded at start or by a load request, not unloaded */
} srv_slot;

typedef struct srv_repo {
    char dir[4096];
    int engine_threads;
    pthread_mutex_t mu;  /* slots (array and fields), closing; held briefly, never while loading or draining */
    pthread_mutex_t ctl; /* one load / unload / index scan at a time (held while a model builds) */
    srv_slot **slots;
    int n;
    bool closing;        /* shutting down: a load that finishes now is dropped */
} srv_repo;

/* Opens the repository folder and loads every model folder (DIR/<name>/config.json) on its own: a model that cannot
 * load is logged with its reason and left UNAVAILABLE. Returns non-zero only when DIR cannot be read (or on out of
 * memory). engine_threads > 0 overrides the per-instance thread count. */
int srv_repo_open(srv_repo *repo, const char *dir, int engine_threads);
/* Stops every model's instances after they finished the queued requests (shutdown). */
void srv_repo_stop(srv_repo *repo);
/* Stops and frees everything; no request may still use a model. */
void srv_repo_free(srv_repo *repo);

/* Looks name up. Returns the live model with a reference the caller gives back with srv_model_release, or NULL:
 * then *known says whether the repository has such a model, and when it has, why[0..n) says why it is not ready. */
srv_model *srv_repo_acquire(srv_repo *repo, const char *name, bool *known, char *why, size_t n);
void srv_model_release(srv_model *m);
/* Model control (Triton's repository extension). Load (re)reads DIR/<name>, builds or loads it and makes it live; the
 * model it replaces finishes its queued requests first and is freed when no request uses it any more. A failed load
 * leaves a loaded model as it was (Triton does the same) and an unloaded one UNAVAILABLE with the reason. Unload
 * drains the model's queued and running requests, then leaves it UNAVAILABLE ("unloaded"). Both return 0, or an HTTP
 * status (400, 404, 503) with why[0..n) set. */
int srv_repo_load_model(srv_repo *repo, const char *name, char *why, size_t n);
int srv_repo_unload_model(srv_repo *repo, const char *name, char *why, size_t n);
/* POST /v2/repository/index: rescans the folder (new model folders are listed, not loaded) and returns a JSON array
 * of {"name", "version", "state", "reason"} (only READY models when ready_only), malloc'd; NULL on out of memory. */
char *srv_repo_index_json(srv_repo *repo, bool ready_only);
/* Server readiness (Triton's strict readiness when strict): every model that should be loaded is READY. Not strict:
 * at least one model is READY. */
bool srv_repo_ready(srv_repo *repo, bool strict);
/* Writes every model's metrics in Prometheus text format. */
void srv_repo_write_metrics(srv_repo *repo, FILE *f);

/* True when name is a valid model name ([A-Za-z0-9_.-]+, not "." or ".."). */
int srv_valid_name(const char *name);
/* KServe datatype ("FP32", ...) of a dtype, or NULL. */
const char *srv_dtype_kserve(tc_dtype dt);
/* dtype of a KServe datatype name (prefix "TYPE_" required when triton_config), or UNDEFINED. */
tc_dtype srv_dtype_parse(const char *s, int triton_config);

#endif
