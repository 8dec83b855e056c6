/* sample_dir.c - lists and loads a folder of input samples (see sample_dir.h): <input name>.<k>.npy per
 * input and sample, or any *.npy for a single-input model, in natural name order. */
#include "sample_dir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest sample index k accepted in a file name. */
#define MAX_INDEX ((uint64_t)1 << 62)

typedef struct entry {
    char *path;       /* owned */
    const char *name; /* file name part of path */
    uint64_t k;       /* sample index (0 in single-input mode) */
} entry;

typedef struct entry_list {
    entry *v;
    size_t n, cap;
} entry_list;

static void list_free(entry_list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* "dir/name" (no doubled '/'), or NULL when out of memory. */
static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] != '/';
    if (a > SIZE_MAX / 2 || b > SIZE_MAX / 2 - 2) return NULL;
    char *p = malloc(a + b + 2);
    if (p == NULL) return NULL;
    memcpy(p, dir, a);
    if (slash) p[a++] = '/';
    memcpy(p + a, name, b + 1);
    return p;
}

/* Appends dir/name with index k; takes nothing on failure. Returns 0, or -1 when out of memory. */
static int list_push(entry_list *l, const char *dir, const char *name, uint64_t k) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof(entry)) return -1;
        entry *v = realloc(l->v, cap * sizeof(entry));
        if (v == NULL) return -1;
        l->v = v;
        l->cap = cap;
    }
    char *path = join(dir, name);
    if (path == NULL) return -1;
    l->v[l->n].path = path;
    l->v[l->n].name = path + strlen(path) - strlen(name);
    l->v[l->n].k = k;
    l->n++;
    return 0;
}

/* Natural order: runs of digits compare as numbers (any length), other bytes as unsigned chars;
 * names equal that way (e.g. "a01" and "a1") fall back to strcmp so the order is total. */
static int natural_cmp(const char *a, const char *b) {
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    while (*p && *q) {
        if (isdigit(*p) && isdigit(*q)) {
            while (*p == '0') p++;
            while (*q == '0') q++;
            const unsigned char *pe = p, *qe = q;
            while (isdigit(*pe)) pe++;
            while (isdigit(*qe)) qe++;
            size_t lp = (size_t)(pe - p), lq = (size_t)(qe - q);
            if (lp != lq) return lp < lq ? -1 : 1;
            int c = memcmp(p, q, lp);
            if (c) return c;
            p = pe;
            q = qe;
        } else {
            if (*p != *q) return *p < *q ? -1 : 1;
            p++;
            q++;
        }
    }
    if (*p || *q) return *p ? 1 : -1;
    return strcmp(a, b);
}

static int by_name(const void *x, const void *y) {
    return natural_cmp(((const entry *)x)->name, ((const entry *)y)->name);
}

static int by_index(const void *x, const void *y) {
    const entry *a = x, *b = y;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static bool is_regular_file(const char *dir, const char *name) {
    char *path = join(dir, name);
    struct stat st;
    bool ok = path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

/* Parses "<digits>" in s[0..len) as a sample index. Returns 0, 1 when s is not all digits, -1 when too large. */
static int parse_index(const char *s, size_t len, uint64_t *k) {
    if (len == 0) return 1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i])) return 1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > MAX_INDEX) return -1;
    }
    *k = v;
    return 0;
}

/*
 * Adds the regular files of folder `dir` to l: with base == NULL every *.npy (k = 0); else every
 * <base>.<k>.npy. *n_entries counts the folder's entries not starting with '.'.
 * Returns 0, or non-zero with the reason printed (folder unreadable, index too large, out of memory).
 * A missing folder is not an error when missing_ok (an input in a subfolder that does not exist).
 */
static int scan(const char *dir, const char *base, bool missing_ok, entry_list *l, size_t *n_entries) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (missing_ok && errno == ENOENT) return 0;
        fprintf(stderr, "tailcut: cannot open sample folder '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    size_t blen = base ? strlen(base) : 0;
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                fprintf(stderr, "tailcut: reading sample folder '%s': %s\n", dir, strerror(errno));
                rc = 1;
            }
            break;
        }
        const char *name = de->d_name;
        if (name[0] == '.') continue;
        (*n_entries)++;
        size_t len = strlen(name);
        if (len <= 4 || strcmp(name + len - 4, ".npy") != 0) continue;
        uint64_t k = 0;
        if (base != NULL) {
            if (len < blen + 6 || memcmp(name, base, blen) != 0 || name[blen] != '.') continue;
            int p = parse_index(name + blen + 1, len - blen - 5, &k);
            if (p > 0) continue;
            if (p < 0) {
                fprintf(stderr, "tailcut: sample file '%s/%s': index above %llu\n", dir, name,
                        (unsigned long long)MAX_INDEX);
                rc = 1;
                break;
            }
        }
        if (!is_regular_file(dir, name)) continue;
        if (list_push(l, dir, name, k) != 0) {
            fprintf(stderr, "tailcut: out of memory listing '%s'\n", dir);
            rc = 1;
            break;
        }
    }
    closedir(d);
    return rc;
}

/* Splits input name into its folder part (appended to dir, owned, in *folder) and file base (in name).
 * Refuses names with an empty, "." or ".." component. Returns 0, or non-zero with the reason printed. */
static int input_folder(const char *dir, const char *name, char **folder, const char **base) {
    *folder = NULL;
    *base = name;
    bool bad = name[0] == '\0';
    for (const char *c = name; !bad;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        bad = n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
        if (e == NULL) break;
        c = e + 1;
    }
    if (bad) {
        fprintf(stderr, "tailcut: input name '%s' cannot name a sample file in '%s'\n", name, dir);
        return 1;
    }
    const char *slash = strrchr(name, '/');
    if (slash == NULL) {
        *folder = join(dir, "");
    } else {
        size_t n = (size_t)(slash - name);
        char *sub = malloc(n + 1);
        if (sub != NULL) {
            memcpy(sub, name, n);
            sub[n] = '\0';
            *folder = join(dir, sub);
            free(sub);
        }
        *base = slash + 1;
    }
    if (*folder == NULL) {
        fprintf(stderr, "tailcut: out of memory\n");
        return 1;
    }
    return 0;
}

/* Moves the first n_samples samples of lists[0..n_inputs) (each sorted, one entry per sample) into s. */
static int take_paths(entry_list *lists, int n_inputs, int n_samples, cli_sample_set *s) {
    if ((size_t)n_samples > SIZE_MAX / sizeof(char *) / (size_t)n_inputs) return -1;
    s->paths = calloc((size_t)n_samples * (size_t)n_inputs, sizeof(char *));
    if (s->paths == NULL) return -1;
    for (int i = 0; i < n_inputs; i++)
        for (int k = 0; k < n_samples; k++) {
            s->paths[(size_t)k * (size_t)n_inputs + (size_t)i] = lists[i].v[k].path;
            lists[i].v[k].path = NULL;
        }
    s->n_inputs = n_inputs;
    s->n_samples = n_samples;
    return 0;
}

/* Single input: every *.npy of dir, natural order. */
static int open_any(const char *dir, const char *name, int max_samples, cli_sample_set *s) {
    entry_list l = {0};
    size_t n_entries = 0;
    int rc = scan(dir, NULL, false, &l, &n_entries);
    if (rc == 0 && l.n == 0) {
        if (n_entries == 0)
            fprintf(stderr, "tailcut: sample folder '%s' is empty (expected *.npy files for input '%s')\n", dir, name);
        else
            fprintf(stderr, "tailcut: no *.npy files in sample folder '%s' (for input '%s')\n", dir, name);
        rc = 1;
    }
    if (rc == 0) {
        qsort(l.v, l.n, sizeof(entry), by_name);
        size_t n = l.n;
        if (max_samples > 0 && n > (size_t)max_samples) n = (size_t)max_samples;
        if (n > INT_MAX || take_paths(&l, 1, (int)n, s) != 0) {
            fprintf(stderr, "tailcut: out of memory listing '%s'\n", dir);
            rc = 1;
        }
    }
    list_free(&l);
    return rc;
}

static bool has_index(const entry_list *l, uint64_t k) {
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].k == k) return true;
        if (l->v[mid].k < k) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

/* Checks that every sample index present for some input is present for all, and that no input has two
 * files of one index. Returns 0, or 1 with the reason printed. */
static int check_complete(const char *dir, int n_inputs, const char *const *names, entry_list *lists,
                          size_t n_entries) {
    size_t total = 0;
    for (int i = 0; i < n_inputs; i++) {
        for (size_t j = 1; j < lists[i].n; j++)
            if (lists[i].v[j].k == lists[i].v[j - 1].k) {
                fprintf(stderr, "tailcut: sample folder '%s': '%s' and '%s' are both sample %llu of input '%s'\n", dir,
                        lists[i].v[j - 1].path, lists[i].v[j].path, (unsigned long long)lists[i].v[j].k, names[i]);
                return 1;
            }
        total += lists[i].n;
    }
    const char *sep = dir[0] != '\0' && dir[strlen(dir) - 1] == '/' ? "" : "/";
    if (total == 0) {
        fprintf(stderr, "tailcut: sample folder '%s' %s: expected <input name>.<k>.npy files, e.g. '%s%s%s.0.npy'\n",
                dir, n_entries ? "has no sample files" : "is empty", dir, sep, names[0]);
        return 1;
    }
    uint64_t *all = malloc(total * sizeof(uint64_t));
    if (all == NULL) {
        fprintf(stderr, "tailcut: out of memory listing '%s'\n", dir);
        return 1;
    }
    size_t n = 0;
    for (int i = 0; i < n_inputs; i++)
        for (size_t j = 0; j < lists[i].n; j++) all[n++] = lists[i].v[j].k;
    qsort(all, n, sizeof(uint64_t), cmp_u64);
    int rc = 0;
    for (size_t j = 0; j < n && rc == 0; j++) {
        if (j > 0 && all[j] == all[j - 1]) continue;
        for (int i = 0; i < n_inputs; i++)
            if (!has_index(&lists[i], all[j])) {
                fprintf(stderr, "tailcut: sample folder '%s': sample %llu has no file for input '%s': missing '%s%s%s.%llu.npy'\n",
                        dir, (unsigned long long)all[j], names[i], dir, sep, names[i], (unsigned long long)all[j]);
                rc = 1;
                break;
            }
    }
    free(all);
    return rc;
}

int cli_samples_open(const char *dir, int n_inputs, const char *const *names, int max_samples, cli_sample_set *s) {
    if (s != NULL) memset(s, 0, sizeof *s);
    if (dir == NULL || s == NULL || n_inputs < 1 || names == NULL) {
        fprintf(stderr, "tailcut: samples: %s\n", n_inputs < 1 ? "the model has no inputs" : "invalid argument");
        return 1;
    }
    for (int i = 0; i < n_inputs; i++)
        if (names[i] == NULL) {
            fprintf(stderr, "tailcut: samples: input %d has no name\n", i);
            return 1;
        }
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "tailcut: sample folder '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tailcut: sample folder '%s': not a folder\n", dir);
        return 1;
    }
    if (n_inputs == 1) return open_any(dir, names[0], max_samples, s);

    entry_list *lists = calloc((size_t)n_inputs, sizeof(entry_list));
    if (lists == NULL) {
        fprintf(stderr, "tailcut: out of memory\n");
        return 1;
    }
    int rc = 0;
    size_t n_entries = 0;
    for (int i = 0; i < n_inputs && rc == 0; i++) {
        char *folder;
        const char *base;
        rc = input_folder(dir, names[i], &folder, &base);
        if (rc == 0) rc = scan(folder, base, base != names[i], &lists[i], &n_entries);
        free(folder);
        if (rc == 0) qsort(lists[i].v, lists[i].n, sizeof(entry), by_index);
    }
    if (rc == 0) rc = check_complete(dir, n_inputs, names, lists, n_entries);
    if (rc == 0) {
        size_t n = lists[0].n;
        if (max_samples > 0 && n > (size_t)max_samples) n = (size_t)max_samples;
        if (n > INT_MAX || take_paths(lists, n_inputs, (int)n, s) != 0) {
            fprintf(stderr, "tailcut: out of memory listing '%s'\n", dir);
            rc = 1;
        }
    }
    for (int i = 0; i < n_inputs; i++) list_free(&lists[i]);
    free(lists);
    return rc;
}

int cli_samples_load(const cli_sample_set *s, int k, tc_tensor *tensors) {
    if (s == NULL || tensors == NULL || s->paths == NULL || k < 0 || k >= s->n_samples) {
        fprintf(stderr, "tailcut: samples: no sample %d\n", k);
        return 1;
    }
    memset(tensors, 0, (size_t)s->n_inputs * sizeof(tc_tensor));
    for (int i = 0; i < s->n_inputs; i++) {
        tc_error err;
        if (tc_tensor_load(s->paths[(size_t)k * (size_t)s->n_inputs + (size_t)i], &tensors[i], NULL, 0, &err) !=
            TC_STATUS_OK) {
            fprintf(stderr, "tailcut: sample %d: %s\n", k, err.message);
            for (int j = 0; j < i; j++) tc_tensor_free(&tensors[j]);
            return 1;
        }
    }
    return 0;
}

/* SplitMix64: a seed and a stratum give one well-mixed 64-bit value. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int cli_samples_spread_index(int count, int n, int i, bool seeded, uint64_t seed) {
    /* Stratum i is [i * count / n, (i + 1) * count / n): at least one sample wide since count >= n. */
    const uint64_t lo = (uint64_t)i * (uint64_t)count / (uint64_t)n;
    const uint64_t hi = ((uint64_t)i + 1) * (uint64_t)count / (uint64_t)n;
    const uint64_t width = hi - lo;
    const uint64_t r = seeded ? mix64(seed ^ mix64((uint64_t)i)) % width : width / 2;
    return (int)(lo + r);
}

int cli_samples_spread(cli_sample_set *s, int n, bool seeded, uint64_t seed) {
    if (s == NULL || n <= 0 || n >= s->n_samples) return 0;
    const size_t ni = (size_t)s->n_inputs;
    char **kept = calloc((size_t)n * ni, sizeof(char *));
    if (kept == NULL) {
        fprintf(stderr, "tailcut: out of memory choosing %d samples\n", n);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        const size_t k = (size_t)cli_samples_spread_index(s->n_samples, n, i, seeded, seed);
        for (size_t j = 0; j < ni; j++) {
            kept[(size_t)i * ni + j] = s->paths[k * ni + j];
            s->paths[k * ni + j] = NULL;
        }
    }
    for (size_t j = 0; j < (size_t)s->n_samples * ni; j++) free(s->paths[j]);
    free(s->paths);
    s->paths = kept;
    s->n_samples = n;
    return 0;
}

void cli_samples_close(cli_sample_set *s) {
    if (s == NULL) return;
    if (s->paths != NULL)
        for (size_t j = 0; j < (size_t)s->n_samples * (size_t)s->n_inputs; j++) free(s->paths[j]);
    free(s->paths);
    memset(s, 0, sizeof *s);
}
