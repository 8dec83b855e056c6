/* compare.c - output comparison in _tailcut: a tc_compare_stats accumulator per output (tc_compare_add over the two
 * arrays, the GIL released) and its figures as `tailcut compare --json` names them. */
#include <math.h>
#include <string.h>

#include "py_common.h"

static void free_stats(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, TCPY_COMPARE));
    PyErr_Clear();
}

static PyObject *compare_new(PyObject *self, PyObject *args) {
    int values_only = 0;
    if (!PyArg_ParseTuple(args, "|p", &values_only)) return NULL;
    tc_compare_stats *st = PyMem_Calloc(1, sizeof *st);
    if (st == NULL) return PyErr_NoMemory();
    st->values_only = values_only;
    PyObject *c = PyCapsule_New(st, TCPY_COMPARE, free_stats);
    if (c == NULL) PyMem_Free(st);
    return c;
}

/* compare_add(stats, [(name, dtype, shape, a), (name, dtype, shape, b)]). */
static PyObject *compare_add(PyObject *self, PyObject *args) {
    PyObject *caps, *pair;
    if (!PyArg_ParseTuple(args, "OO", &caps, &pair)) return NULL;
    tc_compare_stats *st = tcpy_handle(caps, TCPY_COMPARE);
    if (st == NULL) return NULL;
    tcpy_tensors t;
    if (tcpy_tensors_get(pair, 0, &t) < 0) return NULL;
    if (t.n != 2) {
        tcpy_tensors_release(&t);
        return tcpy_invalid("compare_add takes two tensors, not %zd", t.n);
    }
    tc_error err = {{0}};
    tc_status s;
    Py_BEGIN_ALLOW_THREADS s = tc_compare_add(st, &t.tensors[0], &t.tensors[1], &err);
    Py_END_ALLOW_THREADS
    tcpy_tensors_release(&t);
    if (s != TC_STATUS_OK) return tcpy_raise(s, err.message);
    Py_RETURN_NONE;
}

static PyObject *number(double v) {
    if (isnan(v)) Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

/* The figures of `tailcut compare --json` (None where it prints null). */
static PyObject *compare_figures(PyObject *self, PyObject *caps) {
    const tc_compare_stats *st = tcpy_handle(caps, TCPY_COMPARE);
    if (st == NULL) return NULL;
    if (st->exact)
        return Py_BuildValue("{s:O,s:K,s:K}", "exact", Py_True, "elements", (unsigned long long)st->elements,
                             "mismatches", (unsigned long long)st->mismatches);
    const double f = (double)st->finite;
    return Py_BuildValue(
        "{s:O,s:K,s:N,s:N,s:N,s:N,s:N,s:N,s:K,s:N,s:N,s:K,s:K}", "exact", Py_False, "elements",
        (unsigned long long)st->elements, "cosine", number(st->finite ? tc_compare_cosine(st) : NAN), "max_abs_error",
        number(st->max_abs), "mean_abs_error", number(st->finite ? st->sum_abs / f : NAN), "max_rel_error",
        number(st->max_rel), "rel_l2_error", number(tc_compare_rel_l2(st)), "sqnr_db",
        number(st->finite ? tc_compare_sqnr_db(st) : NAN), "rows", (unsigned long long)st->rows, "top1",
        number(st->rows ? (double)st->top1 / (double)st->rows : NAN), "top5",
        number(st->rows5 ? (double)st->top5 / (double)st->rows5 : NAN), "nan_mismatches",
        (unsigned long long)st->nan_mismatches, "finite", (unsigned long long)st->finite);
}

PyMethodDef tcpy_compare_methods[] = {
    {"compare_new", compare_new, METH_VARARGS, "compare_new(values_only=False) -> statistics accumulator"},
    {"compare_add", compare_add, METH_VARARGS, "compare_add(stats, [a, b]) adds one pair of tensors"},
    {"compare_figures", compare_figures, METH_O, "compare_figures(stats) -> dict"},
    {NULL, NULL, 0, NULL},
};
