/* model_warn.h - prints what loading a model let through with a warning (tc_model_warning). */
#ifndef TC_CLI_MODEL_WARN_H
#define TC_CLI_MODEL_WARN_H

#include "progress.h"
#include "tailcut/tailcut.h"

/* Prints each of model's warnings on stderr as "tailcut CMD: warning: ...", through progress when not NULL. */
void cli_model_warnings(const tc_model *model, const char *cmd, cli_progress *progress);

#endif
