/* cmd_serve.c - `tailcut serve --model-repository DIR [--http-port N] [--threads N]`: parses the
 * options and runs the KServe v2 HTTP server from src/server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "server/server.h"

static void usage(FILE *f) {
    fprintf(f, "usage: tailcut serve --model-repository DIR [options]\n"
               "  --model-repository DIR  folders DIR/<model>/config.json + DIR/<model>/1/model.{plan,onnx}\n"
               "  --http-port N           port to listen on (default 8000)\n"
               "  --http-address A        IPv4 address to bind (default 0.0.0.0)\n"
               "  --threads N             HTTP worker threads (default 2)\n"
               "  --engine-threads N      threads per model instance (default: config \"tailcut.engine_threads\",\n"
               "                          else cores / instances)\n"
               "  --http-timeout S        close idle or stalled connections after S seconds (default 30)\n"
               "  --shutdown-timeout S    on SIGTERM/SIGINT drain for at most S seconds, then close what is left\n"
               "                          (default 25, inside Kubernetes' 30 s grace period)\n"
               "  --max-body-bytes N      largest request body accepted (default 67108864)\n"
               "  --max-buffered-bytes N  request body bytes held at once across all connections; a body that\n"
               "                          would pass it gets 503 (default 4 x --max-body-bytes)\n"
               "  --strict-readiness B    true (default): /v2/health/ready only when every model that should be\n"
               "                          loaded is READY; false: when at least one is (Triton's option)\n");
}

static int parse_int(const char *opt, const char *v, long lo, long hi, long *out) {
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "tailcut serve: %s must be an integer in [%ld, %ld]\n", opt, lo, hi);
        return 1;
    }
    *out = x;
    return 0;
}

int tc_cli_serve(int argc, char **argv) {
    tc_server_options o = {.http_port = 8000, .threads = 2};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tailcut serve: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        long x = 0;
        if (strcmp(a, "--model-repository") == 0) {
            o.model_repository = v;
        } else if (strcmp(a, "--http-address") == 0) {
            o.http_address = v;
        } else if (strcmp(a, "--http-port") == 0) {
            if (parse_int(a, v, 0, 65535, &x)) return 2;
            o.http_port = (int)x;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_int(a, v, 1, 1024, &x)) return 2;
            o.threads = (int)x;
        } else if (strcmp(a, "--engine-threads") == 0) {
            if (parse_int(a, v, 0, 1024, &x)) return 2;
            o.engine_threads = (int)x;
        } else if (strcmp(a, "--shutdown-timeout") == 0) {
            if (parse_int(a, v, 1, 3600, &x)) return 2;
            o.shutdown_timeout_s = (int)x;
        } else if (strcmp(a, "--http-timeout") == 0) {
            if (parse_int(a, v, 1, 3600, &x)) return 2;
            o.connection_timeout_s = (int)x;
        } else if (strcmp(a, "--strict-readiness") == 0) {
            if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
                fprintf(stderr, "tailcut serve: --strict-readiness must be true or false\n");
                return 2;
            }
            o.relaxed_readiness = strcmp(v, "false") == 0;
        } else if (strcmp(a, "--max-body-bytes") == 0) {
            if (parse_int(a, v, 1, 1L << 40, &x)) return 2;
            o.max_body_bytes = (size_t)x;
        } else if (strcmp(a, "--max-buffered-bytes") == 0) {
            if (parse_int(a, v, 1, 1L << 42, &x)) return 2;
            o.max_buffered_bytes = (size_t)x;
        } else {
            fprintf(stderr, "tailcut serve: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!o.model_repository) {
        fprintf(stderr, "tailcut serve: --model-repository is required\n");
        usage(stderr);
        return 2;
    }
    return tc_server_main(&o);
}
