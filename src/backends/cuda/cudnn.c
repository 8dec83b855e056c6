/*
 * cudnn.c - loads cuDNN with dlopen on first use and creates the process-wide handle (cudnn.h).
 */
#include "backends/cuda/cudnn.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define TC__CUDNN_SONAME "libcudnn.so.9"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tc__cudnn g_dnn;
static bool g_ok;
static char g_why[256];

/* dlsym into *slot (a function pointer of the table); false with g_why set when the symbol is missing. */
static bool resolve(void *lib, const char *name, void *slot) {
    dlerror();
    void *p = dlsym(lib, name);
    if (p == NULL) {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "symbol %s not found (%s)", name, e ? e : "no message");
        return false;
    }
    memcpy(slot, &p, sizeof p); /* object pointer to function pointer: POSIX guarantees the representation */
    return true;
}

static void load_once(void) {
    static const char *const paths[] = {TC__CUDNN_SONAME, "/usr/local/cuda/lib64/" TC__CUDNN_SONAME,
                                        "/usr/local/cuda/lib/" TC__CUDNN_SONAME};
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
    tc__cudnn *t = &g_dnn;
    bool ok = resolve(lib, "cudnnGetVersion", &t->GetVersion) &&
              resolve(lib, "cudnnGetErrorString", &t->GetErrorString) &&
              resolve(lib, "cudnnCreate", &t->Create) && resolve(lib, "cudnnSetStream", &t->SetStream) &&
              resolve(lib, "cudnnCreateTensorDescriptor", &t->CreateTensorDescriptor) &&
              resolve(lib, "cudnnSetTensor4dDescriptor", &t->SetTensor4dDescriptor) &&
              resolve(lib, "cudnnDestroyTensorDescriptor", &t->DestroyTensorDescriptor) &&
              resolve(lib, "cudnnCreateFilterDescriptor", &t->CreateFilterDescriptor) &&
              resolve(lib, "cudnnSetFilter4dDescriptor", &t->SetFilter4dDescriptor) &&
              resolve(lib, "cudnnDestroyFilterDescriptor", &t->DestroyFilterDescriptor) &&
              resolve(lib, "cudnnCreateConvolutionDescriptor", &t->CreateConvolutionDescriptor) &&
              resolve(lib, "cudnnSetConvolution2dDescriptor", &t->SetConvolution2dDescriptor) &&
              resolve(lib, "cudnnSetConvolutionGroupCount", &t->SetConvolutionGroupCount) &&
              resolve(lib, "cudnnSetConvolutionMathType", &t->SetConvolutionMathType) &&
              resolve(lib, "cudnnDestroyConvolutionDescriptor", &t->DestroyConvolutionDescriptor) &&
              resolve(lib, "cudnnGetConvolutionForwardAlgorithm_v7", &t->GetConvolutionForwardAlgorithm_v7) &&
              resolve(lib, "cudnnConvolutionForward", &t->ConvolutionForward);
    if (!ok) {
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    /* optional: all four or none */
    if (!(resolve(lib, "cudnnCreateActivationDescriptor", &t->CreateActivationDescriptor) &&
          resolve(lib, "cudnnSetActivationDescriptor", &t->SetActivationDescriptor) &&
          resolve(lib, "cudnnDestroyActivationDescriptor", &t->DestroyActivationDescriptor) &&
          resolve(lib, "cudnnConvolutionBiasActivationForward", &t->ConvolutionBiasActivationForward))) {
        t->CreateActivationDescriptor = NULL, t->SetActivationDescriptor = NULL;
        t->DestroyActivationDescriptor = NULL, t->ConvolutionBiasActivationForward = NULL;
        g_why[0] = '\0';
    }
    /* optional: the backend (graph) API, all six or none */
    if (!(resolve(lib, "cudnnBackendCreateDescriptor", &t->BackendCreateDescriptor) &&
          resolve(lib, "cudnnBackendDestroyDescriptor", &t->BackendDestroyDescriptor) &&
          resolve(lib, "cudnnBackendSetAttribute", &t->BackendSetAttribute) &&
          resolve(lib, "cudnnBackendGetAttribute", &t->BackendGetAttribute) &&
          resolve(lib, "cudnnBackendFinalize", &t->BackendFinalize) &&
          resolve(lib, "cudnnBackendExecute", &t->BackendExecute))) {
        t->BackendCreateDescriptor = NULL, t->BackendDestroyDescriptor = NULL, t->BackendSetAttribute = NULL;
        t->BackendGetAttribute = NULL, t->BackendFinalize = NULL, t->BackendExecute = NULL;
        g_why[0] = '\0';
    }
    if (!resolve(lib, "cudnnGetLastErrorString", &t->GetLastErrorString)) {
        t->GetLastErrorString = NULL;
        g_why[0] = '\0';
    }
    t->version = t->GetVersion();
    if (t->version / 10000 != CUDNN_MAJOR) {
        snprintf(g_why, sizeof g_why, "version %zu, tailcut was built against the %d.x headers", t->version,
                 CUDNN_MAJOR);
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    const cudnnStatus_t s = t->Create(&t->handle);
    if (s != CUDNN_STATUS_SUCCESS) {
        snprintf(g_why, sizeof g_why, "cudnnCreate failed: %s", t->GetErrorString(s));
        dlclose(lib);
        memset(t, 0, sizeof *t);
        return;
    }
    /* The library stays loaded and the handle alive for the life of the process (no destroy at exit: the driver may
     * already be gone by then). */
    g_ok = true;
}

const tc__cudnn *tc__cudnn_get(tc__err *err) {
    pthread_once(&g_once, load_once);
    if (g_ok) return &g_dnn;
    tc__fail(err, TC_STATUS_UNSUPPORTED, "cuDNN (" TC__CUDNN_SONAME ") is not available: %s",
             g_why[0] ? g_why : "unknown reason");
    return NULL;
}

bool tc__cudnn_available(void) {
    pthread_once(&g_once, load_once);
    return g_ok;
}

void tc__cudnn_lock(void) { pthread_mutex_lock(&g_lock); }
void tc__cudnn_unlock(void) { pthread_mutex_unlock(&g_lock); }

tc_status tc__cudnn_fail(cudnnStatus_t s, tc__err *err, const char *what) {
    if (s == CUDNN_STATUS_SUCCESS) return TC_STATUS_OK;
    char last[512] = "";
    if (g_ok && g_dnn.GetLastErrorString != NULL) {
        g_dnn.GetLastErrorString(last, sizeof last);
        last[sizeof last - 1] = '\0';
    }
    return tc__fail(err, s == CUDNN_STATUS_ALLOC_FAILED ? TC_STATUS_OUT_OF_MEMORY : TC_STATUS_INTERNAL,
                    "%s: cuDNN error %d (%s)%s%s", what, (int)s, g_ok ? g_dnn.GetErrorString(s) : "cuDNN not loaded",
                    last[0] ? "; cuDNN's last error: " : "", last);
}
