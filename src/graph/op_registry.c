/* op_registry.c - the table of operator schemas, generated from core/ops.inc. */
#include <stdbool.h>
#include <string.h>

#include "graph/op_schema.h"

static const tc__op_schema kSchemas[] = {
#define TC_OP(name) {#name, tc__infer_##name},
#include "core/ops.inc"
#undef TC_OP
};

int tc__op_schema_count(void) { return (int)(sizeof kSchemas / sizeof kSchemas[0]); }

const tc__op_schema *tc__op_schema_at(int i) {
    return i >= 0 && i < tc__op_schema_count() ? &kSchemas[i] : NULL;
}

/* Ops named Tc... are tailcut's own (ops.inc), found in domain "tailcut" only; the others in ONNX's default domain. */
const tc__op_schema *tc__op_schema_find(const char *domain, const char *op_type) {
    const bool internal = strncmp(op_type, "Tc", 2) == 0;
    const bool onnx = domain == NULL || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
    if (internal ? domain == NULL || strcmp(domain, TC__DOMAIN_INTERNAL) != 0 : !onnx) return NULL;
    for (int i = 0; i < tc__op_schema_count(); i++)
        if (strcmp(kSchemas[i].op_type, op_type) == 0) return &kSchemas[i];
    return NULL;
}
