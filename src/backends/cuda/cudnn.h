/*
 * cudnn.h - cuDNN for the CUDA convolution tactics, loaded at run time: libtailcut does not link against cuDNN
 * (dlopen("libcudnn.so.9") on first use), so the library stays loadable where cuDNN is not installed, and the
 * tactics that need it refuse their steps there. <cudnn.h> is included for its types and enums only. tailcut uses
 * cuDNN's convolution API of version 9 (descriptors, cudnnGetConvolutionForwardAlgorithm_v7, cudnnConvolutionForward),
 * present in every 9.x release; cudnnConvolutionBiasActivationForward and the activation descriptor where the
 * library has them (optional: NULL otherwise), and the backend (graph) API's descriptor functions for
 * cudnn_graph.c (optional too: NULL where missing, the graph path then refuses; cudnnGetLastErrorString separately).
 *
 * One process-wide handle, created once (pthread_once) on the device current at that moment. A cuDNN handle is not
 * thread-safe: callers hold tc__cudnn_lock() from cudnnSetStream until their call has been issued.
 */
#ifndef TC_BACKENDS_CUDA_CUDNN_H
#define TC_BACKENDS_CUDA_CUDNN_H

#include <stdbool.h>
#include <stddef.h>

#include <cudnn.h>

#include "core/error.h"

/* The functions tailcut uses, resolved from the library, and the process-wide handle. */
typedef struct tc__cudnn {
    cudnnHandle_t handle;
    size_t version; /* cudnnGetVersion(): major * 10000 + minor * 100 + patch */
    size_t (*GetVersion)(void);
    const char *(*GetErrorString)(cudnnStatus_t status);
    cudnnStatus_t (*Create)(cudnnHandle_t *handle);
    cudnnStatus_t (*SetStream)(cudnnHandle_t handle, cudaStream_t stream);
    cudnnStatus_t (*CreateTensorDescriptor)(cudnnTensorDescriptor_t *desc);
    cudnnStatus_t (*SetTensor4dDescriptor)(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                           cudnnDataType_t type, int n, int c, int h, int w);
    cudnnStatus_t (*DestroyTensorDescriptor)(cudnnTensorDescriptor_t desc);
    cudnnStatus_t (*CreateFilterDescriptor)(cudnnFilterDescriptor_t *desc);
    cudnnStatus_t (*SetFilter4dDescriptor)(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                           cudnnTensorFormat_t format, int k, int c, int h, int w);
    cudnnStatus_t (*DestroyFilterDescriptor)(cudnnFilterDescriptor_t desc);
    cudnnStatus_t (*CreateConvolutionDescriptor)(cudnnConvolutionDescriptor_t *desc);
    cudnnStatus_t (*SetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t desc, int pad_h, int pad_w, int u, int v,
                                                int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                                cudnnDataType_t compute);
    cudnnStatus_t (*SetConvolutionGroupCount)(cudnnConvolutionDescriptor_t desc, int groups);
    cudnnStatus_t (*SetConvolutionMathType)(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math);
    cudnnStatus_t (*DestroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t desc);
    cudnnStatus_t (*GetConvolutionForwardAlgorithm_v7)(cudnnHandle_t handle, const cudnnTensorDescriptor_t x,
                                                       const cudnnFilterDescriptor_t w,
                                                       const cudnnConvolutionDescriptor_t conv,
                                                       const cudnnTensorDescriptor_t y, int requested, int *returned,
                                                       cudnnConvolutionFwdAlgoPerf_t *results);
    cudnnStatus_t (*ConvolutionForward)(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t x_desc,
                                        const void *x, const cudnnFilterDescriptor_t w_desc, const void *w,
                                        const cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo,
                                        void *workspace, size_t workspace_bytes, const void *beta,
                                        const cudnnTensorDescriptor_t y_desc, void *y);
    /* optional (NULL where the library lacks them): the fused convolution + bias + residual + activation */
    cudnnStatus_t (*CreateActivationDescriptor)(cudnnActivationDescriptor_t *desc);
    cudnnStatus_t (*SetActivationDescriptor)(cudnnActivationDescriptor_t desc, cudnnActivationMode_t mode,
                                             cudnnNanPropagation_t nan, double coef);
    cudnnStatus_t (*DestroyActivationDescriptor)(cudnnActivationDescriptor_t desc);
    cudnnStatus_t (*ConvolutionBiasActivationForward)(
        cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t x_desc, const void *x,
        const cudnnFilterDescriptor_t w_desc, const void *w, const cudnnConvolutionDescriptor_t conv,
        cudnnConvolutionFwdAlgo_t algo, void *workspace, size_t workspace_bytes, const void *alpha2,
        const cudnnTensorDescriptor_t z_desc, const void *z, const cudnnTensorDescriptor_t bias_desc, const void *bias,
        const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t y_desc, void *y);
    /* optional (all six or none): the backend (graph) API, see cudnn_graph.h */
    cudnnStatus_t (*BackendCreateDescriptor)(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc);
    cudnnStatus_t (*BackendDestroyDescriptor)(cudnnBackendDescriptor_t desc);
    cudnnStatus_t (*BackendSetAttribute)(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                                         cudnnBackendAttributeType_t type, int64_t count, const void *elements);
    cudnnStatus_t (*BackendGetAttribute)(cudnnBackendDescriptor_t const desc, cudnnBackendAttributeName_t name,
                                         cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                         void *elements);
    cudnnStatus_t (*BackendFinalize)(cudnnBackendDescriptor_t desc);
    cudnnStatus_t (*BackendExecute)(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                    cudnnBackendDescriptor_t variant_pack);
    /* optional: the calling thread's last error message (NULL where the library lacks it) */
    void (*GetLastErrorString)(char *message, size_t max_size);
} tc__cudnn;

/* The table with its handle (loaded and created on the first call), or NULL with a failure in err (TC_STATUS_UNSUPPORTED:
 * "cuDNN (libcudnn.so.9) is not available: <why>"). The first call's outcome stands for the process. */
const tc__cudnn *tc__cudnn_get(tc__err *err);

/* Whether tc__cudnn_get succeeds (for supports(): a step is refused where cuDNN cannot be loaded). */
bool tc__cudnn_available(void);

/* The handle's lock (see the top of this file). */
void tc__cudnn_lock(void);
void tc__cudnn_unlock(void);

/* TC_STATUS_OK for CUDNN_STATUS_SUCCESS, else a failure naming what, cuDNN's status string and, where the library has
 * cudnnGetLastErrorString, its last error message for this thread. */
tc_status tc__cudnn_fail(cudnnStatus_t s, tc__err *err, const char *what);

#endif
