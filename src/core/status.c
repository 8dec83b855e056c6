/* status.c - descriptions of status codes, from the TC_STATUS_MAP X-macro. */
#include "tailcut/tailcut.h"

const char *tc_status_str(tc_status status) {
    switch (status) {
#define TC_STATUS_CASE_(name, value, text) \
    case TC_STATUS_##name:                 \
        return text;
        TC_STATUS_MAP(TC_STATUS_CASE_)
#undef TC_STATUS_CASE_
    }
    return "unknown status";
}
