/* dtypes.c - KServe / Triton datatype names of tensor dtypes ("FP32", "TYPE_FP32") in both directions. */
#include <string.h>

#include "repo.h"

static const struct {
    tc_dtype dt;
    const char *name;
} k_dtypes[] = {
    {TC_DTYPE_FLOAT32, "FP32"}, {TC_DTYPE_FLOAT64, "FP64"}, {TC_DTYPE_FLOAT16, "FP16"}, {TC_DTYPE_BFLOAT16, "BF16"},
    {TC_DTYPE_INT8, "INT8"},    {TC_DTYPE_INT16, "INT16"},  {TC_DTYPE_INT32, "INT32"},  {TC_DTYPE_INT64, "INT64"},
    {TC_DTYPE_UINT8, "UINT8"},  {TC_DTYPE_UINT16, "UINT16"}, {TC_DTYPE_UINT32, "UINT32"}, {TC_DTYPE_UINT64, "UINT64"},
    {TC_DTYPE_BOOL, "BOOL"},
};

const char *srv_dtype_kserve(tc_dtype dt) {
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (k_dtypes[i].dt == dt) return k_dtypes[i].name;
    return NULL;
}

tc_dtype srv_dtype_parse(const char *s, int triton_config) {
    if (!s) return TC_DTYPE_UNDEFINED;
    if (triton_config) {
        if (strncmp(s, "TYPE_", 5) != 0) return TC_DTYPE_UNDEFINED;
        s += 5;
    }
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (strcmp(k_dtypes[i].name, s) == 0) return k_dtypes[i].dt;
    return TC_DTYPE_UNDEFINED;
}

