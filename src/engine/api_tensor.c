/* api_tensor.c - the public tensor file API: .npy and ONNX TensorProto .pb in, .npy out. */
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>

#include "core/file.h"
#include "core/npy.h"
#include "onnx/onnx_import.h"

/* Largest tensor file read. */
#define TC__MAX_TENSOR_FILE ((size_t)8 << 30)

tc_status tc_tensor_load(const char *path, tc_tensor *tensor, char *name_out, size_t name_size, tc_error *error) {
    tc__err err = {0};
    if (path == NULL || tensor == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_tensor_load: NULL argument");
        tc__err_export(&err, error);
        return err.status;
    }
    memset(tensor, 0, sizeof *tensor);
    if (name_out != NULL && name_size > 0) name_out[0] = '\0';
    void *data;
    size_t size;
    tc_status st = tc__read_file(path, TC__MAX_TENSOR_FILE, &data, &size, &err);
    if (st == TC_STATUS_OK) {
        /* by content, and by name: a corrupt .npy is reported as one, not as a bad ONNX TensorProto */
        const size_t n = strlen(path);
        const bool npy_name = n >= 4 && strcmp(path + n - 4, ".npy") == 0;
        if (tc__npy_is_npy(data, size) || npy_name)
            st = tc__npy_parse(data, size, tensor, &err);
        else
            st = tc__onnx_tensor_from_pb(data, size, tensor, name_out, name_size, &err);
        free(data);
    }
    if (st != TC_STATUS_OK) {
        tc__err_prefix(&err, "%s: ", path);
        tc__err_export(&err, error);
    }
    return st;
}

tc_status tc_tensor_save_npy(const char *path, const tc_tensor *tensor, tc_error *error) {
    tc__err err = {0};
    if (path == NULL || tensor == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_tensor_save_npy: NULL argument");
        tc__err_export(&err, error);
        return err.status;
    }
    tc_status st = tc__npy_save(path, tensor, &err);
    if (st) tc__err_export(&err, error);
    return st;
}
