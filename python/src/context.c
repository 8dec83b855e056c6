/* context.c - execution contexts in _tailcut: tc_context_create and one call that binds the inputs (the callers'
 * buffers, no copy), lets Python provide the output arrays for the shapes the inputs give, binds them and runs the
 * engine with the GIL released. */
#include <string.h>

#include "py_common.h"

static PyObject *context_create(PyObject *self, PyObject *args) {
    PyObject *caps;
    int profile;
    if (!PyArg_ParseTuple(args, "Oi", &caps, &profile)) return NULL;
    tc_engine *e = tcpy_handle(caps, TCPY_ENGINE);
    if (e == NULL) return NULL;
    tc_context *c = NULL;
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_context_create(e, profile, &c, &err);
    Py_END_ALLOW_THREADS
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return tcpy_wrap(c, TCPY_CONTEXT, caps); /* the engine outlives its context */
}

/* [(name, dtype, shape)] of the engine's outputs at the shapes now set. */
static PyObject *output_specs(tc_context *c, const tc_engine *e) {
    int n = tc_engine_num_outputs(e);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        tc_io_info io;
        memset(&io, 0, sizeof io);
        tc_tensor t;
        memset(&t, 0, sizeof t);
        tc_status st = tc_engine_output_info(e, i, &io);
        if (st == TC_STATUS_OK) st = tc_context_tensor(c, io.name, &t);
        if (st != TC_STATUS_OK) {
            Py_DECREF(list);
            return tcpy_raise(st, tc_context_error(c));
        }
        PyObject *dims = PyTuple_New(t.rank);
        for (int32_t d = 0; dims && d < t.rank; d++) PyTuple_SET_ITEM(dims, d, PyLong_FromLongLong(t.dims[d]));
        PyObject *spec = dims ? Py_BuildValue("(siN)", io.name, (int)t.dtype, dims) : NULL;
        if (spec == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, spec);
    }
    return list;
}

/*
 * context_run(context, engine, inputs, provide) -> outputs list: inputs is [(name, dtype, shape, array)] (every
 * input of the engine, C-contiguous arrays); provide([(name, dtype, shape)]) returns [(name, dtype, shape, array)]
 * of writable C-contiguous arrays for the outputs, which the run writes.
 */
static PyObject *context_run(PyObject *self, PyObject *args) {
    PyObject *ccaps, *ecaps, *inputs, *provide;
    if (!PyArg_ParseTuple(args, "OOOO", &ccaps, &ecaps, &inputs, &provide)) return NULL;
    tc_context *c = tcpy_handle(ccaps, TCPY_CONTEXT);
    tc_engine *e = c ? tcpy_handle(ecaps, TCPY_ENGINE) : NULL;
    if (e == NULL) return NULL;
    if (PyCapsule_GetContext(ccaps) != ecaps) {
        PyErr_SetString(PyExc_ValueError, "the context does not belong to this engine");
        return NULL;
    }
    tcpy_tensors in, out;
    memset(&out, 0, sizeof out);
    if (tcpy_tensors_get(inputs, 0, &in) < 0) return NULL;
    PyObject *specs = NULL, *outputs = NULL;
    for (Py_ssize_t i = 0; i < in.n; i++) {
        tc_status st = tc_context_set_input(c, in.names[i], &in.tensors[i]);
        if (st != TC_STATUS_OK) {
            tcpy_raise(st, tc_context_error(c));
            goto done;
        }
    }
    specs = output_specs(c, e);
    if (specs == NULL) goto done;
    outputs = PyObject_CallOneArg(provide, specs);
    if (outputs == NULL || tcpy_tensors_get(outputs, 1, &out) < 0) goto fail;
    if (out.n != PyList_GET_SIZE(specs)) {
        PyErr_SetString(PyExc_ValueError, "provide() returned another number of outputs");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < out.n; i++) {
        tc_tensor want;
        memset(&want, 0, sizeof want);
        tc_status st = tc_context_tensor(c, out.names[i], &want);
        if (st == TC_STATUS_OK && want.nbytes != out.tensors[i].nbytes) {
            tcpy_invalid("output '%s' needs %zu bytes, the array given holds %zu", out.names[i], want.nbytes,
                         out.tensors[i].nbytes);
            goto fail;
        }
        if (st == TC_STATUS_OK) st = tc_context_set_tensor(c, out.names[i], out.tensors[i].data, out.tensors[i].nbytes);
        if (st != TC_STATUS_OK) {
            tcpy_raise(st, tc_context_error(c));
            goto fail;
        }
    }
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_context_run(c);
    Py_END_ALLOW_THREADS
    if (st != TC_STATUS_OK) {
        tcpy_raise(st, tc_context_error(c));
        goto fail;
    }
    goto done;
fail:
    Py_CLEAR(outputs);
done:
    tcpy_tensors_release(&out);
    tcpy_tensors_release(&in);
    Py_XDECREF(specs);
    return outputs;
}

static PyObject *context_threads(PyObject *self, PyObject *caps) {
    tc_context *c = tcpy_handle(caps, TCPY_CONTEXT);
    if (c == NULL) return NULL;
    return PyLong_FromLong(tc_context_threads(c));
}

PyMethodDef tcpy_context_methods[] = {
    {"context_create", context_create, METH_VARARGS, "context_create(engine, profile) -> context handle"},
    {"context_run", context_run, METH_VARARGS, "context_run(context, engine, inputs, provide) -> outputs"},
    {"context_threads", context_threads, METH_O, "context_threads(context) -> int"},
    {NULL, NULL, 0, NULL},
};
