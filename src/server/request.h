/* request.h - one decoded inference request as it travels HTTP -> queue -> instance -> HTTP: its
 * input tensors (indexed like the model's inputs), requested outputs, scheduling fields, results
 * and the completion callback that wakes the HTTP connection. */
#ifndef TC_SERVER_REQUEST_H
#define TC_SERVER_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct srv_tensor {
    void *data;   /* owned (freed with the request) unless borrowed */
    int borrowed; /* data points into the request body */
    size_t bytes;
    tc_dtype dtype;
    int32_t rank;
    int64_t dims[TC_MAX_RANK];
} srv_tensor;

struct srv_model;
typedef struct srv_request srv_request;

struct srv_request {
    srv_request *next; /* queue link */
    struct srv_model *model;
    char *id;                        /* the request's "id" (owned; NULL when absent), echoed whole in the response */
    srv_tensor in[SRV_MAX_IO];       /* by model input index */
    unsigned char want_out[SRV_MAX_IO];
    unsigned char binary_out[SRV_MAX_IO];
    srv_tensor out[SRV_MAX_IO];      /* filled by the instance for wanted outputs */
    int64_t batch;                   /* rows along dim 0 (1 when the model does not batch) */
    int priority;                    /* queue level, 0 = highest */
    double t_arrive;                 /* request headers received: seconds, CLOCK_MONOTONIC */
    double t_enqueue;                /* handed to the batcher */
    double t_deadline;               /* 0 = none: leave the queue by then or time out */
    double queue_us, compute_us;     /* -1 until executed */
    int status;                      /* HTTP status once done */
    char error[512];                 /* message when status != 200 */
    void (*done)(srv_request *r);    /* called once, from any thread, when the request is finished */
    void *done_arg;
};

/* Frees the request's owned buffers and the request itself. */
void srv_request_free(srv_request *r);

#endif
