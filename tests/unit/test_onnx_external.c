/*
 * test_onnx_external.c - unit tests of external tensor data: offsets and lengths, whole-file
 * tensors, paths relative to base_dir, refusal of absolute and ".." paths, ranges outside the file,
 * and tests/data/onnx/external.onnx written by onnx.save_model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "onnx_test_util.h"

static const int64_t d2x3[] = {2, 3};

typedef struct ext_dir {
    char dir[64];
} ext_dir;

static void write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static void rm_tree(const ext_dir *d) {
    char p[256];
    snprintf(p, sizeof p, "%s/sub/w.bin", d->dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/sub", d->dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/w.bin", d->dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/model.onnx", d->dir);
    unlink(p);
    rmdir(d->dir);
}

static Onnx__TensorProto *ext_tensor(B *b, const char *name, const char *loc, const char *off, const char *len) {
    Onnx__TensorProto *t = b_init(b, b_tensor(b, name, TC_DTYPE_FLOAT32, 2, d2x3));
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *kv[3][2] = {{"location", loc}, {"offset", off}, {"length", len}};
    t->external_data = b_alloc(b, 4 * sizeof *t->external_data);
    for (int i = 0; i < 3; i++) {
        if (kv[i][1] == NULL) continue;
        Onnx__StringStringEntryProto *e = b_alloc(b, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = b_str(b, kv[i][0]);
        e->value = b_str(b, kv[i][1]);
        t->external_data[t->n_external_data++] = e;
    }
    return t;
}

static void test_external_data(void **state) {
    (void)state;
    ext_dir d;
    snprintf(d.dir, sizeof d.dir, "/tmp/tc_onnx_ext_XXXXXX");
    assert_non_null(mkdtemp(d.dir));
    char path[256];
    float file[10];
    for (int i = 0; i < 10; i++) file[i] = (float)i * 1.5f - 4.0f;
    snprintf(path, sizeof path, "%s/w.bin", d.dir);
    write_file(path, file, sizeof file);
    snprintf(path, sizeof path, "%s/sub", d.dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/w.bin", d.dir);
    write_file(path, file, 24);

    B *b = b_new(13);
    ext_tensor(b, "a", "w.bin", "16", "24");
    ext_tensor(b, "c", "sub/w.bin", NULL, NULL); /* no offset/length: the whole file */
    ext_tensor(b, "e", "./w.bin", "0", "24")->n_external_data++; /* plus an ignored checksum-like key */
    Onnx__StringStringEntryProto *ck = b_alloc(b, sizeof *ck);
    onnx__string_string_entry_proto__init(ck);
    ck->key = b_str(b, "checksum");
    ck->value = b_str(b, "abc");
    b->g->initializer[2]->external_data[3] = ck;
    tc__graph *g = expect_ok(b, d.dir);
    assert_memory_equal(init_of(g, "a")->data, file + 4, 24);
    assert_memory_equal(init_of(g, "c")->data, file, 24);
    assert_memory_equal(init_of(g, "e")->data, file, 24);
    tc__graph_destroy(g);
    b_free(b);

    /* The same model serialized to a file and imported relative to its folder. */
    b = b_new(13);
    ext_tensor(b, "a", "w.bin", "4", "24");
    size_t len;
    uint8_t *buf = b_pack(b, &len);
    snprintf(path, sizeof path, "%s/model.onnx", d.dir);
    write_file(path, buf, len);
    tc__err err = {0};
    assert_int_equal(tc__onnx_import(buf, len, d.dir, &g, &err), TC_STATUS_OK);
    assert_memory_equal(init_of(g, "a")->data, file + 1, 24);
    tc__graph_destroy(g);
    /* Without the right base_dir the file is not found. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(buf, len, "/nonexistent-dir", &g, &err), TC_STATUS_IO_ERROR);
    assert_non_null(strstr(err.msg, "w.bin"));
    b_free(b);

    struct {
        const char *loc, *off, *len;
        tc_status st;
        const char *needle;
    } bad[] = {
        {"../w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, "'../w.bin'"},
        {"sub/../../w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, ".."},
        {"sub\\..\\w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, ".."},
        {"/etc/passwd", "0", "24", TC_STATUS_INVALID_ARGUMENT, "absolute"},
        {"C:\\w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, "absolute"},
        {"w.bin", "40", "24", TC_STATUS_CORRUPT_FILE, "beyond"},     /* 40 + 24 > 40 bytes */
        {"w.bin", "41", "24", TC_STATUS_CORRUPT_FILE, "beyond"},     /* offset past the end */
        {"w.bin", "18446744073709551615", "24", TC_STATUS_CORRUPT_FILE, "offset"},
        {"w.bin", "0", "20", TC_STATUS_CORRUPT_FILE, "expected 24"}, /* length != tensor size */
        {"w.bin", "0", NULL, TC_STATUS_CORRUPT_FILE, "expected 24"}, /* rest of file is 40 bytes */
        {"w.bin", "-4", "24", TC_STATUS_CORRUPT_FILE, "'-4'"},
        {"w.bin", "0x10", "24", TC_STATUS_CORRUPT_FILE, "'0x10'"},
        {NULL, "0", "24", TC_STATUS_CORRUPT_FILE, "no location"},
        {"", "0", "24", TC_STATUS_CORRUPT_FILE, "no location"},
        {"missing.bin", "0", "24", TC_STATUS_IO_ERROR, "missing.bin"},
        {"sub", "0", "24", TC_STATUS_IO_ERROR, "regular file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = b_new(13);
        ext_tensor(b, "wt", bad[i].loc, bad[i].off, bad[i].len);
        expect_fail(b, d.dir, bad[i].st, "'wt'", bad[i].needle, NULL);
        b_free(b);
    }

    /* A huge declared shape is refused before anything that large is allocated. */
    b = b_new(13);
    Onnx__TensorProto *huge = ext_tensor(b, "huge", "w.bin", "0", "412316860416");
    huge->dims[0] = (int64_t)1 << 35;
    expect_fail(b, d.dir, TC_STATUS_CORRUPT_FILE, "'huge'", "beyond", NULL);
    b_free(b);

    /* Inline data next to an external location is ambiguous. */
    b = b_new(13);
    Onnx__TensorProto *t = ext_tensor(b, "wt", "w.bin", "0", "24");
    b_raw(b, t, file, 24);
    expect_fail(b, d.dir, TC_STATUS_CORRUPT_FILE, "'wt'", "external", NULL);
    b_free(b);
    rm_tree(&d);
}

static void test_external_onnx_file(void **state) {
    (void)state;
    size_t size;
    uint8_t *buf = read_file("external.onnx", &size);
    tc__graph *g = NULL;
    tc__err err = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/onnx", TC_TEST_DATA_DIR);
    assert_int_equal(tc__onnx_import(buf, size, dir, &g, &err), TC_STATUS_OK);
    const float *a = init_of(g, "a")->data;
    for (int i = 0; i < 6; i++) assert_true(a[i] == (float)i - 2.5f);
    const int64_t ec[] = {3, -1, 4, -1, 5};
    assert_memory_equal(init_of(g, "c")->data, ec, sizeof ec);
    tc__graph_destroy(g);
    /* From the wrong folder the data file is missing. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(buf, size, "/", &g, &err), TC_STATUS_IO_ERROR);
    assert_non_null(strstr(err.msg, "external.bin"));
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_external_onnx_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
