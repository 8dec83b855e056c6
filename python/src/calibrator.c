/* calibrator.c - INT8 calibration in _tailcut: tc_calibrator_create / _add (one sample, the GIL released while the
 * FP32 engine observes it) / _save (the calibration cache that tc_build_options.calib_cache reads). */
#include <string.h>

#include "py_common.h"

static PyObject *calib_create(PyObject *self, PyObject *caps) {
    tc_model *m = tcpy_handle(caps, TCPY_MODEL);
    if (m == NULL) return NULL;
    tc_calibrator *c = NULL;
    tc_error err = {{0}};
    tc_status st = tc_calibrator_create(m, &c, &err);
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return tcpy_wrap(c, TCPY_CALIBRATOR, caps); /* the model outlives its calibrator */
}

static PyObject *calib_add(PyObject *self, PyObject *args) {
    PyObject *caps, *inputs;
    if (!PyArg_ParseTuple(args, "OO", &caps, &inputs)) return NULL;
    tc_calibrator *c = tcpy_handle(caps, TCPY_CALIBRATOR);
    if (c == NULL) return NULL;
    tcpy_tensors in;
    if (tcpy_tensors_get(inputs, 0, &in) < 0) return NULL;
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_calibrator_add(c, (int)in.n, in.names, in.tensors, &err);
    Py_END_ALLOW_THREADS
    tcpy_tensors_release(&in);
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return PyLong_FromLong(tc_calibrator_num_samples(c));
}

static PyObject *calib_save(PyObject *self, PyObject *args) {
    PyObject *caps, *path;
    int method;
    double percentile;
    if (!PyArg_ParseTuple(args, "OidO&", &caps, &method, &percentile, PyUnicode_FSConverter, &path)) return NULL;
    tc_calibrator *c = tcpy_handle(caps, TCPY_CALIBRATOR);
    if (c == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_calibrator_save(c, (tc_calib_method)method, percentile, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    Py_RETURN_NONE;
}

PyMethodDef tcpy_quant_methods[] = {
    {"calib_create", calib_create, METH_O, "calib_create(model) -> calibrator handle"},
    {"calib_add", calib_add, METH_VARARGS, "calib_add(calibrator, inputs) -> samples so far"},
    {"calib_save", calib_save, METH_VARARGS, "calib_save(calibrator, method, percentile, path)"},
    {NULL, NULL, 0, NULL},
};
