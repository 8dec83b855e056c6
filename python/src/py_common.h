/* py_common.h - what the files of the _tailcut extension share: the exception classes (one per tc_status), the
 * handle capsules and the conversion of (name, dtype, shape, buffer) tuples into tc_tensor views. */
#ifndef TC_PY_COMMON_H
#define TC_PY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tailcut/tailcut.h"

/* Raises the exception class of `status` with `message` (the library's reason) and returns NULL. */
PyObject *tcpy_raise(tc_status status, const char *message);
/* Raises tailcut.InvalidArgumentError with a formatted message and returns NULL. */
PyObject *tcpy_invalid(const char *fmt, ...);

/* Capsule names of the handles. */
#define TCPY_MODEL "tailcut.model"
#define TCPY_ENGINE "tailcut.engine"
#define TCPY_CONTEXT "tailcut.context"
#define TCPY_CALIBRATOR "tailcut.calibrator"
#define TCPY_COMPARE "tailcut.compare"

/* Wraps a handle; `owner` (may be NULL) is a capsule kept alive as long as this one (the engine of a context). */
PyObject *tcpy_wrap(void *handle, const char *name, PyObject *owner);
/* The handle in a capsule of that name, or NULL with TypeError set (or a closed handle: ValueError). */
void *tcpy_handle(PyObject *capsule, const char *name);

/*
 * A list of (name: str, dtype: int, shape: tuple of int, array) read into tensors viewing the arrays' buffers
 * (C-contiguous; writable when `writable`). Owns the Py_buffer views until tcpy_tensors_release.
 */
typedef struct tcpy_tensors {
    Py_ssize_t n;
    const char **names;
    tc_tensor *tensors;
    Py_buffer *views;
    Py_ssize_t n_views;
} tcpy_tensors;
int tcpy_tensors_get(PyObject *list, int writable, tcpy_tensors *out);
void tcpy_tensors_release(tcpy_tensors *t);

/* A tc_io_info as (name, dtype, dims: tuple with -1 for unknown, dim names: tuple with None). */
PyObject *tcpy_io_info(const tc_io_info *info);

/*
 * A Python callable as tc_build_options.progress (progress.c). init: fn None leaves `o` as is; else sets o->progress
 * to call fn(phase, done, total, item) under the GIL (-1 with TypeError when fn is not callable).
 * The first exception fn raises is kept and fn is not called again; after the build, tcpy_progress_raise sets it as
 * the current exception and returns 1 (0 when there is none). fn is borrowed: the caller keeps it alive.
 */
typedef struct tcpy_progress {
    PyObject *fn;
    PyObject *exc_type, *exc_value, *exc_tb;
} tcpy_progress;
int tcpy_progress_init(tcpy_progress *p, PyObject *fn, tc_build_options *o);
int tcpy_progress_raise(tcpy_progress *p);

/* The module's functions by file. */
extern PyMethodDef tcpy_engine_methods[];
extern PyMethodDef tcpy_context_methods[];
extern PyMethodDef tcpy_quant_methods[];
extern PyMethodDef tcpy_compare_methods[];

#endif
