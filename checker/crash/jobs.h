/* The check command of wtrack crash, run on each state. With one job it
 * runs on the scratch image itself, one state after the other. With N jobs
 * up to N checks run at once, each on a copy of its own
 * (RUN_DIR/crash/scratch-J.img), brought up to the scratch image's state by
 * copying only the ranges the scratch image changed since that copy's last
 * check. */
#ifndef WTC_CRASH_JOBS_H
#define WTC_CRASH_JOBS_H

#include <stdbool.h>

#include <glib.h>

#include "lib/target.h"

struct wtc_jobs;

/* Told when the check of a state ended: its exit status, 128 + signal when
 * killed, -1 when it could not run. */
typedef void (*wtc_job_done) (void *data, guint state, int status);

/* scratch must outlive the jobs; its changes are watched from here on. */
struct wtc_jobs *wtc_jobs_new (struct wt_image *scratch, const char *dir,
                               const char *cmd, guint njobs, wtc_job_done done,
                               void *data, GError **error);
/* Starts the check of the scratch image as it is now, output to log_path;
 * waits for a free job first (reporting the checks that end meanwhile).
 * With one job, returns once the check ended. */
bool wtc_jobs_start (struct wtc_jobs *j, guint state, const char *log_path,
                     GError **error);
/* Waits for every running check. */
void wtc_jobs_wait_all (struct wtc_jobs *j);
/* Waits for the running checks, removes the copies. */
void wtc_jobs_free (struct wtc_jobs *j);

/* cmd with every {} replaced by the shell-quoted image path; a {} inside
 * single or double quotes of cmd gets the same quoted path, the string's
 * quote closed before it and reopened after. */
char *wtc_jobs_command (const char *cmd, const char *image);

#endif
