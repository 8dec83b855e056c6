/* compare_layers.c - per-step statistics of `tailcut compare --per-layer` (see compare_layers.h). */
#include "compare_layers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

void cli_layers_free(cli_layers *L) {
    for (int i = 0; L->rows && i < L->n; i++) {
        free(L->rows[i].step);
        free(L->rows[i].ops);
        free(L->rows[i].precision);
        free(L->rows[i].tensor);
    }
    free(L->rows);
    memset(L, 0, sizeof *L);
}

/* Chooses the rows from engine b's steps. */
static int choose_rows(cli_layers *L, const tc_engine *b) {
    int n_steps = tc_engine_num_steps(b), reduced = 0;
    tc_step_info si;
    for (int k = 0; k < n_steps; k++)
        if (tc_engine_step_info(b, k, &si) == TC_STATUS_OK && si.output[0] && strcmp(si.precision, "fp32") != 0)
            reduced++;
    L->n_steps = n_steps;
    L->reduced_only = reduced > 0;
    L->rows = calloc((size_t)(n_steps > 0 ? n_steps : 1), sizeof(cli_layer));
    if (L->rows == NULL) goto oom;
    for (int k = 0; k < n_steps; k++) {
        if (tc_engine_step_info(b, k, &si) != TC_STATUS_OK || !si.output[0]) continue;
        if (L->reduced_only && strcmp(si.precision, "fp32") == 0) continue;
        cli_layer *r = &L->rows[L->n++];
        r->index = k;
        r->step = strdup(si.name);
        r->ops = strdup(si.ops);
        r->precision = strdup(si.precision);
        r->tensor = strdup(si.output);
        r->st.name = r->tensor;
        r->st.s.values_only = true;
        if (!r->step || !r->ops || !r->precision || !r->tensor) goto oom;
    }
    L->ready = true;
    return 0;
oom:
    fprintf(stderr, "tailcut compare: out of memory\n");
    return 1;
}

/* Records why a sample was not compared on row r (the first reason only). */
static void note(cli_layer *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(cli_layer *r, const char *fmt, ...) {
    if (r->note[0] != '\0') return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

/* Number of elements of t when its size agrees with its shape, else 0. */
static size_t elements(const tc_tensor *t) {
    size_t n = 1, es = tc_dtype_size(t->dtype);
    if (es == 0 || t->rank < 0 || t->rank > TC_MAX_RANK || t->data == NULL) return 0;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return 0;
        n *= (size_t)t->dims[d];
    }
    return n * es <= t->nbytes ? n : 0;
}

/* "float32 [1,64,8,8]". */
static void describe(const tc_tensor *t, char *out, size_t size) {
    const char *dt = tc_dtype_name(t->dtype);
    size_t off = (size_t)snprintf(out, size, "%s [", dt ? dt : "?");
    for (int32_t d = 0; d < t->rank && d < TC_MAX_RANK && off < size; d++)
        off += (size_t)snprintf(out + off, size - off, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (off < size) snprintf(out + off, size - off, "]");
}

int cli_layers_add(cli_layers *L, const tc_engine *b, tc_context *ca, tc_context *cb) {
    if (!L->ready && choose_rows(L, b)) return 1;
    for (int i = 0; i < L->n; i++) {
        cli_layer *r = &L->rows[i];
        tc_tensor ta, tb;
        if (tc_context_tensor(cb, r->tensor, &tb) != TC_STATUS_OK) {
            note(r, "B: %s", tc_context_error(cb));
            continue;
        }
        if (tc_context_tensor(ca, r->tensor, &ta) != TC_STATUS_OK) {
            note(r, "A has no tensor '%s' (fused or named differently there)", r->tensor);
            continue;
        }
        size_t n = elements(&ta);
        bool same = ta.dtype == tb.dtype && ta.rank == tb.rank &&
                    memcmp(ta.dims, tb.dims, sizeof(int64_t) * (size_t)(ta.rank > 0 ? ta.rank : 0)) == 0;
        if (!same || n == 0 || elements(&tb) != n) {
            char sa[96], sb[96];
            describe(&ta, sa, sizeof sa);
            describe(&tb, sb, sizeof sb);
            note(r, "A's tensor is %s, B's %s", sa, sb);
            continue;
        }
        if (r->compared == 0) {
            r->st.dtype = ta.dtype;
            r->st.rank = ta.rank;
            memcpy(r->st.dims, ta.dims, sizeof r->st.dims);
        } else if (r->st.dtype != ta.dtype) {
            note(r, "the tensor's type changed between samples");
            continue;
        }
        tc_error err;
        if (tc_compare_add(&r->st.s, &ta, &tb, &err) != TC_STATUS_OK) {
            note(r, "%s", err.message);
            continue;
        }
        r->compared++;
    }
    return 0;
}

/* "inf", "-inf", "-" (nothing compared) or the figure. */
static void fmt_sqnr(const cli_layer *r, char *out, size_t size) {
    double s = tc_compare_sqnr_db(&r->st.s);
    if (r->compared == 0 || r->st.s.exact || r->st.s.finite == 0) snprintf(out, size, "-");
    else if (isinf(s)) snprintf(out, size, "%sinf", s < 0 ? "-" : "");
    else snprintf(out, size, "%.2f", s);
}

/* The column width that fits s (at least w, at most most). */
static int fit(int w, const char *s, int most) {
    int l = (int)strlen(s);
    return l > w ? (l < most ? l : most) : w;
}

void cli_layers_print_table(const cli_layers *L) {
    printf("\nper layer: %d of %d steps of B (%s); each step's output against A's tensor of the same name, "
           "over all samples\n(SQNR = 10*log10(sum a^2 / sum (a-b)^2) in dB, a = A's value, b = B's)\n",
           L->n, L->n_steps, L->reduced_only ? "those not in fp32" : "every step: none is in reduced precision");
    int ws = 4, wo = 3, wt = 6;
    for (int i = 0; i < L->n; i++) {
        ws = fit(ws, L->rows[i].step, 40);
        wo = fit(wo, L->rows[i].ops, 28);
        wt = fit(wt, L->rows[i].tensor, 40);
    }
    printf("%-4s %-*s %-*s %-5s %-*s %-9s %-12s %-10s %s\n", "#", ws, "step", wo, "ops", "prec", wt, "tensor",
           "sqnr_db", "cosine", "max_abs", "note");
    const cli_layer *worst = NULL;
    double worst_sqnr = INFINITY;
    for (int i = 0; i < L->n; i++) {
        const cli_layer *r = &L->rows[i];
        char sq[32];
        fmt_sqnr(r, sq, sizeof sq);
        printf("%-4d %-*.*s %-*.*s %-5s %-*.*s %-9s ", r->index, ws, ws, r->step, wo, wo, r->ops, r->precision, wt,
               wt, r->tensor, sq);
        char cos[24] = "-", max_abs[24] = "-", extra[sizeof r->note + 96] = "";
        if (r->compared && !r->st.s.exact && r->st.s.finite) {
            snprintf(cos, sizeof cos, "%.8f", tc_compare_cosine(&r->st.s));
            snprintf(max_abs, sizeof max_abs, "%.3e", r->st.s.max_abs);
        }
        size_t off = 0;
        if (r->compared && r->st.s.exact)
            off += (size_t)snprintf(extra, sizeof extra, " %s: %llu of %llu elements differ;",
                                    tc_dtype_name(r->st.dtype) ? tc_dtype_name(r->st.dtype) : "?",
                                    (unsigned long long)r->st.s.mismatches, (unsigned long long)r->st.s.elements);
        if (r->st.s.nan_mismatches && off < sizeof extra)
            off += (size_t)snprintf(extra + off, sizeof extra - off, " %llu NaN/Inf mismatches;",
                                    (unsigned long long)r->st.s.nan_mismatches);
        if (r->note[0] && off < sizeof extra) snprintf(extra + off, sizeof extra - off, " %s", r->note);
        if (extra[0]) printf("%-12s %-10s%s\n", cos, max_abs, extra);
        else printf("%-12s %s\n", cos, max_abs);
        double s = tc_compare_sqnr_db(&r->st.s);
        if (r->compared && !r->st.s.exact && r->st.s.finite && s < worst_sqnr) worst_sqnr = s, worst = r;
    }
    if (worst && isfinite(worst_sqnr))
        printf("lowest SQNR %.2f dB: step %s (%s)\n", worst_sqnr, worst->step, worst->tensor);
}

static void json_num(double v) {
    if (isfinite(v)) printf("%.12g", v);
    else printf("null");
}

void cli_layers_print_json(const cli_layers *L) {
    printf("  \"layers_selection\": \"%s\",\n  \"layers\": [", L->reduced_only ? "reduced_precision" : "all");
    for (int i = 0; i < L->n; i++) {
        const cli_layer *r = &L->rows[i];
        const bool figures = r->compared && !r->st.s.exact && r->st.s.finite;
        printf(i ? ",\n    {\"index\": %d, \"step\": " : "\n    {\"index\": %d, \"step\": ", r->index);
        cli_json_string(stdout, r->step);
        printf(", \"ops\": ");
        cli_json_string(stdout, r->ops);
        printf(", \"precision\": ");
        cli_json_string(stdout, r->precision);
        printf(", \"tensor\": ");
        cli_json_string(stdout, r->tensor);
        printf(", \"samples\": %d, \"elements\": %llu, \"exact\": %s, \"sqnr_db\": ", r->compared,
               (unsigned long long)r->st.s.elements, r->st.s.exact ? "true" : "false");
        json_num(figures ? tc_compare_sqnr_db(&r->st.s) : NAN);
        printf(", \"identical\": %s, \"cosine\": ",
               r->compared && (r->st.s.exact ? r->st.s.mismatches == 0 : r->st.s.sum_d2 == 0 && !r->st.s.nan_mismatches)
                   ? "true" : "false");
        json_num(figures ? tc_compare_cosine(&r->st.s) : NAN);
        printf(", \"max_abs_error\": ");
        json_num(figures ? r->st.s.max_abs : NAN);
        printf(", \"mismatches\": %llu, \"nan_mismatches\": %llu, \"note\": ", (unsigned long long)r->st.s.mismatches,
               (unsigned long long)r->st.s.nan_mismatches);
        if (r->note[0]) cli_json_string(stdout, r->note);
        else printf("null");
        printf("}");
    }
    printf("%s],\n", L->n ? "\n  " : "");
}
