/* fuzz_http_head.c - libFuzzer target for the check of a connection's first request head in tailcut serve's front
 * stage (src/server/http_head.c): any bytes, any length, two limits; the answer is one of the defined ones and a
 * refusal carries a reason. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/http_head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size ? size : 1); /* exact size, so ASan sees any over-read */
    if (!buf) return 0;
    memcpy(buf, data, size);
    const size_t limits[2] = {64, 65536};
    for (int k = 0; k < 2; k++) {
        char msg[192] = "";
        const int st = srv_head_check(buf, size, limits[k], msg, sizeof msg);
        if (!(st == SRV_HEAD_MORE || st == SRV_HEAD_OK || st == 400 || st == 413 || st == 431 || st == 505)) abort();
        if (st > 0 && msg[0] == '\0') abort();
    }
    free(buf);
    return 0;
}
