/* metrics.c - per-model server metrics and their Prometheus text exposition (see metrics.h). */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double k_dur_bounds_us[SRV_HIST_BUCKETS - 1] = {50,    100,   250,    500,    1000,    2500,    5000,
                                                             10000, 25000, 50000, 100000, 1000000, 10000000};
static const double k_batch_bounds[SRV_BATCH_BUCKETS - 1] = {1, 2, 4, 8, 16, 32, 64, 128};
static const double k_quantiles[4] = {0.5, 0.9, 0.99, 0.999};
static const char *const k_dur_names[SRV_DUR_KINDS] = {"request", "queue", "compute", "io"};
static const char *const k_dur_help[SRV_DUR_KINDS] = {
    "from the request's arrival to its response",
    "waiting in the model's queue for an instance",
    "executing the batch the request was part of (input copy, run, output copy)",
    "receiving and decoding the request and encoding the response (request - queue - compute)"};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int srv_metrics_init(srv_metrics *m) {
    memset(m, 0, sizeof *m);
    /* Touch the windows now so the server reaches its steady-state memory at start, not after 8192 requests. */
    for (int k = 0; k < SRV_DUR_KINDS; k++)
        for (int i = 0; i < SRV_WINDOW; i++) m->win[k].t[i] = m->win[k].v[i] = -1.0;
    atomic_init(&m->queue_depth, 0);
    atomic_init(&m->inflight, 0);
    return pthread_mutex_init(&m->mu, NULL);
}

void srv_metrics_destroy(srv_metrics *m) { pthread_mutex_destroy(&m->mu); }

static void hist_add(srv_hist *h, const double *bounds, int nb, double v) {
    for (int b = 0; b < nb; b++)
        if (b == nb - 1 || v <= bounds[b]) h->buckets[b]++;
    h->sum += v;
    h->count++;
}

static void window_add(srv_window *w, double t, double v) {
    w->t[w->next] = t;
    w->v[w->next] = v;
    w->next = (w->next + 1) % SRV_WINDOW;
    if (w->n < SRV_WINDOW) w->n++;
}

void srv_metrics_request(srv_metrics *m, int ok, double total_us, double queue_us, double compute_us, double io_us) {
    double t = now_s();
    pthread_mutex_lock(&m->mu);
    if (ok) m->success++;
    else m->failure++;
    const double v[SRV_DUR_KINDS] = {total_us, queue_us, compute_us, io_us};
    for (int k = 0; k < SRV_DUR_KINDS; k++) {
        if (v[k] < 0) continue;
        hist_add(&m->dur[k], k_dur_bounds_us, SRV_HIST_BUCKETS, v[k]);
        window_add(&m->win[k], t, v[k]);
    }
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_batch(srv_metrics *m, int64_t size) {
    pthread_mutex_lock(&m->mu);
    for (int b = 0; b < SRV_BATCH_BUCKETS; b++)
        if (b == SRV_BATCH_BUCKETS - 1 || (double)size <= k_batch_bounds[b]) m->batch_buckets[b]++;
    m->batch_count++;
    m->batch_sum += (uint64_t)size;
    pthread_mutex_unlock(&m->mu);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Copies the observations younger than SRV_WINDOW_S into out; returns how many. Caller holds the lock. */
static uint32_t window_recent(const srv_window *w, double now, double *out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->n; i++)
        if (now - w->t[i] <= SRV_WINDOW_S) out[n++] = w->v[i];
    return n;
}

/* Nearest-rank quantiles of v[0..n) (sorted here) into q[4]; NaN when n == 0. */
static void quantiles(double *v, uint32_t n, double q[4]) {
    if (n == 0) {
        for (int k = 0; k < 4; k++) q[k] = NAN;
        return;
    }
    qsort(v, n, sizeof *v, cmp_double);
    for (int k = 0; k < 4; k++) {
        double r = ceil(k_quantiles[k] * (double)n);
        uint32_t idx = r < 1 ? 0 : (uint32_t)r - 1;
        if (idx >= n) idx = n - 1;
        q[k] = v[idx];
    }
}

enum {
    SEC_SUCCESS,
    SEC_FAILURE,
    SEC_REJECTED,
    SEC_HIST,                           /* + kind */
    SEC_SUMMARY = SEC_HIST + SRV_DUR_KINDS, /* + kind */
    SEC_BATCH = SEC_SUMMARY + SRV_DUR_KINDS,
    SEC_QUEUE_DEPTH,
    SEC_INFLIGHT,
    SEC_COUNT
};

int srv_metrics_sections(void) { return SEC_COUNT; }

void srv_metrics_header(FILE *f, int s) {
    if (s == SEC_SUCCESS)
        fprintf(f, "# HELP tc_request_success_total Successful inference requests.\n"
                   "# TYPE tc_request_success_total counter\n");
    else if (s == SEC_FAILURE)
        fprintf(f, "# HELP tc_request_failure_total Failed inference requests (any error status).\n"
                   "# TYPE tc_request_failure_total counter\n");
    else if (s == SEC_REJECTED)
        fprintf(f, "# HELP tc_request_rejected_total Requests the scheduler refused: queue full or timed out in "
                   "the queue (also counted as failures).\n"
                   "# TYPE tc_request_rejected_total counter\n");
    else if (s >= SEC_HIST && s < SEC_HIST + SRV_DUR_KINDS)
        fprintf(f, "# HELP tc_%s_duration_us Time %s, microseconds.\n# TYPE tc_%s_duration_us histogram\n",
                k_dur_names[s - SEC_HIST], k_dur_help[s - SEC_HIST], k_dur_names[s - SEC_HIST]);
    else if (s >= SEC_SUMMARY && s < SEC_SUMMARY + SRV_DUR_KINDS)
        fprintf(f,
                "# HELP tc_%s_duration_quantiles_us Time %s, microseconds; quantiles over the last %.0f s "
                "(at most %d observations).\n# TYPE tc_%s_duration_quantiles_us summary\n",
                k_dur_names[s - SEC_SUMMARY], k_dur_help[s - SEC_SUMMARY], SRV_WINDOW_S, SRV_WINDOW,
                k_dur_names[s - SEC_SUMMARY]);
    else if (s == SEC_BATCH)
        fprintf(f, "# HELP tc_batch_size Rows per executed batch.\n# TYPE tc_batch_size histogram\n");
    else if (s == SEC_QUEUE_DEPTH)
        fprintf(f, "# HELP tc_queue_depth Requests waiting in the model's queue.\n# TYPE tc_queue_depth gauge\n");
    else if (s == SEC_INFLIGHT)
        fprintf(f, "# HELP tc_inflight_requests Requests accepted and not yet answered.\n"
                   "# TYPE tc_inflight_requests gauge\n");
}

static void write_hist(FILE *f, const char *metric, const char *model, const uint64_t *buckets, const double *bounds,
                       int nb, double sum, uint64_t count) {
    for (int b = 0; b < nb - 1; b++)
        fprintf(f, "%s_bucket{model=\"%s\",le=\"%g\"} %llu\n", metric, model, bounds[b],
                (unsigned long long)buckets[b]);
    fprintf(f, "%s_bucket{model=\"%s\",le=\"+Inf\"} %llu\n", metric, model, (unsigned long long)buckets[nb - 1]);
    fprintf(f, "%s_sum{model=\"%s\"} %.3f\n", metric, model, sum);
    fprintf(f, "%s_count{model=\"%s\"} %llu\n", metric, model, (unsigned long long)count);
}

void srv_metrics_write(srv_metrics *m, const char *name, FILE *f, int s) {
    char metric[64];
    if (s == SEC_QUEUE_DEPTH) {
        fprintf(f, "tc_queue_depth{model=\"%s\"} %ld\n", name, atomic_load(&m->queue_depth));
        return;
    }
    if (s == SEC_INFLIGHT) {
        fprintf(f, "tc_inflight_requests{model=\"%s\"} %ld\n", name, atomic_load(&m->inflight));
        return;
    }
    if (s >= SEC_SUMMARY && s < SEC_SUMMARY + SRV_DUR_KINDS) {
        /* Copy under the lock, sort outside it: requests keep recording meanwhile. */
        int k = s - SEC_SUMMARY;
        double *v = malloc(sizeof(double) * SRV_WINDOW);
        if (!v) return;
        pthread_mutex_lock(&m->mu);
        uint32_t n = window_recent(&m->win[k], now_s(), v);
        double sum = m->dur[k].sum;
        uint64_t count = m->dur[k].count;
        pthread_mutex_unlock(&m->mu);
        double q[4];
        quantiles(v, n, q);
        free(v);
        for (int i = 0; i < 4; i++) {
            if (isnan(q[i]))
                fprintf(f, "tc_%s_duration_quantiles_us{model=\"%s\",quantile=\"%g\"} NaN\n", k_dur_names[k], name,
                        k_quantiles[i]);
            else
                fprintf(f, "tc_%s_duration_quantiles_us{model=\"%s\",quantile=\"%g\"} %.3f\n", k_dur_names[k],
                        name, k_quantiles[i], q[i]);
        }
        fprintf(f, "tc_%s_duration_quantiles_us_sum{model=\"%s\"} %.3f\n", k_dur_names[k], name, sum);
        fprintf(f, "tc_%s_duration_quantiles_us_count{model=\"%s\"} %llu\n", k_dur_names[k], name,
                (unsigned long long)count);
        return;
    }
    pthread_mutex_lock(&m->mu);
    if (s == SEC_SUCCESS) {
        fprintf(f, "tc_request_success_total{model=\"%s\"} %llu\n", name, (unsigned long long)m->success);
    } else if (s == SEC_FAILURE) {
        fprintf(f, "tc_request_failure_total{model=\"%s\"} %llu\n", name, (unsigned long long)m->failure);
    } else if (s == SEC_REJECTED) {
        fprintf(f, "tc_request_rejected_total{model=\"%s\",reason=\"queue_full\"} %llu\n", name,
                (unsigned long long)m->rejected_queue_full);
        fprintf(f, "tc_request_rejected_total{model=\"%s\",reason=\"timeout\"} %llu\n", name,
                (unsigned long long)m->timed_out);
    } else if (s >= SEC_HIST && s < SEC_HIST + SRV_DUR_KINDS) {
        const srv_hist *h = &m->dur[s - SEC_HIST];
        snprintf(metric, sizeof metric, "tc_%s_duration_us", k_dur_names[s - SEC_HIST]);
        write_hist(f, metric, name, h->buckets, k_dur_bounds_us, SRV_HIST_BUCKETS, h->sum, h->count);
    } else if (s == SEC_BATCH) {
        write_hist(f, "tc_batch_size", name, m->batch_buckets, k_batch_bounds, SRV_BATCH_BUCKETS, (double)m->batch_sum,
                   m->batch_count);
    }
    pthread_mutex_unlock(&m->mu);
}
