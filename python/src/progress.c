/* progress.c - a Python callable as tc_build_options.progress: called as callable(phase, done, total, item) with the
 * GIL taken for the call (the build runs with it released); the first exception it raises is kept, the callable is not
 * called again, and the build's caller raises that exception once tc_engine_build returns (the library cannot stop a
 * build early: the engine it made is discarded). */
#include <string.h>

#include "py_common.h"

static void progress_call(void *user, const char *phase, int done, int total, const char *item) {
    tcpy_progress *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (p->exc_type == NULL) {
        PyObject *r = PyObject_CallFunction(p->fn, "siiz", phase, done, total, item);
        if (r == NULL)
            PyErr_Fetch(&p->exc_type, &p->exc_value, &p->exc_tb);
        else
            Py_DECREF(r);
    }
    PyGILState_Release(g);
}

int tcpy_progress_init(tcpy_progress *p, PyObject *fn, tc_build_options *o) {
    memset(p, 0, sizeof *p);
    if (fn == NULL || fn == Py_None) return 0;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "progress must be a callable (phase, done, total, item) or None, not %s",
                     Py_TYPE(fn)->tp_name);
        return -1;
    }
    p->fn = fn;
    o->progress = progress_call;
    o->progress_user_data = p;
    return 0;
}

int tcpy_progress_raise(tcpy_progress *p) {
    if (p->exc_type == NULL) return 0;
    PyErr_Restore(p->exc_type, p->exc_value, p->exc_tb);
    p->exc_type = p->exc_value = p->exc_tb = NULL;
    return 1;
}
