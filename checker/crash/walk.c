/* The states of wtrack crash, made one after the other in the scratch
 * image and each checked (crash/crash.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include "crash/crash.h"
#include "fileio.h"
#include "lib/btrfs-chunks.h"
#include "lib/util.h"

/* The rows come out in state order, whatever order the checks end in. */
static void
wtc_crash_check_done (void *data, guint index, int status)
{
  struct wtc_crash *c = data;
  struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, index);
  s->status = status;
  s->finished = true;
  if (status != 0) {
    c->failed_check++;
    if (s->data.bad == 0)
      c->failed++;
  }
  while (c->printed < c->states->len
         && g_array_index (c->states, struct wtc_crash_state, c->printed).finished)
    wtc_crash_print_state (&g_array_index (c->states, struct wtc_crash_state, c->printed++));
}

/* The scratch image holds a new state: the oracle reads it now, the check
 * runs on it (or on a copy) as soon as a job is free. */
static bool
wtc_crash_check (struct wtc_crash *c, const char *kind, uint64_t seq,
                 uint64_t t_ns, char *writes, GError **error)
{
  if (c->full) {
    g_free (writes);
    return true;
  }
  struct wtc_crash_state s = {
    .number = c->states->len, .kind = kind, .seq = seq, .t_ns = t_ns,
    .writes = writes, .status = -1, .subset_writes = c->subset_writes,
    .epoch_writes = c->subset_writes ? c->epoch_writes : 0,
  };
  bool ok = wtc_oracle_check (c->oracle, c->scratch, seq, &s.data, error);
  if (s.data.bad) {
    c->failed_data++;
    c->failed++;
  }
  g_array_append_val (c->states, s);
  if (c->o->max_states && c->states->len >= (guint) c->o->max_states)
    c->full = true;
  if (!ok)
    return false;
  g_autofree char *log_path = g_strdup_printf ("%s/state-%" PRIu64 ".log", c->dir,
                                               s.number);
  return wtc_jobs_start (c->jobs, c->states->len - 1, log_path, error);
}

/* Reordered states. */

/* Subset number k of the epoch's writes into in[] (in[i]: write i is in
 * it). Few writes: every proper, non-empty subset in turn (bit i of k + 1);
 * more: random ones, each write in with probability 1/2. */
static void
wtc_crash_subset (struct wtc_crash *c, guint nwrites, guint k, guint8 *in)
{
  if (nwrites < 64 && ((uint64_t) 1 << nwrites) - 2 <= (uint64_t) c->o->reorder) {
    for (guint i = 0; i < nwrites; i++)
      in[i] = ((uint64_t) (k + 1) >> i) & 1;
    return;
  }
  guint count;
  do {
    count = 0;
    for (guint i = 0; i < nwrites; i++)
      count += in[i] = g_rand_boolean (c->rand);
  } while (count == 0 || count == nwrites);
}

static guint
wtc_crash_samples (const struct wtc_crash *c, guint nwrites)
{
  if (nwrites < 2)
    return 0;
  if (nwrites < 64 && ((uint64_t) 1 << nwrites) - 2 < (uint64_t) c->o->reorder)
    return (guint) (((uint64_t) 1 << nwrites) - 2);
  return (guint) c->o->reorder;
}

/* Applies the subset (on the epoch's starting disk), checks, undoes it. */
static bool
wtc_crash_reorder_one (struct wtc_crash *c, const guint8 *in, uint64_t seq,
                       uint64_t t_ns, GError **error)
{
  struct wtc_undo *undo = c->subset_undo;
  GString *writes = g_string_new ("writes");
  for (guint i = 0; i < c->epoch->len; i++) {
    if (!in[i])
      continue;
    const struct wtc_epoch_write *w = &g_array_index (c->epoch, struct wtc_epoch_write, i);
    g_string_append_printf (writes, "%s%" PRIu64, writes->len > 6 ? "," : " ", w->seq);
    if (!wtc_epoch_apply (c->scratch, c->log_fd, w, undo, error)) {
      g_string_free (writes, true);
      return false;
    }
  }
  c->subset_writes = wtc_undo_writes (undo);
  bool ok = wtc_crash_check (c, "reorder", seq, t_ns, g_string_free (writes, false), error);
  c->subset_writes = 0;
  return ok && wtc_undo_all (c->scratch, undo, error);
}

static bool
wtc_crash_reorder_epoch (struct wtc_crash *c, uint64_t seq, uint64_t t_ns,
                         GError **error)
{
  guint n = wtc_crash_samples (c, c->epoch->len);
  if (n == 0 || c->full)
    return true;
  if (!wtc_undo_all (c->scratch, c->epoch_undo, error))
    return false;
  g_autofree guint8 *in = g_new (guint8, c->epoch->len);
  for (guint k = 0; k < n && !c->full; k++) {
    wtc_crash_subset (c, c->epoch->len, k, in);
    if (!wtc_crash_reorder_one (c, in, seq, t_ns, error))
      return false;
  }
  for (guint i = 0; i < c->epoch->len; i++)
    if (!wtc_epoch_apply (c->scratch, c->log_fd,
                          &g_array_index (c->epoch, struct wtc_epoch_write, i), NULL, error))
      return false;
  return true;
}

/* A flush (or the end of the log) closes the epoch. */
static bool
wtc_crash_epoch_end (struct wtc_crash *c, uint64_t seq, uint64_t t_ns, GError **error)
{
  if (c->o->reorder && !wtc_crash_reorder_epoch (c, seq, t_ns, error))
    return false;
  c->epoch_writes = 0;
  if (c->o->reorder) {
    g_array_set_size (c->epoch, 0);
    wtc_undo_clear (c->epoch_undo);
  }
  return true;
}

static bool
wtc_crash_record (struct wtc_crash *c, const struct wtlog_record *rec, GError **error)
{
  if (wtc_record_changes_disk (rec)) {
    if (rec->type == WTLOG_WRITE && !rec->data && !wt_record_in_image (rec)) {
      g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": WRITE has no data", rec->seq);
      return false;
    }
    if (rec->offset > c->scratch->size || rec->length > c->scratch->size - rec->offset) {
      g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": %s %" PRIu64 "+%" PRIu64
                   " lies outside the disk (%" PRIu64 " bytes)", rec->seq,
                   wtlog_type_name (rec->type), rec->offset, rec->length,
                   c->scratch->size);
      return false;
    }
    c->epoch_writes++;
    if (c->o->reorder) {
      wtc_epoch_add (c->epoch, rec);
      if (!wtc_undo_save (c->epoch_undo, c->scratch, rec->offset, rec->length, error))
        return false;
    }
    if (!wtc_target_apply (c->scratch, rec, error))
      return false;
    if (rec->flags & WTLOG_F_FUA)
      return wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL, error);
    return true;
  }
  if (rec->type == WTLOG_FLUSH && !(rec->flags & WTLOG_F_FAILED))
    return wtc_crash_epoch_end (c, rec->seq, rec->t_end, error)
      && wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL, error);
  return true;
}

/* The walk. */

bool
wtc_crash_walk (struct wtc_crash *c, struct wtlog_reader *r, GError **error)
{
  struct wtlog_record rec = { 0 };
  uint64_t last_seq = 0, last_t = 0;
  if (!wtc_crash_check (c, "initial", 0, 0, NULL, error))
    return false;
  while (!c->full && wtlog_reader_next (r, &rec) == 0) {
    if (!wtc_crash_record (c, &rec, error))
      return false;
    last_seq = rec.seq;
    last_t = rec.t_end;
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  c->torn = st->torn;
  /* Writes after the last flush: an epoch the end of the log (or the tear)
   * closes. */
  if (!c->full && c->epoch_writes) {
    if (!wtc_crash_epoch_end (c, last_seq, last_t, error)
        || !wtc_crash_check (c, "prefix", last_seq, last_t, g_strdup ("end of the log"),
                             error))
      return false;
  }
  wtc_jobs_wait_all (c->jobs);
  if (st->torn)
    c->torn_error = g_strdup_printf ("%s (states end at seq %" PRIu64 ")", st->error,
                                     st->last_seq);
  return true;
}

/* The oracle, when the run has a channel. */
static bool
wtc_crash_setup_oracle (struct wtc_crash *c, const char *run_dir, const char *log,
                        const struct wtlog_header *h, GError **error)
{
  c->channel = c->o->channel ? g_strdup (c->o->channel)
    : g_build_filename (run_dir, "channel.bin", NULL);
  if (!c->o->channel && !g_file_test (c->channel, G_FILE_TEST_EXISTS))
    return true;
  g_autofree char *chunks_path = c->o->chunks ? g_strdup (c->o->chunks)
    : g_build_filename (run_dir, "btrfs-chunks.txt", NULL);
  g_autoptr (GArray) chunks = NULL;
  if (c->o->chunks || g_file_test (chunks_path, G_FILE_TEST_EXISTS)) {
    chunks = wtc_chunks_read (chunks_path, error);
    if (!chunks)
      return false;
  }
  c->oracle = wtc_oracle_new (log, c->channel, chunks, h->disk_size, error);
  return c->oracle != NULL;
}

/* A state log left by an earlier, longer crash run would pass for one of
 * this run's. */
static void
wtc_crash_remove_old_logs (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    if (g_str_has_prefix (name, "state-") && g_str_has_suffix (name, ".log")) {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      unlink (path);
    }
}

bool
wtc_crash_setup (struct wtc_crash *c, const char *run_dir, const char *log,
                 const struct wtlog_header *h, const char *base, GError **error)
{
  c->dir = g_build_filename (run_dir, "crash", NULL);
  if (g_mkdir_with_parents (c->dir, 0755) == -1) {
    g_set_error (error, WTC_ERROR, 0, "mkdir: %s: %s", c->dir, g_strerror (errno));
    return false;
  }
  wtc_crash_remove_old_logs (c->dir);
  if (!wtc_crash_setup_oracle (c, run_dir, log, h, error))
    return false;
  g_autofree char *scratch = g_build_filename (c->dir, "scratch.img", NULL);
  c->scratch = wtc_target_create (scratch, h->disk_size, h->disk_size, error);
  if (!c->scratch || !wtc_target_copy_base (c->scratch, base, h->disk_size, error))
    return false;
  c->resolve = wtc_resolve_open (log, c->o->final_image, "each crash state", error);
  if (!c->resolve)
    return false;
  c->scratch->resolve = c->resolve;
  if (c->o->reorder) {
    char err[512];
    c->log_fd = wt_open_input (log, O_RDONLY | O_CLOEXEC, err, sizeof err);
    if (c->log_fd < 0) {
      g_set_error (error, WTC_ERROR, 0, "%s", err);
      return false;
    }
    c->epoch_undo = wtc_undo_new (c->dir, c->warnings, error);
    c->subset_undo = c->epoch_undo ? wtc_undo_new (c->dir, c->warnings, error) : NULL;
    if (!c->subset_undo)
      return false;
  }
  c->jobs = wtc_jobs_new (c->scratch, c->dir, c->o->check, (guint) c->o->jobs,
                          wtc_crash_check_done, c, error);
  return c->jobs != NULL;
}

void
wtc_crash_free (struct wtc_crash *c)
{
  wtc_jobs_free (c->jobs);
  for (guint i = 0; c->states && i < c->states->len; i++) {
    struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, i);
    g_free (s->writes);
    wtc_data_verdict_clear (&s->data);
  }
  if (c->states)
    g_array_unref (c->states);
  if (c->epoch)
    g_array_unref (c->epoch);
  wtc_undo_free (c->epoch_undo);
  wtc_undo_free (c->subset_undo);
  if (c->log_fd >= 0)
    close (c->log_fd);
  if (c->rand)
    g_rand_free (c->rand);
  wtc_target_close (c->scratch);
  wt_resolve_close (c->resolve);
  wtc_oracle_free (c->oracle);
  g_free (c->dir);
  g_free (c->channel);
  if (c->warnings)
    g_ptr_array_unref (c->warnings);
  g_free (c->torn_error);
}
