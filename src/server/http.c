/* http.c - the HTTP side of `tailcut serve`: libmicrohttpd daemon, KServe v2 routing (health,
 * server/model metadata, infer), request body limits, Prometheus /metrics and graceful shutdown
 * on SIGTERM/SIGINT (stop accepting, drain in-flight requests, exit 0). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "repo.h"
#include "server.h"

typedef struct srv_state {
    srv_repo repo;
    size_t max_body;
    atomic_int inflight;
    atomic_int ready;
} srv_state;

typedef struct req_state {
    char *body;
    size_t len, cap;
    int too_large;
    struct timespec t0;
} req_state;

static double us_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e6 + (double)(t.tv_nsec - t0->tv_nsec) / 1e3;
}

static enum MHD_Result send_body(struct MHD_Connection *c, int status, char *body, const char *ctype) {
    if (!body) {
        static char oom[] = "{\"error\":\"out of memory\"}";
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(oom), oom, MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(c, 500, r);
        MHD_destroy_response(r);
        return ret;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *c, int status, char *body) {
    return send_body(c, status, body, "application/json");
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *msg) {
    return send_json(c, status, srv_error_json(msg));
}

static enum MHD_Result send_literal(struct MHD_Connection *c, int status, const char *text) {
    return send_json(c, status, strdup(text));
}

static char *metrics_text(srv_state *s) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return NULL;
    fprintf(f, "# HELP tc_request_success_total Successful inference requests.\n"
               "# TYPE tc_request_success_total counter\n");
    srv_metrics snap[1];
    for (int i = 0; i < s->repo.n; i++) {
        srv_model *m = s->repo.models[i];
        pthread_mutex_lock(&m->mlock);
        snap[0] = m->metrics;
        pthread_mutex_unlock(&m->mlock);
        fprintf(f, "tc_request_success_total{model=\"%s\"} %llu\n", m->name, (unsigned long long)snap[0].success);
    }
    fprintf(f, "# HELP tc_request_failure_total Failed inference requests.\n"
               "# TYPE tc_request_failure_total counter\n");
    for (int i = 0; i < s->repo.n; i++) {
        srv_model *m = s->repo.models[i];
        pthread_mutex_lock(&m->mlock);
        snap[0] = m->metrics;
        pthread_mutex_unlock(&m->mlock);
        fprintf(f, "tc_request_failure_total{model=\"%s\"} %llu\n", m->name, (unsigned long long)snap[0].failure);
    }
    fprintf(f, "# HELP tc_request_duration_us Inference request duration in microseconds (body received to response).\n"
               "# TYPE tc_request_duration_us histogram\n");
    for (int i = 0; i < s->repo.n; i++) {
        srv_model *m = s->repo.models[i];
        pthread_mutex_lock(&m->mlock);
        snap[0] = m->metrics;
        pthread_mutex_unlock(&m->mlock);
        for (int b = 0; b < SRV_HIST_BUCKETS - 1; b++)
            fprintf(f, "tc_request_duration_us_bucket{model=\"%s\",le=\"%.0f\"} %llu\n", m->name, srv_hist_bounds_us[b],
                    (unsigned long long)snap[0].buckets[b]);
        fprintf(f, "tc_request_duration_us_bucket{model=\"%s\",le=\"+Inf\"} %llu\n", m->name,
                (unsigned long long)snap[0].buckets[SRV_HIST_BUCKETS - 1]);
        fprintf(f, "tc_request_duration_us_sum{model=\"%s\"} %.3f\n", m->name, snap[0].sum_us);
        fprintf(f, "tc_request_duration_us_count{model=\"%s\"} %llu\n", m->name,
                (unsigned long long)(snap[0].success + snap[0].failure));
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static enum MHD_Result route(srv_state *s, struct MHD_Connection *c, const char *url, const char *method,
                             req_state *rs) {
    int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int is_post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/metrics") == 0) {
        if (!is_get) return send_error(c, 405, "method not allowed");
        return send_body(c, 200, metrics_text(s), "text/plain; version=0.0.4");
    }
    if (strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0) {
        if (!is_get) return send_error(c, 405, "method not allowed");
        return send_literal(c, 200, "{\"name\":\"tailcut\",\"version\":\"0.1.0\",\"extensions\":[]}");
    }
    if (strcmp(url, "/v2/health/live") == 0) {
        if (!is_get) return send_error(c, 405, "method not allowed");
        return send_literal(c, 200, "{\"live\":true}");
    }
    if (strcmp(url, "/v2/health/ready") == 0) {
        if (!is_get) return send_error(c, 405, "method not allowed");
        return atomic_load(&s->ready) ? send_literal(c, 200, "{\"ready\":true}")
                                      : send_literal(c, 503, "{\"ready\":false}");
    }
    static const char prefix[] = "/v2/models/";
    if (strncmp(url, prefix, sizeof prefix - 1) != 0) return send_error(c, 404, "not found");
    const char *p = url + sizeof prefix - 1;
    const char *slash = strchr(p, '/');
    size_t nlen = slash ? (size_t)(slash - p) : strlen(p);
    char name[SRV_NAME_MAX];
    if (nlen == 0 || nlen >= sizeof name) return send_error(c, 404, "unknown model");
    memcpy(name, p, nlen);
    name[nlen] = '\0';
    const char *rest = slash ? slash : "";
    /* Optional /versions/1 segment. */
    if (strncmp(rest, "/versions/", 10) == 0) {
        if (strncmp(rest + 10, "1", 1) != 0 || (rest[11] != '\0' && rest[11] != '/'))
            return send_error(c, 404, "unknown model version");
        rest += 11;
    }
    srv_model *m = srv_valid_name(name) ? srv_repo_find(&s->repo, name) : NULL;
    if (!m) {
        char msg[SRV_NAME_MAX + 32];
        snprintf(msg, sizeof msg, "unknown model '%s'", srv_valid_name(name) ? name : "(invalid name)");
        return send_error(c, 404, msg);
    }
    if (rest[0] == '\0') {
        if (!is_get) return send_error(c, 405, "method not allowed");
        return send_json(c, 200, srv_model_metadata_json(m));
    }
    if (strcmp(rest, "/ready") == 0) {
        if (!is_get) return send_error(c, 405, "method not allowed");
        char buf[SRV_NAME_MAX + 48];
        snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"ready\":true}", m->name);
        return send_literal(c, 200, buf);
    }
    if (strcmp(rest, "/infer") == 0) {
        if (!is_post) return send_error(c, 405, "method not allowed: use POST");
        int status = 500;
        char *out;
        if (rs->too_large) {
            char msg[96];
            snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes", s->max_body);
            status = 413;
            out = srv_error_json(msg);
        } else {
            const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
            if (ctype) {
                status = 400;
                out = srv_error_json("the binary tensor extension is not supported yet");
            } else {
                out = srv_infer_json(m, rs->body ? rs->body : "", rs->len, &status);
            }
        }
        srv_metrics_record(m, status == 200, us_since(&rs->t0));
        return send_json(c, status, out);
    }
    return send_error(c, 404, "not found");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    srv_state *s = cls;
    req_state *rs = *con_cls;
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &rs->t0);
        atomic_fetch_add(&s->inflight, 1);
        *con_cls = rs;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->max_body) rs->too_large = 1;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (rs->too_large) return MHD_YES; /* drain and discard; answered 413 at the end */
        if (n > s->max_body - rs->len) {
            rs->too_large = 1;
            free(rs->body);
            rs->body = NULL;
            rs->len = rs->cap = 0;
            return MHD_YES;
        }
        if (rs->len + n + 1 > rs->cap) {
            size_t cap = rs->cap ? rs->cap : 65536;
            while (cap < rs->len + n + 1) cap *= 2;
            char *nb = realloc(rs->body, cap);
            if (!nb) return MHD_NO;
            rs->body = nb;
            rs->cap = cap;
        }
        memcpy(rs->body + rs->len, upload_data, n);
        rs->len += n;
        rs->body[rs->len] = '\0';
        return MHD_YES;
    }
    return route(s, c, url, method, rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    srv_state *s = cls;
    req_state *rs = *con_cls;
    if (!rs) return;
    free(rs->body);
    free(rs);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

int tc_server_main(const tc_server_options *o) {
    srv_state *s = calloc(1, sizeof *s);
    if (!s) return 1;
    s->max_body = o->max_body_bytes ? o->max_body_bytes : (size_t)64 << 20;
    atomic_init(&s->inflight, 0);
    atomic_init(&s->ready, 0);
    if (srv_repo_load(&s->repo, o->model_repository, o->engine_threads)) {
        free(s);
        return 1;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)o->http_port);
    const char *host = o->http_address ? o->http_address : "0.0.0.0";
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "tailcut serve: --http-address %s: not an IPv4 address\n", host);
        srv_repo_free(&s->repo);
        free(s);
        return 2;
    }
    /* Block the stop signals in every thread; the main thread waits for them with sigwait. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    unsigned threads = o->threads > 0 ? (unsigned)o->threads : 2;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_AUTO;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)o->http_port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "tailcut serve: cannot listen on %s:%d\n", host, o->http_port);
        srv_repo_free(&s->repo);
        free(s);
        return 1;
    }
    atomic_store(&s->ready, 1);
    fprintf(stderr, "tailcut serve: listening on %s:%d (%d models, %u threads)\n", host, o->http_port, s->repo.n,
            threads);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "tailcut serve: %s: draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    atomic_store(&s->ready, 0);
    MHD_socket lfd = MHD_quiesce_daemon(d);
    /* Finish in-flight requests (bounded: 30 s). */
    for (int i = 0; i < 3000 && atomic_load(&s->inflight) > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(d);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    srv_repo_free(&s->repo);
    free(s);
    fprintf(stderr, "tailcut serve: stopped\n");
    return 0;
}
