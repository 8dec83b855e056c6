/*
 * tactics.h - the CPU backend's tactics by name, declared from its list (tactics.inc): for the backend's
 * own table (backend_cpu.c) and for tests that run one tactic directly. Nothing above src/backends/
 * includes it.
 */
#ifndef TC_BACKENDS_CPU_TACTICS_H
#define TC_BACKENDS_CPU_TACTICS_H

#include "backends/tactic.h"
#include "core/cpu.h"

#define TC_TACTIC(op, name) extern const tc__tactic tc__tactic_##name;
#include "backends/cpu/tactics.inc"
#undef TC_TACTIC
/* The reference kernels as tactics (backends/ref/tactics.c), named "ref", after tactics.inc's on the list. */
#define TC_OP(op) extern const tc__tactic tc__tactic_ref_##op;
#include "core/ops.inc"
#undef TC_OP

#endif
