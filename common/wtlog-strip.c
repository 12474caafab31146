/* wtlog_strip_data (wtlog.h): a log rewritten without its payloads, read
 * with wtlog-read.c and written with wtlog.c. */
#include "wtlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The strip: stage=on with data=off keeps every write's bytes in the log
 * while the plugin serves (the log is the store) and, once the image holds
 * them, takes them out again, so the run ends with a hashes-only log. */

/* The rename is durable only once the directory that holds the log is. */
int
wtlog_sync_dir_of (const char *path)
{
  char *copy = strdup (path);
  if (!copy)
    return -1;
  int fd = open (dirname (copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free (copy);
  if (fd == -1)
    return -1;
  int r = fsync (fd);
  int saved = errno;
  close (fd);
  errno = saved;
  return r;
}

/* tmp, complete and durable, takes path's place (durably once path's
 * directory is synced).  0, or -1 with err set. */
static int
wtlog_replace (const char *tmp, const char *path, char *err, size_t errlen)
{
  if (rename (tmp, path) == -1)
    return wtlog_fail (err, errlen, "rename: %s to %s: %m", tmp, path);
  return 0;
}

/* Copies every record of r into w without its payload.  The writer numbers
 * records 1, 2, ... as the plugin did, so each keeps its seq: checked, as
 * the checker's reports cite records by seq. */
static int
wtlog_strip_records (struct wtlog_reader *r, struct wtlog_writer *w,
                     const char *path, const char *tmp, char *err,
                     size_t errlen)
{
  struct wtlog_record rec;
  int next;
  while ((next = wtlog_reader_next (r, &rec)) == 0) {
    uint64_t seq = rec.seq;
    /* Without the payloads of the SAVED records, an IN_IMAGE record's
     * bytes can no longer be found: the flag would promise them.  APPLIED
     * stays (the change reached the image first). */
    rec.flags &= (uint16_t) ~(WTLOG_F_DATA | WTLOG_F_IN_IMAGE);
    if (wtlog_writer_append (w, &rec, rec.hashes, NULL) == -1)
      return wtlog_fail (err, errlen, "write: %s: %m", tmp);
    if (rec.seq != seq)
      return wtlog_fail (err, errlen, "%s: record at byte %" PRIu64
                         " has seq %" PRIu64 ", expected %" PRIu64,
                         path, rec.log_offset, seq, rec.seq);
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (next == -1)
    return wtlog_fail (err, errlen, "%s", st->error);
  if (!st->closed)
    return wtlog_fail (err, errlen, "%s: not closed (no final CLOSE "
                       "record): the payloads are its only copy", path);
  return 0;
}

int
wtlog_strip_data_unsynced (const char *path, char *err, size_t errlen)
{
  struct wtlog_header h;
  /* The log as it is: a ring still beside it holds records the log lacks,
   * so the log is not closed and is refused below.  (Looking for the ring
   * would also format the ENOENT of its absence: under ASan, a strerror in
   * the plugin leaves nbdkit hung in exit, doc/design-build.md.) */
  struct wtlog_reader *r = wtlog_reader_open_plain (path, &h, err, errlen);
  if (!r)
    return -1;
  char *tmp = malloc (strlen (path) + sizeof ".strip");
  if (!tmp) {
    wtlog_reader_close (r);
    return wtlog_fail (err, errlen, "malloc: %m");
  }
  strcpy (stpcpy (tmp, path), ".strip");
  h.flags &= ~(uint32_t) (WTLOG_H_DATA | WTLOG_H_STORE);
  int ret = -1;
  struct wtlog_writer *w = wtlog_writer_open (tmp, &h, err, errlen);
  if (w) {
    int copied = wtlog_strip_records (r, w, path, tmp, err, errlen);
    int closed = wtlog_writer_close (w);
    if (copied == 0 && closed == -1)
      wtlog_fail (err, errlen, "fdatasync: %s: %m", tmp);
    else if (copied == 0)
      ret = wtlog_replace (tmp, path, err, errlen);
    if (ret == -1)
      unlink (tmp);
  }
  wtlog_reader_close (r);
  free (tmp);
  return ret;
}

int
wtlog_strip_data (const char *path, char *err, size_t errlen)
{
  if (wtlog_strip_data_unsynced (path, err, errlen) == -1)
    return -1;
  if (wtlog_sync_dir_of (path) == -1)
    return wtlog_fail (err, errlen, "fsync: the directory of %s: %m", path);
  return 0;
}
