/* http.c - the HTTP side of `tailcut serve`: libmicrohttpd daemon fed by the front stage (http_front.c: accepts, and
 * answers malformed first request heads in JSON), KServe v2 routing (health,
 * server/model metadata and config, infer; Triton's repository index / load / unload via control.c; a model
 * that is in the repository but not ready answers 400 with its reason), request body limits, Prometheus /metrics
 * and graceful shutdown on SIGTERM/SIGINT (stop accepting, drain queued and in-flight requests, exit 0).
 * An infer request is decoded on the HTTP thread, queued to the model's batcher and its connection
 * suspended; the instance that ran it resumes the connection, which then encodes the response. */
#include <arpa/inet.h>
#include <errno.h>
#include <cjson/cJSON.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "batcher.h"
#include "body_buf.h"
#include "codec.h"
#include "control.h"
#include "http_front.h"
#include "http_guard.h"
#include "repo.h"
#include "server.h"

typedef struct srv_state {
    srv_repo repo;
    size_t max_body;
    size_t max_buffered;    /* bytes of request bodies held at once across connections */
    atomic_size_t buffered; /* held now (the sum of the connections' body allocations) */
    atomic_int inflight; /* requests whose connection has not completed */
    atomic_int ready;
    atomic_int open;     /* connections handed to libmicrohttpd (http_front.c) and not closed yet */
    bool relaxed_readiness; /* ready when one model is, not all that should be */
} srv_state;

typedef struct req_state {
    struct MHD_Connection *conn;
    srv_body body;       /* the body received so far; its pad puts the binary tensors after the JSON header at 64-byte
                          * aligned addresses (bound to the context without a copy) */
    int too_large;
    int over_budget;     /* the server-wide body budget was full: drained, answered 503 */
    int bad_framing;     /* conflicting Content-Length / Transfer-Encoding headers: drained, 400, connection closed */
    int refused;         /* http_guard.c's status: 415 Content-Encoding, 431 headers (drained, then answered); 501 */
    char refused_msg[192];
    double t0;           /* headers received, CLOCK_MONOTONIC seconds */
    srv_request *req;    /* queued request, owned here */
    srv_model *model;    /* the model the request uses: a reference (srv_repo_acquire), given back on completion */
    atomic_int finished; /* the batcher completed req */
    int answered;        /* answer_request ran (metrics recorded, in-flight gauge decremented) */
} req_state;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static enum MHD_Result send_bytes(struct MHD_Connection *c, int status, char *body, size_t len, const char *ctype,
                                  size_t json_len) {
    if (!body) {
        static char oom[] = "{\"error\":\"out of memory\"}";
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(oom), oom, MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(c, 500, r);
        MHD_destroy_response(r);
        return ret;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    if (json_len != SRV_NO_BINARY) {
        char v[32];
        snprintf(v, sizeof v, "%zu", json_len);
        MHD_add_response_header(r, "Inference-Header-Content-Length", v);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_body(struct MHD_Connection *c, int status, char *body, const char *ctype) {
    return send_bytes(c, status, body, body ? strlen(body) : 0, ctype, SRV_NO_BINARY);
}

static enum MHD_Result send_json(struct MHD_Connection *c, int status, char *body) {
    return send_body(c, status, body, "application/json");
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *msg) {
    return send_json(c, status, srv_error_json(msg));
}

/* Framing headers of a request, counted (MHD_get_connection_values' iterator). */
typedef struct framing {
    int n_length, n_encoding;
    char first_length[32];
    int lengths_differ;
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    framing *f = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        const char *v = value ? value : "";
        if (f->n_length++ == 0) snprintf(f->first_length, sizeof f->first_length, "%s", v);
        else if (strcmp(f->first_length, v) != 0) f->lengths_differ = 1;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->n_encoding++;
    }
    return MHD_YES;
}

/* True when the request's framing is ambiguous: Content-Length given twice with different values, or together with
 * Transfer-Encoding (RFC 9112 6.3: a proxy in front may frame it the other way, and the rest of the body would run
 * as a second request: request smuggling). Such a request is refused and its connection closed. */
static bool framing_conflicts(struct MHD_Connection *c) {
    framing f;
    memset(&f, 0, sizeof f);
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    return f.lengths_differ || (f.n_length > 0 && f.n_encoding > 0) || f.n_encoding > 1;
}

/* A JSON error with one extra response header (Allow, Connection). */
static enum MHD_Result send_error_header(struct MHD_Connection *c, int status, const char *msg, const char *name,
                                         const char *value) {
    char *body = srv_error_json(msg);
    if (!body) return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, name, value);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_framing_error(struct MHD_Connection *c) {
    /* Connection: close: nothing after this request is read */
    return send_error_header(c, 400, "conflicting Content-Length / Transfer-Encoding headers", MHD_HTTP_HEADER_CONNECTION,
                             "close");
}

/* 405 with the Allow header RFC 9110 asks for. */
static enum MHD_Result send_405(struct MHD_Connection *c, const char *allow) {
    char msg[64];
    snprintf(msg, sizeof msg, "method not allowed: use %s", allow);
    return send_error_header(c, 405, msg, MHD_HTTP_HEADER_ALLOW, allow);
}

static enum MHD_Result send_literal(struct MHD_Connection *c, int status, const char *text) {
    return send_json(c, status, strdup(text));
}

static char *metrics_text(srv_state *s) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return NULL;
    srv_repo_write_metrics(&s->repo, f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Called by an instance thread (or by submit on rejection) when the request is finished. */
static void on_request_done(srv_request *r) {
    req_state *rs = r->done_arg;
    atomic_store(&rs->finished, 1);
    MHD_resume_connection(rs->conn);
}

/* Answers a finished request (on the resumed connection) and records its metrics. */
static enum MHD_Result answer_request(struct MHD_Connection *c, req_state *rs) {
    srv_request *r = rs->req;
    rs->answered = 1;
    srv_model *m = r->model;
    enum MHD_Result ret;
    int ok = r->status == 200;
    if (ok) {
        size_t len = 0, json_len = SRV_NO_BINARY;
        char *body = srv_encode_infer(r, &len, &json_len);
        if (!body) {
            ok = 0;
            ret = send_error(c, 500, "out of memory encoding the response");
        } else {
            ret = send_bytes(c, 200, body, len, json_len == SRV_NO_BINARY ? "application/json" : "application/octet-stream",
                             json_len);
        }
    } else {
        ret = send_error(c, r->status, r->error);
    }
    double total = (now_s() - rs->t0) * 1e6;
    double io = r->queue_us >= 0 && r->compute_us >= 0 ? total - r->queue_us - r->compute_us : -1;
    srv_metrics_request(m->metrics, ok, total, r->queue_us, r->compute_us, io);
    atomic_fetch_sub(&m->metrics->inflight, 1);
    return ret;
}

/* Strict decimal header value <= max; returns 0 ok. */
static int parse_size(const char *v, size_t max, size_t *out) {
    if (!v || !*v) return 1;
    size_t x = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') return 1;
        if (x > (max - (size_t)(*p - '0')) / 10) return 1;
        x = x * 10 + (size_t)(*p - '0');
    }
    *out = x;
    return 0;
}

/* Decodes the request body for model m into a new request (*out, also on failure unless out of memory). Returns 0 or
 * an HTTP status with (*out)->error set. */
static int decode_request(struct MHD_Connection *c, srv_model *m, req_state *rs, srv_request **out) {
    srv_request *r = calloc(1, sizeof *r);
    *out = r;
    if (!r) return 500;
    r->model = m;
    r->t_arrive = rs->t0;
    r->queue_us = r->compute_us = -1;
    r->done = on_request_done;
    r->done_arg = rs;
    size_t header_len = SRV_NO_BINARY;
    const char *hl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
    if (hl && parse_size(hl, rs->body.len, &header_len)) {
        snprintf(r->error, sizeof r->error, "Inference-Header-Content-Length '%.40s' is not a byte count within the body",
                 hl);
        return 400;
    }
    char empty[1] = {0};
    return srv_decode_infer(m, rs->body.data ? rs->body.data : empty, rs->body.len, header_len, r);
}

/* True when a request decoded for model a is valid for model b as it is: same inputs (name, dtype, shape range) and
 * outputs (name, dtype), batch size and priority levels (a reload of the same files). */
static bool same_signature(const srv_model *a, const srv_model *b) {
    if (a->n_in != b->n_in || a->n_out != b->n_out || a->cfg.max_batch_size != b->cfg.max_batch_size ||
        srv_config_levels(&a->cfg) != srv_config_levels(&b->cfg))
        return false;
    for (int k = 0; k < a->n_in; k++) {
        const tc_input_range *x = &a->range[k], *y = &b->range[k];
        if (strcmp(a->in[k].name, b->in[k].name) != 0 || a->in[k].dtype != b->in[k].dtype || x->rank != y->rank)
            return false;
        for (int d = 0; d < x->rank; d++)
            if (x->min[d] != y->min[d] || x->max[d] != y->max[d]) return false;
    }
    for (int k = 0; k < a->n_out; k++)
        if (strcmp(a->out[k].name, b->out[k].name) != 0 || a->out[k].dtype != b->out[k].dtype) return false;
    return true;
}

/* The model stopped taking requests between lookup and submit: it was unloaded (answer 400, not ready) or replaced
 * by a reload. The request was decoded in place (the body cannot be decoded again), so it moves to the new model when
 * that has the same signature (a reload of the same files: no request is dropped); else it gets 503. Returns 0 when
 * queued, else an HTTP status with rs->req->error set. The connection is suspended. */
static int resubmit(srv_state *s, srv_model *old, req_state *rs, int st) {
    bool known = false;
    char why[SRV_REASON_MAX];
    srv_model *m = srv_repo_acquire(&s->repo, old->name, &known, why, sizeof why);
    srv_request *r = rs->req;
    if (!m) {
        snprintf(r->error, sizeof r->error, "model '%.100s' is not ready: %.380s", old->name, why);
        return 400;
    }
    if (m == old) {
        srv_model_release(m);
        return st;
    }
    if (!same_signature(old, m)) {
        srv_model_release(m);
        snprintf(r->error, sizeof r->error, "model '%.100s' was reloaded with other inputs or outputs while this "
                 "request was on its way: send it again", old->name);
        return 503;
    }
    /* The request and its reference move to the new model (old and new share the slot's metrics: the in-flight gauge
     * stays right). */
    r->model = m;
    rs->model = m;
    srv_model_release(old);
    return srv_batcher_submit(m, r);
}

static enum MHD_Result start_infer(srv_state *s, struct MHD_Connection *c, srv_model *m, req_state *rs) {
    if (rs->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes", s->max_body);
        srv_metrics_request(m->metrics, 0, (now_s() - rs->t0) * 1e6, -1, -1, -1);
        return send_error(c, 413, msg);
    }
    if (rs->over_budget) {
        char msg[160];
        snprintf(msg, sizeof msg, "server busy: request bodies held at once would pass %zu bytes "
                 "(--max-buffered-bytes); retry later", s->max_buffered);
        srv_metrics_request(m->metrics, 0, (now_s() - rs->t0) * 1e6, -1, -1, -1);
        return send_error(c, 503, msg);
    }
    srv_request *r = NULL;
    int st = decode_request(c, m, rs, &r);
    if (st) {
        enum MHD_Result ret = send_error(c, st, r ? r->error : "out of memory");
        srv_metrics_request(m->metrics, 0, (now_s() - rs->t0) * 1e6, -1, -1, -1);
        srv_request_free(r);
        return ret;
    }
    rs->req = r;
    atomic_fetch_add(&m->metrics->inflight, 1);
    /* Suspend before queueing: an instance may finish the request before this handler returns. */
    MHD_suspend_connection(c);
    st = srv_batcher_submit(m, r);
    if (st && srv_batcher_stopped(m)) st = resubmit(s, m, rs, st);
    if (st) {
        rs->req->status = st;
        on_request_done(rs->req);
    }
    return MHD_YES;
}

static enum MHD_Result route(srv_state *s, struct MHD_Connection *c, const char *url, const char *method,
                             req_state *rs) {
    int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int is_post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/metrics") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        return send_body(c, 200, metrics_text(s), "text/plain; version=0.0.4");
    }
    if (strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        return send_literal(c, 200, "{\"name\":\"tailcut\",\"version\":\"0.1.0\",\"extensions\":"
                                    "[\"binary_tensor_data\",\"model_configuration\",\"model_repository\","
                                    "\"schedule_policy\"]}");
    }
    if (strcmp(url, "/v2/health/live") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        return send_literal(c, 200, "{\"live\":true}");
    }
    if (strcmp(url, "/v2/health/ready") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        /* KServe v2: "a 200 status code indicates true and a 4xx status code indicates false"; Triton answers 400. */
        const bool ready = atomic_load(&s->ready) && srv_repo_ready(&s->repo, !s->relaxed_readiness);
        return ready ? send_literal(c, 200, "{\"ready\":true}") : send_literal(c, 400, "{\"ready\":false}");
    }
    if (strncmp(url, "/v2/repository/", 15) == 0) {
        if (!is_post) return send_405(c, "POST");
        char *json = NULL;
        const int st = srv_control(&s->repo, url, rs->body.data, rs->body.len, &json);
        return send_json(c, st, json);
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
    bool known = false;
    char why[SRV_REASON_MAX];
    srv_model *m = srv_valid_name(name) ? srv_repo_acquire(&s->repo, name, &known, why, sizeof why) : NULL;
    if (!m) {
        char msg[SRV_NAME_MAX + SRV_REASON_MAX + 64];
        if (!known) {
            snprintf(msg, sizeof msg, "unknown model '%s'", srv_valid_name(name) ? name : "(invalid name)");
            return send_error(c, 404, msg);
        }
        /* In the repository but not ready (Triton answers 400): say why, for every endpoint of the model. */
        snprintf(msg, sizeof msg, "model '%s' is not ready: %s", name, why);
        if (strcmp(rest, "/ready") == 0 && is_get) {
            cJSON *o = cJSON_CreateObject();
            char *text = NULL;
            if (o && cJSON_AddStringToObject(o, "name", name) && cJSON_AddFalseToObject(o, "ready") &&
                cJSON_AddStringToObject(o, "error", msg))
                text = cJSON_PrintUnformatted(o);
            cJSON_Delete(o);
            return send_json(c, 400, text);
        }
        return send_error(c, 400, msg);
    }
    rs->model = m; /* given back in on_completed */
    if (rest[0] == '\0') {
        if (!is_get) return send_405(c, "GET, HEAD");
        return send_json(c, 200, srv_model_metadata_json(m));
    }
    if (strcmp(rest, "/ready") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        char buf[SRV_NAME_MAX + 48];
        snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"ready\":true}", m->name);
        return send_literal(c, 200, buf);
    }
    if (strcmp(rest, "/config") == 0) {
        if (!is_get) return send_405(c, "GET, HEAD");
        return send_json(c, 200, srv_model_config_json(m));
    }
    if (strcmp(rest, "/infer") == 0) {
        if (!is_post) return send_405(c, "POST");
        return start_infer(s, c, m, rs);
    }
    return send_error(c, 404, "not found");
}

/* Makes room for `need` body bytes (body_buf.c: a large body grows in place, without copying what came). The first
 * allocation is sized from Content-Length and offset so that the bytes after Inference-Header-Content-Length - the
 * first binary tensor - are 64-byte aligned and can be bound to the context without a copy. Returns 0, 1 when out of
 * memory, 2 when the server-wide budget of buffered bodies is full. */
static int grow_body(struct MHD_Connection *c, srv_state *s, req_state *rs, size_t max_body, size_t need) {
    srv_body *b = &rs->body;
    size_t cap = b->cap;
    if (!b->base) {
        size_t expect = 0, hl = 0;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *ih = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
        if (parse_size(cl, max_body, &expect)) expect = 0;
        if (!parse_size(ih, max_body, &hl) && hl <= expect) b->pad = (64 - hl % 64) % 64;
        /* Trust Content-Length up to 16 MiB at first; a larger body grows as its bytes arrive. */
        cap = (expect < ((size_t)16 << 20) ? expect : ((size_t)16 << 20)) + 1;
    }
    /* Geometric growth: few steps per body whatever the size of its pieces. Never beyond the body limit (+1 for the
     * terminator). */
    if (cap < need) {
        size_t grown = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        cap = grown > need ? grown : need;
        if (cap < 65536) cap = 65536;
        if (cap > max_body + 1 && need <= max_body + 1) cap = max_body + 1;
    }
    /* The server-wide budget of buffered bodies: reserve the growth first (the old size goes back below). */
    const size_t old_total = b->size;
    const size_t total = srv_body_size_for(b, cap);
    size_t held = atomic_fetch_add(&s->buffered, total);
    if (held + total - old_total > s->max_buffered) {
        atomic_fetch_sub(&s->buffered, total);
        return 2;
    }
    if (srv_body_reserve(b, cap)) {
        atomic_fetch_sub(&s->buffered, total);
        return 1;
    }
    atomic_fetch_sub(&s->buffered, old_total); /* the budget holds what the body holds now */
    if (b->size > total) atomic_fetch_add(&s->buffered, b->size - total);
    else atomic_fetch_sub(&s->buffered, total - b->size);
    return 0;
}

/* Lets a body go (over a limit: the rest of it is drained and dropped) and gives its bytes back to the budget. */
static void drop_body(srv_state *s, req_state *rs) {
    atomic_fetch_sub(&s->buffered, rs->body.size);
    srv_body_free(&rs->body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    srv_state *s = cls;
    req_state *rs = *con_cls;
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs) return MHD_NO;
        rs->conn = c;
        rs->t0 = now_s();
        atomic_init(&rs->finished, 0);
        atomic_fetch_add(&s->inflight, 1);
        *con_cls = rs;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->max_body) rs->too_large = 1;
        rs->bad_framing = framing_conflicts(c);
        rs->refused = srv_guard_headers(c, method, url, rs->refused_msg, sizeof rs->refused_msg);
        /* A body in a transfer coding libmicrohttpd cannot frame would be read until the client closes: answer now. */
        if (rs->refused == 501)
            return send_error_header(c, 501, rs->refused_msg, MHD_HTTP_HEADER_CONNECTION, "close");
        /* A client that waits for 100 Continue before sending a body over the limit gets the 413 at once. */
        const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
        if (rs->too_large && expect != NULL && strcasecmp(expect, "100-continue") == 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes", s->max_body);
            return send_error_header(c, 413, msg, MHD_HTTP_HEADER_CONNECTION, "close");
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (rs->too_large || rs->over_budget || rs->bad_framing || rs->refused)
            return MHD_YES; /* drain and discard; answered 413 / 503 / 400 / 415 / 431 at the end */
        srv_body *b = &rs->body;
        if (n > s->max_body - b->len) {
            rs->too_large = 1;
            drop_body(s, rs);
            return MHD_YES;
        }
        if (b->len + n + 1 > b->cap) {
            const int g = grow_body(c, s, rs, s->max_body, b->len + n + 1);
            if (g == 2) { /* over the server's budget: let the bytes go, answer 503 */
                rs->over_budget = 1;
                drop_body(s, rs);
                return MHD_YES;
            }
            if (g) return MHD_NO;
        }
        memcpy(b->data + b->len, upload_data, n);
        b->len += n;
        b->data[b->len] = '\0';
        return MHD_YES;
    }
    if (rs->req) {
        /* Resumed: the batcher finished the request. */
        if (!atomic_load(&rs->finished)) return MHD_YES;
        return answer_request(c, rs);
    }
    if (rs->bad_framing) return send_framing_error(c);
    if (rs->refused == 415) /* RFC 9110 15.5.16: say which coding is accepted */
        return send_error_header(c, 415, rs->refused_msg, MHD_HTTP_HEADER_ACCEPT_ENCODING, "identity");
    if (rs->refused)
        return send_error_header(c, rs->refused, rs->refused_msg, MHD_HTTP_HEADER_CONNECTION, "close");
    return route(s, c, url, method, rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    srv_state *s = cls;
    req_state *rs = *con_cls;
    if (!rs) return;
    if (rs->req && !rs->answered) {
        /* The client went away before its answer: count it as failed and leave the gauge right. */
        srv_model *m = rs->req->model;
        srv_metrics_request(m->metrics, 0, (now_s() - rs->t0) * 1e6, -1, -1, -1);
        atomic_fetch_sub(&m->metrics->inflight, 1);
    }
    srv_request_free(rs->req);
    srv_model_release(rs->model);
    drop_body(s, rs);
    free(rs);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

/* Waits until no request is in flight, at most ticks x 10 ms. */
static int hex_digit(char ch) {
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* URL unescaping (MHD_OPTION_UNESCAPE_CALLBACK): percent-decoding as libmicrohttpd's, except that %00 stays as it
 * is: a NUL would cut a model name short ("rn%00x" taken for "rn"); kept escaped, it names no model. */
static size_t unescape_no_nul(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls, (void)c;
    char *w = s;
    for (const char *r = s; *r;) {
        if (r[0] == '%' && hex_digit(r[1]) >= 0 && hex_digit(r[2]) >= 0) {
            const int v = hex_digit(r[1]) * 16 + hex_digit(r[2]);
            if (v != 0) {
                *w++ = (char)v;
                r += 3;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    return (size_t)(w - s);
}

/* The front stage counts a connection in s->open when it hands it over; libmicrohttpd says when it is closed
 * (MHD_OPTION_NOTIFY_CONNECTION; it notifies the close of every connection whose start it notified). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    (void)c, (void)socket_context;
    srv_state *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) atomic_fetch_sub(&s->open, 1);
}

static void wait_idle(srv_state *s, int ticks) {
    for (int i = 0; i < ticks && atomic_load(&s->inflight) > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int tc_server_main(const tc_server_options *o) {
    /* Steady memory: glibc creates a new malloc arena whenever two threads happen to contend, at any time
     * (each a step of hundreds of KiB of RSS), and its adaptive mmap threshold moves request bodies between
     * mmap and the heap as traffic changes. One arena and fixed thresholds: the heap grows to the working
     * set once and stays (the server mallocs a few times per request; the engine not at all). */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 8 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    /* Block the stop signals before any thread starts (the repository's batcher and engine threads inherit the mask):
     * only the main thread takes them, with sigwait, so a second SIGTERM/SIGINT during the drain stays pending
     * instead of killing the process mid-drain with its default action. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    srv_state *s = calloc(1, sizeof *s);
    if (!s) return 1;
    s->max_body = o->max_body_bytes ? o->max_body_bytes : (size_t)64 << 20;
    s->max_buffered = o->max_buffered_bytes ? o->max_buffered_bytes
                                            : (s->max_body > SIZE_MAX / 4 ? SIZE_MAX : 4 * s->max_body);
    atomic_init(&s->buffered, 0);
    atomic_init(&s->inflight, 0);
    atomic_init(&s->ready, 0);
    atomic_init(&s->open, 0);
    s->relaxed_readiness = o->relaxed_readiness != 0;
    if (srv_repo_open(&s->repo, o->model_repository, o->engine_threads)) {
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
    const int n_models = s->repo.n; /* before any HTTP thread can add slots */
    unsigned threads = o->threads > 0 ? (unsigned)o->threads : 2;
    /* The server listens and accepts itself (http_front.c: a malformed first request head gets a JSON error there);
     * libmicrohttpd serves the connections it is handed. The front stage keeps them to SRV_MAX_CONNECTIONS (a JSON
     * 503 past it); libmicrohttpd's own limit, split evenly over its threads, lets any one thread take them all, so
     * that it never closes a handed connection without an answer. */
    const int lfd = srv_front_listen(&addr);
    if (lfd < 0) {
        fprintf(stderr, "tailcut serve: cannot listen on %s:%d: %s\n", host, o->http_port, strerror(errno));
        srv_repo_free(&s->repo);
        free(s);
        return 1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_AUTO |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_NO_LISTEN_SOCKET;
    unsigned timeout_s = o->connection_timeout_s > 0 ? (unsigned)o->connection_timeout_s : 30u;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT,
        timeout_s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)SRV_MAX_CONNECTIONS * threads,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_CONNECTION_MEMORY, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
        MHD_OPTION_END);
    srv_front_options fo = {lfd, d, timeout_s, SRV_MAX_PENDING, &s->open, SRV_MAX_CONNECTIONS};
    srv_front *front = d ? srv_front_start(&fo) : NULL;
    if (!front) {
        fprintf(stderr, "tailcut serve: cannot start the HTTP server on %s:%d\n", host, o->http_port);
        if (d) MHD_stop_daemon(d);
        else close(lfd);
        srv_repo_free(&s->repo);
        free(s);
        return 1;
    }
    atomic_store(&s->ready, 1);
    fprintf(stderr, "tailcut serve: listening on %s:%d (%d models, %u threads)\n", host, o->http_port, n_models,
            threads);
    int sig = 0;
    sigwait(&set, &sig);
    const int limit_s = o->shutdown_timeout_s > 0 ? o->shutdown_timeout_s : 25;
    fprintf(stderr, "tailcut serve: %s: draining (at most %d s)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT", limit_s);
    atomic_store(&s->ready, 0);
    srv_front_stop(front); /* no new connection from now on */
    /* Finish in-flight requests (four fifths of the limit), then let the instances empty the queues (requests still
     * queued run now) and answer what they finished (the rest); then close what is left (a stalled upload), so that
     * the whole shutdown stays inside the limit (Kubernetes kills the pod at its grace period). */
    const int ticks = limit_s * 100; /* wait_idle's 10 ms ticks */
    wait_idle(s, ticks * 4 / 5);
    srv_repo_stop(&s->repo);
    wait_idle(s, ticks - ticks * 4 / 5);
    if (atomic_load(&s->inflight) > 0)
        fprintf(stderr, "tailcut serve: closing %d connection(s) still open after %d s\n", atomic_load(&s->inflight),
                limit_s);
    MHD_stop_daemon(d);
    srv_repo_free(&s->repo);
    free(s);
    fprintf(stderr, "tailcut serve: stopped\n");
    return 0;
}
