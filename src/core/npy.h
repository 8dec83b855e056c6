/* npy.h - NumPy .npy reading and writing (format versions 1.0-3.0, little-endian, C order). */
#ifndef TC_CORE_NPY_H
#define TC_CORE_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tensor.h"

/* True when buf starts with the .npy magic. */
bool tc__npy_is_npy(const void *buf, size_t size);
/* Parses a whole .npy file image into a tensor with malloc'd data. Validates the header,
 * dtype, shape arithmetic and that the data size matches exactly. */
tc_status tc__npy_parse(const void *buf, size_t size, tc__tensor *out, tc__err *err);
/* Writes a tensor as .npy to path. */
tc_status tc__npy_save(const char *path, const tc__tensor *t, tc__err *err);

#endif
