/* bench_inputs.c - input buffers for `tailcut bench`: one per engine input, shaped by the
 * profile's opt shape and filled with seeded random non-zero data of the input's dtype. */
#include "bench_inputs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a small, well-mixed generator; the same seed gives the same data everywhere. */
static uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

/* Approximately standard normal (Irwin-Hall with 12 terms: mean 0, variance 1), never near zero. */
static double next_normal(uint64_t *s) {
    double x = -6.0;
    for (int k = 0; k < 12; k++) x += next_unit(s);
    if (x > -1e-3 && x < 1e-3) x = x < 0 ? -1e-3 : 1e-3;
    return x;
}

static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
    int32_t exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15;
    if (exp <= 0) return (uint16_t)(sign | 0x0400u); /* not reached for |f| >= 1e-3: smallest normal */
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    if (mant & 0x1000u) h++; /* round half up; a carry into the exponent is still correct */
    return (uint16_t)h;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static int name_has(const char *name, const char *word) {
    char low[256];
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)name[k]);
    low[k] = '\0';
    return strstr(low, word) != NULL;
}

static int is_float(tc_dtype t) {
    return t == TC_DTYPE_FLOAT32 || t == TC_DTYPE_FLOAT64 || t == TC_DTYPE_FLOAT16 || t == TC_DTYPE_BFLOAT16;
}

static void fill(cli_input_buf *b, uint64_t seed) {
    size_t esz = tc_dtype_size(b->dtype), n = esz ? b->bytes / esz : 0;
    /* Each input gets its own stream: seed mixed with the input's position-independent name. */
    uint64_t s = seed;
    for (const char *p = b->name; *p; p++) s = s * 1099511628211ull + (unsigned char)*p;
    if (is_float(b->dtype)) {
        b->fill = "~N(0,1)";
        for (size_t i = 0; i < n; i++) {
            double v = next_normal(&s);
            switch (b->dtype) {
            case TC_DTYPE_FLOAT32: ((float *)b->data)[i] = (float)v; break;
            case TC_DTYPE_FLOAT64: ((double *)b->data)[i] = v; break;
            case TC_DTYPE_FLOAT16: ((uint16_t *)b->data)[i] = f32_to_f16((float)v); break;
            default: ((uint16_t *)b->data)[i] = f32_to_bf16((float)v); break;
            }
        }
        return;
    }
    if (b->dtype == TC_DTYPE_BOOL) {
        b->fill = "true";
        memset(b->data, 1, b->bytes);
        return;
    }
    int ones = name_has(b->name, "mask") || name_has(b->name, "token_type") || name_has(b->name, "segment");
    b->fill = ones ? "1" : "ids in [1,100)";
    for (size_t i = 0; i < n; i++) {
        uint64_t v = ones ? 1 : 1 + next_u64(&s) % 99;
        unsigned char *dst = (unsigned char *)b->data + i * esz;
        switch (esz) {
        case 1: *dst = (unsigned char)v; break;
        case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
        default: memcpy(dst, &v, 8); break;
        }
    }
}

void cli_input_describe(const cli_input_buf *b, char *out, size_t size) {
    const char *dt = tc_dtype_name(b->dtype);
    int off = snprintf(out, size, "%s %s[", b->name, dt ? dt : "?");
    for (int32_t d = 0; d < b->rank && off > 0 && (size_t)off < size; d++)
        off += snprintf(out + off, size - (size_t)off, "%s%lld", d ? "," : "", (long long)b->dims[d]);
    if (off > 0 && (size_t)off < size) snprintf(out + off, size - (size_t)off, "]");
}

int cli_inputs_prepare(const tc_engine *e, int profile, const cli_shapes *shapes, uint64_t seed, const char *cmd,
                       cli_input_buf **bufs, int *count) {
    int n = tc_engine_num_inputs(e);
    *bufs = NULL;
    *count = 0;
    cli_input_buf *b = calloc((size_t)(n > 0 ? n : 1), sizeof *b);
    if (b == NULL) {
        fprintf(stderr, "tailcut %s: out of memory\n", cmd);
        return 1;
    }
    for (int k = 0; k < n; k++) {
        tc_io_info info;
        tc_input_range range;
        if (tc_engine_input_info(e, k, &info) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut %s: cannot describe input %d\n", cmd, k);
            goto fail;
        }
        int have_range = tc_engine_profile_range(e, profile, k, &range) == TC_STATUS_OK;
        b[k].name = info.name;
        b[k].dtype = info.dtype;
        b[k].rank = have_range ? range.rank : info.rank;
        int given = -1; /* the run-time shape the caller chose for this input (shapes), else the profile's opt */
        for (int i = 0; shapes != NULL && i < shapes->n; i++)
            if (strcmp(shapes->names[i], info.name) == 0) given = i;
        if (given >= 0) b[k].rank = shapes->ranks[given];
        size_t esz = tc_dtype_size(info.dtype), numel = 1;
        if (esz == 0 || b[k].rank < 0 || b[k].rank > TC_MAX_RANK) {
            fprintf(stderr, "tailcut %s: input '%s' has an unsupported type or unknown rank\n", cmd, info.name);
            goto fail;
        }
        for (int32_t d = 0; d < b[k].rank; d++) {
            int64_t v = given >= 0 ? shapes->dims[given][d] : have_range ? range.opt[d] : info.dims[d];
            if (v < 0) {
                fprintf(stderr, "tailcut %s: input '%s' dim %d has no size in the engine's profile\n", cmd, info.name,
                        (int)d);
                goto fail;
            }
            b[k].dims[d] = v;
            if (v != 0 && numel > SIZE_MAX / esz / (size_t)v) {
                fprintf(stderr, "tailcut %s: input '%s' is too large\n", cmd, info.name);
                goto fail;
            }
            numel *= (size_t)v;
        }
        b[k].bytes = numel * esz;
        /* aligned_alloc wants a size that is a multiple of the alignment; at least one block. */
        size_t alloc = (b[k].bytes + 63) / 64 * 64;
        b[k].data = aligned_alloc(64, alloc ? alloc : 64);
        if (b[k].data == NULL) {
            fprintf(stderr, "tailcut %s: out of memory for input '%s' (%zu bytes)\n", cmd, info.name, b[k].bytes);
            goto fail;
        }
        fill(&b[k], seed);
        *count = k + 1;
    }
    *bufs = b;
    *count = n;
    return 0;
fail:
    cli_inputs_free(b, n);
    *count = 0;
    return 1;
}

void cli_inputs_free(cli_input_buf *bufs, int count) {
    if (bufs == NULL) return;
    for (int k = 0; k < count; k++) free(bufs[k].data);
    free(bufs);
}
