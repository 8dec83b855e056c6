/* json_data.h - a fast path for the large part of a KServe JSON request: the numbers of every
 * "data": [...] array are parsed in one pass (no JSON node per number, a correctly rounded fast
 * decimal conversion with strtod as the fallback, integers kept exact as 64-bit integers) and the
 * array text is overwritten with a short marker string ("\xff<k>"), so cJSON then parses only the
 * small rest of the document. */
#ifndef TC_SERVER_JSON_DATA_H
#define TC_SERVER_JSON_DATA_H

#include <stddef.h>
#include <stdint.h>

#define SRV_JSON_MAX_ARRAYS 128
#define SRV_JSON_MARKER '\xff' /* first byte of a marker string; refused in request strings */

/* What an array's values are stored as (srv_json_array.kind). */
enum {
    SRV_JSON_INT64 = 0,  /* every value an integer in [INT64_MIN, INT64_MAX] (exact, whatever its size) */
    SRV_JSON_UINT64 = 1, /* every value an integer in [0, UINT64_MAX], some above INT64_MAX */
    SRV_JSON_DOUBLE = 2, /* anything else, correctly rounded: a value is not an integer (any_fraction), or no
                          * 64-bit integer type holds every value; no integer datatype can take such an array */
};

typedef struct srv_json_array {
    union {           /* values in document order, nested arrays flattened; true = 1, false = 0 */
        int64_t *i;   /* kind SRV_JSON_INT64 */
        uint64_t *u;  /* kind SRV_JSON_UINT64 */
        double *d;    /* kind SRV_JSON_DOUBLE */
    } v;
    int64_t n;
    int kind;         /* SRV_JSON_* */
    int any_bool;     /* a true/false was among them */
    int any_neg;      /* a negative integer was among them */
    int any_fraction; /* a number that is not an integer (1.5, 1e-3; not 2.0 or 1e3) was among them */
} srv_json_array;

typedef struct srv_json_arrays {
    srv_json_array a[SRV_JSON_MAX_ARRAYS];
    int n;
} srv_json_arrays;

/*
 * Scans text[0..len) (writable, NUL at text[len]) and extracts every "data" array made only of
 * numbers, booleans and nested arrays; array k is replaced in place by the JSON string "\xffk"
 * padded with spaces. Arrays that hold anything else, or are too short to hold a marker (so their
 * numbers have at most a few digits), are left alone. Returns 0, 1 when a string holds the byte 0xFF
 * (invalid UTF-8), 2 when more than SRV_JSON_MAX_ARRAYS arrays would be extracted, -1 when out of memory.
 */
int srv_json_extract_data(char *text, size_t len, srv_json_arrays *out);
/* The array a marker string stands for, or NULL. */
const srv_json_array *srv_json_marker(const srv_json_arrays *arrays, const char *s);
void srv_json_arrays_free(srv_json_arrays *arrays);

#endif
