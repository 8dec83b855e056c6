/*
 * backend_id.h - the single list of backend ids, known to every build whether it has the backend or
 * not (plans and messages name them): X(ENUM_SUFFIX, id, name). The ids are part of the plan format:
 * never renumber. Which backends a build has is backends.inc.
 */
#ifndef TC_BACKENDS_BACKEND_ID_H
#define TC_BACKENDS_BACKEND_ID_H

#define TC__BACKEND_MAP(X) \
    X(CPU, 1, "cpu")       \
    X(CUDA, 2, "cuda")

enum {
#define TC__BACKEND_ENUM_(name, id, text) TC__BACKEND_##name = id,
    TC__BACKEND_MAP(TC__BACKEND_ENUM_)
#undef TC__BACKEND_ENUM_
};

#endif
