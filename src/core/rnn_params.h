/*
 * rnn_params.h - the attributes of LSTM, GRU and RNN (direction, hidden_size, layout,
 * clip, activations, linear_before_reset, input_forget), read and validated once
 * for shape inference, the reference kernels and the CPU tactic.
 */
#ifndef TC_CORE_RNN_PARAMS_H
#define TC_CORE_RNN_PARAMS_H

#include <stdbool.h>

#include "core/attr.h"
#include "core/error.h"

typedef enum tc__rnn_act {
    TC__RNN_SIGMOID = 0,
    TC__RNN_TANH,
    TC__RNN_RELU,
    TC__RNN_SOFTSIGN,
    TC__RNN_SOFTPLUS,
} tc__rnn_act;

enum { TC__RNN_MAX_ACTS = 3 }; /* LSTM f, g, h; GRU f, g; RNN f */

typedef struct tc__rnn_params {
    bool lstm;                 /* LSTM (4 gates iofc); else GRU (3 gates zrh) or RNN (1) */
    int gates;                 /* 4, 3 or 1 */
    int n_acts;                /* activations per direction: 3, 2 or 1 */
    int dirs;                  /* 1 or 2 */
    bool reverse;              /* direction "reverse" (dirs 1) */
    int64_t hidden;            /* hidden_size, or -1 when the attribute is absent (then R's last dim) */
    int layout;                /* 0: X [S, B, I]; 1: X [B, S, I] */
    bool has_clip;
    double clip;               /* > 0 when has_clip */
    bool linear_before_reset;  /* GRU */
    tc__rnn_act act[2][TC__RNN_MAX_ACTS]; /* per direction */
} tc__rnn_params;

/* Reads and checks the attributes of an LSTM, GRU or RNN node (op_type); fails naming the attribute, and refuses
 * what the kernels do not compute (input_forget 1, activations with alpha/beta, activation_alpha/beta). */
tc_status tc__rnn_params_read(const tc__attrs *attrs, const char *op_type, tc__rnn_params *p, tc__err *err);

/* The activation applied to x (double precision). */
double tc__rnn_act_apply(tc__rnn_act a, double x);

#endif
