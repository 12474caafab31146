/* writes.wtlog.ring: where the plugin puts each record before a mover
 * thread copies it into writes.wtlog (doc/formats.md).  If nbdkit is
 * killed, the newest records are only there; wtlog_ring_recover puts them
 * into the log, and wtlog_reader_open calls it before it reads a log.
 *
 * The plugin encodes the header with wtlog_ring_header_encode, holds
 * flock(LOCK_EX) on the ring file while it runs, and updates the moved
 * field in place (at WTLOG_RING_OFF_MOVED) after each copy. */
#ifndef WT_WTLOG_RING_H
#define WT_WTLOG_RING_H

#include <stddef.h>
#include <stdint.h>

#define WTLOG_RING_SUFFIX ".ring"
#define WTLOG_RING_MAGIC "WTRING\0\n"
#define WTLOG_RING_MAGIC_LEN 8
#define WTLOG_RING_VERSION 1
/* The queue's layout (plugin stage=on with data=off): the log file holds
 * the ring's records without their payloads, at other positions, and the
 * ring's positions are its own (doc/formats.md). */
#define WTLOG_RING_VERSION_QUEUE 2
#define WTLOG_RING_HEADER_SIZE 4096
/* ring_size is a multiple of this (and not 0). */
#define WTLOG_RING_ALIGN 4096

/* Byte offsets of the header's fields; the rest of the header is zero. */
#define WTLOG_RING_OFF_MAGIC 0
#define WTLOG_RING_OFF_VERSION 8
#define WTLOG_RING_OFF_HEADER_SIZE 12
#define WTLOG_RING_OFF_RING_SIZE 16
#define WTLOG_RING_OFF_RUN_ID 24
#define WTLOG_RING_OFF_MOVED 40
#define WTLOG_RING_FIELDS_END 48

struct wtlog_ring_header {
  uint32_t version;             /* WTLOG_RING_VERSION or _QUEUE (0: the first) */
  uint64_t ring_size;           /* R: bytes of the ring after the header */
  uint8_t run_id[16];           /* the run_id of the log's header */
  /* M: version 1, every log byte below it is in the log file; version 2,
   * the ring position from which the ring holds the records that may not
   * be in the log file (those before it are, without payloads). */
  uint64_t moved;
};

/* The whole header (magic, version and header size included). */
void wtlog_ring_header_encode (const struct wtlog_ring_header *h,
                               unsigned char buf[WTLOG_RING_HEADER_SIZE]);
/* Returns 0, or -1 with a message in err naming the field that is wrong
 * (no file name: the caller puts it in front). */
int wtlog_ring_header_decode (const unsigned char buf[WTLOG_RING_HEADER_SIZE],
                              struct wtlog_ring_header *h, char *err,
                              size_t errlen);

/* log_path with ".ring" appended, malloc'd; NULL when out of memory. */
char *wtlog_ring_path (const char *log_path);

/* Completes the log at log_path from its ring file, if a killed plugin
 * left one: the records the ring holds after the log's last good record,
 * each checked as a reader checks it and in seq order, are written into
 * the log, which is then cut after the last one and synced, and the ring
 * file is removed.  Returns
 *   0: nothing to do (no ring file; the ring is locked by a live plugin,
 *      in this process or another; the log is already closed; the ring
 *      holds no record the log lacks), the log left as it was but for a
 *      zero tail cut off;
 *   1: records were put into the log from the ring; err holds a note that
 *      says how many, which callers may show;
 *  -1: err says what failed and nothing was removed (a bad ring header,
 *      a ring of another run, a log that cannot be opened for writing, an
 *      I/O error).  A failure after some records were written leaves them
 *      in the log, whole, and the ring in place: a later call goes on. */
int wtlog_ring_recover (const char *log_path, char *err, size_t errlen);

#endif
