/* Running the check command on crash states (crash/jobs.h). */
#include "crash/jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

#define WTC_SYNC_CHUNK (1u << 20)

struct wtc_range {
  uint64_t offset, length;
};

struct wtc_job {
  struct wt_image *img;       /* the scratch image itself with one job */
  bool own_img;
  GArray *dirty;                /* struct wtc_range the scratch changed since */
  pid_t pid;                    /* 0: idle */
  guint state;
};

struct wtc_jobs {
  struct wt_image *scratch;
  char *cmd;
  wtc_job_done done;
  void *data;
  guint njobs;
  struct wtc_job *jobs;
};

/* The path is always put in as one single-quoted word. Inside a quoted
 * string of the command ("...{}..." or '...{}...') that string's quote is
 * closed first and opened again after, so the quotes the user wrote around
 * {} keep their meaning and the path is not quoted twice. */
char *
wtc_jobs_command (const char *cmd, const char *image)
{
  g_autofree char *quoted = g_shell_quote (image);
  GString *out = g_string_new (NULL);
  char in_quote = 0;            /* '\'', '"' or 0 */
  for (const char *p = cmd; *p; p++) {
    if (p[0] == '{' && p[1] == '}') {
      if (in_quote)
        g_string_append_printf (out, "%c%s%c", in_quote, quoted, in_quote);
      else
        g_string_append (out, quoted);
      p++;
      continue;
    }
    g_string_append_c (out, *p);
    if (*p == '\\' && in_quote != '\'' && p[1]) {
      g_string_append_c (out, *++p);   /* an escaped character quotes nothing */
      continue;
    }
    if (!in_quote && (*p == '\'' || *p == '"'))
      in_quote = *p;
    else if (in_quote == *p)
      in_quote = 0;
  }
  return g_string_free (out, false);
}

static void
wtc_jobs_note_change (void *data, uint64_t offset, uint64_t length)
{
  struct wtc_jobs *j = data;
  struct wtc_range r = { offset, length };
  for (guint i = 0; i < j->njobs; i++)
    if (j->jobs[i].dirty)
      g_array_append_val (j->jobs[i].dirty, r);
}

static bool
wtc_job_make_copy (struct wtc_jobs *j, struct wtc_job *job, const char *dir,
                   guint number, GError **error)
{
  g_autofree char *path = g_strdup_printf ("%s/scratch-%u.img", dir, number);
  job->img = wtc_target_create (path, j->scratch->size, j->scratch->size, error);
  job->own_img = true;
  job->dirty = g_array_new (false, false, sizeof (struct wtc_range));
  return job->img && wtc_target_copy_from (job->img, j->scratch->fd, j->scratch->path,
                                           j->scratch->size, error);
}

struct wtc_jobs *
wtc_jobs_new (struct wt_image *scratch, const char *dir, const char *cmd,
              guint njobs, wtc_job_done done, void *data, GError **error)
{
  struct wtc_jobs *j = g_new0 (struct wtc_jobs, 1);
  j->scratch = scratch;
  j->cmd = g_strdup (cmd);
  j->done = done;
  j->data = data;
  j->njobs = MAX (njobs, 1u);
  j->jobs = g_new0 (struct wtc_job, j->njobs);
  if (j->njobs == 1) {
    j->jobs[0].img = scratch;
    return j;
  }
  for (guint i = 0; i < j->njobs; i++)
    if (!wtc_job_make_copy (j, &j->jobs[i], dir, i + 1, error)) {
      wtc_jobs_free (j);
      return NULL;
    }
  scratch->changed = wtc_jobs_note_change;
  scratch->changed_data = j;
  return j;
}

/* Reaping. */

static int
wtc_exit_status (int status)
{
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* Waits for one of our checks to end and reports it. */
static void
wtc_jobs_reap_one (struct wtc_jobs *j)
{
  for (;;) {
    int status;
    pid_t pid = waitpid (-1, &status, 0);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid < 0) {
      /* No children left (someone else reaped them): nothing to wait for. */
      for (guint i = 0; i < j->njobs; i++)
        if (j->jobs[i].pid) {
          j->jobs[i].pid = 0;
          j->done (j->data, j->jobs[i].state, -1);
        }
      return;
    }
    for (guint i = 0; i < j->njobs; i++)
      if (j->jobs[i].pid == pid) {
        j->jobs[i].pid = 0;
        j->done (j->data, j->jobs[i].state, wtc_exit_status (status));
        return;
      }
  }
}

static guint
wtc_jobs_running (const struct wtc_jobs *j)
{
  guint n = 0;
  for (guint i = 0; i < j->njobs; i++)
    n += j->jobs[i].pid != 0;
  return n;
}

void
wtc_jobs_wait_all (struct wtc_jobs *j)
{
  while (wtc_jobs_running (j))
    wtc_jobs_reap_one (j);
}

static struct wtc_job *
wtc_jobs_idle (struct wtc_jobs *j)
{
  for (;;) {
    for (guint i = 0; i < j->njobs; i++)
      if (j->jobs[i].pid == 0)
        return &j->jobs[i];
    wtc_jobs_reap_one (j);
  }
}

/* Bringing a copy up to date. */

static int
wtc_range_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_range *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool
wtc_copy_range_from (struct wt_image *to, struct wt_image *from,
                     uint64_t offset, uint64_t length, unsigned char *buf,
                     GError **error)
{
  while (length > 0) {
    uint64_t n = MIN (length, (uint64_t) WTC_SYNC_CHUNK);
    if (!wtc_target_read (from, offset, buf, n, error)
        || !wtc_target_write (to, offset, buf, n, error))
      return false;
    offset += n;
    length -= n;
  }
  return true;
}

/* Copies the changed ranges, overlapping ones merged, and forgets them. */
static bool
wtc_job_sync (struct wtc_jobs *j, struct wtc_job *job, GError **error)
{
  if (!job->own_img || job->dirty->len == 0)
    return true;
  g_array_sort (job->dirty, wtc_range_cmp);
  g_autofree unsigned char *buf = g_malloc (WTC_SYNC_CHUNK);
  struct wtc_range cur = g_array_index (job->dirty, struct wtc_range, 0);
  for (guint i = 1; i <= job->dirty->len; i++) {
    const struct wtc_range *r = i < job->dirty->len
      ? &g_array_index (job->dirty, struct wtc_range, i) : NULL;
    if (r && r->offset <= cur.offset + cur.length) {
      cur.length = MAX (cur.offset + cur.length, r->offset + r->length) - cur.offset;
      continue;
    }
    if (!wtc_copy_range_from (job->img, j->scratch, cur.offset, cur.length, buf, error))
      return false;
    if (r)
      cur = *r;
  }
  g_array_set_size (job->dirty, 0);
  return true;
}

/* Starting. */

static pid_t
wtc_job_spawn (const char *line, const char *log_path, GError **error)
{
  int out = open (log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", log_path, g_strerror (errno));
    return -1;
  }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid == 0) {
    dup2 (out, STDOUT_FILENO);
    dup2 (out, STDERR_FILENO);
    execl ("/bin/sh", "sh", "-c", line, (char *) NULL);
    _exit (127);
  }
  int saved = errno;
  close (out);
  if (pid < 0)
    g_set_error (error, WTC_ERROR, 0, "fork: %s: %s", line, g_strerror (saved));
  return pid;
}

bool
wtc_jobs_start (struct wtc_jobs *j, guint state, const char *log_path,
                GError **error)
{
  struct wtc_job *job = wtc_jobs_idle (j);
  if (!wtc_job_sync (j, job, error))
    return false;
  g_autofree char *line = wtc_jobs_command (j->cmd, job->img->path);
  pid_t pid = wtc_job_spawn (line, log_path, error);
  if (pid < 0)
    return false;
  job->pid = pid;
  job->state = state;
  /* The only job checks the scratch image itself: it must stay as it is
   * until the check ends. */
  if (!job->own_img)
    wtc_jobs_wait_all (j);
  return true;
}

void
wtc_jobs_free (struct wtc_jobs *j)
{
  if (!j)
    return;
  wtc_jobs_wait_all (j);
  if (j->scratch->changed_data == j) {
    j->scratch->changed = NULL;
    j->scratch->changed_data = NULL;
  }
  for (guint i = 0; i < j->njobs; i++) {
    struct wtc_job *job = &j->jobs[i];
    if (!job->own_img)
      continue;
    if (job->img) {
      unlink (job->img->path);
      wtc_target_close (job->img);
    }
    g_array_unref (job->dirty);
  }
  g_free (j->jobs);
  g_free (j->cmd);
  g_free (j);
}
