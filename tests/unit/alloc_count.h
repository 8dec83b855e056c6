/*
 * alloc_count.h - counts the heap allocations a test's code makes while `alloc_counting` is set: the test
 * executable links with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,
 * --wrap=posix_memalign (tests/CMakeLists.txt), and these wrappers count, then call the real functions.
 * Include in exactly one file of such a test.
 */
#ifndef TC_TEST_ALLOC_COUNT_H
#define TC_TEST_ALLOC_COUNT_H

#include <stddef.h>

static int alloc_counting;
static long alloc_count;

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n) {
    alloc_count += alloc_counting;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b) {
    alloc_count += alloc_counting;
    return __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n) {
    alloc_count += alloc_counting;
    return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
    alloc_count += alloc_counting;
    return __real_aligned_alloc(a, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
    alloc_count += alloc_counting;
    return __real_posix_memalign(p, a, n);
}

#endif
