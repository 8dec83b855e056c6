/* test_nhwc16_check.c - tc__nhwc16_check (engine/nhwc16_chain.c), run on every loaded device plan: a graph whose FP16
 * NHWC image attributes agree (the producer writes an image, every reader reads it as X or as its fused residual)
 * passes; a reader that disagrees with its producer either way (as X or as residual), an image written as a graph
 * output, or malformed attributes are refused with a message naming the step. Host only (CI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "pass_test_util.h"

enum { AGREE, READER_FLOAT, READER_IMAGE, RES_FLOAT, OUTPUT_IMAGE, BAD_FLAG, BAD_RES, N_CASES };

/* x -> A = Relu -> a (image) -> B = Relu -> b (image) -> C = Add(b, a: its fused residual) -> y. */
static tc__graph *chain_graph(int how) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x8x4x4");
    const int32_t a = ptu_node(g, "Relu", "x", "a");
    const int32_t b = ptu_node(g, "Relu", "a", "b");
    const int32_t c = ptu_node(g, "Add", "b,a", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    g->nodes[c].epi.residual_input = how == BAD_RES ? -1 : 1;
    ptu_attr_int(g, a, TC__ATTR_NHWC16_OUT, how == READER_IMAGE ? 0 : 1);
    ptu_attr_int(g, b, TC__ATTR_NHWC16_IN, how == READER_FLOAT ? 0 : how == BAD_FLAG ? 2 : 1);
    ptu_attr_int(g, b, TC__ATTR_NHWC16_OUT, 1);
    ptu_attr_int(g, c, TC__ATTR_NHWC16_IN, 1);
    ptu_attr_int(g, c, TC__ATTR_NHWC16_RES, how == RES_FLOAT ? 0 : 1);
    if (how == OUTPUT_IMAGE) ptu_attr_int(g, c, TC__ATTR_NHWC16_OUT, 1);
    return g;
}

static void test_nhwc16_check(void **state) {
    (void)state;
    static const char *const want[N_CASES] = {
        [AGREE] = NULL,
        [READER_FLOAT] = "reads input 'a' as float32, but its producer writes an FP16 NHWC image",
        [READER_IMAGE] = "reads input 'a' as an FP16 NHWC image, but its producer writes float32",
        [RES_FLOAT] = "reads residual 'a' as float32",
        [OUTPUT_IMAGE] = "writes graph output 'y'",
        [BAD_FLAG] = "malformed",
        [BAD_RES] = "malformed",
    };
    for (int how = AGREE; how < N_CASES; how++) {
        tc__graph *g = chain_graph(how);
        tc__err err = {0};
        const tc_status st = tc__nhwc16_check(g, &err);
        if (want[how] == NULL) {
            if (st != TC_STATUS_OK) fail_msg("case %d: %s", how, err.msg);
        } else {
            assert_int_equal(st, TC_STATUS_CORRUPT_FILE);
            if (strstr(err.msg, want[how]) == NULL) fail_msg("case %d: '%s' lacks '%s'", how, err.msg, want[how]);
        }
        tc__graph_destroy(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nhwc16_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
