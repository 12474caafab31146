/* The dm-log-writes log format (Linux drivers/md/dm-log-writes.c; QEMU's
 * blklogwrites driver writes the same), read and written from its
 * description (doc/formats.md "dm-log-writes"):
 *
 *   sector 0: super block: u64 magic 0x6a736677736872, u64 version 1,
 *     u64 entry count, u32 sector size; the rest of the sector zero
 *   then each entry: one sector with u64 sector, u64 sector count, u64
 *     flags, u64 data length, then zeroes, or a MARK's text (data length
 *     bytes, inline in the same sector); then, unless DISCARD, the written
 *     data: sector count sectors
 *
 * All integers little-endian; sectors and counts are in units of the super
 * block's sector size. */
#ifndef WTC_INTERCHANGE_DMLOG_FORMAT_H
#define WTC_INTERCHANGE_DMLOG_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#define WTC_DMLOG_MAGIC 0x6a736677736872ull
#define WTC_DMLOG_VERSION 1
#define WTC_DMLOG_SUPER_SIZE 28
#define WTC_DMLOG_ENTRY_SIZE 32

enum wtc_dmlog_flag {
  WTC_DMLOG_FLUSH = 1,
  WTC_DMLOG_FUA = 2,
  WTC_DMLOG_DISCARD = 4,
  WTC_DMLOG_MARK = 8,
  WTC_DMLOG_METADATA = 16,
};
#define WTC_DMLOG_FLAGS_ALL 31ull

struct wtc_dmlog_entry {
  uint64_t index;               /* 0, 1, ... */
  uint64_t log_offset;          /* byte of its entry sector in the log */
  uint64_t sector, nr_sectors, flags, data_len;
  const unsigned char *mark;    /* MARK: data_len bytes of text */
  const unsigned char *data;    /* nr_sectors sectors, or NULL (DISCARD) */
  uint64_t data_bytes;
};

/* Reader. */
struct wtc_dmlog_reader;
struct wtc_dmlog_reader *wtc_dmlog_reader_open (const char *path, GError **error);
uint32_t wtc_dmlog_reader_sector_size (const struct wtc_dmlog_reader *r);
uint64_t wtc_dmlog_reader_count (const struct wtc_dmlog_reader *r);
/* The most bytes of an entry's data _next reads into memory; a larger
 * entry's data is read in pieces with wtc_dmlog_reader_data. */
#define WTC_DMLOG_DATA_IN_MEMORY (16u << 20)

/* 1: the super block's count is reached; 0: e filled (valid until the
 * next call); -1: a bad or cut entry, error names its index and byte. With
 * skip_data, or when the entry holds more than WTC_DMLOG_DATA_IN_MEMORY
 * bytes, the data is not read (e->data is NULL; e->data_bytes says how
 * much there is). */
int wtc_dmlog_reader_next (struct wtc_dmlog_reader *r, struct wtc_dmlog_entry *e,
                           bool skip_data, GError **error);
/* len bytes of the data of e (the entry _next returned last), from byte
 * at of its data, into buf. */
bool wtc_dmlog_reader_data (struct wtc_dmlog_reader *r, const struct wtc_dmlog_entry *e,
                            uint64_t at, void *buf, size_t len, GError **error);
/* After the counted entries: whether a sound entry follows (the super block
 * is updated only now and then, so a log can hold more than it counts). */
bool wtc_dmlog_reader_more (struct wtc_dmlog_reader *r);
/* Back to the first entry. */
void wtc_dmlog_reader_rewind (struct wtc_dmlog_reader *r);
void wtc_dmlog_reader_close (struct wtc_dmlog_reader *r);

/* Writer: entries appended, the super block written at close. */
struct wtc_dmlog_writer;
struct wtc_dmlog_writer *wtc_dmlog_writer_open (const char *path, uint32_t sector_size,
                                                GError **error);
/* data: nr_sectors sectors, or NULL for zeroes (left a hole in the log) or
 * for an entry without data (DISCARD, FLUSH). */
bool wtc_dmlog_write_entry (struct wtc_dmlog_writer *w, uint64_t flags,
                            uint64_t sector, uint64_t nr_sectors,
                            const void *data, GError **error);
/* The bytes of MARK text an entry sector holds. */
size_t wtc_dmlog_mark_room (const struct wtc_dmlog_writer *w);
/* A MARK; text longer than wtc_dmlog_mark_room is cut (the caller warns). */
bool wtc_dmlog_write_mark (struct wtc_dmlog_writer *w, const char *text,
                           GError **error);
uint64_t wtc_dmlog_writer_count (const struct wtc_dmlog_writer *w);
bool wtc_dmlog_writer_close (struct wtc_dmlog_writer *w, GError **error);
void wtc_dmlog_writer_abort (struct wtc_dmlog_writer *w);

#endif
