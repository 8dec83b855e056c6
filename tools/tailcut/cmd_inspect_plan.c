/* cmd_inspect_plan.c - `tailcut inspect MODEL.plan [--json]`: the steps of an engine with their
 * fused ops, tactic, precision and output shape, the profiles and the memory plan. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tailcut/tailcut.h"

/* Prints s as a JSON string literal. */
static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void print_dims(const int64_t *d, int32_t rank) {
    for (int32_t i = 0; i < rank; i++) printf("%s%lld", i ? "x" : "", (long long)d[i]);
}

int tc_cli_inspect_plan(const char *path, int json, int verbose) {
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_load(path, &e, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut inspect: %s\n", err.message);
        return 1;
    }
    int ns = tc_engine_num_steps(e);
    tc_memory_info mem;
    tc_engine_memory_info(e, 0, &mem);
    tc_target_info target;
    tc_engine_target_info(e, &target);
    if (json) {
        int reorders = 0;
        printf("{\"backend\":");
        json_str(target.backend);
        printf(",\"target\":");
        json_str(target.target);
        tc_cpu_budget_info budget;
        tc_cpu_budget(&budget);
        printf(",\"threads\":%d,\"cpu_budget\":%d,\"cpu_budget_source\":", tc_engine_threads(e), budget.cpus);
        json_str(budget.source);
        printf(",\"steps\":[");
        for (int k = 0; k < ns; k++) {
            tc_step_info si;
            tc_engine_step_info(e, k, &si);
            printf("%s{\"name\":", k ? "," : "");
            json_str(si.name);
            printf(",\"ops\":");
            json_str(si.ops);
            printf(",\"tactic\":");
            json_str(si.tactic);
            printf(",\"precision\":");
            json_str(si.precision);
            printf(",\"backend\":");
            json_str(si.backend);
            printf(",\"shape\":");
            json_str(si.output_shape);
            printf(",\"layout\":");
            json_str(si.layout);
            printf(",\"output\":");
            json_str(si.output);
            printf(",\"branch\":");
            json_str(si.branch);
            printf(",\"at_reshape\":%s,\"rejected\":[", si.runs_at_reshape ? "true" : "false");
            for (int j = 0; j < tc_engine_step_num_rejected(e, k); j++) {
                tc_tactic_rejection rj;
                tc_engine_step_rejected(e, k, j, &rj);
                printf("%s{\"tactic\":", j ? "," : "");
                json_str(rj.name);
                printf(",\"reason\":");
                json_str(rj.reason);
                printf("}");
            }
            printf("]}");
            reorders += si.is_reorder;
        }
        printf("],\"reorders\":%d,\"arena_bytes\":%llu,\"naive_bytes\":%llu,\"scratch_bytes\":%llu,\"weight_bytes\":%llu,\"profiles\":%d}\n",
               reorders, (unsigned long long)mem.arena_bytes, (unsigned long long)mem.naive_bytes,
               (unsigned long long)mem.scratch_bytes, (unsigned long long)mem.weight_bytes, tc_engine_num_profiles(e));
        tc_engine_destroy(e);
        return 0;
    }
    printf("plan %s: %d steps, %d profile(s), weights %.2f MiB\n", path, ns, tc_engine_num_profiles(e),
           (double)mem.weight_bytes / 1048576.0);
    printf("backend %s, built for %s\n", target.backend, target.target);
    tc_cpu_budget_info budget;
    tc_cpu_budget(&budget);
    if (tc_engine_threads(e) > 0)
        printf("threads: %d (the plan's; CPU budget here %d from %s)\n", tc_engine_threads(e), budget.cpus, budget.source);
    else
        printf("threads: the CPU budget, here %d (from %s)\n", budget.cpus, budget.source);
    for (int p = 0; p < tc_engine_num_profiles(e); p++) {
        tc_memory_info m;
        tc_engine_memory_info(e, p, &m);
        printf("profile %d: arena %.2f MiB (naive sum %.2f MiB, %.0f%%), scratch %.2f MiB\n", p,
               (double)m.arena_bytes / 1048576.0, (double)m.naive_bytes / 1048576.0,
               m.naive_bytes ? 100.0 * (double)m.arena_bytes / (double)m.naive_bytes : 0.0,
               (double)m.scratch_bytes / 1048576.0);
        for (int i = 0; i < tc_engine_num_inputs(e); i++) {
            tc_input_range r;
            tc_engine_profile_range(e, p, i, &r);
            printf("  %s: min ", r.name);
            print_dims(r.min, r.rank);
            printf(" opt ");
            print_dims(r.opt, r.rank);
            printf(" max ");
            print_dims(r.max, r.rank);
            printf("\n");
        }
    }
    printf("%-4s %-44s %-40s %-28s %-5s %-8s %s\n", "#", "step", "ops", "tactic", "prec", "layout", "output shape");
    if (verbose)
        printf("     (candidates the auto-tuner timed at the first profile's opt shapes, * = chosen; x = not a candidate, "
               "and why)\n");
    int computed = 0, reorders = 0;
    const char *branch = "";
    for (int k = 0; k < ns; k++) {
        tc_step_info si;
        tc_engine_step_info(e, k, &si);
        if (strcmp(si.branch, branch) != 0 && si.branch[0] != '\0') /* steps that run only when a branch is taken */
            printf("     %*s[If branch %s]\n", 2 * (si.branch_depth - 1), "", si.branch);
        branch = si.branch;
        char name[64];
        snprintf(name, sizeof name, "%*s%s", 2 * si.branch_depth, "", si.name);
        printf("%-4d %-44.44s %-40.40s %-28s %-5s %-8s %s%s\n", k, name, si.ops, si.tactic, si.precision,
               si.is_reorder ? "->nchw" : si.layout[0] ? si.layout : "nchw", si.output_shape,
               si.runs_at_reshape ? "  (at reshape)" : "");
        reorders += si.is_reorder;
        for (int c = 0; verbose && c < tc_engine_step_num_candidates(e, k); c++) {
            tc_tactic_timing t;
            tc_engine_step_candidate(e, k, c, &t);
            if (t.median_ms < 0)
                printf("       %c %-28s (not timed)\n", t.chosen ? '*' : ' ', t.name);
            else
                printf("       %c %-28s median %9.4f ms  max %9.4f ms\n", t.chosen ? '*' : ' ', t.name, t.median_ms, t.max_ms);
        }
        for (int j = 0; verbose && j < tc_engine_step_num_rejected(e, k); j++) {
            tc_tactic_rejection rj;
            tc_engine_step_rejected(e, k, j, &rj);
            printf("       x %-28s %s\n", rj.name, rj.reason);
        }
        computed += !si.runs_at_reshape && strcmp(si.tactic, "view") != 0;
    }
    printf("%d steps run per inference (%d at reshape or views); %d layout reorders (blocked -> NCHW)\n", computed,
           ns - computed, reorders);
    tc_engine_destroy(e);
    return 0;
}
