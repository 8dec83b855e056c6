/* fuzz_server_config.c - libFuzzer target for the model repository's config.json parser of tailcut serve. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* exact size, so ASan sees any over-read */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    srv_config c;
    if (srv_config_parse_text(text, size, "config.json", &c) == 0) {
        /* What the batcher relies on after a successful parse. */
        if (c.instance_count < 1 || c.max_batch_size < 0 || c.n_in > SRV_MAX_IO || c.n_out > SRV_MAX_IO ||
            c.n_preferred > SRV_MAX_PREFERRED || (c.dynamic_batching && c.max_batch_size < 1))
            abort();
        for (int i = 0; i < c.n_preferred; i++)
            if (c.preferred[i] < 1 || c.preferred[i] > c.max_batch_size || (i && c.preferred[i] < c.preferred[i - 1]))
                abort();
    }
    free(text);
    return 0;
}
