/* engine.c - models and engines in _tailcut: tc_model_load(_buffer), tc_engine_build (the GIL released while it
 * optimizes and times, a progress callable passed through, progress.c; tc_engine_build_accurate for an INT8 accuracy
 * target), tc_engine_save / tc_engine_load,
 * and the engine's inputs, outputs and profiles. */
#include <string.h>

#include "py_common.h"

static PyObject *model_load(PyObject *self, PyObject *args) {
    PyObject *src;
    const char *base_dir = NULL;
    if (!PyArg_ParseTuple(args, "O|z", &src, &base_dir)) return NULL;
    tc_model *model = NULL;
    tc_error err = {{0}};
    tc_status st;
    if (PyBytes_Check(src)) {
        char *data;
        Py_ssize_t size;
        if (PyBytes_AsStringAndSize(src, &data, &size) < 0) return NULL;
        Py_BEGIN_ALLOW_THREADS st = tc_model_load_buffer(data, (size_t)size, base_dir, NULL, &model, &err);
        Py_END_ALLOW_THREADS
    } else {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(src, &path)) return NULL;
        Py_BEGIN_ALLOW_THREADS st = tc_model_load(PyBytes_AS_STRING(path), NULL, &model, &err);
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    }
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return tcpy_wrap(model, TCPY_MODEL, NULL);
}

static int read_dims(PyObject *seq, int32_t rank, int64_t *dims, const char *name, const char *what) {
    PyObject *f = PySequence_Fast(seq, "profile shapes must be sequences");
    if (f == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(f) != rank) {
        Py_DECREF(f);
        tcpy_invalid("profile of input '%s': the %s shape has rank %zd, the min shape %d", name, what,
                     PySequence_Fast_GET_SIZE(seq), (int)rank);
        return -1;
    }
    for (int32_t d = 0; d < rank; d++) dims[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(f, d));
    Py_DECREF(f);
    return PyErr_Occurred() ? -1 : 0;
}

/* profiles: list of lists of (name, min, opt, max) -> tc_profile array (PyMem; ranges in one block). */
static int read_profiles(PyObject *list, tc_profile **out, int *count) {
    *out = NULL;
    *count = 0;
    PyObject *seq = PySequence_Fast(list, "profiles must be a list");
    if (seq == NULL) return -1;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(seq);
    tc_profile *profiles = PyMem_Calloc((size_t)np + 1, sizeof *profiles);
    if (profiles == NULL) goto nomem;
    for (Py_ssize_t p = 0; p < np; p++) {
        PyObject *ranges = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, p), "a profile is a list of ranges");
        if (ranges == NULL) goto fail;
        Py_ssize_t ni = PySequence_Fast_GET_SIZE(ranges);
        tc_input_range *r = PyMem_Calloc((size_t)ni + 1, sizeof *r);
        profiles[p].inputs = r;
        profiles[p].num_inputs = (int32_t)ni;
        if (r == NULL) {
            Py_DECREF(ranges);
            goto nomem;
        }
        for (Py_ssize_t i = 0; i < ni; i++) {
            PyObject *mn, *opt, *mx;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(ranges, i), "sOOO", &r[i].name, &mn, &opt, &mx)) {
                Py_DECREF(ranges);
                goto fail;
            }
            Py_ssize_t rank = PySequence_Size(mn);
            if (rank < 0 || rank > TC_MAX_RANK) {
                Py_DECREF(ranges);
                if (rank >= 0) tcpy_invalid("profile of input '%s': rank %zd > %d", r[i].name, rank, TC_MAX_RANK);
                goto fail;
            }
            r[i].rank = (int32_t)rank;
            if (read_dims(mn, r[i].rank, r[i].min, r[i].name, "min") < 0 ||
                read_dims(opt, r[i].rank, r[i].opt, r[i].name, "opt") < 0 ||
                read_dims(mx, r[i].rank, r[i].max, r[i].name, "max") < 0) {
                Py_DECREF(ranges);
                goto fail;
            }
        }
        Py_DECREF(ranges);
    }
    Py_DECREF(seq);
    *out = profiles;
    *count = (int)np;
    return 0;
nomem:
    PyErr_NoMemory();
fail:
    if (profiles)
        for (Py_ssize_t p = 0; p < np; p++) PyMem_Free((void *)profiles[p].inputs);
    PyMem_Free(profiles);
    Py_DECREF(seq);
    return -1;
}

static void free_profiles(tc_profile *profiles, int count) {
    for (int p = 0; p < count; p++) PyMem_Free((void *)profiles[p].inputs);
    PyMem_Free(profiles);
}

/* A list of str -> NULL-terminated array of UTF-8 pointers owned by the list's strings. */
static int read_names(PyObject *list, const char ***out, int32_t *count) {
    *out = NULL;
    *count = 0;
    PyObject *seq = PySequence_Fast(list, "layer names must be a list of str");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    if (names == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (names[i] == NULL) {
            PyMem_Free(names);
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq); /* the strings stay alive in `list`, which the caller holds */
    *out = names;
    *count = (int32_t)n;
    return 0;
}

/* tc_build_options from engine_build's keyword arguments, with the arrays it points to (freed by build_args_free). */
typedef struct build_args {
    tc_model *model;
    tc_build_options o;
    tc_profile *profiles;
    int num_profiles;
    const char **fp32;
    tcpy_progress progress;
} build_args;

static void build_args_free(build_args *b) {
    free_profiles(b->profiles, b->num_profiles);
    PyMem_Free(b->fp32);
    memset(b, 0, sizeof *b);
}

static int build_args_get(PyObject *model_caps, int threads, unsigned int flags, unsigned int disabled,
                          PyObject *profiles_list, const char *timing_cache, const char *calib_cache,
                          PyObject *fp32_list, const char *backend, PyObject *progress, build_args *b) {
    memset(b, 0, sizeof *b);
    b->model = tcpy_handle(model_caps, TCPY_MODEL);
    if (b->model == NULL) return -1;
    b->o.struct_size = sizeof b->o;
    b->o.threads = threads;
    b->o.flags = flags;
    b->o.disabled_passes = disabled;
    b->o.timing_cache = timing_cache;
    b->o.calib_cache = calib_cache;
    b->o.backend = backend;
    if (tcpy_progress_init(&b->progress, progress, &b->o) < 0) return -1;
    if (read_profiles(profiles_list, &b->profiles, &b->num_profiles) < 0) return -1;
    if (read_names(fp32_list, &b->fp32, &b->o.num_fp32_layers) < 0) {
        build_args_free(b);
        return -1;
    }
    b->o.profiles = b->profiles;
    b->o.num_profiles = b->num_profiles;
    b->o.fp32_layers = b->fp32;
    return 0;
}

#define BUILD_KEYS "model", "threads", "flags", "disabled_passes", "profiles", "timing_cache", "calib_cache", \
    "fp32_layers", "backend", "progress"

static PyObject *engine_build(PyObject *self, PyObject *args, PyObject *kw) {
    static char *keys[] = {BUILD_KEYS, NULL};
    PyObject *model_caps, *profiles_list, *fp32_list, *progress;
    int threads;
    unsigned int flags, disabled;
    const char *timing_cache, *calib_cache, *backend;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiIIOzzOzO", keys, &model_caps, &threads, &flags, &disabled,
                                     &profiles_list, &timing_cache, &calib_cache, &fp32_list, &backend, &progress))
        return NULL;
    build_args b;
    if (build_args_get(model_caps, threads, flags, disabled, profiles_list, timing_cache, calib_cache, fp32_list,
                       backend, progress, &b) < 0)
        return NULL;
    tc_engine *engine = NULL;
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_engine_build(b.model, &b.o, &engine, &err);
    Py_END_ALLOW_THREADS
    int raised = tcpy_progress_raise(&b.progress);
    build_args_free(&b);
    if (raised) {
        tc_engine_destroy(engine);
        return NULL;
    }
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return tcpy_wrap(engine, TCPY_ENGINE, NULL);
}

/* The accuracy rounds' log lines, gathered while the GIL is released (one block, lines separated by '\n'). */
typedef struct log_buf {
    char *text;
    size_t len, cap;
} log_buf;

static void log_line(void *user, const char *line) {
    log_buf *b = user;
    size_t n = strlen(line);
    if (b->len + n + 2 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + n;
        char *t = PyMem_RawRealloc(b->text, cap);
        if (t == NULL) return; /* the log is best effort: the build goes on */
        b->text = t;
        b->cap = cap;
    }
    memcpy(b->text + b->len, line, n);
    b->len += n;
    b->text[b->len++] = '\n';
    b->text[b->len] = '\0';
}

/* engine_build_accurate(build keywords..., calibrator, method, percentile, metric, threshold, num_inputs, samples)
 * -> (engine, achieved, log): samples is a flat list of (name, dtype, shape, array), num_inputs per sample. */
static PyObject *engine_build_accurate(PyObject *self, PyObject *args, PyObject *kw) {
    static char *keys[] = {BUILD_KEYS, "calibrator", "method", "percentile", "metric", "threshold", "num_inputs",
                           "samples", NULL};
    PyObject *model_caps, *profiles_list, *fp32_list, *progress, *cal_caps, *samples;
    int threads, method, metric, num_inputs;
    unsigned int flags, disabled;
    double percentile, threshold;
    const char *timing_cache, *calib_cache, *backend;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiIIOzzOzOOididiO", keys, &model_caps, &threads, &flags, &disabled,
                                     &profiles_list, &timing_cache, &calib_cache, &fp32_list, &backend, &progress,
                                     &cal_caps, &method, &percentile, &metric, &threshold, &num_inputs, &samples))
        return NULL;
    tc_calibrator *cal = tcpy_handle(cal_caps, TCPY_CALIBRATOR);
    if (cal == NULL) return NULL;
    build_args b;
    if (build_args_get(model_caps, threads, flags, disabled, profiles_list, timing_cache, calib_cache, fp32_list,
                       backend, progress, &b) < 0)
        return NULL;
    tcpy_tensors t;
    if (tcpy_tensors_get(samples, 0, &t) < 0) {
        build_args_free(&b);
        return NULL;
    }
    if (num_inputs < 1 || t.n % num_inputs != 0) {
        build_args_free(&b);
        tcpy_tensors_release(&t);
        return tcpy_invalid("%zd sample tensors for %d inputs", t.n, num_inputs);
    }
    tc_accuracy_options a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.calibrator = cal;
    a.method = (tc_calib_method)method;
    a.percentile = percentile;
    a.metric = (tc_accuracy_metric)metric;
    a.threshold = threshold;
    a.num_inputs = num_inputs;
    a.num_samples = (int32_t)(t.n / num_inputs);
    a.input_names = t.names;
    a.samples = t.tensors;
    log_buf log = {0};
    a.log = log_line;
    a.log_user = &log;
    tc_engine *engine = NULL;
    tc_error err = {{0}};
    double achieved = 0;
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_engine_build_accurate(b.model, &b.o, &a, &engine, &achieved, &err);
    Py_END_ALLOW_THREADS
    int raised = tcpy_progress_raise(&b.progress);
    build_args_free(&b);
    tcpy_tensors_release(&t);
    if (raised) {
        PyMem_RawFree(log.text);
        tc_engine_destroy(engine);
        return NULL;
    }
    PyObject *text = PyUnicode_FromString(log.text ? log.text : "");
    PyMem_RawFree(log.text);
    if (st != TC_STATUS_OK) {
        Py_XDECREF(text);
        return tcpy_raise(st, err.message);
    }
    PyObject *handle = tcpy_wrap(engine, TCPY_ENGINE, NULL);
    if (handle == NULL || text == NULL) {
        Py_XDECREF(handle);
        Py_XDECREF(text);
        return NULL;
    }
    return Py_BuildValue("(NdN)", handle, achieved, text);
}

static PyObject *engine_load(PyObject *self, PyObject *args) {
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    tc_engine *engine = NULL;
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_engine_load(PyBytes_AS_STRING(path), &engine, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    return tcpy_wrap(engine, TCPY_ENGINE, NULL);
}

static PyObject *engine_save(PyObject *self, PyObject *args) {
    PyObject *caps, *path;
    if (!PyArg_ParseTuple(args, "OO&", &caps, PyUnicode_FSConverter, &path)) return NULL;
    tc_engine *engine = tcpy_handle(caps, TCPY_ENGINE);
    if (engine == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    tc_error err = {{0}};
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_engine_save(engine, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != TC_STATUS_OK) return tcpy_raise(st, err.message);
    Py_RETURN_NONE;
}

typedef int (*count_fn)(const void *);
typedef tc_status (*info_fn)(const void *, int, tc_io_info *);

static PyObject *io_list(const void *h, int n, info_fn info) {
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        tc_io_info io;
        memset(&io, 0, sizeof io);
        tc_status st = info(h, i, &io);
        if (st != TC_STATUS_OK) {
            Py_DECREF(list);
            return tcpy_raise(st, "reading an input or output description failed");
        }
        PyObject *t = tcpy_io_info(&io);
        if (t == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

/* (inputs, outputs): lists of (name, dtype, rank, dims, dim names). */
static PyObject *engine_io(PyObject *self, PyObject *caps) {
    tc_engine *e = tcpy_handle(caps, TCPY_ENGINE);
    if (e == NULL) return NULL;
    return Py_BuildValue("(NN)", io_list(e, tc_engine_num_inputs(e), (info_fn)tc_engine_input_info),
                         io_list(e, tc_engine_num_outputs(e), (info_fn)tc_engine_output_info));
}

static PyObject *model_io(PyObject *self, PyObject *caps) {
    tc_model *m = tcpy_handle(caps, TCPY_MODEL);
    if (m == NULL) return NULL;
    return Py_BuildValue("(NN)", io_list(m, tc_model_num_inputs(m), (info_fn)tc_model_input_info),
                         io_list(m, tc_model_num_outputs(m), (info_fn)tc_model_output_info));
}

static PyObject *dims_tuple(int32_t rank, const int64_t *dims) {
    PyObject *t = PyTuple_New(rank < 0 ? 0 : rank);
    for (int32_t d = 0; t && d < rank; d++) PyTuple_SET_ITEM(t, d, PyLong_FromLongLong(dims[d]));
    return t;
}

/* [[(name, min, opt, max) per input] per profile]. */
static PyObject *engine_profiles(PyObject *self, PyObject *caps) {
    tc_engine *e = tcpy_handle(caps, TCPY_ENGINE);
    if (e == NULL) return NULL;
    int np = tc_engine_num_profiles(e), ni = tc_engine_num_inputs(e);
    PyObject *out = PyList_New(np);
    for (int p = 0; out && p < np; p++) {
        PyObject *ranges = PyList_New(ni);
        if (ranges == NULL) goto fail;
        PyList_SET_ITEM(out, p, ranges);
        for (int i = 0; i < ni; i++) {
            tc_input_range r;
            memset(&r, 0, sizeof r);
            tc_status st = tc_engine_profile_range(e, p, i, &r);
            if (st != TC_STATUS_OK) {
                tcpy_raise(st, "reading a profile range failed");
                goto fail;
            }
            PyObject *t = Py_BuildValue("(sNNN)", r.name, dims_tuple(r.rank, r.min), dims_tuple(r.rank, r.opt),
                                        dims_tuple(r.rank, r.max));
            if (t == NULL) goto fail;
            PyList_SET_ITEM(ranges, i, t);
        }
    }
    return out;
fail:
    Py_XDECREF(out);
    return NULL;
}

/* Per step: (name, ops, tactic, precision, backend). */
static PyObject *engine_steps(PyObject *self, PyObject *caps) {
    tc_engine *e = tcpy_handle(caps, TCPY_ENGINE);
    if (e == NULL) return NULL;
    int n = tc_engine_num_steps(e);
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) {
        tc_step_info s;
        memset(&s, 0, sizeof s);
        tc_status st = tc_engine_step_info(e, i, &s);
        if (st != TC_STATUS_OK) {
            Py_DECREF(out);
            return tcpy_raise(st, "reading a step failed");
        }
        PyObject *t = Py_BuildValue("(sssss)", s.name ? s.name : "", s.ops ? s.ops : "", s.tactic ? s.tactic : "",
                                    s.precision ? s.precision : "", s.backend ? s.backend : "");
        if (t == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    return out;
}

PyMethodDef tcpy_engine_methods[] = {
    {"model_load", model_load, METH_VARARGS, "model_load(path or bytes, base_dir=None) -> model handle"},
    {"model_io", model_io, METH_O, "model_io(model) -> (inputs, outputs)"},
    {"engine_build", (PyCFunction)(void (*)(void))engine_build, METH_VARARGS | METH_KEYWORDS,
     "engine_build(model, threads, flags, disabled_passes, profiles, timing_cache, calib_cache, fp32_layers, "
     "backend) -> engine handle"},
    {"engine_build_accurate", (PyCFunction)(void (*)(void))engine_build_accurate, METH_VARARGS | METH_KEYWORDS,
     "engine_build_accurate(engine_build's keywords, calibrator, method, percentile, metric, threshold, num_inputs, "
     "samples) -> (engine handle, achieved metric, log text)"},
    {"engine_load", engine_load, METH_VARARGS, "engine_load(path) -> engine handle"},
    {"engine_save", engine_save, METH_VARARGS, "engine_save(engine, path)"},
    {"engine_io", engine_io, METH_O, "engine_io(engine) -> (inputs, outputs)"},
    {"engine_profiles", engine_profiles, METH_O, "engine_profiles(engine) -> [[(name, min, opt, max)]]"},
    {"engine_steps", engine_steps, METH_O, "engine_steps(engine) -> [(name, ops, tactic, precision, backend)]"},
    {NULL, NULL, 0, NULL},
};
