/*
 * conv16_paths.c - the configurations of the chained FP16 NHWC convolution (conv16_paths.h): enumeration, plan check
 * and run of the implicit-GEMM and cuDNN graph paths.
 */
#include "backends/cuda/conv16_paths.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/igemm_conv_fp16.h"

static tc__igemm_conv igemm_of(const tc__conv16_geom *g) {
    return (tc__igemm_conv){.n = g->n, .c = g->c, .h = g->h, .w = g->w, .k = g->k, .r = g->r, .s = g->s,
                            .oh = g->oh, .ow = g->ow, .ph = g->ph, .pw = g->pw, .sh = g->sh, .sw = g->sw,
                            .dh = g->dh, .dw = g->dw, .relu = g->relu};
}

static tc__dnn_graph_conv graph_of(const tc__conv16_geom *g) {
    return (tc__dnn_graph_conv){.n = g->n, .c = g->c, .h = g->h, .w = g->w, .k = g->k, .r = g->r, .s = g->s,
                                .oh = g->oh, .ow = g->ow, .ph = g->ph, .pw = g->pw, .sh = g->sh, .sw = g->sw,
                                .dh = g->dh, .dw = g->dw, .bias = g->bias, .residual = g->residual, .relu = g->relu};
}

/* ---- cuDNN's graph configurations, asked once per geometry (building their plans takes milliseconds each) ---- */

#define GRAPH_CAP 3
#define MEMO 256
static pthread_mutex_t g_memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    tc__conv16_geom g;
    size_t ws;
    int n;
    tc__dnn_graph_cfg cfg[GRAPH_CAP];
} g_memo[MEMO];
static int g_memo_used, g_memo_next;

static int graph_configs(const tc__conv16_geom *g, size_t ws_max, tc__dnn_graph_cfg *out) {
    pthread_mutex_lock(&g_memo_lock);
    for (int i = 0; i < g_memo_used; i++)
        if (memcmp(&g_memo[i].g, g, sizeof *g) == 0 && g_memo[i].ws == ws_max) {
            const int n = g_memo[i].n;
            memcpy(out, g_memo[i].cfg, sizeof out[0] * (size_t)n);
            pthread_mutex_unlock(&g_memo_lock);
            return n;
        }
    pthread_mutex_unlock(&g_memo_lock);
    const tc__dnn_graph_conv dg = graph_of(g);
    char why[256];
    int n = tc__dnn_graph_configs(&dg, ws_max, out, GRAPH_CAP, why, sizeof why);
    if (n < 0) n = 0;
    pthread_mutex_lock(&g_memo_lock);
    const int at = g_memo_used < MEMO ? g_memo_used++ : g_memo_next;
    g_memo_next = (at + 1) % MEMO;
    g_memo[at].g = *g;
    g_memo[at].ws = ws_max;
    g_memo[at].n = n;
    memcpy(g_memo[at].cfg, out, sizeof out[0] * (size_t)n);
    pthread_mutex_unlock(&g_memo_lock);
    return n;
}

/* Whether TAILCUT_CONV16_PATHS (a comma list of "igemm", "graph"; unset: both) admits the path: a diagnostic switch
 * for A/B builds (docs/reference/environment.md). */
static bool path_on(const char *name) {
    const char *v = getenv("TAILCUT_CONV16_PATHS");
    if (v == NULL) return true;
    const size_t n = strlen(name);
    for (const char *p = v; (p = strstr(p, name)) != NULL; p += n)
        if ((p == v || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

int tc__conv16_configs(const tc__conv16_geom *g, size_t ws_max, tc__conv16_cfg *out, int cap) {
    if (cap < 1) return 0;
    int n = 0;
    memset(&out[n++], 0, sizeof out[0]); /* the default */
    const tc__igemm_conv p = igemm_of(g);
    uint8_t ids[4];
    const int ni = path_on("igemm") && tc__igemm_conv_ok(&p) ? tc__igemm_conv_configs(&p, ids, 4) : 0;
    for (int i = 0; i < ni && n < cap; i++) {
        if (tc__igemm_conv_workspace(&p, ids[i]) > ws_max) continue;
        memset(&out[n], 0, sizeof out[0]);
        out[n].path = TC__CONV16_IGEMM;
        out[n++].igemm_id = ids[i];
    }
    if (n < cap && path_on("graph")) {
        tc__dnn_graph_cfg gc[GRAPH_CAP];
        const int ng = graph_configs(g, ws_max, gc);
        for (int i = 0; i < ng && n < cap; i++) {
            memset(&out[n], 0, sizeof out[0]);
            out[n].path = TC__CONV16_GRAPH;
            out[n++].graph = gc[i];
        }
    }
    return n;
}

bool tc__conv16_cfg_check(const void *config, tc__err *err) {
    tc__conv16_cfg c;
    memcpy(&c, config, sizeof c);
    for (size_t i = 0; i < sizeof c.reserved; i++)
        if (c.reserved[i] != 0) {
            tc__fail(err, TC_STATUS_CORRUPT_FILE, "FP16 convolution configuration: reserved bytes set");
            return false;
        }
    static const tc__dnn_graph_cfg zero;
    switch (c.path) {
    case TC__CONV16_DEFAULT:
        if (c.igemm_id == 0 && memcmp(&c.graph, &zero, sizeof zero) == 0) return true;
        break;
    case TC__CONV16_IGEMM:
        if (tc__igemm_conv_id_valid(c.igemm_id) && memcmp(&c.graph, &zero, sizeof zero) == 0) return true;
        break;
    case TC__CONV16_GRAPH:
        return c.igemm_id == 0 && tc__dnn_graph_cfg_check(&c.graph, err);
    default:
        break;
    }
    tc__fail(err, TC_STATUS_CORRUPT_FILE, "FP16 convolution configuration: path %u / kernel id %u is not one of ours",
             (unsigned)c.path, (unsigned)c.igemm_id);
    return false;
}

tc_status tc__conv16_run(const tc__conv16_geom *g, const tc__conv16_cfg *cfg, const void *x, const void *w16,
                         const void *bias16, const void *z, void *y, void *ws, size_t ws_bytes, cudaStream_t s,
                         tc__err *err) {
    if (cfg->path == TC__CONV16_IGEMM) {
        tc__igemm_conv p = igemm_of(g);
        p.x = x, p.wt = w16, p.bias = g->bias ? bias16 : NULL, p.res = g->residual ? z : NULL, p.y = y;
        p.workspace = ws, p.workspace_bytes = ws_bytes;
        if (!tc__igemm_conv_ok(&p) || tc__igemm_conv_workspace(&p, cfg->igemm_id) > ws_bytes)
            return TC_STATUS_UNSUPPORTED;
        const cudaError_t ce = tc__igemm_conv_run(&p, cfg->igemm_id, s);
        return ce == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(ce, err, "implicit-GEMM FP16 convolution");
    }
    if (cfg->path == TC__CONV16_GRAPH) {
        const tc__dnn_graph_conv dg = graph_of(g);
        return tc__dnn_graph_run(&dg, &cfg->graph, x, w16, g->bias ? bias16 : NULL, g->residual ? z : NULL, y, ws,
                                 ws_bytes, s, err);
    }
    return TC_STATUS_UNSUPPORTED;
}
