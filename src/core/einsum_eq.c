/*
 * einsum_eq.c - parses, validates and binds Einsum equations such as
 * "bij,bjk->bik", "...ii->...i" or "i,i" (spaces ignored). Everything that
 * comes from the string is checked before use; see einsum_eq.h.
 */
#include "core/einsum_eq.h"

#include <stdio.h>
#include <string.h>

static int letter_label(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}

static char label_char(int l) { return l < 26 ? (char)('A' + l) : (char)('a' + l - 26); }

/* Parses the term in s[*pos..] up to ',', '-' or the end into t; what = "operand 2" or "the output". */
static tc_status parse_term(const char *s, size_t len, size_t *pos, tc__einsum_term *t, const char *what, tc__err *err) {
    t->n = 0;
    t->ellipsis_at = -1;
    size_t i = *pos;
    for (; i < len && s[i] != ',' && s[i] != '-'; i++) {
        const char c = s[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "attribute equation: '.' at position %zu is not part of an ellipsis \"...\"", i);
            if (t->ellipsis_at >= 0)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation: %s has two ellipses", what);
            t->ellipsis_at = t->n;
            i += 2;
            continue;
        }
        const int l = letter_label(c);
        if (l < 0) {
            if (c == '>')
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation: '>' at position %zu without '-'", i);
            const unsigned char u = (unsigned char)c;
            if (u >= 0x21 && u < 0x7f)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "attribute equation: '%c' at position %zu is not a letter, ',', \"->\", \"...\" or a "
                                "space",
                                c, i);
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "attribute equation: byte 0x%02x at position %zu is not a letter, ',', \"->\", \"...\" "
                            "or a space",
                            (unsigned)u, i);
        }
        if (t->n >= TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation: %s has more than %d subscripts", what,
                            TC_MAX_RANK);
        t->letter[t->n++] = (int8_t)l;
    }
    *pos = i;
    return TC_STATUS_OK;
}

tc_status tc__einsum_parse(const char *eq, int n_inputs, tc__einsum_eq *out, tc__err *err) {
    memset(out, 0, sizeof *out);
    if (eq == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation is required");
    size_t len = 0;
    while (len <= TC__EINSUM_MAX_LEN && eq[len] != '\0') len++;
    if (len > TC__EINSUM_MAX_LEN)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation is longer than %d characters",
                        TC__EINSUM_MAX_LEN);
    if (n_inputs < 1 || n_inputs > TC__EINSUM_MAX_OPS)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "Einsum has %d inputs, expected 1 to %d", n_inputs,
                        TC__EINSUM_MAX_OPS);
    size_t pos = 0;
    char what[32];
    for (;;) {
        if (out->n_ops >= TC__EINSUM_MAX_OPS)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation has more than %d operands",
                            TC__EINSUM_MAX_OPS);
        snprintf(what, sizeof what, "operand %d", out->n_ops);
        tc_status st = parse_term(eq, len, &pos, &out->op[out->n_ops], what, err);
        if (st != TC_STATUS_OK) return st;
        out->n_ops++;
        if (pos < len && eq[pos] == ',') {
            pos++;
            continue;
        }
        break;
    }
    if (pos < len) { /* eq[pos] == '-' */
        if (pos + 1 >= len || eq[pos + 1] != '>')
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation: '-' at position %zu is not \"->\"", pos);
        pos += 2;
        out->explicit_out = true;
        tc_status st = parse_term(eq, len, &pos, &out->out, "the output", err);
        if (st != TC_STATUS_OK) return st;
        if (pos < len)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "attribute equation: '%c' at position %zu after the output's subscripts", eq[pos], pos);
        bool seen[TC__EINSUM_LETTERS] = {false}, in_ops[TC__EINSUM_LETTERS] = {false};
        for (int k = 0; k < out->n_ops; k++)
            for (int j = 0; j < out->op[k].n; j++) in_ops[out->op[k].letter[j]] = true;
        for (int j = 0; j < out->out.n; j++) {
            const int l = out->out.letter[j];
            if (seen[l])
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation: output subscript '%c' appears twice",
                                label_char(l));
            if (!in_ops[l])
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "attribute equation: output subscript '%c' appears in no operand", label_char(l));
            seen[l] = true;
        }
    }
    if (out->n_ops != n_inputs)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute equation has %d operands but the node has %d inputs",
                        out->n_ops, n_inputs);
    return TC_STATUS_OK;
}

/* Axes of one term bound to rank r: letters around ell ellipsis labels (the last ell of ell_rank, right-aligned). */
static void term_axes(const tc__einsum_term *t, int ell, int ell_rank, int8_t *axis) {
    int a = 0;
    for (int j = 0; j <= t->n; j++) {
        if (j == t->ellipsis_at)
            for (int e = 0; e < ell; e++) axis[a++] = (int8_t)(TC__EINSUM_LETTERS + ell_rank - ell + e);
        if (j < t->n) axis[a++] = t->letter[j];
    }
}

tc_status tc__einsum_bind(const tc__einsum_eq *eq, const int32_t *rank, tc__einsum_bound *b, tc__err *err) {
    memset(b, 0, sizeof *b);
    b->n_ops = eq->n_ops;
    int ell[TC__EINSUM_MAX_OPS];
    for (int k = 0; k < eq->n_ops; k++) {
        const tc__einsum_term *t = &eq->op[k];
        if (rank[k] < 0 || rank[k] > TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input %d has rank %d, expected 0 to %d", k, (int)rank[k],
                            TC_MAX_RANK);
        if (t->ellipsis_at < 0 ? rank[k] != t->n : rank[k] < t->n)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "input %d has rank %d but the equation gives it %d subscripts%s", k, (int)rank[k], t->n,
                            t->ellipsis_at < 0 ? " and no ellipsis" : " and an ellipsis");
        ell[k] = rank[k] - t->n;
        if (ell[k] > b->ell_rank) b->ell_rank = ell[k];
    }
    int count[TC__EINSUM_LETTERS] = {0};
    for (int k = 0; k < eq->n_ops; k++) {
        b->rank[k] = rank[k];
        term_axes(&eq->op[k], ell[k], b->ell_rank, b->axis[k]);
        for (int a = 0; a < rank[k]; a++) b->used[b->axis[k][a]] = true;
        for (int j = 0; j < eq->op[k].n; j++) count[eq->op[k].letter[j]]++;
    }
    if (eq->explicit_out) {
        const tc__einsum_term *t = &eq->out;
        const int ell_out = t->ellipsis_at >= 0 ? b->ell_rank : 0;
        if (t->ellipsis_at < 0 && b->ell_rank > 0)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "attribute equation: the ellipsis covers %d dims of the inputs but the output has no "
                            "\"...\"",
                            b->ell_rank);
        b->out_rank = t->n + ell_out;
        if (b->out_rank > TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the output would have rank %d, more than %d", b->out_rank,
                            TC_MAX_RANK);
        term_axes(t, ell_out, b->ell_rank, b->out_axis);
    } else { /* implicit: the ellipsis dims, then the letters used exactly once, in ASCII order */
        int r = 0;
        for (int e = 0; e < b->ell_rank; e++) b->out_axis[r++] = (int8_t)(TC__EINSUM_LETTERS + e);
        for (int l = 0; l < TC__EINSUM_LETTERS; l++) {
            if (count[l] != 1) continue;
            if (r >= TC_MAX_RANK)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the implicit output would have more than %d dims",
                                TC_MAX_RANK);
            b->out_axis[r++] = (int8_t)l;
        }
        b->out_rank = r;
    }
    return TC_STATUS_OK;
}

tc_status tc__einsum_sizes(const tc__einsum_bound *b, const int64_t *const *dims, int64_t *size, tc__err *err) {
    for (int l = 0; l < TC__EINSUM_LABELS; l++) size[l] = -1;
    for (int k = 0; k < b->n_ops; k++)
        for (int a = 0; a < b->rank[k]; a++) {
            const int l = b->axis[k][a];
            const int64_t d = dims[k] != NULL ? dims[k][a] : -1;
            if (d < 0) continue;
            if (l >= TC__EINSUM_LETTERS) { /* ellipsis: 1 broadcasts */
                if (size[l] < 0 || size[l] == 1) size[l] = d;
                else if (d != 1 && d != size[l])
                    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                    "input %d's dim %d is %lld, which does not broadcast with %lld under the ellipsis",
                                    k, a, (long long)d, (long long)size[l]);
            } else if (size[l] < 0) {
                size[l] = d;
            } else if (size[l] != d) {
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "subscript '%c' has size %lld in input %d's dim %d but %lld elsewhere", label_char(l),
                                (long long)d, k, a, (long long)size[l]);
            }
        }
    return TC_STATUS_OK;
}
