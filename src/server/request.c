/* request.c - releases a srv_request and the buffers it owns. */
#include "request.h"

#include <stdlib.h>

void srv_request_free(srv_request *r) {
    if (!r) return;
    free(r->id);
    for (int k = 0; k < SRV_MAX_IO; k++) {
        if (!r->in[k].borrowed) free(r->in[k].data);
        free(r->out[k].data);
    }
    free(r);
}
