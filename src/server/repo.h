/* repo.h - the model repository: reads <model>/config.json, loads or builds each engine, and keeps
 * one engine + one context per model behind a mutex (no batching yet). */
#ifndef TC_SERVER_REPO_H
#define TC_SERVER_REPO_H

#include <pthread.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

#define SRV_MAX_IO 64
#define SRV_NAME_MAX 256
#define SRV_HIST_BUCKETS 12

typedef struct srv_metrics {
    uint64_t success, failure;
    uint64_t buckets[SRV_HIST_BUCKETS]; /* cumulative counts per upper bound, last = +Inf */
    double sum_us;
} srv_metrics;

typedef struct srv_model {
    char name[SRV_NAME_MAX];
    int max_batch_size;
    tc_engine *engine;
    tc_context *context;
    pthread_mutex_t lock; /* guards context */
    int n_in, n_out;
    tc_io_info in[SRV_MAX_IO], out[SRV_MAX_IO]; /* strings belong to the engine */
    pthread_mutex_t mlock; /* guards metrics */
    srv_metrics metrics;
} srv_model;

typedef struct srv_repo {
    srv_model **models;
    int n;
} srv_repo;

extern const double srv_hist_bounds_us[SRV_HIST_BUCKETS - 1];

/* Loads every model; on failure prints a message naming the file and field and returns non-zero. */
int srv_repo_load(srv_repo *repo, const char *dir, int engine_threads);
void srv_repo_free(srv_repo *repo);
srv_model *srv_repo_find(const srv_repo *repo, const char *name);
/* True when name is a valid model name ([A-Za-z0-9_.-]+, not "." or ".."). */
int srv_valid_name(const char *name);
/* KServe datatype ("FP32", ...) of a dtype, or NULL. */
const char *srv_dtype_kserve(tc_dtype dt);
/* dtype of a KServe datatype name (prefix "TYPE_" accepted when allow_type_prefix), or UNDEFINED. */
tc_dtype srv_dtype_parse(const char *s, int triton_config);
void srv_metrics_record(srv_model *m, int ok, double us);

#endif
