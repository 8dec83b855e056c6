/* control.h - Triton's model repository extension over HTTP for `tailcut serve`: POST /v2/repository/index,
 * POST /v2/repository/models/{name}/load and .../unload, turned into repository calls and JSON answers. */
#ifndef TC_SERVER_CONTROL_H
#define TC_SERVER_CONTROL_H

#include <stddef.h>

#include "repo.h"

/* Handles a POST to path (which starts with "/v2/repository/") with its body (may be NULL when len is 0; a JSON
 * object or empty). Returns the HTTP status and sets *json to the malloc'd answer (NULL when out of memory). */
int srv_control(srv_repo *repo, const char *path, const char *body, size_t len, char **json);

#endif
