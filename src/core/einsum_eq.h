/*
 * einsum_eq.h - Einsum's equation: parsing and validation of the string (an
 * input from outside: characters, lengths, ellipses, "->", operand count), then
 * binding to the operands' ranks and dims (rank agreement, one size per letter,
 * ellipsis dims broadcast) into labels and per-operand axes. Shared by shape
 * inference and the kernels.
 *
 * Labels: 0..51 are the letters in ASCII order (A-Z = 0..25, a-z = 26..51, so
 * that sorting labels sorts as NumPy's implicit output does);
 * 52 + i is the i-th dim covered by the ellipsis (broadcast, right-aligned).
 */
#ifndef TC_CORE_EINSUM_EQ_H
#define TC_CORE_EINSUM_EQ_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "tailcut/tailcut.h"

#define TC__EINSUM_MAX_OPS 16    /* operands (inputs) */
#define TC__EINSUM_MAX_LEN 1024  /* characters of the equation */
#define TC__EINSUM_LETTERS 52
#define TC__EINSUM_LABELS (TC__EINSUM_LETTERS + TC_MAX_RANK)

/* One term (an operand's or the output's subscripts) as written. */
typedef struct tc__einsum_term {
    int n;                          /* letters */
    int8_t letter[TC_MAX_RANK];     /* label of each letter, in order */
    int ellipsis_at;                /* letters before the "...", or -1 without one */
} tc__einsum_term;

/* The parsed equation (before the ranks are known). */
typedef struct tc__einsum_eq {
    int n_ops;
    tc__einsum_term op[TC__EINSUM_MAX_OPS];
    bool explicit_out;              /* "->" given */
    tc__einsum_term out;            /* explicit output (when explicit_out) */
} tc__einsum_eq;

/* The equation bound to the operands' ranks: axes of each operand and of the output as labels. */
typedef struct tc__einsum_bound {
    int n_ops;
    int rank[TC__EINSUM_MAX_OPS];
    int8_t axis[TC__EINSUM_MAX_OPS][TC_MAX_RANK]; /* label of each axis */
    int ell_rank;                    /* dims covered by the ellipsis (the largest over the operands) */
    int out_rank;
    int8_t out_axis[TC_MAX_RANK];
    bool used[TC__EINSUM_LABELS];    /* label appears in some operand */
} tc__einsum_bound;

/* Parses and validates eq for n_inputs operands; fails with a message naming the problem and its position. */
tc_status tc__einsum_parse(const char *eq, int n_inputs, tc__einsum_eq *out, tc__err *err);

/* Binds a parsed equation to the operands' ranks (rank[i] of operand i); checks each operand's rank against its
 * subscripts and forms the output's axes (implicit: ellipsis dims, then letters used once, in ASCII order). */
tc_status tc__einsum_bind(const tc__einsum_eq *eq, const int32_t *rank, tc__einsum_bound *b, tc__err *err);

/* Size of every label from the operands' dims (dims[i] of operand i; -1: unknown): a letter's dims must agree,
 * ellipsis dims broadcast (1 against n). size[l] = -1 where no operand tells it. */
tc_status tc__einsum_sizes(const tc__einsum_bound *b, const int64_t *const *dims, int64_t *size, tc__err *err);

#endif
