/* api_passes.c - the public list of optimisation passes (TC_PASS_LIST in tailcut.h) by index. */
#include "tailcut/tailcut.h"

static const struct {
    const char *name;
    uint32_t flag;
    const char *text;
} kPassList[] = {
#define TC_PASS_ITEM_(sym, bit, name, text) {name, TC_PASS_##sym, text},
    TC_PASS_LIST(TC_PASS_ITEM_)
#undef TC_PASS_ITEM_
};

#define N_PASS_LIST ((int)(sizeof kPassList / sizeof kPassList[0]))

int tc_pass_count(void) { return N_PASS_LIST; }
const char *tc_pass_name(int i) { return i >= 0 && i < N_PASS_LIST ? kPassList[i].name : NULL; }
uint32_t tc_pass_flag(int i) { return i >= 0 && i < N_PASS_LIST ? kPassList[i].flag : 0; }
const char *tc_pass_description(int i) { return i >= 0 && i < N_PASS_LIST ? kPassList[i].text : NULL; }
