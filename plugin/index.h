/* The index of the disk while the log is the store (data=on): which byte
 * ranges were last written by a logged WRITE (and where its data lies in the
 * log) or zeroed by a ZERO or TRIM; every other byte is the image's, as it
 * was at start.  One extent per range written, split and replaced as later
 * writes overlap it, so memory grows with the number of distinct extents
 * written (one node, 48 bytes, each), never with the size of a range: a ZERO
 * of the whole disk is one extent. */
#ifndef WTP_INDEX_H
#define WTP_INDEX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct wtp_extent;

struct wtp_index {
  pthread_rwlock_t lock;
  struct wtp_extent *root;      /* a treap ordered by start */
  uint32_t rand;                /* the treap's priorities, under lock */
  uint64_t extents;
};

#define WTP_INDEX_INIT { PTHREAD_RWLOCK_INITIALIZER, NULL, 2463534242u, 0 }

/* The nodes one update may need (the new extent and two split ones),
 * allocated before the update so that it cannot fail half way. */
struct wtp_index_spare {
  struct wtp_extent *node[3];
};

/* 0, or -1 with errno ENOMEM. */
int wtp_index_spare_get (struct wtp_index_spare *sp);
/* Frees what the update did not use. */
void wtp_index_spare_put (struct wtp_index_spare *sp);

/* [offset, offset+length) now reads as the log's bytes from log_pos on. */
void wtp_index_set_log (struct wtp_index *ix, uint64_t offset, uint64_t length,
                        uint64_t log_pos, struct wtp_index_spare *sp);
/* [offset, offset+length) now reads as zeroes. */
void wtp_index_set_zero (struct wtp_index *ix, uint64_t offset,
                         uint64_t length, struct wtp_index_spare *sp);

/* Reads the bytes the index says [offset, offset+count) holds: from log
 * (the log's bytes from position 0), zeroes, or through read_base for the
 * ranges not in the index.  0 or read_base's errno. */
int wtp_index_read (struct wtp_index *ix, void *buf, size_t count,
                    uint64_t offset, const unsigned char *log,
                    int (*read_base) (void *ctx, void *buf, size_t count,
                                      uint64_t offset),
                    void *ctx);

/* Extents in the index now. */
uint64_t wtp_index_extents (struct wtp_index *ix);
void wtp_index_free (struct wtp_index *ix);

#endif
