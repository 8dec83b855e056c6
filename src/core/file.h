/* file.h - reading whole files with a size limit and clear errors. */
#ifndef TC_CORE_FILE_H
#define TC_CORE_FILE_H

#include <stddef.h>

#include "core/error.h"

/* Reads path into a malloc'd buffer (freed by the caller); fails above max_size bytes. */
tc_status tc__read_file(const char *path, size_t max_size, void **data, size_t *size, tc__err *err);

#endif
