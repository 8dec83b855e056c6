/*
 * cpu.h - the description of the CPU this process runs on: vendor, family/model,
 * the ISA extensions it may use, cache sizes. Detected once (thread-safe) and
 * immutable afterwards; kernel selection and the plan file's target check read it.
 *
 * "Usable" means: reported by CPUID, enabled by the OS (XCR0 state for YMM, ZMM,
 * opmask and AMX tiles; for AMX also a successful
 * arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)), and not above the cap set
 * by the environment variable TAILCUT_MAX_ISA, read once at detection:
 *
 *   ref          no AVX at all (sse42 only): the reference kernels
 *   avx2         + avx, avx2, fma, f16c
 *   avx512       + avx512f, avx512bw, avx512vl, avx512dq
 *   avx512_vnni  + avx512vnni, avx_vnni
 *   avx512_bf16  + avx512bf16
 *   amx          everything (+ avx512fp16, amx_tile, amx_bf16, amx_int8)
 *
 * An unset, empty or unknown value sets no cap (an unknown value is ignored, so a
 * typo never disables fast paths silently in one place and not another; callers
 * that want to warn can compare tc__isa_cap_known()).
 */
#ifndef TC_CORE_CPU_H
#define TC_CORE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The single list of ISA bits: X(ENUM_SUFFIX, bit index, name used in messages and plans). */
#define TC__ISA_MAP(X)                 \
    X(SSE42, 0, "sse42")               \
    X(AVX, 1, "avx")                   \
    X(AVX2, 2, "avx2")                 \
    X(FMA, 3, "fma")                   \
    X(F16C, 4, "f16c")                 \
    X(AVX512F, 5, "avx512f")           \
    X(AVX512BW, 6, "avx512bw")         \
    X(AVX512VL, 7, "avx512vl")         \
    X(AVX512DQ, 8, "avx512dq")         \
    X(AVX512VNNI, 9, "avx512vnni")     \
    X(AVX512BF16, 10, "avx512bf16")    \
    X(AVX512FP16, 11, "avx512fp16")    \
    X(AMX_TILE, 12, "amx_tile")        \
    X(AMX_BF16, 13, "amx_bf16")        \
    X(AMX_INT8, 14, "amx_int8")        \
    X(AVX_VNNI, 15, "avx_vnni")

/* The bit values are part of the plan file format (required ISA bits): never renumber.
 * Enumerators are ints, so bits stay below 31; use them as uint64_t masks. */
enum {
#define TC__ISA_ENUM_(name, bit, text) TC__ISA_##name = 1 << (bit),
    TC__ISA_MAP(TC__ISA_ENUM_)
#undef TC__ISA_ENUM_
};

/* Every bit in TC__ISA_MAP. */
#define TC__ISA_ALL ((uint64_t)0xffff)

typedef struct tc__cpu {
    char vendor[16];         /* "GenuineIntel", "AuthenticAMD", ...; "unknown" off x86 */
    uint32_t family, model, stepping; /* decoded with extended family/model as the vendor documents */
    uint64_t isa;            /* usable TC__ISA_* bits (after OS support and the TAILCUT_MAX_ISA cap) */
    char brand[64];          /* processor brand string, leading spaces trimmed; "" when absent */
    uint32_t l1d_bytes, l2_bytes, l3_bytes; /* per-core L1 data, L2, and L3 sizes; 0 when unknown */
    int logical_cpus;        /* online logical CPUs (at least 1) */
    uint64_t emulated;       /* isa bits that an emulation build (TC_ISA_EMULATION) adds: tests only */
} tc__cpu;

/* The description of this machine, detected on first call (pthread_once); never NULL. */
const tc__cpu *tc__cpu_get(void);

/*
 * Detects the CPU into *out with max_isa as the cap (same values as TAILCUT_MAX_ISA;
 * NULL for none). tc__cpu_get() calls this once with getenv("TAILCUT_MAX_ISA").
 * Requests AMX permission from the kernel only when the cap allows AMX.
 */
void tc__cpu_detect(const char *max_isa, tc__cpu *out);

/* True when max_isa is NULL, empty or one of the documented cap names. */
bool tc__isa_cap_known(const char *max_isa);

/* Name of one ISA bit ("avx512f"), or NULL when bit is not exactly one known bit. */
const char *tc__isa_name(uint64_t bit);

/*
 * Formats a bit set as "avx2,fma,avx512f" in TC__ISA_MAP order ("none" when empty,
 * unknown bits as "bit40") into buf (truncated to size); returns buf.
 */
const char *tc__isa_format(uint64_t isa, char *buf, size_t size);

#endif
