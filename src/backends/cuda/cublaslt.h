/*
 * cublaslt.h - cuBLASLt for the CUDA tactics, loaded at run time: libtailcut does not link against cuBLASLt
 * (dlopen("libcublasLt.so.13") on first use), so the library stays loadable where cuBLASLt is not installed, and the
 * tactics that need it refuse their steps there. <cublasLt.h> is included for its types and enums only.
 *
 * One process-wide handle, created once (pthread_once) on the device current at that moment. The table is
 * read-only after creation and may be used from any thread (cuBLASLt's handle is thread-safe for cublasLtMatmul).
 */
#ifndef TC_BACKENDS_CUDA_CUBLASLT_H
#define TC_BACKENDS_CUDA_CUBLASLT_H

#include <stdbool.h>
#include <stddef.h>

#include <cublasLt.h>

#include "core/error.h"

/* The functions tailcut uses, resolved from the library, and the process-wide handle. */
typedef struct tc__cublaslt {
    cublasLtHandle_t handle;
    size_t version; /* cublasLtGetVersion(): major * 10000 + minor * 100 + patch */
    cublasStatus_t (*Create)(cublasLtHandle_t *handle);
    size_t (*GetVersion)(void);
    const char *(*GetStatusName)(cublasStatus_t status); /* optional: NULL where the library lacks it */
    cublasStatus_t (*Matmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,
                             cublasLtMatrixLayout_t a_desc, const void *b, cublasLtMatrixLayout_t b_desc,
                             const void *beta, const void *c, cublasLtMatrixLayout_t c_desc, void *d,
                             cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                             size_t workspace_bytes, cudaStream_t stream);
    cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale);
    cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t desc);
    cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                             const void *buf, size_t bytes);
    cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                         uint64_t cols, int64_t ld);
    cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t layout);
    cublasStatus_t (*MatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                               const void *buf, size_t bytes);
    cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *pref);
    cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref);
    cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref,
                                                   cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                   size_t bytes);
    cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                             cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                                             cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                                             cublasLtMatmulPreference_t pref, int requested,
                                             cublasLtMatmulHeuristicResult_t results[], int *returned);
    cublasStatus_t (*MatmulAlgoInit)(cublasLtHandle_t handle, cublasComputeType_t compute, cudaDataType_t scale,
                                     cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cudaDataType_t d, int id,
                                     cublasLtMatmulAlgo_t *algo);
    cublasStatus_t (*MatmulAlgoCheck)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_desc,
                                      cublasLtMatrixLayout_t b_desc, cublasLtMatrixLayout_t c_desc,
                                      cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t *algo,
                                      cublasLtMatmulHeuristicResult_t *result);
    cublasStatus_t (*MatmulAlgoConfigSetAttribute)(cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                                                   const void *buf, size_t bytes);
    cublasStatus_t (*MatmulAlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t *algo,
                                                   cublasLtMatmulAlgoConfigAttributes_t attr, void *buf, size_t bytes,
                                                   size_t *written);
} tc__cublaslt;

/* The table with its handle (loaded and created on the first call), or NULL with a failure in err (TC_STATUS_UNSUPPORTED:
 * "cuBLASLt (libcublasLt.so.13) is not available: <why>"). The first call's outcome stands for the process. */
const tc__cublaslt *tc__cublaslt_get(tc__err *err);

/* Whether tc__cublaslt_get succeeds (for supports(): a step is refused where cuBLASLt cannot be loaded). */
bool tc__cublaslt_available(void);

/* "CUBLAS_STATUS_NOT_SUPPORTED", ... (the library's own names where it has them). */
const char *tc__cublaslt_status_name(cublasStatus_t s);

/* TC_STATUS_OK when s is CUBLAS_STATUS_SUCCESS, else a failure naming what and the status. */
tc_status tc__cublaslt_fail(cublasStatus_t s, tc__err *err, const char *what);

#endif
