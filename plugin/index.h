/* A map of a disk's byte ranges (index.c), each pointing at a position
 * ("log") or marked "zero"; every other byte is in neither.  Used as
 * data=on's owner map (owners.c): a range whose bytes an IN_IMAGE record
 * put in the image points at that record's seq, and a range a later
 * change took is "zero".  One extent per range written in each shard it covers,
 * split and replaced as later writes overlap it, so memory grows with the
 * number of distinct extents written (one node, 48 bytes, each), never with
 * the size of a range: a ZERO of the whole disk is one extent per shard, at
 * most 65536.  Plus 8 bytes per shard for its tree's root. */
#ifndef WTP_INDEX_H
#define WTP_INDEX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct wtp_extent;

/* Shards: at most this many, of at least 64 KiB (a power of two). */
#define WTP_INDEX_MAX_SHARDS (UINT64_C (1) << 16)
#define WTP_INDEX_MIN_SHARD_SHIFT 16
/* Locks, each over every 64th shard, on its own cache line. */
#define WTP_INDEX_STRIPES 64

struct wtp_index_stripe {
  pthread_rwlock_t lock;
  uint32_t rand;                /* the treap's priorities, under lock */
} __attribute__ ((aligned (64)));

struct wtp_index {
  struct wtp_extent **roots;    /* a treap ordered by start per shard */
  uint64_t nshards;
  unsigned shard_shift;         /* shard = offset >> shard_shift */
  uint64_t extents;             /* atomic */
  struct wtp_index_stripe stripes[WTP_INDEX_STRIPES];
};

/* An index of a disk of disk_size bytes (a byte past it counts as in the
 * last shard).  0, or -1 with errno ENOMEM. */
int wtp_index_init (struct wtp_index *ix, uint64_t disk_size);

/* The nodes one update may need (in each shard it touches, the new extent,
 * and in its two end shards two split ones), allocated before the update
 * so that it cannot fail half way. */
#define WTP_INDEX_SPARE_INLINE 3
struct wtp_index_spare {
  struct wtp_extent **node;     /* inline_node, or allocated when more */
  size_t count;
  struct wtp_extent *inline_node[WTP_INDEX_SPARE_INLINE];
};

/* For an update of [offset, offset+length): 0, or -1 with errno ENOMEM. */
int wtp_index_spare_get (const struct wtp_index *ix, struct wtp_index_spare *sp,
                         uint64_t offset, uint64_t length);
/* Frees what the update did not use; a spare never got is zeroed. */
void wtp_index_spare_put (struct wtp_index_spare *sp);

/* [offset, offset+length) now reads as the log's bytes from log_pos on. */
void wtp_index_set_log (struct wtp_index *ix, uint64_t offset, uint64_t length,
                        uint64_t log_pos, struct wtp_index_spare *sp);
/* [offset, offset+length) now reads as zeroes. */
void wtp_index_set_zero (struct wtp_index *ix, uint64_t offset,
                         uint64_t length, struct wtp_index_spare *sp);

/* Reads the bytes the index says [offset, offset+count) holds: the log's
 * through read_log (length bytes from log position log_pos; when it returns
 * 1, the base holds them), zeroes, or through read_base for the ranges not
 * in the index.  0 or read_base's errno. */
int wtp_index_read (struct wtp_index *ix, void *buf, size_t count,
                    uint64_t offset,
                    int (*read_log) (void *dst, uint64_t log_pos,
                                     uint64_t length),
                    int (*read_base) (void *ctx, void *buf, size_t count,
                                      uint64_t offset),
                    void *ctx);

/* The parts of [offset, offset+length) that read from the log, in disk
 * order: *pieces (malloc'd, for the caller to free; NULL when none) and
 * *n.  0, or -1 with errno ENOMEM. */
struct wtp_index_piece { uint64_t start, end, log_pos; };
int wtp_index_list_log (struct wtp_index *ix, uint64_t offset, uint64_t length,
                        struct wtp_index_piece **pieces, size_t *n);

/* Extents in the index now. */
uint64_t wtp_index_extents (struct wtp_index *ix);
void wtp_index_free (struct wtp_index *ix);

#endif
