/* codec.h - the KServe v2 JSON tensor codec: decodes an infer request into input buffers, runs the
 * model's context and encodes the outputs (or an {"error": ...} with an HTTP status). */
#ifndef TC_SERVER_CODEC_H
#define TC_SERVER_CODEC_H

#include <stddef.h>

#include "repo.h"

/* Handles POST /v2/models/{m}/infer. Returns a malloc'd JSON body and sets *status (200, 400, 500). */
char *srv_infer_json(srv_model *m, const char *body, size_t len, int *status);
/* {"error": msg} as a malloc'd string (never NULL unless out of memory). */
char *srv_error_json(const char *msg);
/* GET /v2/models/{m} metadata as a malloc'd JSON string. */
char *srv_model_metadata_json(const srv_model *m);

#endif
