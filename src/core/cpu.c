/* cpu.c - detection of this machine's CPU (CPUID, XGETBV, AMX permission, caches) and ISA names. */
#include "core/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define TC__CPU_X86 1
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#endif

/* Linux arch_prctl codes for AMX (asm/prctl.h may predate them). */
#define TC__ARCH_GET_XCOMP_PERM 0x1022
#define TC__ARCH_REQ_XCOMP_PERM 0x1023
#define TC__XFEATURE_XTILEDATA 18

/* XCR0 state components. */
#define TC__XCR0_SSE (1ull << 1)
#define TC__XCR0_YMM (1ull << 2)
#define TC__XCR0_OPMASK (1ull << 5)
#define TC__XCR0_ZMM_HI256 (1ull << 6)
#define TC__XCR0_HI16_ZMM (1ull << 7)
#define TC__XCR0_XTILECFG (1ull << 17)
#define TC__XCR0_XTILEDATA (1ull << 18)

#define TC__ISA_AVX2_SET ((uint64_t)(TC__ISA_SSE42 | TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA | TC__ISA_F16C))
#define TC__ISA_AVX512_SET \
    (TC__ISA_AVX2_SET | (uint64_t)(TC__ISA_AVX512F | TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ))
#define TC__ISA_VNNI_SET (TC__ISA_AVX512_SET | (uint64_t)(TC__ISA_AVX512VNNI | TC__ISA_AVX_VNNI))
#define TC__ISA_BF16_SET (TC__ISA_VNNI_SET | (uint64_t)TC__ISA_AVX512BF16)
#define TC__ISA_AVX512_ANY                                                                                    \
    ((uint64_t)(TC__ISA_AVX512F | TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ | TC__ISA_AVX512VNNI | \
                TC__ISA_AVX512BF16 | TC__ISA_AVX512FP16))
#define TC__ISA_AMX_ANY ((uint64_t)(TC__ISA_AMX_TILE | TC__ISA_AMX_BF16 | TC__ISA_AMX_INT8))

static const struct {
    const char *name;
    uint64_t mask;
} kCaps[] = {
    {"ref", (uint64_t)TC__ISA_SSE42},
    {"avx2", TC__ISA_AVX2_SET},
    {"avx512", TC__ISA_AVX512_SET},
    {"avx512_vnni", TC__ISA_VNNI_SET},
    {"avx512_bf16", TC__ISA_BF16_SET},
    {"amx", TC__ISA_ALL},
};

/* The cap mask for a TAILCUT_MAX_ISA value; TC__ISA_ALL for none or an unknown value. */
static uint64_t cap_mask(const char *max_isa) {
    if (max_isa == NULL || max_isa[0] == '\0') return TC__ISA_ALL;
    for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++)
        if (strcmp(max_isa, kCaps[i].name) == 0) return kCaps[i].mask;
    return TC__ISA_ALL;
}

bool tc__isa_cap_known(const char *max_isa) {
    if (max_isa == NULL || max_isa[0] == '\0') return true;
    for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++)
        if (strcmp(max_isa, kCaps[i].name) == 0) return true;
    return false;
}

const char *tc__isa_name(uint64_t bit) {
#define TC__ISA_NAME_(name, b, text) \
    if (bit == (1ull << (b))) return text;
    TC__ISA_MAP(TC__ISA_NAME_)
#undef TC__ISA_NAME_
    return NULL;
}

const char *tc__isa_format(uint64_t isa, char *buf, size_t size) {
    if (buf == NULL || size == 0) return buf;
    buf[0] = '\0';
    if (isa == 0) {
        snprintf(buf, size, "none");
        return buf;
    }
    size_t off = 0;
    for (int b = 0; b < 64 && off < size; b++) {
        uint64_t bit = 1ull << b;
        if (!(isa & bit)) continue;
        const char *name = tc__isa_name(bit);
        int w = name ? snprintf(buf + off, size - off, "%s%s", off ? "," : "", name)
                     : snprintf(buf + off, size - off, "%sbit%d", off ? "," : "", b);
        if (w < 0) break;
        off += (size_t)w;
    }
    return buf;
}

#ifdef TC__CPU_X86
typedef struct regs {
    uint32_t a, b, c, d;
} regs;

static regs cpuid(uint32_t leaf, uint32_t sub) {
    regs r = {0, 0, 0, 0};
    __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
    return r;
}

static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Asks the kernel for permission to use AMX tile data (Linux 5.16+); true when granted. */
static bool amx_permitted(void) {
#if defined(TC_ISA_EMULATION)
    return true; /* the emulated tiles need no kernel state */
#elif defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
    if (syscall(SYS_arch_prctl, TC__ARCH_REQ_XCOMP_PERM, TC__XFEATURE_XTILEDATA) != 0) return false;
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, TC__ARCH_GET_XCOMP_PERM, &perm) != 0) return false;
    return (perm & (1ul << TC__XFEATURE_XTILEDATA)) != 0;
#else
    return false;
#endif
}

/* ISA bits reported by CPUID and enabled by the OS, before the cap; AMX permission not yet asked. */
static uint64_t detect_isa(uint32_t max_leaf, bool *amx_cpuid) {
    uint64_t isa = 0;
    *amx_cpuid = false;
    if (max_leaf < 1) return 0;
    regs l1 = cpuid(1, 0);
    if (l1.c & (1u << 20)) isa |= TC__ISA_SSE42;
    bool osxsave = (l1.c & (1u << 27)) != 0;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & (TC__XCR0_SSE | TC__XCR0_YMM)) == (TC__XCR0_SSE | TC__XCR0_YMM);
    uint64_t zmm_state = TC__XCR0_SSE | TC__XCR0_YMM | TC__XCR0_OPMASK | TC__XCR0_ZMM_HI256 | TC__XCR0_HI16_ZMM;
    bool zmm = ymm && (xcr0 & zmm_state) == zmm_state;
    bool tiles = (xcr0 & (TC__XCR0_XTILECFG | TC__XCR0_XTILEDATA)) == (TC__XCR0_XTILECFG | TC__XCR0_XTILEDATA);
    if (ymm) {
        if (l1.c & (1u << 28)) isa |= TC__ISA_AVX;
        if (l1.c & (1u << 12)) isa |= TC__ISA_FMA;
        if (l1.c & (1u << 29)) isa |= TC__ISA_F16C;
    }
    if (max_leaf >= 7) {
        regs l7 = cpuid(7, 0);
        regs l71 = l7.a >= 1 ? cpuid(7, 1) : (regs){0, 0, 0, 0};
        if (ymm) {
            if (l7.b & (1u << 5)) isa |= TC__ISA_AVX2;
            if (l71.a & (1u << 4)) isa |= TC__ISA_AVX_VNNI;
        }
        if (zmm) {
            if (l7.b & (1u << 16)) isa |= TC__ISA_AVX512F;
            if (l7.b & (1u << 17)) isa |= TC__ISA_AVX512DQ;
            if (l7.b & (1u << 30)) isa |= TC__ISA_AVX512BW;
            if (l7.b & (1u << 31)) isa |= TC__ISA_AVX512VL;
            if (l7.c & (1u << 11)) isa |= TC__ISA_AVX512VNNI;
            if (l7.d & (1u << 23)) isa |= TC__ISA_AVX512FP16;
            if (l71.a & (1u << 5)) isa |= TC__ISA_AVX512BF16;
        }
        if (tiles && (l7.d & (1u << 24))) {
            *amx_cpuid = true;
            isa |= TC__ISA_AMX_TILE;
            if (l7.d & (1u << 22)) isa |= TC__ISA_AMX_BF16;
            if (l7.d & (1u << 25)) isa |= TC__ISA_AMX_INT8;
        }
    }
    /* Extensions are only usable with their base: VMs sometimes mask bits inconsistently. */
    if (!(isa & TC__ISA_AVX)) isa &= ~(uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA | TC__ISA_F16C | TC__ISA_AVX_VNNI);
    if (!(isa & TC__ISA_AVX2)) isa &= ~(TC__ISA_AVX512_ANY | TC__ISA_AVX_VNNI);
    if (!(isa & TC__ISA_AVX512F)) isa &= ~TC__ISA_AVX512_ANY;
    return isa;
}

/* Family/model/stepping from leaf 1 EAX, with the vendor's rules for the extended fields. */
static void decode_signature(tc__cpu *out, uint32_t eax, bool amd) {
    uint32_t base_family = (eax >> 8) & 0xf, base_model = (eax >> 4) & 0xf;
    uint32_t ext_family = (eax >> 20) & 0xff, ext_model = (eax >> 16) & 0xf;
    out->stepping = eax & 0xf;
    out->family = base_family == 0xf ? base_family + ext_family : base_family;
    /* Intel adds the extended model for families 6 and 15; AMD only for family 15 (and above). */
    bool use_ext_model = amd ? base_family == 0xf : (base_family == 0x6 || base_family == 0xf);
    out->model = use_ext_model ? (ext_model << 4) | base_model : base_model;
}

/* Sizes from a deterministic cache-parameters leaf (Intel 4, AMD 0x8000001D): same register layout. */
static void caches_from_leaf(tc__cpu *out, uint32_t leaf) {
    for (uint32_t sub = 0; sub < 16; sub++) {
        regs r = cpuid(leaf, sub);
        uint32_t type = r.a & 0x1f;
        if (type == 0) break;
        if (type != 1 && type != 3) continue; /* data or unified */
        uint32_t level = (r.a >> 5) & 0x7;
        uint64_t ways = ((r.b >> 22) & 0x3ff) + 1ull, parts = ((r.b >> 12) & 0x3ff) + 1ull;
        uint64_t line = (r.b & 0xfff) + 1ull, sets = (uint64_t)r.c + 1ull;
        uint64_t bytes = ways * parts * line * sets;
        if (bytes > UINT32_MAX) bytes = UINT32_MAX;
        if (level == 1 && out->l1d_bytes == 0) out->l1d_bytes = (uint32_t)bytes;
        if (level == 2 && out->l2_bytes == 0) out->l2_bytes = (uint32_t)bytes;
        if (level == 3 && out->l3_bytes == 0) out->l3_bytes = (uint32_t)bytes;
    }
}

static void detect_x86(tc__cpu *out, uint64_t cap) {
    regs l0 = cpuid(0, 0);
    uint32_t max_leaf = l0.a;
    memcpy(out->vendor + 0, &l0.b, 4);
    memcpy(out->vendor + 4, &l0.d, 4);
    memcpy(out->vendor + 8, &l0.c, 4);
    out->vendor[12] = '\0';
    bool amd = strcmp(out->vendor, "AuthenticAMD") == 0 || strcmp(out->vendor, "HygonGenuine") == 0;
    if (max_leaf >= 1) decode_signature(out, cpuid(1, 0).a, amd);

    bool amx_cpuid;
    uint64_t isa = detect_isa(max_leaf, &amx_cpuid);
#ifdef TC_ISA_EMULATION
    /* Emulation build (tests only): the AVX-512 and AMX kernels run as portable C on any AVX2 CPU. */
    if (isa & TC__ISA_AVX2) {
        out->emulated = (TC__ISA_AVX512_ANY | TC__ISA_AVX_VNNI | TC__ISA_AMX_ANY) & ~isa;
        isa |= out->emulated;
        amx_cpuid = true;
    }
#endif
    isa &= cap;
    /* Ask for AMX permission only when it would be used: it changes the process's signal frame size. */
    if ((isa & TC__ISA_AMX_ANY) && !(amx_cpuid && amx_permitted())) isa &= ~TC__ISA_AMX_ANY;
    out->isa = isa;

    uint32_t max_ext = cpuid(0x80000000u, 0).a;
    if (max_ext >= 0x80000004u) {
        char brand[49];
        for (uint32_t i = 0; i < 3; i++) {
            regs r = cpuid(0x80000002u + i, 0);
            memcpy(brand + 16 * i + 0, &r.a, 4);
            memcpy(brand + 16 * i + 4, &r.b, 4);
            memcpy(brand + 16 * i + 8, &r.c, 4);
            memcpy(brand + 16 * i + 12, &r.d, 4);
        }
        brand[48] = '\0';
        const char *p = brand;
        while (*p == ' ') p++;
        snprintf(out->brand, sizeof out->brand, "%s", p);
    }

    if (amd) {
        bool topoext = max_ext >= 0x80000001u && (cpuid(0x80000001u, 0).c & (1u << 22));
        if (topoext && max_ext >= 0x8000001Du) caches_from_leaf(out, 0x8000001Du);
        if (out->l1d_bytes == 0 && max_ext >= 0x80000005u) out->l1d_bytes = (cpuid(0x80000005u, 0).c >> 24) * 1024u;
        if (max_ext >= 0x80000006u) {
            regs r = cpuid(0x80000006u, 0);
            if (out->l2_bytes == 0) out->l2_bytes = (r.c >> 16) * 1024u;
            uint64_t l3 = (uint64_t)(r.d >> 18) * 512u * 1024u; /* in 512 KiB units */
            if (out->l3_bytes == 0) out->l3_bytes = l3 > UINT32_MAX ? UINT32_MAX : (uint32_t)l3;
        }
    } else if (max_leaf >= 4) {
        caches_from_leaf(out, 4);
    }
}
#endif

/* Fills cache sizes CPUID did not give from the C library. */
static void caches_from_sysconf(tc__cpu *out) {
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    long v;
    if (out->l1d_bytes == 0 && (v = sysconf(_SC_LEVEL1_DCACHE_SIZE)) > 0 && v <= (long)UINT32_MAX)
        out->l1d_bytes = (uint32_t)v;
    if (out->l2_bytes == 0 && (v = sysconf(_SC_LEVEL2_CACHE_SIZE)) > 0 && v <= (long)UINT32_MAX)
        out->l2_bytes = (uint32_t)v;
    if (out->l3_bytes == 0 && (v = sysconf(_SC_LEVEL3_CACHE_SIZE)) > 0 && v <= (long)UINT32_MAX)
        out->l3_bytes = (uint32_t)v;
#else
    (void)out;
#endif
}

void tc__cpu_detect(const char *max_isa, tc__cpu *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->vendor, sizeof out->vendor, "unknown");
#ifdef TC__CPU_X86
    detect_x86(out, cap_mask(max_isa));
#else
    (void)cap_mask(max_isa);
#endif
    caches_from_sysconf(out);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->logical_cpus = n > 0 && n < (1l << 30) ? (int)n : 1;
}

/* The one immutable description of this machine (written once under pthread_once, then only read). */
static tc__cpu g_cpu;
static pthread_once_t g_cpu_once = PTHREAD_ONCE_INIT;

static void cpu_init_once(void) { tc__cpu_detect(getenv("TAILCUT_MAX_ISA"), &g_cpu); }

const tc__cpu *tc__cpu_get(void) {
    pthread_once(&g_cpu_once, cpu_init_once);
    return &g_cpu;
}
