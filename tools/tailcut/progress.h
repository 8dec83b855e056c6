/* progress.h - progress of long CLI work on standard error: a bar with count, rate and ETA when stderr is a
 * terminal, a plain line every few seconds otherwise (logs, CI); `--quiet` turns it off.
 *
 * Plain mode prints its first line once the work has run for TAILCUT_PROGRESS_INTERVAL seconds or 1 s, whichever is
 * less, then one every TAILCUT_PROGRESS_INTERVAL seconds (default 5; 0: a line at every update, for tests); a line
 * reads "tailcut calibrate: sample 37/500, 6.2/s, 6s elapsed, ETA 1m18s". A terminal gets a bar redrawn in place
 * (at most 10 times a second) that the next note or the end clears. A small thread prints what is due, so a line
 * comes on time even while one item (a model load, a big layer's tuning) runs long. */
#ifndef TC_CLI_PROGRESS_H
#define TC_CLI_PROGRESS_H

#include <stdbool.h>

#include "tailcut/tailcut.h"

typedef struct cli_progress cli_progress;

/* Starts progress reporting for command cmd ("build", "calibrate"): NULL when quiet or out of memory, and every
 * function below takes NULL and does nothing then. cmd is not kept. */
cli_progress *cli_progress_start(const char *cmd, bool quiet);
/* A new stage: what ("loading model", "tuning step", "sample"), counted in total items (0: not counted). what is
 * copied. The count restarts at 0, and so do the rate and the ETA. */
void cli_progress_stage(cli_progress *p, const char *what, int total);
/* done items of the stage are finished; item (copied; may be NULL) names the one under way. */
void cli_progress_set(cli_progress *p, int done, const char *item);
/* Prints one line of results now (after clearing a terminal's bar), as fprintf(stderr) would; with p NULL too. */
void cli_progress_note(cli_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Stops the thread, clears a terminal's bar and frees p. */
void cli_progress_end(cli_progress *p);
/* A tc_progress_fn (tc_build_options.progress) that feeds user_data, a cli_progress: "tune" becomes the stage
 * "tuning step" with the step's name as item. */
void cli_progress_build_cb(void *user_data, const char *phase, int done, int total, const char *item);

#endif
