/* writes.wtlog.ring: its header, and completing a killed plugin's log from
 * the records that were still only in the ring. */
#include "wtlog-ring.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "le.h"
#include "wtlog.h"

#define WTLOG_RING_ZERO_CHUNK (1u << 20)

void
wtlog_ring_header_encode (const struct wtlog_ring_header *h,
                          unsigned char buf[WTLOG_RING_HEADER_SIZE])
{
  memset (buf, 0, WTLOG_RING_HEADER_SIZE);
  memcpy (buf + WTLOG_RING_OFF_MAGIC, WTLOG_RING_MAGIC, WTLOG_RING_MAGIC_LEN);
  wt_put32 (buf + WTLOG_RING_OFF_VERSION,
            h->version ? h->version : WTLOG_RING_VERSION);
  wt_put32 (buf + WTLOG_RING_OFF_HEADER_SIZE, WTLOG_RING_HEADER_SIZE);
  wt_put64 (buf + WTLOG_RING_OFF_RING_SIZE, h->ring_size);
  memcpy (buf + WTLOG_RING_OFF_RUN_ID, h->run_id, 16);
  wt_put64 (buf + WTLOG_RING_OFF_MOVED, h->moved);
}

int
wtlog_ring_header_decode (const unsigned char buf[WTLOG_RING_HEADER_SIZE],
                          struct wtlog_ring_header *h, char *err,
                          size_t errlen)
{
  memset (h, 0, sizeof *h);
  if (memcmp (buf + WTLOG_RING_OFF_MAGIC, WTLOG_RING_MAGIC,
              WTLOG_RING_MAGIC_LEN) != 0)
    return wtlog_fail (err, errlen, "bad magic at byte %d", WTLOG_RING_OFF_MAGIC);
  uint32_t version = wt_get32 (buf + WTLOG_RING_OFF_VERSION);
  h->version = version;
  uint32_t header_size = wt_get32 (buf + WTLOG_RING_OFF_HEADER_SIZE);
  h->ring_size = wt_get64 (buf + WTLOG_RING_OFF_RING_SIZE);
  memcpy (h->run_id, buf + WTLOG_RING_OFF_RUN_ID, 16);
  h->moved = wt_get64 (buf + WTLOG_RING_OFF_MOVED);
  if (version != WTLOG_RING_VERSION && version != WTLOG_RING_VERSION_QUEUE)
    return wtlog_fail (err, errlen, "unsupported version %" PRIu32 " at byte %d",
                       version, WTLOG_RING_OFF_VERSION);
  if (header_size != WTLOG_RING_HEADER_SIZE)
    return wtlog_fail (err, errlen, "bad header size %" PRIu32 " at byte %d",
                       header_size, WTLOG_RING_OFF_HEADER_SIZE);
  if (h->ring_size == 0 || h->ring_size % WTLOG_RING_ALIGN != 0)
    return wtlog_fail (err, errlen, "ring size %" PRIu64 " at byte %d is not a "
                       "positive multiple of %d", h->ring_size,
                       WTLOG_RING_OFF_RING_SIZE, WTLOG_RING_ALIGN);
  if (h->moved < WTLOG_HEADER_SIZE)
    return wtlog_fail (err, errlen, "moved %" PRIu64 " at byte %d is inside the "
                       "log's %d-byte header", h->moved, WTLOG_RING_OFF_MOVED,
                       WTLOG_HEADER_SIZE);
  return 0;
}

char *
wtlog_ring_path (const char *log_path)
{
  size_t n = strlen (log_path);
  char *p = malloc (n + sizeof WTLOG_RING_SUFFIX);
  if (p) {
    memcpy (p, log_path, n);
    memcpy (p + n, WTLOG_RING_SUFFIX, sizeof WTLOG_RING_SUFFIX);
  }
  return p;
}

/* Recovery. */

struct ring_recovery {
  const char *log_path;
  char *ring_path;
  int ring_fd;                  /* locked while the recovery runs */
  int log_fd;                   /* opened for writing */
  struct wtlog_ring_header ring;
  struct wtlog_header log;
  uint64_t end;                 /* end of the log's good records (F), then
                                   of those put in from the ring */
  uint64_t at;                  /* where the next record is read: end, or in
                                   the queue's layout a ring position */
  uint64_t last_seq;
  bool closed;                  /* the log ends in the final CLOSE */
  uint64_t recovered;           /* records put into the log */
  uint64_t first_seq;           /* seq of the first of them */
  unsigned char *buf;           /* the candidate record */
  size_t cap;
  char *err;
  size_t errlen;
};

/* A failure of the log's completion: the message names both files. */
static int
ring_log_fail (struct ring_recovery *rc, const char *what)
{
  return wtlog_fail (rc->err, rc->errlen, "%s: cannot complete it from %s: %s: %s",
                     rc->log_path, rc->ring_path, what, strerror (errno));
}

/* Opens the ring and takes its lock: 1 when held, 0 when there is no ring
 * or a live plugin holds it (nothing is to be done then), -1 on an error. */
static int
ring_open_locked (struct ring_recovery *rc)
{
  rc->ring_fd = wt_open_input (rc->ring_path, O_RDWR | O_CLOEXEC, rc->err,
                               rc->errlen);
  /* A path where no ring can be is no ring either: the log's own open
   * says what is wrong with the path, as it did before rings. */
  if (rc->ring_fd < 0)
    return errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG ? 0 : -1;
  /* flock, not fcntl locks: the plugin's lock is on its own open file
   * description, so even a tool in the same process as a live plugin
   * finds it held. */
  if (flock (rc->ring_fd, LOCK_EX | LOCK_NB) == -1) {
    if (errno == EWOULDBLOCK)
      return 0;
    return wtlog_fail (rc->err, rc->errlen, "%s: flock: %m", rc->ring_path);
  }
  return 1;
}

static int
ring_read_header (struct ring_recovery *rc)
{
  unsigned char buf[WTLOG_RING_HEADER_SIZE];
  char why[200];
  ssize_t got = wt_pread_full (rc->ring_fd, buf, sizeof buf, 0);
  if (got < 0)
    return wtlog_fail (rc->err, rc->errlen, "%s: read: %m", rc->ring_path);
  if (got < WTLOG_RING_HEADER_SIZE)
    return wtlog_fail (rc->err, rc->errlen, "%s: truncated header: %zd of %d bytes",
                       rc->ring_path, got, WTLOG_RING_HEADER_SIZE);
  if (wtlog_ring_header_decode (buf, &rc->ring, why, sizeof why) == -1)
    return wtlog_fail (rc->err, rc->errlen, "%s: %s", rc->ring_path, why);
  return 0;
}

static void
ring_hex_id (const uint8_t id[16], char out[33])
{
  for (int i = 0; i < 16; i++)
    snprintf (out + 2 * i, 3, "%02x", id[i]);
}

/* A ring left by another run (a log written again at the same path) says
 * nothing about this log; it is left for a person to look at. */
static int
ring_check_run (struct ring_recovery *rc)
{
  char ring_id[33], log_id[33];
  if (memcmp (rc->ring.run_id, rc->log.run_id, 16) == 0)
    return 0;
  ring_hex_id (rc->ring.run_id, ring_id);
  ring_hex_id (rc->log.run_id, log_id);
  return wtlog_fail (rc->err, rc->errlen, "%s: run_id %s at byte %d is not that "
                     "of %s (%s): the ring belongs to another run; both left as "
                     "they are", rc->ring_path, ring_id, WTLOG_RING_OFF_RUN_ID,
                     rc->log_path, log_id);
}

/* The log's header (for its run_id and exports), and where its good
 * records end and their last seq, read as the file holds them
 * (wtlog_reader_open would recover again: recursion). */
static int
ring_scan_log (struct ring_recovery *rc)
{
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open_plain (rc->log_path, &rc->log,
                                                    rc->err, rc->errlen);
  if (!r)
    return -1;
  rc->end = WTLOG_HEADER_SIZE;
  while (wtlog_reader_next (r, &rec) == 0)
    rc->end = rec.log_offset + rec.size;
  const struct wtlog_status *st = wtlog_reader_status (r);
  rc->last_seq = st->last_seq;
  rc->closed = st->closed;
  wtlog_reader_close (r);
  return 0;
}

/* Reads len bytes from fd at off: 0, 1 when the file ends first, -1 on an
 * error (errno set). */
static int
ring_pread (int fd, unsigned char *buf, size_t len, uint64_t off)
{
  ssize_t got = wt_pread_full (fd, buf, len, off);
  if (got < 0)
    return -1;
  return (size_t) got < len ? 1 : 0;
}

/* The ring's bytes [pos, pos+len): position p is at ring offset
 * p mod ring_size (a range may wrap around the ring's end). The v1 log's
 * tail past moved, and the queue's records (version 2), which the ring
 * numbers apart from the log file. */
static int
ring_read_ring_bytes (const struct ring_recovery *rc, unsigned char *buf,
                      size_t len, uint64_t pos)
{
  const uint64_t R = rc->ring.ring_size;
  while (len > 0) {
    uint64_t slot = pos % R;
    size_t n = R - slot < len ? (size_t) (R - slot) : len;
    int r = ring_pread (rc->ring_fd, buf, n, WTLOG_RING_HEADER_SIZE + slot);
    if (r != 0)
      return r;
    buf += n;
    len -= n;
    pos += n;
  }
  return 0;
}

/* Reads the log's bytes [pos, pos+len) as the plugin left them: below
 * moved from the log file, from moved on from the ring, where position p
 * is at ring offset p mod ring_size (a range may wrap around the ring's
 * end).  The caller keeps the range within one lap of the ring.  0, 1
 * when a file ends first, -1 on an error. */
static int
ring_read_log_bytes (const struct ring_recovery *rc, unsigned char *buf,
                     size_t len, uint64_t pos)
{
  if (pos < rc->ring.moved) {
    uint64_t below = rc->ring.moved - pos;
    size_t n = below < len ? (size_t) below : len;
    int r = ring_pread (rc->log_fd, buf, n, pos);
    if (r != 0)
      return r;
    buf += n;
    len -= n;
    pos += n;
  }
  return ring_read_ring_bytes (rc, buf, len, pos);
}

/* Whether the part of a record of size bytes at pos that is to come from
 * the ring fits in one lap of it: more cannot be there at once. */
static bool
ring_holds (const struct ring_recovery *rc, uint64_t pos, uint64_t size)
{
  uint64_t from = pos > rc->ring.moved ? pos : rc->ring.moved;
  return pos + size <= from || pos + size - from <= rc->ring.ring_size;
}

static int
ring_reserve (struct ring_recovery *rc, size_t size)
{
  if (size <= rc->cap)
    return 0;
  unsigned char *nb = realloc (rc->buf, size);
  if (!nb)
    return wtlog_fail (rc->err, rc->errlen, "%s: malloc: %m", rc->log_path);
  rc->buf = nb;
  rc->cap = size;
  return 0;
}

/* Reads len bytes of the log from pos on, through read: from the ring
 * (ring_read_log_bytes) or from the log file alone (ring_read_file_bytes). */
typedef int ring_reader (const struct ring_recovery *rc, unsigned char *buf,
                         size_t len, uint64_t pos);

static int
ring_read_file_bytes (const struct ring_recovery *rc, unsigned char *buf,
                      size_t len, uint64_t pos)
{
  return ring_pread (rc->log_fd, buf, len, pos);
}

/* The record the log lacks at rc->end, into rc->buf, read through read: 1
 * when there is one that a reader would accept there (fixed part, size
 * within one ring lap when it comes from the ring, the next seq, CRC), 0
 * when not, -1 on an error. */
static int
ring_candidate_from (struct ring_recovery *rc, struct wtlog_record *rec,
                     ring_reader *read, bool from_ring)
{
  char why[160];
  int r;
  if (ring_reserve (rc, WTLOG_FIXED_SIZE) == -1)
    return -1;
  r = read (rc, rc->buf, WTLOG_FIXED_SIZE, rc->at);
  if (r != 0)
    return r == 1 ? 0 : ring_log_fail (rc, "read");
  wtlog_fixed_decode (rc->buf, rec);
  /* The fixed part's check bounds the size (a multiple of 8, at least the
   * fixed part, at most the largest record) before it is allocated. */
  if (wtlog_fixed_check (&rc->log, rc->last_seq, rc->buf, rec, why, sizeof why)
      || (from_ring && !ring_holds (rc, rc->at, rec->size)))
    return 0;
  if (ring_reserve (rc, rec->size) == -1)
    return -1;
  r = read (rc, rc->buf + WTLOG_FIXED_SIZE, rec->size - WTLOG_FIXED_SIZE,
            rc->at + WTLOG_FIXED_SIZE);
  if (r != 0)
    return r == 1 ? 0 : ring_log_fail (rc, "read");
  return wtlog_record_crc (rc->buf, rec->size) == rec->crc;
}

/* The record at rc->end from the ring, or else from the log file: the
 * plugin writes a large record straight into the log, never into the ring,
 * so one may be whole in the file after records the ring still holds.
 * The file holds nothing else after the log's good records but zeroes and
 * this run's own bytes (the plugin truncates the log when it starts), so
 * a record there with the next seq and a good CRC is that record. */
static int
ring_candidate (struct ring_recovery *rc, struct wtlog_record *rec)
{
  int r = ring_candidate_from (rc, rec, ring_read_log_bytes, true);
  if (r != 0)
    return r;
  return ring_candidate_from (rc, rec, ring_read_file_bytes, false);
}

/* Appends the candidate record in rc->buf to the log. */
static int
ring_put_record (struct ring_recovery *rc, const struct wtlog_record *rec)
{
  if (wt_pwrite_full (rc->log_fd, rc->buf, rec->size, rc->end) == -1)
    return ring_log_fail (rc, "write");
  if (rc->recovered++ == 0)
    rc->first_seq = rec->seq;
  rc->end += rec->size;
  rc->last_seq = rec->seq;
  rc->closed = rec->type == WTLOG_CLOSE && rec->conn == 0;
  return 0;
}

/* Puts the ring's records into the log, one after another from its end,
 * until the first that is not sound or the final CLOSE. */
static int
ring_copy_records (struct ring_recovery *rc)
{
  struct wtlog_record rec;
  while (!rc->closed) {
    rc->at = rc->end;
    int r = ring_candidate (rc, &rec);
    if (r <= 0)
      return r;
    if (ring_put_record (rc, &rec) == -1)
      return -1;
  }
  return 0;
}

/* The queue's layout: the record at ring position rc->at is one the log
 * file holds already (moved into it, without its payload, just before the
 * plugin was killed and said so): its seq is not past the log's, and it
 * is whole in the ring (size and CRC).  Then rc->at steps over it. */
static bool
ring_queue_skip (struct ring_recovery *rc)
{
  struct wtlog_record rec;
  if (ring_read_ring_bytes (rc, rc->buf, WTLOG_FIXED_SIZE, rc->at) != 0)
    return false;
  wtlog_fixed_decode (rc->buf, &rec);
  if (rec.seq == 0 || rec.seq > rc->last_seq || rec.size < WTLOG_FIXED_SIZE
      || rec.size % 8 != 0 || !ring_holds (rc, rc->at, rec.size)
      || ring_reserve (rc, rec.size) == -1
      || ring_read_ring_bytes (rc, rc->buf, rec.size, rc->at) != 0
      || wtlog_record_crc (rc->buf, rec.size) != rec.crc)
    return false;
  rc->at += rec.size;
  return true;
}

/* The queue's layout: the ring's records from M on, after those the log
 * file holds, go into the log with their payloads (records the plugin had
 * not applied onto the image yet: wtrack replay onto the image applies
 * them), until the first that is not sound or the final CLOSE. */
static int
ring_queue_records (struct ring_recovery *rc)
{
  struct wtlog_record rec;
  if (ring_reserve (rc, WTLOG_FIXED_SIZE) == -1)
    return -1;
  rc->at = rc->ring.moved;
  while (ring_queue_skip (rc))
    ;
  while (!rc->closed) {
    int r = ring_candidate_from (rc, &rec, ring_read_ring_bytes, true);
    if (r <= 0)
      return r;
    if (ring_put_record (rc, &rec) == -1)
      return -1;
    rc->at += rec.size;
  }
  return 0;
}

static bool
ring_all_zero (const unsigned char *p, size_t n)
{
  return n == 0 || (p[0] == 0 && memcmp (p, p + 1, n - 1) == 0);
}

/* Whether the log file holds only zeroes from rc->end to its end (space
 * the plugin allocated ahead, or the zeroes after a partly filled block
 * the mover wrote): 1, 0, or -1 on an error. */
static int
ring_log_tail_is_zero (struct ring_recovery *rc)
{
  if (ring_reserve (rc, WTLOG_RING_ZERO_CHUNK) == -1)
    return -1;
  for (uint64_t pos = rc->end;; ) {
    ssize_t got = wt_pread_full (rc->log_fd, rc->buf, WTLOG_RING_ZERO_CHUNK, pos);
    if (got < 0)
      return ring_log_fail (rc, "read");
    if (!ring_all_zero (rc->buf, (size_t) got))
      return 0;
    if ((size_t) got < WTLOG_RING_ZERO_CHUNK)
      return 1;
    pos += (uint64_t) got;
  }
}

/* Cuts the log after its last record and makes it durable.  With records
 * put in from the ring, what followed them in the file is the plugin's
 * (zeroes allocated ahead, a block the mover wrote before the kill): cut.
 * With none, only zeroes are cut: anything else after the log's good
 * records is a torn log's evidence, which the ring cannot explain (the
 * mover writes the file only with bytes the ring held), so it is kept. */
static int
ring_cut_log (struct ring_recovery *rc)
{
  struct stat st;
  if (fstat (rc->log_fd, &st) == -1)
    return ring_log_fail (rc, "stat");
  bool cut = (uint64_t) st.st_size > rc->end;
  if (cut && rc->recovered == 0) {
    int zero = ring_log_tail_is_zero (rc);
    if (zero != 1)
      return zero;
  }
  if (cut && ftruncate (rc->log_fd, (off_t) rc->end) == -1)
    return ring_log_fail (rc, "ftruncate");
  if ((cut || rc->recovered > 0) && fdatasync (rc->log_fd) == -1)
    return ring_log_fail (rc, "fdatasync");
  return 0;
}

/* The log holds all the ring had for it: the ring goes, so that the next
 * open finds nothing to do.  Another recovery may have removed it first. */
static int
ring_remove (struct ring_recovery *rc)
{
  if (unlink (rc->ring_path) == -1 && errno != ENOENT)
    return wtlog_fail (rc->err, rc->errlen, "%s: unlink: %m", rc->ring_path);
  return 0;
}

static int
ring_open_log (struct ring_recovery *rc)
{
  rc->log_fd = open (rc->log_path, O_RDWR | O_CLOEXEC);
  if (rc->log_fd < 0)
    return ring_log_fail (rc, "open");
  return 0;
}

/* The steps of wtlog_ring_recover once the ring is locked. */
static int
ring_recover_locked (struct ring_recovery *rc)
{
  if (ring_read_header (rc) == -1 || ring_open_log (rc) == -1
      || ring_scan_log (rc) == -1 || ring_check_run (rc) == -1)
    return -1;
  bool queue = rc->ring.version == WTLOG_RING_VERSION_QUEUE;
  if (!rc->closed
      && ((queue ? ring_queue_records (rc) : ring_copy_records (rc)) == -1
          || ring_cut_log (rc) == -1))
    return -1;
  if (ring_remove (rc) == -1)
    return -1;
  if (rc->recovered == 0)
    return 0;
  snprintf (rc->err, rc->errlen, "%s: completed from %s: %" PRIu64
            " record%s, seq %" PRIu64 " to %" PRIu64 ", up to byte %" PRIu64,
            rc->log_path, rc->ring_path, rc->recovered,
            rc->recovered == 1 ? "" : "s", rc->first_seq, rc->last_seq, rc->end);
  return 1;
}

int
wtlog_ring_recover (const char *log_path, char *err, size_t errlen)
{
  struct ring_recovery rc = {
    .log_path = log_path, .ring_fd = -1, .log_fd = -1, .err = err, .errlen = errlen,
  };
  int ret;
  if (errlen > 0)
    err[0] = '\0';
  if (!(rc.ring_path = wtlog_ring_path (log_path)))
    return wtlog_fail (err, errlen, "%s: malloc: %m", log_path);
  ret = ring_open_locked (&rc);
  if (ret == 1)
    ret = ring_recover_locked (&rc);
  if (ret == 0 && errlen > 0)
    err[0] = '\0';             /* the message of an open that found no ring */
  if (rc.log_fd >= 0)
    close (rc.log_fd);
  if (rc.ring_fd >= 0)
    close (rc.ring_fd);         /* and with it the lock */
  free (rc.buf);
  free (rc.ring_path);
  return ret;
}

/* Declared in wtlog.h, defined here: reading a log completes it from its
 * ring first, and the ring is the one part of the format that knows both
 * files (so wtlog.c does not depend on this file). */
struct wtlog_reader *
wtlog_reader_open (const char *path, struct wtlog_header *h, char *err,
                   size_t errlen)
{
  /* A plugin killed while its newest records were only in the ring left
   * them there: put them in the log first, so every tool reads the same
   * log.  The recovery's own note (on 1) is not the caller's business. */
  char rerr[1024];
  if (wtlog_ring_recover (path, rerr, sizeof rerr) == -1) {
    snprintf (err, errlen, "%s", rerr);
    return NULL;
  }
  return wtlog_reader_open_plain (path, h, err, errlen);
}
