/* metrics.h - per-model server metrics: success/failure counters, request/queue/compute/io durations as
 * cumulative histograms (aggregatable across replicas) and as sliding-window summaries (quantiles
 * 0.5/0.9/0.99/0.999 over the last 60 s, at most SRV_WINDOW observations), batch sizes, and the
 * queue-depth / in-flight gauges. Written in Prometheus text format by srv_metrics_write. */
#ifndef TC_SERVER_METRICS_H
#define TC_SERVER_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define SRV_HIST_BUCKETS 14 /* duration buckets, the last is +Inf */
#define SRV_BATCH_BUCKETS 9 /* batch-size buckets 1..128, the last is +Inf */
#define SRV_WINDOW 8192     /* observations kept per summary */
#define SRV_WINDOW_S 60.0   /* summary window in seconds */

typedef struct srv_hist {
    uint64_t buckets[SRV_HIST_BUCKETS]; /* cumulative: bucket b counts observations <= bound b */
    double sum;
    uint64_t count;
} srv_hist;

/* Ring of the most recent (time, value) observations. */
typedef struct srv_window {
    double t[SRV_WINDOW], v[SRV_WINDOW];
    uint32_t next, n;
} srv_window;

enum { SRV_DUR_REQUEST = 0, SRV_DUR_QUEUE, SRV_DUR_COMPUTE, SRV_DUR_IO, SRV_DUR_KINDS };

typedef struct srv_metrics {
    pthread_mutex_t mu;
    uint64_t success, failure;
    uint64_t rejected_queue_full, timed_out;
    srv_hist dur[SRV_DUR_KINDS];
    srv_window win[SRV_DUR_KINDS];
    uint64_t batch_buckets[SRV_BATCH_BUCKETS];
    uint64_t batch_count, batch_sum;
    atomic_long queue_depth; /* requests waiting for an instance */
    atomic_long inflight;    /* requests accepted and not yet answered */
} srv_metrics;

int srv_metrics_init(srv_metrics *m);
void srv_metrics_destroy(srv_metrics *m);
/* One finished request: ok or not, its total duration and (when it was executed) its queue, compute and
 * I/O (receive, decode, encode: the rest) durations, all in microseconds; a negative part is not recorded. */
void srv_metrics_request(srv_metrics *m, int ok, double total_us, double queue_us, double compute_us, double io_us);
/* One executed batch of `size` rows. */
void srv_metrics_batch(srv_metrics *m, int64_t size);
/* Appends every metric of model `name` in Prometheus text format (no # HELP lines). */
void srv_metrics_write(srv_metrics *m, const char *name, FILE *f, int section);
/* Number of sections srv_metrics_write knows; section k of every model is written under one # HELP. */
int srv_metrics_sections(void);
/* The # HELP / # TYPE header of a section. */
void srv_metrics_header(FILE *f, int section);

#endif
