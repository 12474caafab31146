/* wtrack-guest: the workload binary run inside the test kernel.
 * Declarations shared by its files; see guest/main.c for the command line. */
#ifndef WTG_GUEST_H
#define WTG_GUEST_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fileio.h"
#include "manifest.h"

struct wtg_channel;

/* Exit statuses; RESULT's status= carries the same numbers. */
#define WTG_EXIT_OK 0
#define WTG_EXIT_FAILED 1       /* the workload failed (I/O error, ENOSPC, ...) */
#define WTG_EXIT_USAGE 2        /* bad command line */
#define WTG_EXIT_CHANNEL 3      /* the workload ran but its report was lost */

/* The largest MANIFEST message payload (doc/design.md "channel.bin"). */
#define WTG_MANIFEST_CHUNK (1u << 20)

struct wtg_options {
  const char *command;          /* workload or subcommand name */
  const char *dir;              /* workloads: where the files go */
  char **operands;              /* manifest: files; text/mark: words */
  int noperands;
  uint64_t seed;
  const char *channel;          /* block device */
  const char *channel_file;     /* regular file (host tests) */
  unsigned channel_timeout;     /* seconds one channel write may take */
  bool checkpoint;
  const char *fs_root;
  const char *manifest_out;
  uint64_t size;
  uint64_t chunk;
  uint32_t passes;
  uint32_t files;
  uint64_t piece;
  uint32_t windows;
  uint32_t threads;
  uint64_t ops;
  const char *ops_file;         /* ops: run the ops of this file */
  uint32_t op_weights[32];      /* ops: by enum wtg_op_kind (guest/ops.h) */
  uint32_t fsync_every;
  uint32_t fill_sync_every;      /* pwrite: syncfs after each N fill blocks */
  int status;                   /* result: --status */
  const char *error;            /* result: --error */
  const char *warm;             /* cold: --warm, the run's channel */
  const char *trace_marker;     /* workloads: MARKs also go here */
  const char *trace_head;       /* trace: init's header lines */
  uint64_t trace_max_kb;        /* trace: the text's bound */
  bool verbose;
  char args[4096];              /* the whole argv, for HELLO */
};

/* One file of a workload: its expected image (the model) and where it is. */
struct wtg_file {
  uint32_t id;                  /* from 1 */
  char *path;                   /* as the guest opens it */
  char *fs_path;                /* from the filesystem's root: "/data/f1" */
  int fd;
  uint64_t size;
  unsigned char *image;         /* size rounded up to a sector, tail zeroed */
  uint32_t *sector_op;          /* last op that wrote each sector, 0: none */
};

/* What the files must contain and which operation put it there. Op numbers
 * are handed out under the lock, so with threads only their interleaving
 * varies from run to run, never the content. */
struct wtg_model {
  struct wtg_file *files;
  uint32_t nfiles;
  struct wtmf_op *ops;
  uint32_t nops;
  uint32_t ops_cap;
  bool out_of_memory;
  uint64_t bytes_stored;
  pthread_mutex_t lock;
};

struct wtg_run {
  struct wtg_options *opt;
  struct wtg_channel *chan;
  struct wtg_model model;
  uint64_t t0_ns;
  char dir_abs[PATH_MAX];
  char mount_point[PATH_MAX];
  char mount_root[PATH_MAX];    /* the mount's root inside its filesystem */
  char fs_type[64];
  char mount_opts[512];
  uint32_t checkpoints;
  uint64_t readback_bad_sectors;
  const char *readback;         /* "match", "mismatch" or "none" */
  bool readback_taken;          /* a workload read back already */
  char extra[16384];            /* more RESULT lines from the workload */
  int kmsg_fd;                  /* the kernel's log, from the workload's start */
  uint64_t io_errors;           /* its lines about I/O errors since then */
  char io_error_first[200];
  int trace_marker_fd;          /* tracefs's trace_marker, or -1 */
  volatile int stop;            /* set on the first failure: threads quit */
  pthread_mutex_t error_lock;
  char error[512];
};

/* util.c */
uint64_t wtg_now_ns (void);
/* kmsg.c: the kernel's reports of I/O errors during the workload; finish
 * counts them and fails the run when there are any */
void wtg_kmsg_start (struct wtg_run *run);
void wtg_kmsg_finish (struct wtg_run *run);

int wtg_fail (struct wtg_run *run, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
void wtg_extra (struct wtg_run *run, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
int wtg_parse_size (const char *s, uint64_t *out);

/* rng.c: every byte and every choice comes from the seed. */
struct wtg_rng {
  uint64_t state;
};
uint64_t wtg_mix64 (uint64_t x);
void wtg_rng_init (struct wtg_rng *r, uint64_t seed, const char *purpose);
uint64_t wtg_rng_next (struct wtg_rng *r);
uint64_t wtg_rng_below (struct wtg_rng *r, uint64_t n);
void wtg_shuffle (struct wtg_rng *r, uint32_t *a, uint32_t n);
uint64_t wtg_content_key (uint64_t seed, uint32_t file_id, uint64_t generation);
void wtg_fill_keyed (unsigned char *dst, uint64_t file_off, size_t len,
                     uint64_t key);
void wtg_fill_u32 (unsigned char *dst, size_t len, uint32_t value);

/* model.c */
void wtg_model_init (struct wtg_model *m);
struct wtg_file *wtg_model_add_file (struct wtg_run *run, const char *path,
                                     uint64_t size, bool with_image);
/* Create DIR/fN (N = the next file id), empty, in the model with its
 * image; with truncate_to_size, ftruncate it to the model's size as an op. */
struct wtg_file *wtg_model_create_file (struct wtg_run *run,
                                        bool truncate_to_size);
uint32_t wtg_model_op (struct wtg_model *m, uint32_t file_id, uint32_t kind,
                       uint64_t offset, uint64_t length);
void wtg_model_free (struct wtg_model *m);

/* mountinfo.c */
int wtg_locate (struct wtg_run *run, const char *path);
int wtg_fs_path (struct wtg_run *run, const char *abs, char **out);

/* extents.c */
int wtg_extents (int fd, const char *path, uint64_t size,
                 struct wtmf_extent **out, uint32_t *n, const char **method,
                 char *err, size_t errlen);

/* guard.c: stores and loads through mappings that turn SIGBUS into -1. */
void wtg_guard_install (void);
int wtg_guarded_copy (void *dst, const void *src, size_t len);
int wtg_guarded_compare (const void *map, const void *expected, size_t len,
                         int *differs);

/* finish.c */
int wtg_mark (struct wtg_run *run, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
int wtg_fsync_file (struct wtg_run *run, struct wtg_file *f);
int wtg_checkpoint (struct wtg_run *run);
int wtg_finish (struct wtg_run *run);
/* Reads every file back through the page cache and compares it with the
 * model; sets readback. A workload that drops its cache before the end
 * calls it first, so RESULT tells what the cache held. */
int wtg_readback (struct wtg_run *run);
int wtg_send_manifest (struct wtg_run *run, uint32_t checkpoint);

/* trace.c: MARKs into tracefs's trace_marker (--trace-marker), and the
 * trace command: the kernel's trace to the channel */
void wtg_trace_marker_open (struct wtg_run *run);
void wtg_trace_marker_write (struct wtg_run *run, const char *label, size_t n);
int wtg_trace_send (struct wtg_run *run);

/* The workloads: 0 done, -1 failed (wtg_fail said why). */
int wtg_linus2006 (struct wtg_run *run);
int wtg_torrent (struct wtg_run *run);
int wtg_pwrite (struct wtg_run *run);
int wtg_ops (struct wtg_run *run);
int wtg_manifest_files (struct wtg_run *run);
int wtg_cold (struct wtg_run *run);
/* A TEXT message on the channel (and on stderr): what the host should read
 * in the report, at most 1023 bytes (finish.c). */
void wtg_text (struct wtg_run *run, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

#endif
