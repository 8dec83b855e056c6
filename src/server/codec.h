/* codec.h - the KServe v2 tensor codec: decodes an infer request (JSON tensors, or a JSON header
 * followed by raw tensors - the binary tensor data extension) into a srv_request after validating
 * every field, and encodes its outputs as JSON or binary; also the model metadata and the Triton
 * model-config JSON. */
#ifndef TC_SERVER_CODEC_H
#define TC_SERVER_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "repo.h"

#define SRV_NO_BINARY SIZE_MAX

/*
 * Decodes body[0..len) into r (zeroed by the caller; r->model and r->t_arrive set). header_len is the
 * Inference-Header-Content-Length (the JSON part) or SRV_NO_BINARY. Binary inputs point into body, which
 * must outlive r; the JSON part is rewritten in place (its "data" arrays are parsed by json_data.c). Returns 0, or an HTTP status (400, 413) with r->error set.
 */
int srv_decode_infer(srv_model *m, char *body, size_t len, size_t header_len, srv_request *r);
/* Encodes a finished request's outputs. Returns a malloc'd body of *len bytes; *json_len is the JSON
 * part's length when binary outputs follow it, else SRV_NO_BINARY. NULL when out of memory. */
char *srv_encode_infer(const srv_request *r, size_t *len, size_t *json_len);
/* {"error": msg} as a malloc'd string (NULL only when out of memory). */
char *srv_error_json(const char *msg);
/* GET /v2/models/{m}: KServe model metadata. */
char *srv_model_metadata_json(const srv_model *m);
/* GET /v2/models/{m}/config: the model configuration in Triton's JSON form (what perf_analyzer reads). */
char *srv_model_config_json(const srv_model *m);

#endif
