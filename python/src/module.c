/* module.c - the _tailcut extension module: its exception classes (tailcut.Error and one subclass per tc_status,
 * carrying the library's message), the handle capsules and the tensor-view helpers the other files use. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "py_common.h"

#define TCPY_NUM_STATUS 9
static PyObject *g_error;                      /* tailcut.Error */
static PyObject *g_errors[TCPY_NUM_STATUS];    /* by status value */

PyObject *tcpy_raise(tc_status status, const char *message) {
    int s = (int)status;
    PyObject *cls = s > 0 && s < TCPY_NUM_STATUS && g_errors[s] ? g_errors[s] : g_error;
    const char *text = message && *message ? message : tc_status_str(status);
    PyObject *exc = PyObject_CallFunction(cls, "s", text);
    if (exc == NULL) return NULL;
    PyObject *code = PyLong_FromLong(s);
    if (code == NULL || PyObject_SetAttrString(exc, "status", code) < 0) {
        Py_XDECREF(code);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(code);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *tcpy_invalid(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tcpy_raise(TC_STATUS_INVALID_ARGUMENT, buf);
}

static void destroy_handle(PyObject *capsule) {
    const char *name = PyCapsule_GetName(capsule);
    void *h = PyCapsule_GetPointer(capsule, name);
    if (h != NULL) {
        if (strcmp(name, TCPY_MODEL) == 0) tc_model_destroy(h);
        else if (strcmp(name, TCPY_ENGINE) == 0) tc_engine_destroy(h);
        else if (strcmp(name, TCPY_CONTEXT) == 0) tc_context_destroy(h);
        else if (strcmp(name, TCPY_CALIBRATOR) == 0) tc_calibrator_destroy(h);
    }
    Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule)); /* the owner, after the handle that needs it */
    PyErr_Clear();
}

PyObject *tcpy_wrap(void *handle, const char *name, PyObject *owner) {
    PyObject *c = PyCapsule_New(handle, name, destroy_handle);
    if (c == NULL) {
        PyObject *tmp = PyCapsule_New(handle, name, NULL); /* best effort: nothing to destroy it with otherwise */
        Py_XDECREF(tmp);
        return NULL;
    }
    if (owner != NULL) {
        Py_INCREF(owner);
        PyCapsule_SetContext(c, owner);
    }
    return c;
}

void *tcpy_handle(PyObject *capsule, const char *name) {
    if (!PyCapsule_IsValid(capsule, name)) {
        PyErr_Format(PyExc_TypeError, "expected a %s handle", name);
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, name);
}

void tcpy_tensors_release(tcpy_tensors *t) {
    for (Py_ssize_t i = 0; i < t->n_views; i++) PyBuffer_Release(&t->views[i]);
    PyMem_Free(t->names);
    PyMem_Free(t->tensors);
    PyMem_Free(t->views);
    memset(t, 0, sizeof *t);
}

int tcpy_tensors_get(PyObject *list, int writable, tcpy_tensors *out) {
    memset(out, 0, sizeof *out);
    PyObject *seq = PySequence_Fast(list, "expected a list of (name, dtype, shape, array)");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    out->names = PyMem_Calloc((size_t)n + 1, sizeof *out->names);
    out->tensors = PyMem_Calloc((size_t)n + 1, sizeof *out->tensors);
    out->views = PyMem_Calloc((size_t)n + 1, sizeof *out->views);
    out->n = n;
    if (!out->names || !out->tensors || !out->views) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *shape, *arr;
        int dtype;
        const char *name;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "siOO", &name, &dtype, &shape, &arr)) goto fail;
        PyObject *dims = PySequence_Fast(shape, "shape must be a sequence");
        if (dims == NULL) goto fail;
        Py_ssize_t rank = PySequence_Fast_GET_SIZE(dims);
        if (rank > TC_MAX_RANK) {
            Py_DECREF(dims);
            tcpy_invalid("tensor '%s' has rank %zd; tailcut handles at most %d", name, rank, TC_MAX_RANK);
            goto fail;
        }
        tc_tensor *t = &out->tensors[i];
        t->dtype = (tc_dtype)dtype;
        t->rank = (int32_t)rank;
        for (Py_ssize_t d = 0; d < rank; d++) t->dims[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(dims, d));
        Py_DECREF(dims);
        if (PyErr_Occurred()) goto fail;
        int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(arr, &out->views[i], flags) < 0) goto fail;
        out->n_views++;
        t->data = out->views[i].buf;
        t->nbytes = (size_t)out->views[i].len;
        out->names[i] = name; /* the string belongs to the list's tuple, which the caller holds */
    }
    Py_DECREF(seq);
    return 0;
fail:
    Py_DECREF(seq);
    tcpy_tensors_release(out);
    return -1;
}

PyObject *tcpy_io_info(const tc_io_info *info) {
    int rank = info->rank < 0 ? 0 : info->rank;
    PyObject *dims = PyTuple_New(rank), *names = PyTuple_New(rank);
    if (dims == NULL || names == NULL) goto fail;
    for (int d = 0; d < rank; d++) {
        PyObject *v = PyLong_FromLongLong(info->dims[d]);
        PyObject *s = info->dim_names[d] ? PyUnicode_FromString(info->dim_names[d]) : Py_NewRef(Py_None);
        if (v == NULL || s == NULL) {
            Py_XDECREF(v);
            Py_XDECREF(s);
            goto fail;
        }
        PyTuple_SET_ITEM(dims, d, v);
        PyTuple_SET_ITEM(names, d, s);
    }
    return Py_BuildValue("(siiNN)", info->name, (int)info->dtype, (int)info->rank, dims, names);
fail:
    Py_XDECREF(dims);
    Py_XDECREF(names);
    return NULL;
}

static PyObject *status_str(PyObject *self, PyObject *args) {
    int s;
    if (!PyArg_ParseTuple(args, "i", &s)) return NULL;
    return PyUnicode_FromString(tc_status_str((tc_status)s));
}

/* {pass name: TC_PASS_* bit} for tc_build_options.disabled_passes. */
static PyObject *pass_flags(PyObject *self, PyObject *unused) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < tc_pass_count(); i++) {
        PyObject *v = PyLong_FromUnsignedLong(tc_pass_flag(i));
        if (v == NULL || PyDict_SetItemString(d, tc_pass_name(i), v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyMethodDef module_methods[] = {
    {"status_str", status_str, METH_VARARGS, "Description of a tc_status value."},
    {"pass_flags", pass_flags, METH_NOARGS, "{pass name: disabled_passes bit}"},
    {NULL, NULL, 0, NULL},
};

static int add_methods(PyObject *m, PyMethodDef *defs) {
    return PyModule_AddFunctions(m, defs);
}

/* Exception classes: X-macro over TC_STATUS_MAP gives each status a class named after it. */
static int add_errors(PyObject *m) {
    g_error = PyErr_NewExceptionWithDoc("tailcut.Error",
                                        "A failure reported by libtailcut; str() is the library's message, .status its "
                                        "tc_status value.",
                                        NULL, NULL);
    if (g_error == NULL || PyModule_AddObjectRef(m, "Error", g_error) < 0) return -1;
    static const struct {
        int status;
        const char *name, *base;
    } classes[] = {
        {TC_STATUS_INVALID_ARGUMENT, "InvalidArgumentError", "ValueError"},
        {TC_STATUS_UNSUPPORTED, "UnsupportedError", NULL},
        {TC_STATUS_UNSUPPORTED_HARDWARE, "UnsupportedHardwareError", NULL},
        {TC_STATUS_CORRUPT_FILE, "CorruptFileError", NULL},
        {TC_STATUS_OUT_OF_MEMORY, "OutOfMemoryError", "MemoryError"},
        {TC_STATUS_IO_ERROR, "IOError", "OSError"},
        {TC_STATUS_INVALID_GRAPH, "InvalidGraphError", NULL},
        {TC_STATUS_INTERNAL, "InternalError", NULL},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char qual[96];
        snprintf(qual, sizeof qual, "tailcut.%s", classes[i].name);
        PyObject *bases;
        if (classes[i].base) {
            PyObject *builtin = PyDict_GetItemString(PyEval_GetBuiltins(), classes[i].base);
            bases = PyTuple_Pack(2, g_error, builtin);
        } else {
            bases = PyTuple_Pack(1, g_error);
        }
        if (bases == NULL) return -1;
        PyObject *cls = PyErr_NewExceptionWithDoc(qual, tc_status_str((tc_status)classes[i].status), bases, NULL);
        Py_DECREF(bases);
        if (cls == NULL || PyModule_AddObjectRef(m, classes[i].name, cls) < 0) return -1;
        g_errors[classes[i].status] = cls;
    }
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_tailcut", "Thin wrapper of libtailcut's public C API (see tailcut/__init__.py).", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__tailcut(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    if (add_errors(m) < 0 || add_methods(m, tcpy_engine_methods) < 0 || add_methods(m, tcpy_context_methods) < 0 ||
        add_methods(m, tcpy_quant_methods) < 0 ||
        add_methods(m, tcpy_compare_methods) < 0 || PyModule_AddIntConstant(m, "MAX_RANK", TC_MAX_RANK) < 0 ||
        PyModule_AddIntConstant(m, "BUILD_TACTICS_FIXED", TC_BUILD_TACTICS_FIXED) < 0 ||
        PyModule_AddIntConstant(m, "BUILD_INT8", TC_BUILD_INT8) < 0 ||
        PyModule_AddIntConstant(m, "BUILD_FP16", TC_BUILD_FP16) < 0 ||
        PyModule_AddIntConstant(m, "BUILD_BF16", TC_BUILD_BF16) < 0 ||
        PyModule_AddIntConstant(m, "BUILD_INT8_REDUCE_RANGE", TC_BUILD_INT8_REDUCE_RANGE) < 0 ||
        PyModule_AddIntConstant(m, "CALIB_ENTROPY", TC_CALIB_ENTROPY) < 0 ||
        PyModule_AddIntConstant(m, "CALIB_MINMAX", TC_CALIB_MINMAX) < 0 ||
        PyModule_AddIntConstant(m, "CALIB_PERCENTILE", TC_CALIB_PERCENTILE) < 0 ||
        PyModule_AddIntConstant(m, "ACCURACY_COSINE", TC_ACCURACY_COSINE) < 0 ||
        PyModule_AddIntConstant(m, "ACCURACY_TOP1", TC_ACCURACY_TOP1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
