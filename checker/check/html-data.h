/* What the HTML report draws beyond report.json, gathered in one streaming
 * pass over the log into arrays whose size is fixed by the picture, not by
 * the log: a million records cost no more memory than a hundred. */
#ifndef WTC_HTML_DATA_H
#define WTC_HTML_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "check/check.h"

/* The disk map: at most this many buckets of whole sectors, each with the
 * writes that touched it and the last of them... */
#define WTC_HTML_MAX_BUCKETS 32768
/* ...and a bitmap of written sectors with at most this many bits (one bit a
 * sector on disks up to 4 GiB), for zooming below a bucket. */
#define WTC_HTML_MAX_FINE (1u << 23)
/* The timeline: disk offset (rows) over log time (columns). */
#define WTC_HTML_TL_COLS 1024
#define WTC_HTML_TL_ROWS 256
/* Lists kept whole up to these lengths (then counted only). */
#define WTC_HTML_MAX_FAULTS 5000
#define WTC_HTML_MAX_MARKS 2000

struct wtc_html_fault {
  char kind[16];
  uint64_t seq;                 /* 0: vanished, not logged */
  uint64_t after_seq;           /* vanished: the last seq logged before it */
  uint64_t offset, length;      /* bytes */
  double t;                     /* on the timeline's x axis, or -1 unknown */
};

struct wtc_html_data {
  /* Disk map. */
  uint64_t disk_sectors;
  uint64_t bucket_sectors;      /* sectors per bucket */
  uint32_t nbuckets;
  uint32_t *bucket_writes;      /* WRITE/ZERO/TRIM records touching it */
  double *bucket_last_seq;      /* 0: never written */
  double *bucket_last_t;
  uint64_t fine_sectors;        /* sectors per bit of written */
  uint64_t nfine;
  uint8_t *written;             /* bit i: some record wrote sectors of bit i */
  /* Timeline: x is t_start in ns, or seq when the log has no times. */
  bool x_is_seq;
  bool have_x0;
  uint64_t x0;                  /* x of the first disk request: column 0 */
  uint64_t col_width;           /* x units per column; doubles as needed */
  uint64_t x_max;
  uint64_t row_sectors;         /* disk sectors per row */
  uint16_t *tl_writes;          /* [row * COLS + col], saturating */
  uint16_t *tl_zeroes;          /* ZERO and TRIM */
  uint32_t *tl_flush;           /* [col]: FLUSH records */
  uint32_t *tl_fua;             /* [col]: FUA writes */
  /* The x of the writes the runs and faults name: want_seq sorted. */
  GArray *want_seq;             /* uint64_t */
  GArray *want_x;               /* double, -1 until the record is read */
  /* faults.txt beside the log, when there. */
  bool have_faults;
  GArray *faults;               /* struct wtc_html_fault */
  uint64_t faults_total;
  char *faults_error;           /* a line that could not be read */
};

/* Gathers everything from c's inputs (one more pass over the log);
 * want_seqs holds the seqs whose x the report needs (uint64_t). */
bool wtc_html_collect (const struct wtc_check *c, const GArray *want_seqs,
                       struct wtc_html_data *d, GError **error);
void wtc_html_data_clear (struct wtc_html_data *d);
/* The x of a seq the collection was asked for, or -1. */
double wtc_html_seq_x (const struct wtc_html_data *d, uint64_t seq);

#endif
