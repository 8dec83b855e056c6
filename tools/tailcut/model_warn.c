/* model_warn.c - prints what loading a model let through with a warning (tc_model_warning). */
#include "model_warn.h"

void cli_model_warnings(const tc_model *model, const char *cmd, cli_progress *progress) {
    const char *w;
    for (int i = 0; (w = tc_model_warning(model, i)) != NULL; i++)
        cli_progress_note(progress, "tailcut %s: warning: %s\n", cmd, w);
}
