/* server.h - entry point of the tailcut inference server (KServe v2 over HTTP) used by `tailcut serve`. */
#ifndef TC_SERVER_SERVER_H
#define TC_SERVER_SERVER_H

#include <stddef.h>

typedef struct tc_server_options {
    const char *model_repository; /* folder of <model>/config.json + <model>/1/model.{plan,onnx} */
    const char *http_address;     /* IPv4 address to bind, NULL = 0.0.0.0 */
    int http_port;                /* default 8000 */
    int threads;                  /* HTTP worker threads (default 2) */
    int engine_threads;           /* threads per instance context (0 = config, else cores / instances) */
    size_t max_body_bytes;        /* request body limit (default 64 MiB) */
    size_t max_buffered_bytes;    /* request bodies held at once across connections (default 4 x max_body_bytes):
                                     a body that would pass it is refused with 503 */
    int connection_timeout_s;     /* idle / slow connections are closed after this (default 30) */
    int shutdown_timeout_s;       /* after SIGTERM/SIGINT, at most this long draining before what is left is closed
                                     (default 25: inside Kubernetes' default 30 s grace period) */
    int relaxed_readiness;        /* 0 (default, Triton's --strict-readiness true): /v2/health/ready when every model
                                     that should be loaded is READY; 1: when at least one model is READY */
} tc_server_options;

/* Loads the repository (each model on its own: a broken one is left UNAVAILABLE with its reason), serves until
 * SIGTERM/SIGINT, drains in-flight requests. Returns the exit code: 0, 1 when the repository cannot be read or the
 * server cannot listen, 2 for an invalid option. */
int tc_server_main(const tc_server_options *options);

#endif
