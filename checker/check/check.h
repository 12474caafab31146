/* wtrack check: the data every stage of the check shares.
 * Stages: check/map.c finds the bad sectors (manifest against image),
 * check/log.c looks them up in one pass over the log and classes them,
 * check/runs.c groups them, check/verdict.c judges them, report-text.c,
 * report-json.c and report-html.c print them. */
#ifndef WTC_CHECK_H
#define WTC_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "check/cold.h"
#include "check/trace.h"
#include "lib/channel-read.h"
#include "lib/util.h"
#include "manifest.h"
#include "wtlog.h"

#define WTC_NO_SECTOR UINT64_MAX

/* In precedence order: the first that applies is the class. */
enum wtc_class {
  WTC_UNMAPPED,
  WTC_LIED,
  WTC_OVERWRITTEN,
  WTC_MISPLACED,
  WTC_LOST,
  WTC_NCLASSES,
};
const char *wtc_class_name (unsigned cls);

struct wtc_bad {
  uint32_t file;                /* index in the manifest's files */
  uint64_t file_sector;
  uint64_t disk_sector;         /* WTC_NO_SECTOR: no disk block */
  uint64_t expected;            /* the manifest's hash */
  uint64_t image;               /* what the file reads there */
  bool unwritten;               /* in an UNWRITTEN extent: reads zeros */
  bool delalloc;                /* in a DELALLOC extent: never written, no block */
  bool ambiguous;               /* expected content too common to trace */
  bool stale;                   /* written, yet the disk holds its pre-run content */
  uint8_t cls;
  /* From the log (0: no such write). */
  uint64_t last_seq;            /* last WRITE/ZERO/TRIM of the sector */
  uint64_t last_t;
  uint64_t last_hash;
  bool last_known;              /* false: a partial ZERO/TRIM */
  uint64_t expected_seq;        /* last write of the expected content here */
  uint64_t replaced_seq;        /* the first write after it, other content */
  uint64_t holds_seq;           /* last write of the image's content here */
  uint64_t misplaced_sector;    /* where the expected content went */
  uint64_t misplaced_seq;
  uint32_t misplaced_count;     /* writes of it to other sectors */
  gint next_same_expected;      /* chain in the expected-hash table, -1 */
};

struct wtc_file_stat {
  uint64_t checked;             /* sectors compared */
  uint64_t uncheckable;         /* in unmappable extents (inline, encoded), not DELALLOC */
  uint64_t unchecked;           /* in extents misaligned or off the image */
  uint64_t claimed_twice;       /* claimed by more than one extent */
  uint64_t bad;
  uint64_t by_class[WTC_NCLASSES];
};

/* A stretch of a file that lies contiguous on the disk. */
struct wtc_segment {
  uint64_t disk_first;
  uint64_t file_first;
  uint64_t count;
  uint32_t file;
  bool unwritten;               /* reads as zeroes: compared, not read */
};

/* The log clock of a guest time, from the MARKs. */
struct wtc_mark {
  uint64_t guest_ns;
  uint64_t log_ns;
};

struct wtc_check {
  /* Inputs. */
  const char *image_path, *log_path, *channel_path;
  struct wtc_channel *channel;
  GPtrArray *manifests;
  const struct wtmf_manifest *mf;   /* the final one */
  char *channel_error;              /* the channel or manifest stream broke */
  struct wtlog_header log_header;
  struct wtlog_status log_status;
  bool log_read;
  char *log_error;                  /* the log could not be opened */
  uint64_t image_size;
  GArray *chunks;                   /* btrfs's chunk map (lib/btrfs-chunks.h), or NULL */
  /* Results. */
  GArray *bad;                      /* struct wtc_bad, by file, file sector */
  struct wtc_file_stat *files;      /* one per manifest file */
  GPtrArray *warnings;              /* char *: inputs that could not be used */
  GArray *marks;                    /* struct wtc_mark, by guest time */
  GArray *mapped;                   /* struct wtc_segment, by disk sector */
  guint warnings_left_out;          /* past WTC_MAX_WARNINGS */
  uint64_t compared, unchecked, claimed_twice;  /* sums of c->files */
  bool image_short;                 /* shorter than the log's disk */
  uint64_t by_class[WTC_NCLASSES];
  double read_secs;                 /* time spent reading the image */
  uint64_t read_bytes;
  struct wtc_cold cold;             /* the cold pass and fsck (check-cold.c) */
  struct wtc_trace_join *trace;     /* the guest's trace joined (check/trace.h), or NULL */
};

void wtc_warn (struct wtc_check *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Every extent of manifests (read from path) through c->chunks, when there
 * is a chunk map; a warning for the extents it cannot place. */
void wtc_check_translate (struct wtc_check *c, GPtrArray *manifests, const char *path);

/* Warnings kept in full; later ones are only counted. */
#define WTC_MAX_WARNINGS 100

/* check/map.c: maps every file sector to the disk, reads the image, and
 * fills c->bad, c->files and c->mapped. */
bool wtc_find_bad (struct wtc_check *c, GError **error);

/* check/log.c: one pass over the log: facts about each bad sector, the
 * CHANNEL records (placing the messages), then the classes. */
bool wtc_log_pass (struct wtc_check *c, GError **error);
void wtc_classify (struct wtc_check *c);

/* The log time of a guest time; *approx when extrapolated; false with no
 * placed MARK. */
bool wtc_guest_to_log (const struct wtc_check *c, uint64_t guest_ns,
                       uint64_t *log_ns, bool *approx);

/* check/runs.c */
struct wtc_run {
  uint32_t file;
  guint first;                      /* index in c->bad */
  guint count;
  uint8_t cls;
  uint32_t op;                      /* the latest op that wrote it, 0 none */
  uint64_t last_seq;                /* the latest write of its sectors */
  uint64_t last_t;
  bool holds_mixed;                 /* its sectors hold different writes */
};
/* The index in c->bad of file fi's first bad sector (or of the next file's). */
guint wtc_file_first_bad (const struct wtc_check *c, uint32_t fi);
/* Runs of file fi (struct wtc_run, in file order). */
GArray *wtc_file_runs (const struct wtc_check *c, uint32_t fi);
/* Bad pages of file fi: the 4 KiB pages with a bad sector. */
uint64_t wtc_file_bad_pages (const struct wtc_check *c, uint32_t fi);
/* "sectors 3-7 of 8 lost, 1 misplaced" for the page holding bad[first..] */
guint wtc_page_describe (const struct wtc_check *c, guint first, GString *out);

/* Reading the guest's RESULT. */
char *wtc_result_value (const struct wtc_check *c, const char *key);
char *wtc_hello_value (const struct wtc_check *c, const char *key);

/* check/verdict.c: every verdict; the reports only render them. */
/* Every sector the manifest claims was compared, each once, and some were:
 * without that the check cannot say clean. */
bool wtc_coverage_complete (const struct wtc_check *c);
/* The log, the channel and the coverage all complete (else exit 2). */
bool wtc_inputs_complete (const struct wtc_check *c);
/* "damaged" (warm or cold), "unchecked" (nothing bad among what was
 * compared, but not all of it could be) or "clean". */
const char *wtc_verdict (const struct wtc_check *c);
/* File fi's warm verdict: "damaged", "unchecked" (some of its sectors could
 * not be compared, or none was) or "clean". */
const char *wtc_file_verdict (const struct wtc_check *c, uint32_t fi);
/* How the log ended: "closed", "unclosed" (no final CLOSE), "torn" or
 * "unread". */
const char *wtc_log_end (const struct wtc_check *c);
/* "page cache was correct" or NULL when RESULT says nothing. */
const char *wtc_page_cache_verdict (const struct wtc_check *c);
/* "clean", "damaged", "not run" or "unreadable" */
const char *wtc_cold_verdict (const struct wtc_cold *k);
bool wtc_cold_damaged (const struct wtc_cold *k);
/* WT_EXIT_ERROR when the inputs were not complete or the cold pass failed,
 * else WT_EXIT_DAMAGE for damage warm or cold, WT_EXIT_OK. */
int wtc_exit_status (const struct wtc_check *c);

/* report-text.c, report-json.c */
struct wtc_report_opts {
  int max_runs;
  bool quiet;
};
void wtc_report_text (const struct wtc_check *c, const struct wtc_report_opts *o,
                      FILE *out);
bool wtc_report_json (const struct wtc_check *c, const char *path, GError **error);
/* report-ops.c: the "ops" field (the ops workload's counts), or null. */
void wtc_report_json_ops (const struct wtc_check *c, JsonBuilder *b);

#endif
