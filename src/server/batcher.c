/* batcher.c - per-model queue, dynamic batching and instance threads of `tailcut serve` (see batcher.h).
 *
 * Batch formation with dynamic_batching: the head is the oldest request of the highest non-empty
 * priority level; requests of the same non-batch shape are gathered in priority then arrival order
 * until the next one would exceed max_batch_size. The batch runs at once when it reaches the
 * largest preferred batch size (or max_batch_size), else when the oldest gathered request has
 * waited max_queue_delay_microseconds; then, with preferred sizes, it is cut to the largest
 * preferred size it covers. Timed-out requests leave the queue with 503 before a batch is formed. */
#include "batcher.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void finish(srv_request *r, int status, const char *msg) {
    r->status = status;
    if (status != 200) snprintf(r->error, sizeof r->error, "%s", msg);
    r->done(r);
}

/* Same rank and same dims after the batch dim on every input. */
static int compatible(const srv_model *m, const srv_request *a, const srv_request *b) {
    for (int k = 0; k < m->n_in; k++) {
        const srv_tensor *x = &a->in[k], *y = &b->in[k];
        if (x->rank != y->rank) return 0;
        for (int d = 1; d < x->rank; d++)
            if (x->dims[d] != y->dims[d]) return 0;
    }
    return 1;
}

static void unlink_request(srv_model *m, srv_request *r) {
    int lv = r->priority;
    srv_request **pp = &m->qhead[lv], *prev = NULL;
    while (*pp && *pp != r) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp) return;
    *pp = r->next;
    if (m->qtail[lv] == r) m->qtail[lv] = prev;
    r->next = NULL;
    m->qlen--;
    atomic_fetch_sub(&m->metrics->queue_depth, 1);
}

/* Moves the timed-out requests from the queue to *expired; returns the earliest remaining deadline (0 = none). */
static double expire(srv_model *m, double now, srv_request **expired) {
    double next = 0;
    for (int lv = 0; lv < srv_config_levels(&m->cfg); lv++) {
        srv_request *r = m->qhead[lv];
        while (r) {
            srv_request *nx = r->next;
            if (r->t_deadline > 0 && now >= r->t_deadline) {
                unlink_request(m, r);
                r->next = *expired;
                *expired = r;
            } else if (r->t_deadline > 0 && (next == 0 || r->t_deadline < next)) {
                next = r->t_deadline;
            }
            r = nx;
        }
    }
    return next;
}

/* Gathers the next batch into inst->batch. Returns its request count, 0 when it must wait until *wake
 * (0 = until signalled). Caller holds qmu and the queue is not empty. */
static int gather(srv_model *m, srv_instance *inst, double now, double *wake) {
    const srv_config *c = &m->cfg;
    srv_request *head = NULL;
    for (int lv = 0; lv < srv_config_levels(&m->cfg) && !head; lv++) head = m->qhead[lv];
    if (!head) return 0;
    if (!c->dynamic_batching) {
        inst->batch[0] = head;
        return 1;
    }
    int n = 0;
    int64_t total = 0;
    double oldest = head->t_enqueue;
    for (int lv = 0; lv < srv_config_levels(&m->cfg); lv++) {
        for (srv_request *r = m->qhead[lv]; r; r = r->next) {
            if (!compatible(m, head, r)) continue;
            if (total + r->batch > c->max_batch_size) goto full;
            inst->batch[n++] = r;
            total += r->batch;
            if (r->t_enqueue < oldest) oldest = r->t_enqueue;
        }
    }
full:;
    int64_t target = c->n_preferred ? c->preferred[c->n_preferred - 1] : c->max_batch_size;
    double due = oldest + (double)c->max_queue_delay_us * 1e-6;
    if (total < target && total < c->max_batch_size && now < due && !m->stopping) {
        *wake = due;
        return 0;
    }
    if (c->n_preferred) {
        /* Cut to the largest preferred size the gathered rows cover (keep everything if none fits). */
        int64_t pref = 0;
        for (int i = 0; i < c->n_preferred; i++)
            if (c->preferred[i] <= total) pref = c->preferred[i];
        if (pref > 0 && pref < total) {
            int64_t sum = 0;
            int keep = 0;
            while (keep < n && sum + inst->batch[keep]->batch <= pref) sum += inst->batch[keep++]->batch;
            if (keep > 0) n = keep;
        }
    }
    return n;
}

static void fail_batch(srv_request **reqs, int n, int status, const char *msg) {
    for (int i = 0; i < n; i++) finish(reqs[i], status, msg);
}

/* Runs reqs[0..n) as one batch on the instance's context and completes every request. */
static void run_batch(srv_instance *inst, srv_request **reqs, int n) {
    srv_model *m = inst->model;
    tc_context *ctx = inst->ctx;
    const int batching = m->cfg.max_batch_size > 0;
    char msg[512];
    double t0 = now_s();
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += reqs[i]->batch;
    for (int k = 0; k < m->n_in; k++) {
        const srv_tensor *x = &reqs[0]->in[k];
        int64_t dims[TC_MAX_RANK];
        memcpy(dims, x->dims, sizeof dims);
        if (batching) dims[0] = total;
        if (tc_context_set_input_shape(ctx, m->in[k].name, x->rank, dims) != TC_STATUS_OK) {
            snprintf(msg, sizeof msg, "%s", tc_context_error(ctx)); /* names the input */
            fail_batch(reqs, n, 400, msg);
            return;
        }
        void *ptr = x->data;
        size_t bytes = x->bytes;
        if (n > 1 || ((uintptr_t)x->data & 63) != 0) {
            size_t off = 0;
            for (int i = 0; i < n; i++) {
                const srv_tensor *y = &reqs[i]->in[k];
                if (y->bytes > inst->staging_bytes[k] - off) {
                    snprintf(msg, sizeof msg, "input '%s': batch larger than the instance's buffer", m->in[k].name);
                    fail_batch(reqs, n, 500, msg);
                    return;
                }
                if (y->bytes) memcpy((char *)inst->staging[k] + off, y->data, y->bytes);
                off += y->bytes;
            }
            ptr = inst->staging[k];
            bytes = off;
        }
        if (bytes == 0) continue; /* empty tensor: nothing to bind */
        if (tc_context_set_tensor(ctx, m->in[k].name, ptr, bytes) != TC_STATUS_OK) {
            snprintf(msg, sizeof msg, "%s", tc_context_error(ctx)); /* names the input */
            fail_batch(reqs, n, 400, msg);
            return;
        }
    }
    if (tc_context_run(ctx) != TC_STATUS_OK) {
        snprintf(msg, sizeof msg, "inference failed: %s", tc_context_error(ctx));
        fail_batch(reqs, n, 500, msg);
        return;
    }
    for (int k = 0; k < m->n_out; k++) {
        tc_tensor t;
        if (tc_context_tensor(ctx, m->out[k].name, &t) != TC_STATUS_OK) {
            snprintf(msg, sizeof msg, "output '%s': %s", m->out[k].name, tc_context_error(ctx));
            fail_batch(reqs, n, 500, msg);
            return;
        }
        int split = batching && n > 1;
        if (split && (t.rank < 1 || t.dims[0] != total || total <= 0 || t.nbytes % (size_t)total != 0)) {
            snprintf(msg, sizeof msg, "output '%s' has no batch dimension of %lld rows: cannot split a batch",
                     m->out[k].name, (long long)total);
            fail_batch(reqs, n, 500, msg);
            return;
        }
        size_t row = split ? t.nbytes / (size_t)total : 0, off = 0;
        for (int i = 0; i < n; i++) {
            srv_request *r = reqs[i];
            size_t bytes = split ? row * (size_t)r->batch : t.nbytes;
            if (r->want_out[k]) {
                srv_tensor *o = &r->out[k];
                o->data = malloc(bytes ? bytes : 1);
                if (!o->data) {
                    fail_batch(reqs, n, 500, "out of memory");
                    return;
                }
                if (bytes) memcpy(o->data, (const char *)t.data + off, bytes);
                o->bytes = bytes;
                o->dtype = t.dtype;
                o->rank = t.rank;
                memcpy(o->dims, t.dims, sizeof o->dims);
                if (split) o->dims[0] = r->batch;
            }
            off += split ? bytes : 0;
        }
    }
    double t1 = now_s();
    srv_metrics_batch(m->metrics, total);
    for (int i = 0; i < n; i++) {
        reqs[i]->queue_us = (t0 - reqs[i]->t_enqueue) * 1e6;
        reqs[i]->compute_us = (t1 - t0) * 1e6;
        finish(reqs[i], 200, NULL);
    }
}

/* Waits on the queue's condition until signalled or until CLOCK_MONOTONIC time t (0 = no limit). */
static void wait_until(srv_model *m, double t) {
    if (t <= 0) {
        pthread_cond_wait(&m->qcv, &m->qmu);
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    pthread_cond_timedwait(&m->qcv, &m->qmu, &ts);
}

static void *instance_main(void *arg) {
    srv_instance *inst = arg;
    srv_model *m = inst->model;
    pthread_mutex_lock(&m->qmu);
    for (;;) {
        double now = now_s();
        srv_request *expired = NULL;
        double next_deadline = expire(m, now, &expired);
        if (expired) {
            pthread_mutex_unlock(&m->qmu);
            while (expired) {
                srv_request *r = expired;
                expired = r->next;
                r->next = NULL;
                pthread_mutex_lock(&m->metrics->mu);
                m->metrics->timed_out++;
                pthread_mutex_unlock(&m->metrics->mu);
                char msg[SRV_NAME_MAX + 96];
                snprintf(msg, sizeof msg, "request timed out after %.0f us in the queue of model '%s'",
                         (now - r->t_enqueue) * 1e6, m->name);
                finish(r, 503, msg);
            }
            pthread_mutex_lock(&m->qmu);
            continue;
        }
        if (m->qlen == 0) {
            if (m->stopping) break;
            wait_until(m, next_deadline);
            continue;
        }
        double wake = 0;
        int n = gather(m, inst, now, &wake);
        if (n == 0) {
            if (next_deadline > 0 && (wake == 0 || next_deadline < wake)) wake = next_deadline;
            wait_until(m, wake);
            continue;
        }
        for (int i = 0; i < n; i++) unlink_request(m, inst->batch[i]);
        pthread_mutex_unlock(&m->qmu);
        run_batch(inst, inst->batch, n);
        pthread_mutex_lock(&m->qmu);
    }
    pthread_mutex_unlock(&m->qmu);
    return NULL;
}

int srv_batcher_init(srv_model *m) {
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr)) return 1;
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) || pthread_cond_init(&m->qcv, &attr);
    pthread_condattr_destroy(&attr);
    if (rc) return 1;
    if (pthread_mutex_init(&m->qmu, NULL)) {
        pthread_cond_destroy(&m->qcv);
        return 1;
    }
    if (pthread_mutex_init(&m->jmu, NULL)) {
        pthread_mutex_destroy(&m->qmu);
        pthread_cond_destroy(&m->qcv);
        return 1;
    }
    return 0;
}

void srv_batcher_destroy(srv_model *m) {
    pthread_cond_destroy(&m->qcv);
    pthread_mutex_destroy(&m->qmu);
    pthread_mutex_destroy(&m->jmu);
}

int srv_batcher_start(srv_model *m) {
    for (int i = 0; i < m->n_inst; i++) {
        srv_instance *inst = &m->inst[i];
        if (pthread_create(&inst->thread, NULL, instance_main, inst) != 0) {
            return srv_fail("model '%s': cannot start instance thread %d", m->name, i);
        }
        inst->started = 1;
    }
    return 0;
}

int srv_batcher_submit(srv_model *m, srv_request *r) {
    pthread_mutex_lock(&m->qmu);
    if (m->stopping) {
        pthread_mutex_unlock(&m->qmu);
        snprintf(r->error, sizeof r->error, "model '%s' is unloading or the server is shutting down", m->name);
        return 503;
    }
    if (m->cfg.max_queue_size > 0 && m->qlen >= m->cfg.max_queue_size) {
        pthread_mutex_unlock(&m->qmu);
        pthread_mutex_lock(&m->metrics->mu);
        m->metrics->rejected_queue_full++;
        pthread_mutex_unlock(&m->metrics->mu);
        snprintf(r->error, sizeof r->error, "the queue of model '%s' is full (%lld requests)", m->name,
                 (long long)m->cfg.max_queue_size);
        return 503;
    }
    int levels = srv_config_levels(&m->cfg);
    int lv = r->priority < 0 ? 0 : (r->priority >= levels ? levels - 1 : r->priority);
    r->priority = lv;
    r->next = NULL;
    r->t_enqueue = now_s();
    if (m->qtail[lv]) m->qtail[lv]->next = r;
    else m->qhead[lv] = r;
    m->qtail[lv] = r;
    m->qlen++;
    atomic_fetch_add(&m->metrics->queue_depth, 1);
    pthread_cond_broadcast(&m->qcv);
    pthread_mutex_unlock(&m->qmu);
    return 0;
}

bool srv_batcher_stopped(srv_model *m) {
    pthread_mutex_lock(&m->qmu);
    const bool stopped = m->stopping != 0;
    pthread_mutex_unlock(&m->qmu);
    return stopped;
}

void srv_batcher_stop(srv_model *m) {
    pthread_mutex_lock(&m->qmu);
    m->stopping = 1;
    pthread_cond_broadcast(&m->qcv);
    pthread_mutex_unlock(&m->qmu);
    /* Joins under jmu: an unload and the shutdown may stop the same model at once. */
    pthread_mutex_lock(&m->jmu);
    for (int i = 0; i < m->n_inst; i++) {
        if (m->inst[i].started) pthread_join(m->inst[i].thread, NULL);
        m->inst[i].started = 0;
    }
    pthread_mutex_unlock(&m->jmu);
}
