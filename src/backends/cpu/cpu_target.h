/*
 * cpu_target.h - the CPU backend's target record, the bytes a plan's TARGET section holds for a CPU
 * plan (plan_format.h), and the revision of the contract between CPU step attributes and tactics.
 * Little-endian, 112 bytes, pinned by _Static_assert; reserved fields are zero.
 */
#ifndef TC_BACKENDS_CPU_CPU_TARGET_H
#define TC_BACKENDS_CPU_CPU_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "core/cpu.h"
#include "core/error.h"

/* The revision of the contract between a plan's step attributes and the CPU tactics that run them: raised whenever a
 * tactic starts to take attributes it used to ignore, or reads them differently (e.g. revision 2: VNNI steps with
 * residual images of u8 codes, which a revision-0 build would have read as FP32; revision 3: FP16 / BF16 steps with
 * residual images, tc.half_res_image; revision 4: BF16 steps of an odd C_in below 8 pack their weights for an image of
 * C_in channels, not C_in + 1; revision 5: the image of a MatMul/Gemm chain, tc.int8_out_image and tc.half_out_image,
 * has M rows of one pixel, not one row of M pixels). A plan of another revision is refused at load (rebuild it), as a
 * tactic of another build may run its steps silently wrong. */
#define TC__CPU_KERNEL_REV 5u

typedef struct tc__cpu_target {
    char vendor[16];          /* CPUID vendor string, NUL-padded ("GenuineIntel") */
    uint32_t family, model, stepping;
    uint32_t kernel_rev;      /* TC__CPU_KERNEL_REV of the build that wrote it (a reader refuses another) */
    uint64_t isa;             /* the build machine's usable TC__ISA_* bits (informational: the steps' needs are
                                 the TARGET section's required capability bits) */
    char brand[64];           /* processor brand string, NUL-padded (informational) */
    uint64_t reserved;
} tc__cpu_target;

_Static_assert(sizeof(tc__cpu_target) == 112, "CPU target record size");
_Static_assert(offsetof(tc__cpu_target, family) == 16, "CPU target record layout");
_Static_assert(offsetof(tc__cpu_target, kernel_rev) == 28, "CPU target record layout");
_Static_assert(offsetof(tc__cpu_target, isa) == 32, "CPU target record layout");
_Static_assert(offsetof(tc__cpu_target, brand) == 40, "CPU target record layout");
_Static_assert(offsetof(tc__cpu_target, reserved) == 104, "CPU target record layout");

/* The target record of the CPU c (tests build records of other machines with it). */
tc__cpu_target tc__cpu_target_of(const tc__cpu *c);

/* Whether a plan for target record rec (size bytes) whose steps need `required` ISA bits runs on the CPU here
 * (vendor, family and model equal, kernel revision equal, required bits usable); else why. */
tc_status tc__cpu_check_target(const tc__cpu *here, const void *rec, size_t size, uint64_t required, tc__err *err);

#endif
