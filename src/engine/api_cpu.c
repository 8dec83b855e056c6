/* api_cpu.c - the public view of the process's CPU budget (core/cpu_budget.h). */
#include "core/cpu_budget.h"
#include "tailcut/tailcut.h"

void tc_cpu_budget(tc_cpu_budget_info *info) {
    if (info == NULL) return;
    const tc__cpu_budget *b = tc__cpu_budget_get();
    info->cpus = b->cpus;
    info->source = tc__budget_source_name(b->source);
    info->online = b->online;
    info->affinity = b->affinity;
    info->cgroup_quota = b->quota;
}
