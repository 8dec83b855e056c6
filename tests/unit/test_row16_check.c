/* test_row16_check.c - tc__row16_check (engine/row16_chain.c), run on every loaded device plan: a graph whose FP16 row
 * image attributes agree (producer writes an image, every reader reads one) passes; a reader that disagrees with its
 * producer either way, an image written as a graph output, or malformed attributes are refused with a message naming
 * the step. Host only (CI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "pass_test_util.h"

enum { AGREE = 0, READER_FLOAT = 1, READER_IMAGE = 2, OUTPUT_IMAGE = 3, BAD_BITS = 4 };

/* x -> Relu a -> Relu b (reads a twice: Add) -> y; a is the image between them. */
static tc__graph *chain_graph(int how) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x8");
    const int32_t a = ptu_node(g, "Relu", "x", "a");
    const int32_t b = ptu_node(g, "Add", "a,a", "b");
    const int32_t c = ptu_node(g, "Relu", "b", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    ptu_attr_int(g, a, TC__ATTR_ROW16_OUT, how == READER_IMAGE ? 0 : 1);
    ptu_attr_int(g, b, TC__ATTR_ROW16_IN, how == READER_FLOAT ? 1 : how == BAD_BITS ? 8 : 3);
    if (how == OUTPUT_IMAGE) ptu_attr_int(g, c, TC__ATTR_ROW16_OUT, 1);
    return g;
}

static void test_row16_check(void **state) {
    (void)state;
    static const char *const want[] = {NULL, "reads 'a' as float32", "reads 'a' as an FP16 row image",
                                       "writes graph output 'y'", "malformed"};
    for (int how = AGREE; how <= BAD_BITS; how++) {
        tc__graph *g = chain_graph(how);
        tc__err err = {0};
        const tc_status st = tc__row16_check(g, &err);
        if (want[how] == NULL) {
            assert_int_equal(st, TC_STATUS_OK);
        } else {
            assert_int_equal(st, TC_STATUS_CORRUPT_FILE);
            if (strstr(err.msg, want[how]) == NULL) fail_msg("case %d: '%s' lacks '%s'", how, err.msg, want[how]);
        }
        tc__graph_destroy(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_row16_check)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
