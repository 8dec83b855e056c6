/* batcher.h - the per-model scheduler of `tailcut serve`: a bounded queue with priority levels and
 * per-request timeouts, and one thread per instance that takes the next request - or, with
 * dynamic_batching, gathers requests of the same shape up to max_batch_size within
 * max_queue_delay_microseconds (preferring the configured batch sizes) - runs them as one batch on
 * the instance's context and splits the outputs. Every submitted request is completed exactly once. */
#ifndef TC_SERVER_BATCHER_H
#define TC_SERVER_BATCHER_H

#include "repo.h"

/* Initializes / destroys the queue's lock and condition. */
int srv_batcher_init(srv_model *m);
void srv_batcher_destroy(srv_model *m);
/* Starts one thread per instance (m->inst[0..n_inst), contexts created). Returns 0 or non-zero. */
int srv_batcher_start(srv_model *m);
/* Queues r. Returns 0, or an HTTP status (503 queue full / shutting down) with r->error set; then
 * r->done is not called. */
int srv_batcher_submit(srv_model *m, srv_request *r);
/* True once srv_batcher_stop began: the model takes no new requests (it is being unloaded or replaced). */
bool srv_batcher_stopped(srv_model *m);
/* Lets the instances finish every queued request, then joins them (again: nothing more). */
void srv_batcher_stop(srv_model *m);

#endif
