/* fuzz_npy.c - libFuzzer target for the .npy parser. */
#include <stddef.h>
#include <stdint.h>

#include "core/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tc__tensor t;
    tc__err err = {0};
    if (tc__npy_parse(data, size, &t, &err) == TC_STATUS_OK) tc__tensor_free(&t);
    return 0;
}
