/* config.h - a model's config.json in the model repository: Triton's field names where they mean the
 * same (max_batch_size, input/output, dynamic_batching, instance_group) plus a "tailcut" block of
 * build/run options. Parsing validates every field and names the file and field on error. */
#ifndef TC_SERVER_CONFIG_H
#define TC_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

#define SRV_MAX_IO 64
#define SRV_NAME_MAX 256
#define SRV_MAX_PREFERRED 16
#define SRV_MAX_PRIORITY_LEVELS 16
#define SRV_MAX_INSTANCES 64

/* One input/output entry of config.json. */
typedef struct srv_cfg_io {
    char name[SRV_NAME_MAX];
    tc_dtype dt;               /* UNDEFINED when not given */
    int rank;                  /* -1 when "dims" is not given; excludes the batch dim when batching */
    int64_t dims[TC_MAX_RANK]; /* -1 = any */
} srv_cfg_io;

/* instance_group kinds (Triton's): AUTO runs where the plan was built for (an .onnx builds for the CPU). */
enum { SRV_KIND_AUTO = 0, SRV_KIND_CPU = 1, SRV_KIND_GPU = 2 };

typedef struct srv_config {
    int max_batch_size; /* 0: the model does not batch; requests carry the model's full shape */
    int n_in, n_out;
    srv_cfg_io in[SRV_MAX_IO], out[SRV_MAX_IO];
    /* dynamic_batching (absent = every request runs alone) */
    int dynamic_batching;
    int64_t max_queue_delay_us;
    int n_preferred;
    int preferred[SRV_MAX_PREFERRED]; /* ascending, each in [1, max_batch_size] */
    int64_t max_queue_size;           /* 0 = unbounded */
    int64_t default_timeout_us;       /* 0 = none */
    int priority_levels;              /* 0 = one level */
    int default_priority_level;       /* 1..priority_levels, 1 = highest */
    /* instance_group */
    int instance_count; /* contexts serving the model, each on its own thread */
    int instance_kind;  /* SRV_KIND_*: where the instances run (KIND_AUTO: where the plan was built for) */
    /* "tailcut": {"engine_threads": N, "tactics": "tuned"|"fixed", "precision": "fp32"|"fp16"|"bf16"|"int8",
     *             "calibration_cache": FILE, "int8_reduce_range": true|false} */
    int engine_threads; /* threads per instance; 0 = cores / instances */
    int tactics_fixed;  /* build from .onnx without timing tactics */
    int int8;           /* build from .onnx with INT8 layers where faster (TC_BUILD_INT8) */
    int fp16;           /* build from .onnx with FP16 layers where faster (TC_BUILD_FP16) */
    int bf16;           /* build from .onnx with BF16 layers where faster (TC_BUILD_BF16) */
    int int8_reduce_range; /* int8: 7-bit weights where faster (TC_BUILD_INT8_REDUCE_RANGE) */
    char calib_cache[SRV_NAME_MAX]; /* int8: the calibration cache, a file name in the version folder */
} srv_config;

/* Priority levels of the model's queue (at least one). */
static inline int srv_config_levels(const srv_config *c) { return c->priority_levels > 0 ? c->priority_levels : 1; }

/* Parses path into c. On error records "PATH: field ...: why" with srv_fail (reason.h) and returns non-zero. */
int srv_config_parse(const char *path, srv_config *c);
/* The same on text already in memory; path only names the file in messages. */
int srv_config_parse_text(const char *text, size_t len, const char *path, srv_config *c);

#endif
