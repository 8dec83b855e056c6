/* fuzz_infer_request.c - libFuzzer target for the KServe v2 infer request decoder of tailcut serve (JSON tensors and
 * the binary tensor extension) and the response encoder, against a fixed two-input, two-output model description.
 * Input: 'B', a 2-byte little-endian JSON header length, then the body (binary extension); anything else is a JSON
 * body. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/codec.h"

static srv_model *fuzz_model(void) {
    static srv_model m;
    static int ready;
    if (ready) return &m;
    ready = 1;
    strcpy(m.name, "m");
    m.cfg.max_batch_size = 4;
    m.cfg.dynamic_batching = 1;
    m.cfg.priority_levels = 2;
    m.cfg.default_priority_level = 2;
    m.n_in = 2;
    m.n_out = 2;
    m.in[0] = (tc_io_info){.name = "x", .dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {-1, 3}};
    m.in[1] = (tc_io_info){.name = "ids", .dtype = TC_DTYPE_INT64, .rank = 2, .dims = {-1, -1}};
    m.range[0] = (tc_input_range){.name = "x", .rank = 2, .min = {1, 3}, .opt = {1, 3}, .max = {4, 3}};
    m.range[1] = (tc_input_range){.name = "ids", .rank = 2, .min = {1, 1}, .opt = {1, 8}, .max = {4, 16}};
    m.out[0] = (tc_io_info){.name = "y", .dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {-1, 2}};
    m.out[1] = (tc_io_info){.name = "z", .dtype = TC_DTYPE_BOOL, .rank = 1, .dims = {-1}};
    m.max_values = 1024 + 12 + 64;
    return &m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    srv_model *m = fuzz_model();
    size_t header_len = SRV_NO_BINARY;
    if (size >= 3 && data[0] == 'B') {
        header_len = (size_t)data[1] | (size_t)data[2] << 8;
        data += 3;
        size -= 3;
    }
    char *body = malloc(size + 1); /* exact size, so ASan sees any over-read */
    srv_request *r = calloc(1, sizeof *r);
    if (!body || !r) {
        free(body);
        free(r);
        return 0;
    }
    memcpy(body, data, size);
    body[size] = '\0';
    r->model = m;
    r->queue_us = r->compute_us = -1;
    if (srv_decode_infer(m, body, size, header_len, r) == 0) {
        if (r->batch < 1 || r->batch > 4 || r->priority < 0 || r->priority > 1) abort();
        for (int k = 0; k < m->n_in; k++) {
            const srv_tensor *t = &r->in[k];
            size_t n = 1;
            for (int d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
            if (t->bytes != n * tc_dtype_size(m->in[k].dtype) || t->dims[0] != r->batch) abort();
            if (t->bytes) (void)((volatile const char *)t->data)[t->bytes - 1];
        }
        /* Pretend the model ran and encode the answer. */
        for (int k = 0; k < m->n_out; k++) {
            srv_tensor *o = &r->out[k];
            o->dtype = m->out[k].dtype;
            o->rank = m->out[k].rank;
            o->dims[0] = r->batch;
            if (o->rank > 1) o->dims[1] = 2;
            o->bytes = (size_t)r->batch * (o->rank > 1 ? 2 : 1) * tc_dtype_size(o->dtype);
            o->data = calloc(1, o->bytes);
        }
        r->status = 200;
        size_t len = 0, json_len = 0;
        free(srv_encode_infer(r, &len, &json_len));
    }
    srv_request_free(r);
    free(body);
    return 0;
}
