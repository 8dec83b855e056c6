/* test_cpu.c - CPU detection: consistency of the ISA bits with each other and with
 * /proc/cpuinfo, the TAILCUT_MAX_ISA cap (set before the first tc__cpu_get in a forked
 * child), ISA names and formatting, and thread-safe one-time detection. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cpu.h"

#define AVX2_SET ((uint64_t)(TC__ISA_SSE42 | TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA | TC__ISA_F16C))
#define AVX512_SET (AVX2_SET | (uint64_t)(TC__ISA_AVX512F | TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ))
#define VNNI_SET (AVX512_SET | (uint64_t)(TC__ISA_AVX512VNNI | TC__ISA_AVX_VNNI))
#define BF16_SET (VNNI_SET | (uint64_t)TC__ISA_AVX512BF16)

static const struct {
    const char *cap;
    uint64_t mask;
} kCaps[] = {
    {"ref", TC__ISA_SSE42}, {"avx2", AVX2_SET},       {"avx512_vnni", VNNI_SET}, {"avx512", AVX512_SET},
    {"avx512_bf16", BF16_SET}, {"amx", TC__ISA_ALL}, {"bogus", TC__ISA_ALL},    {"", TC__ISA_ALL},
};

/* Runs in a fresh child: sets TAILCUT_MAX_ISA, then the first tc__cpu_get must honour it. */
static int child_check_cap(const char *cap, uint64_t mask) {
    tc__cpu full;
    tc__cpu_detect(NULL, &full);
    if (setenv("TAILCUT_MAX_ISA", cap, 1) != 0) return 10;
    const tc__cpu *c = tc__cpu_get();
    if (c->isa != (full.isa & mask)) {
        char a[256], b[256];
        fprintf(stderr, "cap %s: got %s, expected %s\n", cap, tc__isa_format(c->isa, a, sizeof a),
                tc__isa_format(full.isa & mask, b, sizeof b));
        return 11;
    }
    /* Once detected, the description no longer changes. */
    if (setenv("TAILCUT_MAX_ISA", "ref", 1) != 0 || tc__cpu_get() != c || c->isa != (full.isa & mask)) return 12;
    return 0;
}

/* Must run first: the parent process never calls tc__cpu_get before forking these children. */
static void test_cap_in_child(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(child_check_cap(kCaps[i].cap, kCaps[i].mask));
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0) fprintf(stderr, "TAILCUT_MAX_ISA=%s failed\n", kCaps[i].cap);
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void test_cap_direct(void **state) {
    (void)state;
    tc__cpu full;
    tc__cpu_detect(NULL, &full);
    for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++) {
        tc__cpu c;
        tc__cpu_detect(kCaps[i].cap, &c);
        assert_int_equal(c.isa, full.isa & kCaps[i].mask);
        assert_string_equal(c.vendor, full.vendor);
        assert_int_equal(c.family, full.family);
        assert_int_equal(c.model, full.model);
        assert_int_equal(c.l1d_bytes, full.l1d_bytes);
    }
    assert_true(tc__isa_cap_known(NULL));
    assert_true(tc__isa_cap_known(""));
    assert_true(tc__isa_cap_known("avx512_bf16"));
    assert_false(tc__isa_cap_known("AVX2"));
    assert_false(tc__isa_cap_known("bogus"));
}

static void test_consistency(void **state) {
    (void)state;
    const tc__cpu *c = tc__cpu_get();
    assert_non_null(c);
    assert_ptr_equal(c, tc__cpu_get());
    assert_true(c->vendor[0] != '\0');
    assert_true(memchr(c->vendor, '\0', sizeof c->vendor) != NULL);
    assert_true(memchr(c->brand, '\0', sizeof c->brand) != NULL);
    assert_true(c->logical_cpus >= 1);
    assert_int_equal(c->isa & ~TC__ISA_ALL, 0);
    if (c->isa & TC__ISA_AVX512F) assert_int_equal(c->isa & AVX2_SET, AVX2_SET);
    if (c->isa & (TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ | TC__ISA_AVX512VNNI |
                  TC__ISA_AVX512BF16 | TC__ISA_AVX512FP16))
        assert_true(c->isa & TC__ISA_AVX512F);
    if (c->isa & (TC__ISA_AVX2 | TC__ISA_FMA | TC__ISA_F16C | TC__ISA_AVX_VNNI)) assert_true(c->isa & TC__ISA_AVX);
    if (c->isa & (TC__ISA_AMX_BF16 | TC__ISA_AMX_INT8)) assert_true(c->isa & TC__ISA_AMX_TILE);
#if defined(__x86_64__)
    assert_true(c->isa & TC__ISA_SSE42 || getenv("TAILCUT_MAX_ISA") != NULL);
    assert_true(c->l1d_bytes >= 4096);
    assert_true(c->family >= 6);
#endif
    if (c->l1d_bytes && c->l2_bytes) assert_true(c->l2_bytes >= c->l1d_bytes);
}

/* Family, model, stepping and flags agree with the kernel's view in /proc/cpuinfo. */
static void test_matches_proc_cpuinfo(void **state) {
    (void)state;
    const char *cap = getenv("TAILCUT_MAX_ISA");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) skip();
    const tc__cpu *c = tc__cpu_get();
    char line[8192];
    long family = -1, model = -1, stepping = -1;
    char vendor[64] = "", flags[8192] = "";
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon == NULL) {
            if (family >= 0) break; /* end of the first processor's block */
            continue;
        }
        const char *val = colon + 1;
        while (*val == ' ') val++;
        if (strncmp(line, "vendor_id", 9) == 0) sscanf(val, "%63s", vendor);
        else if (strncmp(line, "cpu family", 10) == 0) family = strtol(val, NULL, 10);
        else if (strncmp(line, "model\t", 6) == 0) model = strtol(val, NULL, 10);
        else if (strncmp(line, "stepping", 8) == 0) stepping = strtol(val, NULL, 10);
        else if (strncmp(line, "flags", 5) == 0) snprintf(flags, sizeof flags, " %s", val);
    }
    fclose(f);
    if (family < 0 || flags[0] == '\0') skip();
    assert_string_equal(c->vendor, vendor);
    assert_int_equal(c->family, family);
    assert_int_equal(c->model, model);
    if (stepping >= 0) assert_int_equal(c->stepping, stepping);
    char *nl = strchr(flags, '\n');
    if (nl) *nl = ' ';
    static const struct {
        uint64_t bit;
        const char *flag;
    } kFlags[] = {
        {TC__ISA_SSE42, "sse4_2"},         {TC__ISA_AVX, "avx"},           {TC__ISA_AVX2, "avx2"},
        {TC__ISA_FMA, "fma"},              {TC__ISA_F16C, "f16c"},         {TC__ISA_AVX512F, "avx512f"},
        {TC__ISA_AVX512BW, "avx512bw"},    {TC__ISA_AVX512VL, "avx512vl"}, {TC__ISA_AVX512DQ, "avx512dq"},
        {TC__ISA_AVX512VNNI, "avx512_vnni"}, {TC__ISA_AVX512BF16, "avx512_bf16"},
        {TC__ISA_AVX512FP16, "avx512_fp16"}, {TC__ISA_AVX_VNNI, "avx_vnni"},
    };
    for (size_t i = 0; i < sizeof kFlags / sizeof kFlags[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, " %s ", kFlags[i].flag);
        bool kernel_has = strstr(flags, needle) != NULL;
        bool we_have = (c->isa & kFlags[i].bit & ~c->emulated) != 0;
        if (cap == NULL || cap[0] == '\0') {
            if (kernel_has != we_have) fprintf(stderr, "flag %s: kernel %d, tailcut %d\n", kFlags[i].flag, kernel_has, we_have);
            assert_int_equal(kernel_has, we_have);
        } else if (we_have) {
            assert_true(kernel_has); /* a cap only removes bits */
        }
    }
    /* AMX is usable only when the kernel lists it (permission is asked on top). */
    if (c->isa & ~c->emulated & TC__ISA_AMX_TILE) assert_non_null(strstr(flags, " amx_tile "));
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(tc__isa_name(TC__ISA_AVX2), "avx2");
    assert_string_equal(tc__isa_name(TC__ISA_AVX512F), "avx512f");
    assert_string_equal(tc__isa_name(TC__ISA_AMX_TILE), "amx_tile");
    assert_string_equal(tc__isa_name(TC__ISA_AVX_VNNI), "avx_vnni");
    assert_null(tc__isa_name(0));
    assert_null(tc__isa_name(TC__ISA_AVX | TC__ISA_AVX2));
    assert_null(tc__isa_name(1ull << 40));
    /* Every bit of TC__ISA_ALL has a distinct name. */
    for (int a = 0; a < 64; a++) {
        uint64_t bit = 1ull << a;
        const char *na = tc__isa_name(bit);
        assert_int_equal(na != NULL, (TC__ISA_ALL & bit) != 0);
        for (int b = 0; b < a && na; b++)
            if (tc__isa_name(1ull << b)) assert_string_not_equal(na, tc__isa_name(1ull << b));
    }
}

static void test_format(void **state) {
    (void)state;
    char buf[256];
    assert_string_equal(tc__isa_format(0, buf, sizeof buf), "none");
    assert_string_equal(tc__isa_format(TC__ISA_AVX2, buf, sizeof buf), "avx2");
    assert_string_equal(tc__isa_format(TC__ISA_AVX512F | TC__ISA_AVX2 | TC__ISA_AMX_TILE, buf, sizeof buf),
                        "avx2,avx512f,amx_tile");
    assert_string_equal(tc__isa_format(TC__ISA_AVX | (1ull << 40), buf, sizeof buf), "avx,bit40");
    tc__isa_format(TC__ISA_ALL, buf, sizeof buf);
    assert_non_null(strstr(buf, "sse42,avx,avx2,fma,f16c,avx512f"));
    assert_non_null(strstr(buf, "amx_int8,avx_vnni"));
    /* Truncation stays inside the buffer and terminated. */
    char small[8];
    memset(small, 'x', sizeof small);
    tc__isa_format(TC__ISA_ALL, small, sizeof small);
    assert_true(memchr(small, '\0', sizeof small) != NULL);
    assert_int_equal(strncmp(small, "sse42,a", 7), 0);
    assert_ptr_equal(tc__isa_format(TC__ISA_AVX, small, 0), small);
}

static void *thread_get(void *arg) {
    (void)arg;
    return (void *)tc__cpu_get();
}

static void test_threads_see_one_description(void **state) {
    (void)state;
    pthread_t t[8];
    for (int i = 0; i < 8; i++) assert_int_equal(pthread_create(&t[i], NULL, thread_get, NULL), 0);
    for (int i = 0; i < 8; i++) {
        void *r = NULL;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_ptr_equal(r, tc__cpu_get());
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap_in_child), /* first: before this process detects its CPU */
        cmocka_unit_test(test_cap_direct),
        cmocka_unit_test(test_consistency),
        cmocka_unit_test(test_matches_proc_cpuinfo),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_threads_see_one_description),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
