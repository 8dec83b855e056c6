/* cmd_loadgen.c - `tailcut loadgen`: an HTTP load generator for a KServe v2 server such as
 * `tailcut serve` (loopback only). Reads the model metadata, builds one JSON infer body, then
 * sends it either open loop (--rate: Poisson or constant schedule of intended send times, latency
 * measured from the intended time, so no coordinated omission) or closed loop (--concurrency: C
 * workers back to back). Reports sent/ok/errors by kind, throughput and latency percentiles
 * (stats.c), optionally as JSON. Plain POSIX sockets, HTTP/1.1 with Content-Length, keep-alive.
 * With --binary the body uses the KServe v2 / Triton binary tensor data extension: a JSON header (inputs
 * with parameters.binary_data_size and no data, every metadata output requested with
 * parameters.binary_data) followed by the raw little-endian input tensors, announced by
 * Inference-Header-Content-Length; a 2xx answer must then be binary too (its JSON header of
 * Inference-Header-Content-Length bytes, then exactly the sum of the outputs' binary_data_size
 * bytes, each product(shape) x element size), else it counts as malformed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "stats.h"
#include "tailcut/tailcut.h"

#define LG_MAX_WORKERS 64          /* open-loop connection pool bound */
#define LG_MAX_CONCURRENCY 256     /* closed-loop worker bound */
#define LG_MAX_SCHEDULE 10000000L  /* open-loop requests bound */
#define LG_MAX_SAMPLES 4000000L    /* closed-loop samples bound */
#define LG_MAX_HEADER (64 * 1024)  /* response header bytes */
#define LG_MAX_BODY (512L << 20)   /* response body bytes */
#define LG_MAX_ELEMS (64L << 20)   /* elements of the generated request */

/* Outcome of one request; the names are the keys of "errors". */
enum { K_OK = 0, K_CONNECT, K_TIMEOUT, K_HTTP_4XX, K_HTTP_5XX, K_HTTP_OTHER, K_MALFORMED, K_IO, K_NOT_SENT, K_KINDS };
static const char *const k_kind_names[K_KINDS] = {"ok",       "connect",   "timeout", "http_4xx", "http_5xx",
                                                  "http_other", "malformed", "io",      "not_sent"};

typedef struct lg_args {
    const char *url, *model, *input, *json, *dist;
    double rate, duration_s;
    long concurrency, timeout_ms;
    uint64_t seed;
    bool binary; /* --binary: binary tensor data extension */
} lg_args;

typedef struct lg_conn {
    int fd;
    char *buf; /* response buffer, grown as needed */
    size_t cap;
} lg_conn;

/* Shared state of a run. */
typedef struct lg_run {
    struct sockaddr_in addr;
    char host_hdr[64];
    char *req;       /* full request: header + body */
    size_t req_len;
    const char *path; /* for the report */
    long timeout_ms;
    bool open_loop;
    bool binary;            /* responses must use the binary tensor extension */
    double t0;              /* CLOCK_MONOTONIC seconds of the start */
    double duration_s;
    const double *sched;    /* open loop: intended offsets from t0, ascending */
    long n_sched;
    atomic_long next;       /* open loop: next schedule index */
    double *samples;        /* latencies (ms) of ok responses */
    long sample_cap;
    atomic_long n_samples;
    atomic_long kinds[K_KINDS];
    atomic_long sent;
    double last_done;       /* latest completion, protected by mu */
    pthread_mutex_t mu;
} lg_run;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    for (int k = 0; k < 1000; k++) /* EINTR retries, bounded */
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != EINTR) break;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double uniform01(uint64_t *s) { return ((double)(splitmix64(s) >> 11) + 1.0) / 9007199254740992.0; }

/* ---- HTTP client ---------------------------------------------------------- */

static int remaining_ms(double deadline) {
    double r = (deadline - now_s()) * 1000.0;
    if (r <= 0) return 0;
    return r > 2e9 ? 2000000000 : (int)r + 1;
}

static void conn_close(lg_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

/* Non-blocking connect with the deadline. Returns K_OK, K_CONNECT or K_TIMEOUT. */
static int conn_open(lg_conn *c, const struct sockaddr_in *addr, double deadline) {
    conn_close(c);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return K_CONNECT;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
        if (errno != EINPROGRESS) {
            close(fd);
            return K_CONNECT;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r;
        do r = poll(&p, 1, remaining_ms(deadline));
        while (r < 0 && errno == EINTR && remaining_ms(deadline) > 0);
        if (r == 0) {
            close(fd);
            return K_TIMEOUT;
        }
        int err = 0;
        socklen_t len = sizeof err;
        if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            close(fd);
            return K_CONNECT;
        }
    }
    c->fd = fd;
    return K_OK;
}

/* Waits for fd to be ready for `events`; K_OK, K_TIMEOUT or K_IO. */
static int wait_fd(int fd, short events, double deadline) {
    for (int k = 0; k < 1000; k++) {
        int ms = remaining_ms(deadline);
        if (ms == 0) return K_TIMEOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0) return K_OK;
        if (r == 0) return K_TIMEOUT;
        if (errno != EINTR) return K_IO;
    }
    return K_IO;
}

static int send_all(int fd, const char *p, size_t n, double deadline) {
    size_t off = 0;
    while (off < n) {
        ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_fd(fd, POLLOUT, deadline);
            if (r != K_OK) return r;
            continue;
        }
        return K_IO;
    }
    return K_OK;
}

/* Case-insensitive search of header `name` in the header block; returns its value or NULL. */
static const char *find_header(const char *hdr, size_t hlen, const char *name) {
    size_t nl = strlen(name);
    const char *p = memchr(hdr, '\n', hlen); /* skip the status line */
    const char *end = hdr + hlen;
    while (p && p + 1 < end) {
        p++;
        if ((size_t)(end - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (v < end && (*v == ' ' || *v == '\t')) v++;
            return v;
        }
        p = memchr(p, '\n', (size_t)(end - p));
    }
    return NULL;
}

typedef struct lg_resp {
    int status;
    const char *hdr; /* status line and headers, hdr_len bytes */
    size_t hdr_len;
    const char *body;
    size_t body_len;
    bool close_after;
    size_t received; /* bytes read; 0 means the server closed an idle connection */
} lg_resp;

/* Reads one response on c. Returns K_OK (resp filled), K_TIMEOUT, K_IO or K_MALFORMED. */
static int read_response(lg_conn *c, double deadline, lg_resp *resp) {
    memset(resp, 0, sizeof *resp);
    size_t len = 0, hdr_len = 0, total = 0;
    bool have_hdr = false;
    for (long iter = 0; iter < 100000000L; iter++) {
        if (have_hdr && len >= total) break;
        size_t want = have_hdr ? total : len + 65536;
        if (want + 1 > c->cap) {
            size_t nc = c->cap ? c->cap : 65536;
            while (nc < want + 1) nc *= 2;
            char *nb = realloc(c->buf, nc);
            if (!nb) return K_IO;
            c->buf = nb;
            c->cap = nc;
        }
        ssize_t r = recv(c->fd, c->buf + len, (have_hdr ? total : c->cap - 1) - len, 0);
        if (r == 0) {
            resp->received = len;
            return len == 0 ? K_IO : K_MALFORMED; /* closed mid-response */
        }
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                int w = wait_fd(c->fd, POLLIN, deadline);
                if (w != K_OK) {
                    resp->received = len;
                    return w;
                }
                continue;
            }
            resp->received = len;
            return K_IO;
        }
        len += (size_t)r;
        resp->received = len;
        if (!have_hdr) {
            c->buf[len] = '\0';
            char *e = strstr(c->buf, "\r\n\r\n");
            if (!e) {
                if (len > LG_MAX_HEADER) return K_MALFORMED;
                continue;
            }
            hdr_len = (size_t)(e - c->buf) + 4;
            int major = 0, minor = 0, st = 0;
            if (sscanf(c->buf, "HTTP/%d.%d %3d", &major, &minor, &st) != 3 || major != 1 || st < 100 || st > 599)
                return K_MALFORMED;
            resp->status = st;
            if (find_header(c->buf, hdr_len, "Transfer-Encoding")) return K_MALFORMED; /* only Content-Length */
            const char *cl = find_header(c->buf, hdr_len, "Content-Length");
            char *cend;
            errno = 0;
            long long n = cl ? strtoll(cl, &cend, 10) : -1;
            if (!cl || cend == cl || errno || n < 0 || n > LG_MAX_BODY) return K_MALFORMED;
            const char *conn = find_header(c->buf, hdr_len, "Connection");
            resp->close_after = minor == 0 || (conn && strncasecmp(conn, "close", 5) == 0);
            total = hdr_len + (size_t)n;
            have_hdr = true;
        }
    }
    if (!have_hdr || len != total) return K_MALFORMED;
    c->buf[len] = '\0';
    resp->hdr = c->buf;
    resp->hdr_len = hdr_len;
    resp->body = c->buf + hdr_len;
    resp->body_len = total - hdr_len;
    return K_OK;
}

/* Sends req on c (opening it if needed; one silent retry when a reused keep-alive connection turns
 * out closed) and reads the response. Returns an R_* outcome; *sent_any says a request went out. */
static int do_request(lg_conn *c, const struct sockaddr_in *addr, const char *req, size_t req_len, double deadline,
                      lg_resp *resp, bool *sent_any) {
    *sent_any = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        memset(resp, 0, sizeof *resp);
        bool reused = c->fd >= 0;
        if (!reused) {
            int r = conn_open(c, addr, deadline);
            if (r != K_OK) return r;
        }
        int r = send_all(c->fd, req, req_len, deadline);
        *sent_any = true;
        if (r == K_OK) r = read_response(c, deadline, resp);
        if (r == K_IO && reused && resp->received == 0) {
            conn_close(c); /* stale keep-alive connection: reconnect and resend once */
            continue;
        }
        if (r != K_OK || resp->close_after) conn_close(c);
        return r;
    }
    return K_IO;
}

/* Bytes per element of a fixed-size KServe datatype; 0 for BYTES and unknown names. */
static size_t kserve_elem_size(const char *dt) {
    static const struct {
        const char *name;
        size_t size;
    } t[] = {{"BOOL", 1},   {"INT8", 1},   {"UINT8", 1}, {"INT16", 2}, {"UINT16", 2}, {"FP16", 2}, {"BF16", 2},
             {"INT32", 4},  {"UINT32", 4}, {"FP32", 4},  {"INT64", 8}, {"UINT64", 8}, {"FP64", 8}};
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (strcmp(dt, t[k].name) == 0) return t[k].size;
    return 0;
}

/* A JSON number that is an integer in [0, LG_MAX_BODY]: stored in *out. */
static bool json_size(const cJSON *j, size_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    double v = j->valuedouble;
    if (!(v >= 0) || v > (double)LG_MAX_BODY || v != floor(v)) return false;
    *out = (size_t)v;
    return true;
}

/* Checks BYTES data: `count` elements, each a 4-byte little-endian length and that many bytes,
 * filling exactly n bytes. */
static bool bytes_blob_ok(const unsigned char *p, size_t n, size_t count) {
    size_t off = 0;
    for (size_t e = 0; e < count; e++) {
        if (n - off < 4) return false;
        size_t l = (size_t)p[off] | (size_t)p[off + 1] << 8 | (size_t)p[off + 2] << 16 | (size_t)p[off + 3] << 24;
        off += 4;
        if (l > n - off) return false;
        off += l;
    }
    return off == n;
}

/* Checks a 2xx answer of the binary tensor extension: Inference-Header-Content-Length N <= body
 * length, the first N bytes a JSON object with an "outputs" array whose entries each have a
 * name, datatype, shape and parameters.binary_data_size B matching the shape, and the rest of
 * the body exactly the sum of the B's. */
static bool binary_response_ok(const lg_resp *resp) {
    const char *v = find_header(resp->hdr, resp->hdr_len, "Inference-Header-Content-Length");
    if (!v) return false;
    const char *hend = resp->hdr + resp->hdr_len;
    size_t n = 0;
    const char *p = v;
    for (; p < hend && *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (size_t)(*p - '0');
        if (n > LG_MAX_BODY) return false;
    }
    if (p == v) return false;
    while (p < hend && (*p == ' ' || *p == '\t')) p++;
    if (p >= hend || *p != '\r' || n == 0 || n > resp->body_len) return false;

    const char *parse_end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(resp->body, n, &parse_end, false);
    bool ok = j && cJSON_IsObject(j) && parse_end && parse_end >= resp->body && parse_end <= resp->body + n;
    for (const char *q = ok ? parse_end : resp->body + n; q < resp->body + n; q++) /* only blanks after the JSON */
        if (*q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') ok = false;
    const cJSON *outs = ok ? cJSON_GetObjectItemCaseSensitive(j, "outputs") : NULL;
    if (!cJSON_IsArray(outs)) ok = false;
    const size_t rest = resp->body_len - n;
    const unsigned char *blob = (const unsigned char *)resp->body + n;
    size_t sum = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, outs) {
        if (!ok) break;
        const cJSON *jn = cJSON_GetObjectItemCaseSensitive(o, "name");
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "datatype");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(o, "shape");
        const cJSON *jp = cJSON_GetObjectItemCaseSensitive(o, "parameters");
        size_t b = 0;
        if (!cJSON_IsString(jn) || !cJSON_IsString(jd) || !cJSON_IsArray(js) || !cJSON_IsObject(jp) ||
            !json_size(cJSON_GetObjectItemCaseSensitive(jp, "binary_data_size"), &b) || b > rest - sum) {
            ok = false;
            break;
        }
        /* Elements of the shape, bounded by LG_MAX_BODY (a zero dimension makes it 0). */
        size_t count = 1;
        bool zero = false, big = false;
        const cJSON *d;
        cJSON_ArrayForEach(d, js) {
            double dv = cJSON_IsNumber(d) ? d->valuedouble : -1.0;
            if (!(dv >= 0) || dv != floor(dv)) {
                ok = false;
                break;
            }
            if (dv == 0) zero = true;
            else if (big || dv > (double)LG_MAX_BODY || count > (size_t)LG_MAX_BODY / (size_t)dv) big = true;
            else count *= (size_t)dv;
        }
        if (!ok) break;
        if (zero) {
            count = 0;
            big = false;
        }
        size_t es = kserve_elem_size(jd->valuestring);
        if (es) {
            if (big || count > (size_t)LG_MAX_BODY / es || count * es != b) ok = false;
        } else if (strcmp(jd->valuestring, "BYTES") == 0) {
            if (big || !bytes_blob_ok(blob + sum, b, count)) ok = false;
        } else {
            ok = false; /* unknown datatype */
        }
        sum += b;
    }
    if (ok && sum != rest) ok = false;
    cJSON_Delete(j);
    return ok;
}

/* Classifies a response: K_OK for 2xx with a JSON object body (with "outputs" when check_outputs),
 * or with binary, a valid answer of the binary tensor extension. */
static int classify(const lg_resp *resp, bool check_outputs, bool binary) {
    if (resp->status >= 500) return K_HTTP_5XX;
    if (resp->status >= 400) return K_HTTP_4XX;
    if (resp->status < 200 || resp->status >= 300) return K_HTTP_OTHER;
    if (binary) return binary_response_ok(resp) ? K_OK : K_MALFORMED;
    cJSON *j = cJSON_ParseWithLength(resp->body, resp->body_len);
    bool ok = j && cJSON_IsObject(j) && (!check_outputs || cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "outputs")));
    cJSON_Delete(j);
    return ok ? K_OK : K_MALFORMED;
}

/* ---- workers -------------------------------------------------------------- */

static void record(lg_run *run, int kind, double lat_ms, double done) {
    atomic_fetch_add(&run->kinds[kind], 1);
    if (kind == K_OK) {
        long i = atomic_fetch_add(&run->n_samples, 1);
        if (i < run->sample_cap) run->samples[i] = lat_ms;
    }
    pthread_mutex_lock(&run->mu);
    if (done > run->last_done) run->last_done = done;
    pthread_mutex_unlock(&run->mu);
}

static int one_request(lg_run *run, lg_conn *c, double lat_from) {
    double start = now_s();
    lg_resp resp;
    bool sent_any = false;
    int r = do_request(c, &run->addr, run->req, run->req_len, start + (double)run->timeout_ms * 1e-3, &resp, &sent_any);
    double end = now_s();
    atomic_fetch_add(&run->sent, 1);
    if (r == K_OK) r = classify(&resp, true, run->binary);
    record(run, r, (end - lat_from) * 1e3, end);
    return r;
}

static void *worker(void *arg) {
    lg_run *run = arg;
    lg_conn c = {.fd = -1};
    if (run->open_loop) {
        /* Past this point nothing more is sent: what is left is counted as not_sent. */
        double cutoff = run->t0 + run->duration_s + (double)run->timeout_ms * 1e-3;
        for (long guard = 0; guard < LG_MAX_SCHEDULE; guard++) {
            long i = atomic_fetch_add(&run->next, 1);
            if (i >= run->n_sched) break;
            double intended = run->t0 + run->sched[i];
            if (now_s() > cutoff) {
                atomic_fetch_add(&run->kinds[K_NOT_SENT], 1);
                continue;
            }
            sleep_until(intended);
            one_request(run, &c, intended); /* latency from the intended send time */
        }
    } else {
        double stop = run->t0 + run->duration_s;
        for (long guard = 0; guard < LG_MAX_SAMPLES; guard++) {
            double s = now_s();
            if (s >= stop || atomic_load(&run->n_samples) >= run->sample_cap) break;
            int r = one_request(run, &c, s);
            if (r == K_CONNECT) usleep(10000); /* no busy spin against a refusing port */
        }
    }
    conn_close(&c);
    free(c.buf);
    return NULL;
}

/* ---- request body --------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->len + n + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void sb_json_string(sbuf *b, const char *s) {
    cJSON *j = cJSON_CreateString(s);
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    if (t) sb_str(b, t);
    else b->oom = true;
    free(t);
    cJSON_Delete(j);
}

/* Appends element k of a loaded tensor as a JSON number/bool; returns -1 for an unsupported dtype. */
static int put_tensor_elem(sbuf *b, const tc_tensor *t, size_t k) {
    const void *d = t->data;
    switch (t->dtype) {
    case TC_DTYPE_FLOAT32: sb_printf(b, "%.9g", (double)((const float *)d)[k]); return 0;
    case TC_DTYPE_FLOAT64: sb_printf(b, "%.17g", ((const double *)d)[k]); return 0;
    case TC_DTYPE_INT8: sb_printf(b, "%d", (int)((const int8_t *)d)[k]); return 0;
    case TC_DTYPE_UINT8: sb_printf(b, "%u", (unsigned)((const uint8_t *)d)[k]); return 0;
    case TC_DTYPE_INT16: sb_printf(b, "%d", (int)((const int16_t *)d)[k]); return 0;
    case TC_DTYPE_UINT16: sb_printf(b, "%u", (unsigned)((const uint16_t *)d)[k]); return 0;
    case TC_DTYPE_INT32: sb_printf(b, "%ld", (long)((const int32_t *)d)[k]); return 0;
    case TC_DTYPE_UINT32: sb_printf(b, "%lu", (unsigned long)((const uint32_t *)d)[k]); return 0;
    case TC_DTYPE_INT64: sb_printf(b, "%lld", (long long)((const int64_t *)d)[k]); return 0;
    case TC_DTYPE_UINT64: sb_printf(b, "%llu", (unsigned long long)((const uint64_t *)d)[k]); return 0;
    case TC_DTYPE_BOOL: sb_str(b, ((const uint8_t *)d)[k] ? "true" : "false"); return 0;
    default: return -1;
    }
}

static const char *dtype_kserve(tc_dtype dt) {
    switch (dt) {
    case TC_DTYPE_FLOAT32: return "FP32";
    case TC_DTYPE_FLOAT64: return "FP64";
    case TC_DTYPE_INT8: return "INT8";
    case TC_DTYPE_UINT8: return "UINT8";
    case TC_DTYPE_INT16: return "INT16";
    case TC_DTYPE_UINT16: return "UINT16";
    case TC_DTYPE_INT32: return "INT32";
    case TC_DTYPE_UINT32: return "UINT32";
    case TC_DTYPE_INT64: return "INT64";
    case TC_DTYPE_UINT64: return "UINT64";
    case TC_DTYPE_BOOL: return "BOOL";
    default: return NULL;
    }
}

/* One random non-zero value of KServe datatype dt (floats ~N(0,1), ints [1,100), or 1 for
 * mask/token_type/segment names, bools true = 1). */
static double random_value(const char *dt, bool ones, uint64_t *rng) {
    if (strcmp(dt, "BOOL") == 0) {
        return 1.0;
    } else if (dt[0] == 'F' || dt[0] == 'B') { /* FP16/FP32/FP64/BF16 */
        double s = 0;
        for (int k = 0; k < 12; k++) s += uniform01(rng);
        s -= 6.0;
        if (s > -1e-3 && s < 1e-3) s = s < 0 ? -1e-3 : 1e-3;
        return s;
    }
    return ones ? 1.0 : (double)(1 + (int)(splitmix64(rng) % 99u));
}

/* Appends one random value (random_value) of KServe datatype dt as JSON. */
static void put_random(sbuf *b, const char *dt, bool ones, uint64_t *rng) {
    double v = random_value(dt, ones, rng);
    if (strcmp(dt, "BOOL") == 0) sb_str(b, "true");
    else if (dt[0] == 'F' || dt[0] == 'B') sb_printf(b, "%.6g", v);
    else sb_printf(b, "%d", (int)v);
}

/* Appends the low n (<= 8) bytes of bits, little-endian. */
static void put_le(sbuf *b, uint64_t bits, size_t n) {
    unsigned char t[8];
    for (size_t k = 0; k < n && k < 8; k++) t[k] = (unsigned char)(bits >> (8 * k));
    sb_put(b, (const char *)t, n < 8 ? n : 8);
}

/* Appends one random value of KServe datatype dt (es bytes per element; FP16/BF16 not handled)
 * raw: the value the JSON path would send, floats rounded to the same 6 digits. */
static void put_random_raw(sbuf *b, const char *dt, size_t es, bool ones, uint64_t *rng) {
    double v = random_value(dt, ones, rng);
    if (dt[0] == 'F') { /* FP32/FP64 */
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%.6g", v);
        v = strtod(tmp, NULL);
        if (es == 4) {
            float f = (float)v;
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            put_le(b, u, 4);
        } else {
            uint64_t u;
            memcpy(&u, &v, sizeof u);
            put_le(b, u, 8);
        }
    } else {
        put_le(b, (uint64_t)(int64_t)v, es); /* BOOL 1 and integers, two's complement */
    }
}

/* Appends element k of a loaded tensor raw, little-endian (bools as 0/1); -1 for an unsupported dtype. */
static int put_tensor_raw(sbuf *b, const tc_tensor *t, size_t k) {
    if (!dtype_kserve(t->dtype)) return -1;
    size_t es = tc_dtype_size(t->dtype);
    const unsigned char *p = (const unsigned char *)t->data + k * es;
    if (t->dtype == TC_DTYPE_BOOL) {
        put_le(b, *p ? 1u : 0u, 1);
        return 0;
    }
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (es) {
    case 1: memcpy(&u8, p, 1); put_le(b, u8, 1); return 0;
    case 2: memcpy(&u16, p, 2); put_le(b, u16, 2); return 0;
    case 4: memcpy(&u32, p, 4); put_le(b, u32, 4); return 0;
    case 8: memcpy(&u64, p, 8); put_le(b, u64, 8); return 0;
    default: return -1;
    }
}

/* Builds the infer body from the metadata JSON; prints the reason and returns NULL on failure.
 * *body_len receives its length, *json_len the length of its JSON part (all of it without
 * a->binary; with it the raw input tensors follow). *desc receives a one-line description of the inputs. */
static char *build_body(const cJSON *md, const lg_args *a, size_t *body_len, size_t *json_len, char *desc,
                        size_t desc_size) {
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(md, "inputs");
    int n_in = cJSON_GetArraySize(inputs);
    if (!cJSON_IsArray(inputs) || n_in < 1) {
        fprintf(stderr, "tailcut loadgen: the model metadata has no inputs\n");
        return NULL;
    }
    tc_tensor file_t;
    memset(&file_t, 0, sizeof file_t);
    char file_name[256] = "";
    if (a->input) {
        tc_error err;
        if (tc_tensor_load(a->input, &file_t, file_name, sizeof file_name, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut loadgen: cannot load %s: %s\n", a->input, err.message);
            return NULL;
        }
    }
    sbuf b = {0}, bin = {0}; /* JSON, and with a->binary the raw tensors */
    uint64_t rng = a->seed ^ 0x5EEDull;
    bool failed = false, used_file = false;
    size_t dl = 0;
    desc[0] = '\0';
    sb_str(&b, "{\"inputs\":[");
    for (int k = 0; k < n_in && !failed; k++) {
        const cJSON *in = cJSON_GetArrayItem(inputs, k);
        const cJSON *jn = cJSON_GetObjectItemCaseSensitive(in, "name");
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(in, "datatype");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(in, "shape");
        if (!cJSON_IsString(jn) || !cJSON_IsString(jd) || !cJSON_IsArray(js) || cJSON_GetArraySize(js) > TC_MAX_RANK) {
            fprintf(stderr, "tailcut loadgen: malformed input %d in the model metadata\n", k);
            failed = true;
            break;
        }
        const char *name = jn->valuestring, *dt = jd->valuestring;
        bool from_file = a->input && (n_in == 1 || strcmp(file_name, name) == 0);
        int64_t dims[TC_MAX_RANK];
        int rank = 0;
        long long count = 1;
        if (from_file) {
            used_file = true;
            const char *fdt = dtype_kserve(file_t.dtype);
            if (!fdt || strcmp(fdt, dt) != 0) {
                fprintf(stderr, "tailcut loadgen: %s holds %s, input '%s' is %s\n", a->input,
                        fdt ? fdt : tc_dtype_name(file_t.dtype), name, dt);
                failed = true;
                break;
            }
            rank = file_t.rank;
            for (int d = 0; d < rank; d++) dims[d] = file_t.dims[d];
        } else {
            const cJSON *e;
            cJSON_ArrayForEach(e, js) {
                if (!cJSON_IsNumber(e) || !(e->valuedouble > -2.0) || e->valuedouble > 9.0e18) break;
                int64_t v = (int64_t)e->valuedouble;
                dims[rank++] = v < 0 ? 1 : v; /* dynamic dimensions take 1 */
            }
            if (rank != cJSON_GetArraySize(js)) {
                fprintf(stderr, "tailcut loadgen: malformed shape of input '%s'\n", name);
                failed = true;
                break;
            }
        }
        for (int d = 0; d < rank; d++) {
            if (dims[d] > LG_MAX_ELEMS) count = count ? LG_MAX_ELEMS + 1 : 0; /* no overflow below */
            else count *= dims[d];
            if (count > LG_MAX_ELEMS) break;
        }
        if (count > LG_MAX_ELEMS) {
            fprintf(stderr, "tailcut loadgen: input '%s' has more than %ld elements\n", name, LG_MAX_ELEMS);
            failed = true;
            break;
        }
        sb_str(&b, k ? ",{\"name\":" : "{\"name\":");
        sb_json_string(&b, name);
        sb_str(&b, ",\"datatype\":");
        sb_json_string(&b, dt);
        sb_str(&b, ",\"shape\":[");
        for (int d = 0; d < rank; d++) sb_printf(&b, d ? ",%lld" : "%lld", (long long)dims[d]);
        bool ones = strstr(name, "mask") || strstr(name, "token_type") || strstr(name, "segment");
        if (a->binary) {
            size_t es = kserve_elem_size(dt);
            if (es == 0 || strcmp(dt, "FP16") == 0 || strcmp(dt, "BF16") == 0) {
                fprintf(stderr, "tailcut loadgen: datatype %s of input '%s' is not supported with --binary\n", dt,
                        name);
                failed = true;
                break;
            }
            if (from_file && tc_dtype_size(file_t.dtype) != es) {
                fprintf(stderr, "tailcut loadgen: dtype %s of %s is not supported\n", tc_dtype_name(file_t.dtype),
                        a->input);
                failed = true;
                break;
            }
            size_t start = bin.len;
            for (long long e = 0; e < count && !bin.oom; e++) {
                if (!from_file) put_random_raw(&bin, dt, es, ones, &rng);
                else if (put_tensor_raw(&bin, &file_t, (size_t)e) != 0) {
                    fprintf(stderr, "tailcut loadgen: dtype %s of %s is not supported\n", tc_dtype_name(file_t.dtype),
                            a->input);
                    failed = true;
                    break;
                }
            }
            if (!bin.oom && !failed && bin.len - start != (size_t)count * es) {
                fprintf(stderr, "tailcut loadgen: internal error: input '%s' wrote %zu bytes\n", name, bin.len - start);
                failed = true;
            }
            sb_printf(&b, "],\"parameters\":{\"binary_data_size\":%zu}}", (size_t)count * es);
        } else {
            sb_str(&b, "],\"data\":[");
        }
        for (long long e = 0; e < count && !b.oom && !a->binary; e++) {
            if (e) sb_put(&b, ",", 1);
            if (from_file) {
                if (put_tensor_elem(&b, &file_t, (size_t)e) != 0) {
                    fprintf(stderr, "tailcut loadgen: dtype %s of %s is not supported\n", tc_dtype_name(file_t.dtype),
                            a->input);
                    failed = true;
                    break;
                }
            } else {
                put_random(&b, dt, ones, &rng);
            }
        }
        if (!a->binary) sb_str(&b, "]}");
        if (dl < desc_size) {
            int w = snprintf(desc + dl, desc_size - dl, "%s%s %s[", k ? ", " : "", name, dt);
            dl += w > 0 ? (size_t)w : 0;
            for (int d = 0; d < rank && dl < desc_size; d++) {
                w = snprintf(desc + dl, desc_size - dl, d ? ",%lld" : "%lld", (long long)dims[d]);
                dl += w > 0 ? (size_t)w : 0;
            }
            if (dl < desc_size) {
                w = snprintf(desc + dl, desc_size - dl, "]%s", from_file ? " from file" : "");
                dl += w > 0 ? (size_t)w : 0;
            }
        }
    }
    sb_str(&b, "]");
    if (a->binary && !failed) { /* every output of the metadata, as binary */
        const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(md, "outputs");
        int n_out = cJSON_GetArraySize(outputs);
        if (!cJSON_IsArray(outputs) || n_out < 1) {
            fprintf(stderr, "tailcut loadgen: the model metadata has no outputs to request as binary\n");
            failed = true;
        }
        sb_str(&b, ",\"outputs\":[");
        for (int k = 0; k < n_out && !failed; k++) {
            const cJSON *jn = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(outputs, k), "name");
            if (!cJSON_IsString(jn)) {
                fprintf(stderr, "tailcut loadgen: malformed output %d in the model metadata\n", k);
                failed = true;
                break;
            }
            sb_str(&b, k ? ",{\"name\":" : "{\"name\":");
            sb_json_string(&b, jn->valuestring);
            sb_str(&b, ",\"parameters\":{\"binary_data\":true}}");
        }
        sb_str(&b, "]");
    }
    sb_str(&b, "}");
    *json_len = b.len;
    if (a->binary && bin.len) sb_put(&b, bin.p, bin.len);
    b.oom |= bin.oom;
    free(bin.p);
    *body_len = b.len;
    if (a->input) tc_tensor_free(&file_t);
    if (!failed && a->input && !used_file) {
        fprintf(stderr, "tailcut loadgen: the model has %d inputs and %s names none of them\n", n_in, a->input);
        failed = true;
    }
    if (b.oom && !failed) {
        fprintf(stderr, "tailcut loadgen: out of memory building the request\n");
        failed = true;
    }
    if (failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- arguments ------------------------------------------------------------ */

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut loadgen --url http://127.0.0.1:PORT --model M (--rate R | --concurrency C)\n"
            "                       --duration S [options]\n"
            "  --rate R               open loop: R requests/s on a schedule fixed in advance; latency is\n"
            "                         measured from each request's intended send time (no coordinated omission)\n"
            "  --distribution D       poisson (default: exponential gaps from --seed) or constant (1/R)\n"
            "  --concurrency C        closed loop: C connections, each sending back to back (C <= %d)\n"
            "  --duration S           seconds of load\n"
            "  --input FILE           .npy/.pb tensor for the (single, or so named) input; default seeded random\n"
            "                         non-zero data in the metadata shapes, dynamic dimensions 1\n"
            "  --json FILE            write sent, ok, errors{kind: n}, throughput_per_s, p50_ms, p90_ms, p99_ms,\n"
            "                         p999_ms, mean_ms, max_ms (percentiles null without successful responses)\n"
            "  --seed N               seed of the schedule and the random data (default 0)\n"
            "  --timeout-ms N         per-request timeout, connect to full response (default 10000)\n"
            "  --binary               use the KServe v2 binary tensor data extension: a JSON header with\n"
            "                         parameters.binary_data_size per input, then the raw little-endian tensors\n"
            "                         (Content-Type application/octet-stream, Inference-Header-Content-Length);\n"
            "                         all outputs requested binary. Inputs FP32/FP64/(U)INT8-64/BOOL\n"
            "Only loopback addresses (127.0.0.0/8, localhost). Error kinds: connect, timeout, http_4xx,\n"
            "http_5xx, http_other, malformed (bad HTTP or non-JSON 2xx body; with --binary a 2xx answer that\n"
            "is not a consistent binary one: Inference-Header-Content-Length, JSON header, binary_data_size\n"
            "of each output = shape x element size, their sum = the bytes after the header), io (reset),\n"
            "not_sent (open loop: still unsent when the duration plus the timeout had passed). Exit 0 unless\n"
            "the arguments are wrong or the metadata cannot be read.\n",
            LG_MAX_CONCURRENCY);
}

static int parse_num(const char *opt, const char *v, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !(x >= lo) || !(x <= hi)) {
        fprintf(stderr, "tailcut loadgen: %s needs a number in [%g, %g], got '%s'\n", opt, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse(int argc, char **argv, lg_args *a) {
    memset(a, 0, sizeof *a);
    a->timeout_ms = 10000;
    a->dist = "poisson";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(o, "--binary") == 0) {
            a->binary = true;
            continue;
        }
        static const char *const valued[] = {"--url",   "--model", "--rate", "--distribution", "--concurrency",
                                             "--duration", "--input", "--json", "--seed",         "--timeout-ms"};
        bool known = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= strcmp(o, valued[k]) == 0;
        if (!known) {
            fprintf(stderr, "tailcut loadgen: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tailcut loadgen: %s needs a value\n", o);
            return 2;
        }
        const char *v = argv[++i];
        double x = 0;
        if (strcmp(o, "--url") == 0) a->url = v;
        else if (strcmp(o, "--model") == 0) a->model = v;
        else if (strcmp(o, "--input") == 0) a->input = v;
        else if (strcmp(o, "--json") == 0) a->json = v;
        else if (strcmp(o, "--distribution") == 0) {
            if (strcmp(v, "poisson") != 0 && strcmp(v, "constant") != 0) {
                fprintf(stderr, "tailcut loadgen: --distribution is poisson or constant, got '%s'\n", v);
                return 2;
            }
            a->dist = v;
        } else if (strcmp(o, "--rate") == 0) {
            if (parse_num(o, v, 1e-3, 1e6, &a->rate)) return 2;
        } else if (strcmp(o, "--duration") == 0) {
            if (parse_num(o, v, 1e-3, 86400, &a->duration_s)) return 2;
        } else if (strcmp(o, "--concurrency") == 0) {
            if (parse_num(o, v, 1, LG_MAX_CONCURRENCY, &x) || x != (double)(long)x) {
                fprintf(stderr, "tailcut loadgen: --concurrency needs an integer in [1, %d]\n", LG_MAX_CONCURRENCY);
                return 2;
            }
            a->concurrency = (long)x;
        } else if (strcmp(o, "--timeout-ms") == 0) {
            if (parse_num(o, v, 1, 3600000, &x) || x != (double)(long)x) return 2;
            a->timeout_ms = (long)x;
        } else {
            if (parse_num(o, v, 0, 9007199254740992.0, &x) || x != (double)(uint64_t)x) return 2;
            a->seed = (uint64_t)x;
        }
    }
    if (!a->url || !a->model || a->duration_s <= 0 || (a->rate > 0) == (a->concurrency > 0)) {
        fprintf(stderr, "tailcut loadgen: needs --url, --model, --duration and one of --rate, --concurrency\n");
        usage(stderr);
        return 2;
    }
    if (a->rate > 0 && a->rate * a->duration_s > (double)LG_MAX_SCHEDULE) {
        fprintf(stderr, "tailcut loadgen: --rate x --duration is at most %ld requests\n", LG_MAX_SCHEDULE);
        return 2;
    }
    return 0;
}

/* Parses http://HOST:PORT[/...] with a loopback HOST into addr. */
static int parse_url(const char *url, struct sockaddr_in *addr, char *host_hdr, size_t hsize) {
    const char *p = url;
    if (strncmp(p, "http://", 7) != 0) goto bad;
    p += 7;
    const char *colon = strchr(p, ':');
    if (!colon || colon == p || (size_t)(colon - p) >= 64) goto bad;
    char host[64];
    memcpy(host, p, (size_t)(colon - p));
    host[colon - p] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || errno || port < 1 || port > 65535 || (*end && *end != '/')) goto bad;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0) strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1) goto bad;
    if ((ntohl(addr->sin_addr.s_addr) >> 24) != 127) {
        fprintf(stderr, "tailcut loadgen: only loopback addresses (127.0.0.0/8) are allowed, got '%s'\n", host);
        return -1;
    }
    snprintf(host_hdr, hsize, "%s:%ld", host, port);
    return 0;
bad:
    fprintf(stderr, "tailcut loadgen: --url must be http://127.0.0.1:PORT (or localhost), got '%s'\n", url);
    return -1;
}

/* ---- report --------------------------------------------------------------- */

static long total_errors(const long *kinds) {
    long e = 0;
    for (int k = 1; k < K_KINDS; k++) e += kinds[k];
    return e;
}

static void print_report(FILE *f, long sent, const long *kinds, double elapsed, const cli_stats *st) {
    long ok = kinds[K_OK];
    fprintf(f, "sent %ld, ok %ld, errors %ld (", sent, ok, total_errors(kinds));
    for (int k = 1; k < K_KINDS; k++) fprintf(f, "%s%s %ld", k > 1 ? ", " : "", k_kind_names[k], kinds[k]);
    fprintf(f, ")\n");
    fprintf(f, "throughput %.2f/s (ok responses over %.3f s)\n", elapsed > 0 ? (double)ok / elapsed : 0.0, elapsed);
    if (st->n == 0) {
        fprintf(f, "latency: no successful responses\n");
        return;
    }
    fprintf(f, "latency ms: p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  mean %.3f  max %.3f  (%zu samples)\n", st->p50,
            st->p90, st->p99, st->p999, st->mean, st->max, st->n);
    if (st->n < 1000) fprintf(f, "note: %zu samples (< 1000): P99.9 is not meaningful\n", st->n);
}

static int write_json(const char *path, long sent, const long *kinds, double elapsed, const cli_stats *st) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return -1;
    cJSON_AddNumberToObject(o, "sent", (double)sent);
    cJSON_AddNumberToObject(o, "ok", (double)kinds[K_OK]);
    cJSON *e = cJSON_AddObjectToObject(o, "errors");
    for (int k = 1; e && k < K_KINDS; k++) cJSON_AddNumberToObject(e, k_kind_names[k], (double)kinds[k]);
    cJSON_AddNumberToObject(o, "errors_total", (double)total_errors(kinds));
    cJSON_AddNumberToObject(o, "throughput_per_s", elapsed > 0 ? (double)kinds[K_OK] / elapsed : 0.0);
    const char *keys[] = {"p50_ms", "p90_ms", "p99_ms", "p999_ms", "mean_ms", "max_ms"};
    double vals[] = {st->p50, st->p90, st->p99, st->p999, st->mean, st->max};
    for (int k = 0; k < 6; k++) {
        if (st->n) cJSON_AddNumberToObject(o, keys[k], vals[k]);
        else cJSON_AddNullToObject(o, keys[k]);
    }
    cJSON_AddNumberToObject(o, "samples", (double)st->n);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s) return -1;
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (f) {
        rc = fputs(s, f) < 0 || fputc('\n', f) == EOF ? -1 : 0;
        if (fclose(f) != 0) rc = -1;
    }
    free(s);
    if (rc) fprintf(stderr, "tailcut loadgen: cannot write %s\n", path);
    return rc;
}

/* ---- entry ---------------------------------------------------------------- */

int tc_cli_loadgen(int argc, char **argv) {
    lg_args a;
    int pr = parse(argc, argv, &a);
    if (pr < 0) return 0;
    if (pr > 0) return pr;
    lg_run *run = calloc(1, sizeof *run);
    if (!run) return 1;
    int rc = 1;
    char *body = NULL, *mpath = NULL;
    double *sched = NULL;
    cJSON *md = NULL;
    pthread_t *th = NULL;
    long n_threads = 0;
    pthread_mutex_init(&run->mu, NULL);
    if (parse_url(a.url, &run->addr, run->host_hdr, sizeof run->host_hdr)) {
        rc = 2;
        goto done;
    }
    run->timeout_ms = a.timeout_ms;

    /* Metadata. */
    size_t mlen = strlen(a.model);
    mpath = malloc(mlen + 32);
    if (!mpath) goto done;
    snprintf(mpath, mlen + 32, "/v2/models/%s", a.model);
    {
        char get[1024];
        int gl = snprintf(get, sizeof get, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", mpath,
                          run->host_hdr);
        if (gl <= 0 || (size_t)gl >= sizeof get) {
            fprintf(stderr, "tailcut loadgen: model name too long\n");
            rc = 2;
            goto done;
        }
        lg_conn c = {.fd = -1};
        lg_resp resp;
        bool sent_any;
        int r = do_request(&c, &run->addr, get, (size_t)gl, now_s() + (double)a.timeout_ms * 1e-3, &resp, &sent_any);
        if (r == K_OK && resp.status == 200) md = cJSON_ParseWithLength(resp.body, resp.body_len);
        int st = r == K_OK ? resp.status : 0;
        conn_close(&c);
        free(c.buf);
        if (!md) {
            if (r == K_OK && st != 200) r = st >= 500 ? K_HTTP_5XX : st >= 400 ? K_HTTP_4XX : K_HTTP_OTHER;
            else if (r == K_OK) r = K_MALFORMED;
            fprintf(stderr, "tailcut loadgen: cannot read the metadata GET %s from %s: %s%s%.0d\n", mpath,
                    run->host_hdr, k_kind_names[r], st ? " status " : "", st);
            long kinds[K_KINDS] = {0};
            kinds[r] = 1;
            cli_stats none;
            memset(&none, 0, sizeof none);
            print_report(stdout, sent_any ? 1 : 0, kinds, 0.0, &none);
            if (a.json) write_json(a.json, sent_any ? 1 : 0, kinds, 0.0, &none);
            rc = 1;
            goto done;
        }
    }
    char desc[512];
    size_t blen = 0, jlen = 0;
    body = build_body(md, &a, &blen, &jlen, desc, sizeof desc);
    if (!body) goto done;
    run->binary = a.binary;
    {
        char hdr[1024], ihcl[64] = "";
        if (a.binary) snprintf(ihcl, sizeof ihcl, "Inference-Header-Content-Length: %zu\r\n", jlen);
        int hl = snprintf(hdr, sizeof hdr,
                          "POST %s/infer HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n%s"
                          "Content-Length: %zu\r\nConnection: keep-alive\r\n\r\n",
                          mpath, run->host_hdr, a.binary ? "application/octet-stream" : "application/json", ihcl,
                          blen);
        if (hl <= 0 || (size_t)hl >= sizeof hdr) goto done;
        run->req = malloc((size_t)hl + blen);
        if (!run->req) goto done;
        memcpy(run->req, hdr, (size_t)hl);
        memcpy(run->req + hl, body, blen);
        run->req_len = (size_t)hl + blen;
    }

    /* Schedule and workers. */
    run->open_loop = a.rate > 0;
    run->duration_s = a.duration_s;
    if (run->open_loop) {
        long cap = (long)(a.rate * a.duration_s * 1.5) + 64;
        if (cap > LG_MAX_SCHEDULE) cap = LG_MAX_SCHEDULE;
        sched = malloc((size_t)cap * sizeof *sched);
        if (!sched) goto done;
        uint64_t rng = a.seed;
        bool poisson = strcmp(a.dist, "poisson") == 0;
        double t = 0;
        long n = 0;
        while (n < cap) {
            t += poisson ? -log(uniform01(&rng)) / a.rate : (n ? 1.0 / a.rate : 0.0);
            if (t >= a.duration_s) break;
            sched[n++] = t;
        }
        run->sched = sched;
        run->n_sched = n;
        run->sample_cap = n > 0 ? n : 1;
        n_threads = (long)ceil(a.rate / 4.0);
        if (n_threads < 4) n_threads = 4;
        if (n_threads > LG_MAX_WORKERS) n_threads = LG_MAX_WORKERS;
        if (n_threads > n && n > 0) n_threads = n;
    } else {
        n_threads = a.concurrency;
        double est = a.duration_s * 20000.0 * (double)a.concurrency; /* generous upper bound */
        run->sample_cap = est > (double)LG_MAX_SAMPLES ? LG_MAX_SAMPLES : (long)est + 1024;
    }
    run->samples = malloc((size_t)run->sample_cap * sizeof *run->samples);
    th = calloc((size_t)n_threads, sizeof *th);
    if (!run->samples || !th) goto done;

    printf("tailcut loadgen: %s, model %s at %s, %s, request body %zu bytes", run->open_loop ? "open loop" : "closed loop",
           a.model, run->host_hdr, desc, blen);
    if (a.binary) printf(" (binary tensor extension: %zu bytes JSON header + %zu bytes tensors)", jlen, blen - jlen);
    printf("\n");
    if (run->open_loop)
        printf("schedule: %s %.6g/s for %.6g s = %ld requests, %ld connections; latency from intended send time\n",
               a.dist, a.rate, a.duration_s, run->n_sched, n_threads);
    else
        printf("concurrency %ld for %.6g s, back to back\n", a.concurrency, a.duration_s);
    fflush(stdout);

    run->t0 = now_s() + 0.01;
    long started = 0;
    for (; started < n_threads; started++)
        if (pthread_create(&th[started], NULL, worker, run) != 0) break;
    if (started == 0) {
        fprintf(stderr, "tailcut loadgen: cannot start worker threads\n");
        goto done;
    }
    for (long k = 0; k < started; k++) pthread_join(th[k], NULL);
    double end = run->last_done > run->t0 ? run->last_done : now_s();
    double elapsed = end - run->t0;
    if (!run->open_loop && elapsed < a.duration_s) elapsed = a.duration_s;

    long kinds[K_KINDS];
    for (int k = 0; k < K_KINDS; k++) kinds[k] = atomic_load(&run->kinds[k]);
    long ns = atomic_load(&run->n_samples);
    if (ns > run->sample_cap) ns = run->sample_cap;
    cli_stats st;
    if (cli_stats_compute(run->samples, (size_t)ns, &st) != 0) memset(&st, 0, sizeof st);
    print_report(stdout, atomic_load(&run->sent), kinds, elapsed, &st);
    rc = 0;
    if (a.json && write_json(a.json, atomic_load(&run->sent), kinds, elapsed, &st)) rc = 1;

done:
    cJSON_Delete(md);
    free(body);
    free(mpath);
    free(sched);
    free(th);
    free(run->req);
    free(run->samples);
    pthread_mutex_destroy(&run->mu);
    free(run);
    return rc;
}
