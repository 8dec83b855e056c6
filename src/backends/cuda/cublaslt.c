/*
 * cublaslt.c - loads cuBLASLt with dlopen on first use and creates the process-wide handle (cublaslt.h).
 */
#include "backends/cuda/cublaslt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define TC__CUBLASLT_SONAME "libcublasLt.so.13"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tc__cublaslt g_lt;
static bool g_ok;
static char g_why[256];

/* dlsym into *slot (a function pointer of the table); false with g_why set when the symbol is missing. */
static bool resolve(void *lib, const char *name, void *slot, bool required) {
    dlerror();
    void *p = dlsym(lib, name);
    if (p == NULL && required) {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "symbol %s not found (%s)", name, e ? e : "no message");
        return false;
    }
    memcpy(slot, &p, sizeof p); /* object pointer to function pointer: POSIX guarantees the representation */
    return true;
}

static void load_once(void) {
    /* The loader's search path first, then the toolkit's usual places (a machine whose ld.so.conf lacks them). */
    static const char *const paths[] = {TC__CUBLASLT_SONAME, "/usr/local/cuda/lib64/" TC__CUBLASLT_SONAME,
                                        "/usr/local/cuda/targets/x86_64-linux/lib/" TC__CUBLASLT_SONAME};
    void *lib = NULL;
    char first[160] = "";
    for (size_t i = 0; lib == NULL && i < sizeof paths / sizeof paths[0]; i++) {
        lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = lib == NULL ? dlerror() : NULL;
        if (i == 0 && e != NULL) snprintf(first, sizeof first, "%s", e);
    }
    if (lib == NULL) {
        snprintf(g_why, sizeof g_why, "dlopen failed: %s", first[0] ? first : "no message");
        return;
    }
    tc__cublaslt *t = &g_lt;
    bool ok = resolve(lib, "cublasLtCreate", &t->Create, true) &&
              resolve(lib, "cublasLtGetVersion", &t->GetVersion, true) &&
              resolve(lib, "cublasLtGetStatusName", &t->GetStatusName, false) &&
              resolve(lib, "cublasLtMatmul", &t->Matmul, true) &&
              resolve(lib, "cublasLtMatmulDescCreate", &t->MatmulDescCreate, true) &&
              resolve(lib, "cublasLtMatmulDescDestroy", &t->MatmulDescDestroy, true) &&
              resolve(lib, "cublasLtMatmulDescSetAttribute", &t->MatmulDescSetAttribute, true) &&
              resolve(lib, "cublasLtMatrixLayoutCreate", &t->MatrixLayoutCreate, true) &&
              resolve(lib, "cublasLtMatrixLayoutDestroy", &t->MatrixLayoutDestroy, true) &&
              resolve(lib, "cublasLtMatrixLayoutSetAttribute", &t->MatrixLayoutSetAttribute, true) &&
              resolve(lib, "cublasLtMatmulPreferenceCreate", &t->MatmulPreferenceCreate, true) &&
              resolve(lib, "cublasLtMatmulPreferenceDestroy", &t->MatmulPreferenceDestroy, true) &&
              resolve(lib, "cublasLtMatmulPreferenceSetAttribute", &t->MatmulPreferenceSetAttribute, true) &&
              resolve(lib, "cublasLtMatmulAlgoGetHeuristic", &t->MatmulAlgoGetHeuristic, true) &&
              resolve(lib, "cublasLtMatmulAlgoInit", &t->MatmulAlgoInit, true) &&
              resolve(lib, "cublasLtMatmulAlgoCheck", &t->MatmulAlgoCheck, true) &&
              resolve(lib, "cublasLtMatmulAlgoConfigSetAttribute", &t->MatmulAlgoConfigSetAttribute, true) &&
              resolve(lib, "cublasLtMatmulAlgoConfigGetAttribute", &t->MatmulAlgoConfigGetAttribute, true);
    if (!ok) {
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    t->version = t->GetVersion();
    if (t->version / 10000 != CUBLAS_VER_MAJOR) {
        snprintf(g_why, sizeof g_why, "version %zu, tailcut was built against the %d.x headers", t->version,
                 CUBLAS_VER_MAJOR);
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    const cublasStatus_t s = t->Create(&t->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(g_why, sizeof g_why, "cublasLtCreate failed: %s", tc__cublaslt_status_name(s));
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    /* The library stays loaded and the handle alive for the life of the process (no destroy at exit: the driver may
     * already be gone by then). */
    g_ok = true;
}

const tc__cublaslt *tc__cublaslt_get(tc__err *err) {
    pthread_once(&g_once, load_once);
    if (g_ok) return &g_lt;
    tc__fail(err, TC_STATUS_UNSUPPORTED, "cuBLASLt (" TC__CUBLASLT_SONAME ") is not available: %s",
             g_why[0] ? g_why : "unknown reason");
    return NULL;
}

bool tc__cublaslt_available(void) {
    pthread_once(&g_once, load_once);
    return g_ok;
}

const char *tc__cublaslt_status_name(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: break;
    }
    const char *n = g_lt.GetStatusName != NULL ? g_lt.GetStatusName(s) : NULL;
    return n != NULL ? n : "CUBLAS_STATUS_(unknown)";
}

tc_status tc__cublaslt_fail(cublasStatus_t s, tc__err *err, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return TC_STATUS_OK;
    return tc__fail(err, s == CUBLAS_STATUS_ALLOC_FAILED ? TC_STATUS_OUT_OF_MEMORY : TC_STATUS_INTERNAL,
                    "%s: cuBLASLt error %d (%s)", what, (int)s, tc__cublaslt_status_name(s));
}
