/* The manifest: what the files must contain and where they are on the disk.
 * Binary layout (little-endian; doc/formats.md "The manifest", and
 * doc/design.md "The manifest" for the choices in it):
 *
 *   header, 40 bytes: magic "WTMANIF1", u32 version = 1, u32 sector size,
 *     u32 hash id, u32 file count, u32 op count, u32 checkpoint (0 = final),
 *     u32 flags (1 COLD: read back by a freshly booted kernel), u32 reserved = 0
 *   file count times:
 *     u32 id, u32 path length, u64 inode, u64 size, u32 extent count,
 *     u32 error (cold: the errno opening the file failed with, else 0)
 *     (32 bytes); the path (no NUL) padded to 8 bytes;
 *     extents, 32 bytes each: u64 logical, u64 physical, u64 length,
 *       u32 flags, u32 reserved = 0;
 *     ceil(size / 512) u64 expected sector hashes (the last sector zero-padded
 *       past the end of the file); then as many u32 op numbers (0: no op
 *       wrote the sector), padded to 8 bytes
 *   op count times, 32 bytes: u64 guest ns, u32 file id, u32 kind,
 *     u64 offset, u64 length (op number N is the N-th entry, from 1)
 *   trailer, 8 bytes: u32 CRC32C of every byte before it, magic "WTME"
 */
#ifndef WT_MANIFEST_H
#define WT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WTMF_MAGIC "WTMANIF1"
#define WTMF_TRAILER_MAGIC "WTME"
#define WTMF_VERSION 1
#define WTMF_HEADER_SIZE 40
#define WTMF_FILE_FIXED 32
#define WTMF_EXTENT_SIZE 32
#define WTMF_OP_SIZE 32
#define WTMF_TRAILER_SIZE 8
#define WTMF_MAX_PATH 4096

/* Header flags. A cold manifest is the disk as a freshly booted kernel
 * reads it: hashes are what the files read, not what they must hold; it has
 * no ops, a file's error and each sector's u32 carry errnos instead. */
enum wtmf_flag {
  WTMF_FLAG_COLD = 1,
};
#define WTMF_FLAG_ALL 1u

enum wtmf_extent_flag {
  WTMF_EXT_UNWRITTEN = 1,
  WTMF_EXT_UNMAPPABLE = 2,      /* inline, encoded or unknown: no disk bytes */
  /* FIEMAP_EXTENT_DELALLOC after the sync: the kernel holds data it never
   * wrote (no block allocated). Comes with UNMAPPABLE, so readers that
   * predate it skip the extent; check judges its sectors as lost. */
  WTMF_EXT_DELALLOC = 4,
};
#define WTMF_EXT_ALL 7u

enum wtmf_op_kind {
  WTMF_OP_MMAP_STORE = 1,
  WTMF_OP_PWRITE = 2,
  WTMF_OP_TRUNCATE = 3,
  WTMF_OP_PUNCH = 4,
  WTMF_OP_MSYNC = 5,
  WTMF_OP_FSYNC = 6,
  WTMF_OP_FALLOCATE = 7,
  WTMF_OP_MUNMAP = 8,
  WTMF_OP_DIRECT_WRITE = 9,     /* a write through O_DIRECT */
  WTMF_OP_ZERO = 10,            /* fallocate ZERO_RANGE */
  WTMF_OP_SYNC_RANGE = 11,
  WTMF_OP_FDATASYNC = 12,
  WTMF_OP_FADVISE = 13,         /* posix_fadvise DONTNEED */
  WTMF_OP_COLLAPSE = 14,        /* fallocate COLLAPSE_RANGE */
  WTMF_OP_INSERT = 15,          /* fallocate INSERT_RANGE */
  WTMF_OP_COPY = 16,            /* copy_file_range into the file */
  WTMF_OP_SYNCFS = 17,
  WTMF_OP_DROP_CACHES = 18,     /* sync, then every clean page dropped */
  WTMF_OP_CLONE = 19,           /* FICLONERANGE into the file */
  WTMF_OP_DEDUPE = 20,          /* FIDEDUPERANGE into the file */
};
#define WTMF_OP_KIND_MAX 20

struct wtmf_extent {
  uint64_t logical;
  uint64_t physical;
  uint64_t length;
  uint32_t flags;
};

struct wtmf_file {
  uint32_t id;
  char *path;                   /* from the filesystem's root: "/data/f1" */
  uint64_t inode;
  uint64_t size;
  uint32_t nextents;
  struct wtmf_extent *extents;
  uint64_t nsectors;            /* ceil(size / 512) */
  uint64_t *hashes;
  uint32_t *ops;                /* cold: the errno reading each sector, 0 */
  uint32_t error;               /* cold: the errno opening the file, 0 */
};

struct wtmf_op {
  uint64_t guest_ns;
  uint32_t file_id;
  uint32_t kind;
  uint64_t offset;
  uint64_t length;
};

struct wtmf_manifest {
  uint32_t version;
  uint32_t sector_size;
  uint32_t hash_id;
  uint32_t checkpoint;
  uint32_t flags;               /* WTMF_FLAG_* */
  uint32_t nfiles;
  struct wtmf_file *files;
  uint32_t nops;
  struct wtmf_op *ops;
  uint32_t *by_id;              /* indices into files, sorted by id */
};

const char *wtmf_op_kind_name (uint32_t kind);
uint64_t wtmf_sectors_of (uint64_t size);

/* Encoding: append to a growable buffer, then wtmf_buf_finish() adds the
 * trailer. Functions return 0, or -1 when memory ran out. */
struct wtmf_buf {
  unsigned char *p;
  size_t len;
  size_t cap;
  int failed;
};
void wtmf_buf_header (struct wtmf_buf *b, uint32_t nfiles, uint32_t nops,
                      uint32_t checkpoint);
/* A cold manifest's header: flag COLD, checkpoint 0, no ops. */
void wtmf_buf_header_cold (struct wtmf_buf *b, uint32_t nfiles);
void wtmf_buf_file (struct wtmf_buf *b, const struct wtmf_file *f);
void wtmf_buf_op (struct wtmf_buf *b, const struct wtmf_op *op);
int wtmf_buf_finish (struct wtmf_buf *b);
void wtmf_buf_free (struct wtmf_buf *b);

/* Parse one manifest at the start of buf. Returns 0 and sets *used to its
 * bytes, or -1 with err naming the field and its byte offset (relative to
 * buf). m must be released with wtmf_free() after success. */
int wtmf_parse (const unsigned char *buf, size_t len, struct wtmf_manifest *m,
                size_t *used, char *err, size_t errlen);
void wtmf_free (struct wtmf_manifest *m);

/* The file with this id, or NULL: a binary search in m->by_id, which
 * wtmf_parse builds (callers look up every file of one manifest in
 * another: a scan each was quadratic). */
const struct wtmf_file *wtmf_find_file (const struct wtmf_manifest *m,
                                        uint32_t id);

#endif
