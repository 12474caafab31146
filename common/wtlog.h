/* writes.wtlog: every request the disk received (doc/formats.md).
 *
 * Writing: wtlog_encode() lays out one record as an iovec, ready for
 * wt_pwritev_full() (fileio.h) at a position the caller reserved; wtlog_writer_* is a simple
 * sequential writer for tools (import, tests).
 * Reading: wtlog_reader_open / _next / _close; _next returns 0 with a record,
 * 1 at the end, -1 on a torn or corrupt record (see wtlog_reader_status).
 * Opening completes a killed plugin's log from its ring file first
 * (wtlog-ring.h). */
#ifndef WT_WTLOG_H
#define WT_WTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define WTLOG_MAGIC "WTLOG\0\r\n"
#define WTLOG_MAGIC_LEN 8
#define WTLOG_VERSION 1
#define WTLOG_HEADER_SIZE 4096
#define WTLOG_FIXED_SIZE 64
#define WTLOG_CREATOR_LEN 64
/* The largest record, payload and padding included, that writers produce
 * and readers accept (doc/design.md, "Limits of what the readers accept").
 * nbdkit passes requests of at most 64 MiB, whose record with data and
 * hashes is 65 MiB; the bound leaves room above that and keeps the 32-bit
 * size field, and what a corrupt size makes a reader allocate, far from
 * 4 GiB.  Longer requests (a ZERO, an imported write) must be split. */
#define WTLOG_MAX_RECORD_SIZE (128u << 20)

enum wtlog_type {
  WTLOG_WRITE = 1,
  WTLOG_ZERO = 2,
  WTLOG_TRIM = 3,
  WTLOG_FLUSH = 4,
  WTLOG_CHANNEL = 5,
  WTLOG_OPEN = 6,
  WTLOG_CLOSE = 7,
  /* The disk's bytes of a range (whole sectors) as the records before it
   * leave them, kept before a change overwrites bytes an IN_IMAGE record
   * put in the image: it does not change the disk (doc/formats.md). */
  WTLOG_SAVED = 8,
};
#define WTLOG_TYPE_MAX WTLOG_SAVED

enum wtlog_record_flag {
  WTLOG_F_FUA = 1,
  WTLOG_F_MAY_TRIM = 2,
  WTLOG_F_FAST_ZERO = 4,
  WTLOG_F_DATA = 8,
  WTLOG_F_FAILED = 16,
  /* The change (WRITE, ZERO, TRIM) reached the image before its record
   * reached the log: the plugin's queue (stage=on, data=off) applies each
   * record onto the image as it moves it into the log without its bytes.
   * An apply onto that image skips it. */
  WTLOG_F_APPLIED = 32,
  /* data=on: a whole-sector WRITE whose request wrote the image itself, so
   * its record (APPLIED, no DATA, hashes kept) holds no bytes: the first
   * SAVED record after it that covers a byte holds that byte, else the
   * run's final image does (image-resolve.h). */
  WTLOG_F_IN_IMAGE = 64,
};
#define WTLOG_F_ALL 127u

enum wtlog_header_flag {
  WTLOG_H_DATA = 1,
  WTLOG_H_NOTIME = 2,
  WTLOG_H_STORE = 4,
};

/* OPEN records name the export in their offset field. */
#define WTLOG_EXPORT_DISK 0
#define WTLOG_EXPORT_CHANNEL 1

struct wtlog_header {
  uint32_t version;
  uint32_t header_size;
  uint32_t sector_size;
  uint32_t hash_id;
  uint32_t flags;
  uint64_t disk_size;
  uint64_t channel_size;
  uint64_t start_realtime_ns;
  uint64_t start_monotonic_ns;
  uint8_t run_id[16];
  char creator[WTLOG_CREATOR_LEN + 1];
};

struct wtlog_record {
  uint32_t size;
  uint32_t crc;
  uint16_t type;
  uint16_t flags;
  uint32_t conn;
  uint32_t err;
  uint64_t seq;
  uint64_t t_start;
  uint64_t t_end;
  uint64_t offset;
  uint64_t length;
  /* Filled by the reader; valid until the next wtlog_reader_next(). */
  uint64_t log_offset;          /* byte offset of the record in the log */
  uint64_t nhashes;             /* 0 unless the record carries hashes */
  const uint64_t *hashes;       /* hash of sector first_sector + i */
  const unsigned char *data;    /* the request's bytes, or NULL */
};

/* Header. */
void wtlog_header_init (struct wtlog_header *h, uint64_t disk_size,
                        uint64_t channel_size, bool data, const char *creator);
void wtlog_header_encode (const struct wtlog_header *h,
                          unsigned char buf[WTLOG_HEADER_SIZE]);
/* Returns 0, or -1 with a message in err naming the field that is wrong. */
int wtlog_header_decode (const unsigned char buf[WTLOG_HEADER_SIZE],
                         struct wtlog_header *h, char *err, size_t errlen);

/* Records. */
const char *wtlog_type_name (uint16_t type);
/* Sectors touched by [offset, offset+length): the hash count of a WRITE. */
uint64_t wtlog_sectors_touched (uint64_t offset, uint64_t length);
/* Whether a record of this type and flags carries hashes / data. */
bool wtlog_has_hashes (uint16_t type, uint16_t flags);
bool wtlog_has_data (uint16_t type, uint16_t flags);
/* The record's total size, payload and padding included. */
uint64_t wtlog_record_size (uint16_t type, uint16_t flags, uint64_t offset,
                            uint64_t length);

/* Whether a record of this size may be written and read. */
bool wtlog_record_size_ok (uint64_t size);

/* The checks a reader makes of each record, for those that find records
 * elsewhere than in a log file (wtlog-ring.c):
 * wtlog_fixed_decode fills rec's stored fields from the fixed part at p;
 * wtlog_fixed_check checks every field of it that does not need the
 * payload against the log's header h and the seq before (last_seq):
 * NULL when sound, else what is wrong (in why, or a constant string);
 * wtlog_record_crc is the CRC32C of the whole record at p (size bytes,
 * size >= WTLOG_FIXED_SIZE) with its crc field taken as zero. */
void wtlog_fixed_decode (const unsigned char p[WTLOG_FIXED_SIZE],
                         struct wtlog_record *rec);
const char *wtlog_fixed_check (const struct wtlog_header *h, uint64_t last_seq,
                               const unsigned char p[WTLOG_FIXED_SIZE],
                               const struct wtlog_record *rec, char *why,
                               size_t whylen);
uint32_t wtlog_record_crc (const unsigned char *p, size_t size);

/* Lay out rec (its size and crc are computed here) as up to 4 iovecs:
 * fixed part (encoded into fixed[]), hashes, data, zero padding.
 * hashes must hold wtlog_sectors_touched() entries (in host order) when the
 * record carries hashes, data the request's bytes when it carries data.
 * The log stores the hashes little-endian: the iovec points at the caller's
 * array on a little-endian host, and at a swapped copy in a buffer of the
 * calling thread on a big-endian one (valid until its next encode).
 * Returns iovcnt, or -1 with errno EFBIG when the record would exceed
 * WTLOG_MAX_RECORD_SIZE (ENOMEM: no room for that copy; nothing is encoded
 * then). */
int wtlog_encode (struct wtlog_record *rec, const uint64_t *hashes,
                  const void *data, unsigned char fixed[WTLOG_FIXED_SIZE],
                  struct iovec iov[4]);

/* Sequential writer: header at open, records appended with seq 1, 2, ... */
struct wtlog_writer;
struct wtlog_writer *wtlog_writer_open (const char *path,
                                        const struct wtlog_header *h,
                                        char *err, size_t errlen);
/* Assigns rec->seq; returns 0 or -1 with errno set (EFBIG: the record is
 * larger than WTLOG_MAX_RECORD_SIZE; nothing is written and seq is not
 * used). */
int wtlog_writer_append (struct wtlog_writer *w, struct wtlog_record *rec,
                         const uint64_t *hashes, const void *data);
/* Returns 0 or -1 with errno set (fdatasync or close failed). */
int wtlog_writer_close (struct wtlog_writer *w);

/* Reader. */
struct wtlog_reader;

struct wtlog_status {
  bool closed;          /* the final CLOSE record (conn 0) was read */
  bool torn;            /* reading stopped at a bad record */
  uint64_t bad_offset;  /* byte offset of the bad record */
  uint64_t last_seq;    /* seq of the last good record, 0 if none */
  uint64_t records;     /* good records read */
  uint64_t file_size;
  uint64_t zero_tail;   /* zero bytes after the last record of an unclosed
                           log: space the plugin allocated ahead */
  char error[256];      /* what is wrong at bad_offset */
};

/* Returns NULL with err set when the file cannot be opened or its header is
 * bad (the message names the file and the field).  A log whose plugin was
 * killed is first completed from its ring (wtlog_ring_recover in
 * wtlog-ring.h); when that fails, so does the open, with its message.
 * Defined in wtlog-ring.c, so that wtlog.c needs nothing of the ring. */
struct wtlog_reader *wtlog_reader_open (const char *path,
                                        struct wtlog_header *h,
                                        char *err, size_t errlen);
/* wtlog_reader_open on the file as it is: no ring is looked at (the
 * recovery itself reads the log so). */
struct wtlog_reader *wtlog_reader_open_plain (const char *path,
                                              struct wtlog_header *h,
                                              char *err, size_t errlen);
/* 0: rec filled; 1: clean end of the log; -1: torn or corrupt record, or a
 * read error: wtlog_reader_status() says what and where. */
int wtlog_reader_next (struct wtlog_reader *r, struct wtlog_record *rec);
const struct wtlog_status *wtlog_reader_status (const struct wtlog_reader *r);
void wtlog_reader_close (struct wtlog_reader *r);

/* Rewrites the closed log at path without payloads: every record as it
 * was (seq, times, hashes) with WTLOG_F_DATA cleared, the header's DATA
 * and STORE flags cleared, written to PATH.strip and renamed over path.
 * Returns 0, or -1 with err set and the log as it was (a log not closed is
 * refused: its payloads may be the only copy of the disk).  No ring is
 * looked at (wtlog_reader_open_plain): a log whose ring still holds
 * records lacks its final CLOSE, and is refused. */
int wtlog_strip_data (const char *path, char *err, size_t errlen);
/* wtlog_strip_data in its two steps, for a caller that times them apart
 * (the plugin's exit): the strip up to the rename, which is durable only
 * once wtlog_sync_dir_of (path) returned 0 (-1 with errno set). */
int wtlog_strip_data_unsynced (const char *path, char *err, size_t errlen);
int wtlog_sync_dir_of (const char *path);

/* For the log's readers, writers and appliers in common/: fmt into err;
 * returns -1. */
int wtlog_fail (char *err, size_t errlen, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

#endif
