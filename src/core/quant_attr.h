/*
 * quant_attr.h - how a node says it may run in INT8: the precision pass (src/passes/precision_int8.c)
 * gives it the float attribute tc.int8_scale, the per-tensor scale of its data input (from the
 * calibration cache); the int8 tactics (src/backends/cpu/qconv_u8s8.h) take only such nodes. The
 * "tc." prefix is reserved (the importer refuses it).
 */
#ifndef TC_CORE_QUANT_ATTR_H
#define TC_CORE_QUANT_ATTR_H

#define TC__ATTR_INT8_SCALE "tc.int8_scale"

#endif
