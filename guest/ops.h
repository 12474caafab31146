/* The ops workload's op list and its model, free of system calls so the
 * unit tests (tests/unit/test-ops.c) can hold them to a reference: the op
 * kinds, the line syntax of ops.txt (doc/ops.md), the seeded generator and
 * what each op does to a file's bytes. guest/wl-ops.c runs them. */
#ifndef WTG_OPS_H
#define WTG_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wtg_rng;

enum wtg_op_kind {
  WTG_OK_PWRITE,                /* buffered pwrite(2) */
  WTG_OK_WRITE,                 /* lseek(2) then write(2) at the position */
  WTG_OK_DWRITE,                /* pwrite(2) on an O_DIRECT descriptor */
  WTG_OK_MWRITE,                /* memcpy into the file's MAP_SHARED mapping */
  WTG_OK_MSYNC,                 /* msync of the mapping; -a: MS_ASYNC */
  WTG_OK_MUNMAP,
  WTG_OK_TRUNCATE,
  WTG_OK_FALLOC,                /* fallocate mode 0; -k: KEEP_SIZE */
  WTG_OK_FPUNCH,                /* PUNCH_HOLE | KEEP_SIZE */
  WTG_OK_FZERO,                 /* ZERO_RANGE; -k: | KEEP_SIZE */
  WTG_OK_FSYNC,
  WTG_OK_FDATASYNC,
  WTG_OK_SYNC_RANGE,            /* sync_file_range, all three flags */
  WTG_OK_FADVISE,               /* posix_fadvise DONTNEED */
  WTG_OK_FCOLLAPSE,             /* COLLAPSE_RANGE: the range leaves the file */
  WTG_OK_FINSERT,               /* INSERT_RANGE: a hole of LEN opens at OFF */
  WTG_OK_COPY_RANGE,            /* copy_file_range from src_file at src_off */
  WTG_OK_PWRITEV,               /* buffered pwritev(2) of 2 to 4 iovecs */
  WTG_OK_REFLINK,               /* ioctl FICLONERANGE from src_file at src_off */
  WTG_OK_DEDUPE,                /* ioctl FIDEDUPERANGE against src_file at src_off */
  WTG_OK_SYNCFS,                /* syncfs(2) */
  WTG_OK_DROP_CACHES,           /* sync(2), then "3" into /proc/sys/vm/drop_caches */
  WTG_OK_COUNT
};

/* Which arguments a kind's line has: OFF LEN; SIZE; none; OFF LEN1 LEN2
 * [LEN3 [LEN4]] (pwritev's iovecs). A kind that reads another file
 * (wtg_op_has_source) has "fS SRC" before its OFF LEN. */
enum wtg_op_shape { WTG_SHAPE_RANGE, WTG_SHAPE_SIZE, WTG_SHAPE_NONE, WTG_SHAPE_IOV };

#define WTG_IOV_MAX 4u

#define WTG_OPF_KEEP_SIZE 1u     /* falloc -k, fzero -k */
#define WTG_OPF_ASYNC 2u         /* msync -a */
#define WTG_OPF_PAST_EOF 4u      /* mwrite -e: store past EOF in its page too */
#define WTG_OPF_SEQUENTIAL 8u    /* dwrite -s: lseek(2) and write(2) on the O_DIRECT fd */

/* --op-weights: one weight per kind, then mwrite_eof, the weight of mapped
 * writes that cross EOF with -e, and dwrite_seq, of O_DIRECT writes at
 * the file position (-s). */
#define WTG_W_MWRITE_EOF WTG_OK_COUNT
#define WTG_W_DWRITE_SEQ (WTG_OK_COUNT + 1)
#define WTG_W_COUNT (WTG_OK_COUNT + 2)

struct wtg_op {
  uint32_t kind;                /* enum wtg_op_kind */
  uint32_t file;                /* from 1 */
  uint32_t flags;               /* WTG_OPF_* */
  uint64_t off;                 /* truncate: the new size */
  uint64_t len;
  uint32_t src_file;            /* copy_range, reflink, dedupe: from this file (from 1) */
  uint64_t src_off;             /* copy_range, reflink, dedupe: at this offset */
  uint32_t niov;                /* pwritev: iovecs, 2..WTG_IOV_MAX */
  uint64_t iov[WTG_IOV_MAX];    /* pwritev: their lengths, summing to len */
};

const char *wtg_op_name (uint32_t kind);
enum wtg_op_shape wtg_op_shape (uint32_t kind);
/* The flag letter a kind takes ('k', 'a', 'e', 's'), or 0. */
char wtg_op_flag_letter (uint32_t kind);
/* Whether a kind's line names a source file and offset (copy_range,
 * reflink, dedupe). */
bool wtg_op_has_source (uint32_t kind);
/* Whether a kind stores bytes of its own (the writes). */
bool wtg_op_writes_data (uint32_t kind);

/* One line of ops.txt, without a newline: "f1 pwrite 0x2000 0x800". */
void wtg_op_format (const struct wtg_op *op, char *out, size_t cap);

/* Limits a parsed or generated op must keep: files 1..files, every byte
 * it names below size_limit. */
struct wtg_op_limits {
  uint32_t files;
  uint64_t size_limit;
};

/* Parse one line (blank and "#" lines give 0 and *is_op false). Returns 0,
 * or -1 with *column (from 1) and err saying what is wrong there. */
int wtg_op_parse (const char *line, const struct wtg_op_limits *lim,
                  struct wtg_op *op, bool *is_op, unsigned *column,
                  char *err, size_t errlen);
/* A whole ops file's text: the ops in *ops (malloc'd), or -1 with err
 * naming the line and column. */
int wtg_ops_parse_text (const char *text, const struct wtg_op_limits *lim,
                        struct wtg_op **ops, uint64_t *nops, char *err,
                        size_t errlen);
/* --ops-file PATH read (at most 16 MiB of text) and parsed: 0, or -1 with
 * err saying why (guest/wl-ops.c; check-args calls it on the host too). */
int wtg_ops_load_file (const char *path, const struct wtg_op_limits *lim,
                       struct wtg_op **ops, uint64_t *nops, char *err,
                       size_t errlen);

/* --op-weights "name=W,..." (or ':' between): the names given replace the defaults in
 * weights[WTG_W_COUNT] (the others keep theirs; "all=0" first to run only
 * the named ones). Returns 0, or -1 with err (an unknown name, a bad
 * weight, every weight zero). */
void wtg_op_default_weights (uint32_t *weights);
int wtg_op_parse_weights (const char *spec, uint32_t *weights, char *err,
                          size_t errlen);

/* The model of one file: its bytes up to cap (every byte at or past size
 * is zero), and the op that last wrote each sector (0: none). */
struct wtg_file_model {
  unsigned char *image;
  uint32_t *sector_op;
  uint64_t size;
  uint64_t cap;                 /* bytes image holds, a multiple of 512 */
};

/* What an op does to the model, when the call succeeded. data: the bytes
 * a write stores (len of them; for copy_range and reflink the source's
 * bytes, op->len being what the call copied; dedupe stores none: the
 * kernel shares blocks only where the bytes are equal); number: its op
 * number for sector_op.
 * page: the page size (a mapped write reaches the page holding EOF only).
 * Returns the bytes of the file the op stored or zeroed. The caller keeps
 * ops within cap (wtg_op_fits). */
uint64_t wtg_op_apply (struct wtg_file_model *m, const struct wtg_op *op,
                       const unsigned char *data, uint32_t number,
                       uint64_t page);
/* Whether op, applied to a file of size, stays within the size limit
 * (finsert grows the file by its length wherever it is). */
bool wtg_op_fits (const struct wtg_op *op, uint64_t size, uint64_t size_limit);
/* The bytes a mapped write at off..off+len stores: up to EOF, or with
 * past_eof (-e) up to the end of the page holding EOF; 0 when none. */
uint64_t wtg_mwrite_reach (uint64_t size, uint64_t off, uint64_t len,
                           uint64_t page, bool past_eof);

/* The generator: n ops over files of at most size_limit bytes each, drawn
 * so that consecutive ops meet (near the last op, on page and block edges,
 * at EOF). It follows the files' sizes as the ops would leave them. */
struct wtg_op_gen_params {
  uint32_t files;
  uint64_t size_limit;
  uint64_t page;
  const uint32_t *weights;      /* WTG_W_COUNT of them */
};
int wtg_ops_generate (struct wtg_rng *rng, const struct wtg_op_gen_params *p,
                      uint64_t n, struct wtg_op **ops);

/* How often op kinds meet on a page (guest/ops-meet.c): count[A][B] is
 * how many ops of kind B touched a page whose last toucher was of kind A
 * (once per op and A); chains, how many mwrites touched a page that saw,
 * since its last write, an mwrite then a range op (write / mwrite / range
 * op / mwrite, other ops between allowed). Only ops
 * with a range touch pages (their own range, a copy's source, the pages a
 * truncate, collapse or insert moves or cuts). */
struct wtg_op_meet {
  uint64_t page;
  uint32_t files;
  uint64_t pages;               /* per file: the size limit in pages */
  uint8_t (*history)[2];        /* files x pages: the last kind + 1, the chain's stage */
  uint64_t count[WTG_OK_COUNT][WTG_OK_COUNT];
  uint64_t chains;
};
int wtg_op_meet_init (struct wtg_op_meet *mt, uint32_t files, uint64_t size_limit,
                      uint64_t page);
void wtg_op_meet_free (struct wtg_op_meet *mt);
/* op ran (not refused, not skipped) on its file, of old_size before and
 * new_size after. */
void wtg_op_meet_note (struct wtg_op_meet *mt, const struct wtg_op *op, uint64_t old_size,
                       uint64_t new_size);

#endif
