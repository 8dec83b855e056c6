/* scratch.c - which reference kernels take scratch memory (their tactics, tactics.c, size it per step). */
#include <string.h>

#include "backends/ref/ref.h"

bool tc__ref_uses_scratch(const char *op_type) {
    static const char *const kOps[] = {
        "Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "LayerNormalization", "Pad", "ReduceMean",
        "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL2", "Resize", "Softmax",
        "LogSoftmax", "BatchNormalization", "Conv", "ConvTranspose", "ConvInteger", "MatMul", "MatMulInteger", "Gemm", "MaxPool", "AveragePool",
        "GlobalAveragePool", "GlobalMaxPool", "LSTM", "GRU", "RNN"};
    for (size_t i = 0; i < sizeof kOps / sizeof kOps[0]; i++)
        if (strcmp(kOps[i], op_type) == 0) return true;
    return false;
}
