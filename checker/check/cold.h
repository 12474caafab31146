/* wtrack check, the cold half: the disk as a freshly booted kernel read it
 * (cold.bin, a manifest flagged cold) against the final manifest, and the
 * fsck of the recovered disk (fsck.txt). doc/design.md "The cold pass". */
#ifndef WTC_CHECK_COLD_H
#define WTC_CHECK_COLD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include "lib/json.h"
#include "manifest.h"

struct wtc_check;

/* In precedence order. */
enum wtc_cold_class {
  WTC_COLD_MISSING,             /* past the cold end of the file, or no file */
  WTC_COLD_UNREADABLE,          /* the read failed (errno) */
  WTC_COLD_UNMAPPED,            /* the cold file has no disk block there */
  WTC_COLD_MOVED,               /* the file now points at another disk sector */
  WTC_COLD_STALE,               /* the disk sector holds its pre-run content */
  WTC_COLD_LOST,                /* other content */
  WTC_COLD_NCLASSES,
};
const char *wtc_cold_class_name (unsigned cls);

struct wtc_cold_bad {
  uint32_t file;                /* index in the final manifest */
  uint64_t file_sector;
  uint8_t cls;
  uint32_t err;                 /* UNREADABLE: the errno */
  uint64_t warm_disk;           /* where the warm FIEMAP put it, WTC_NO_SECTOR */
  uint64_t cold_disk;           /* where the cold FIEMAP puts it, WTC_NO_SECTOR */
  bool warm_holds;              /* MOVED: disk.img still holds the content at warm_disk */
  uint64_t last_seq, last_t;    /* the log's last write of cold_disk, 0: none */
};

struct wtc_cold_file {
  bool present;                 /* an entry in the cold manifest */
  uint32_t error;               /* the errno opening it cold */
  uint64_t cold_size;
  uint64_t bad;
  uint64_t by_class[WTC_COLD_NCLASSES];
};

/* A stretch of cold bad sectors: contiguous in the file and on both disk
 * places, one class. */
struct wtc_cold_run {
  guint first;                  /* index in bad */
  guint count;
};

struct wtc_cold {
  bool ran;                     /* cold.bin exists */
  char *path;
  char *error;                  /* cold.bin unreadable or without a manifest */
  char *guest_error;            /* the cold guest's RESULT error (mount failed) */
  char *kernel;                 /* the cold kernel's release */
  GPtrArray *manifests;
  const struct wtmf_manifest *mf;
  GArray *bad;                  /* struct wtc_cold_bad, by file, file sector */
  struct wtc_cold_file *files;  /* one per final-manifest file */
  uint64_t by_class[WTC_COLD_NCLASSES];
  uint32_t files_damaged, size_changed, unopenable;
  /* Written disk sectors outside every file's extents (warm or cold):
   * metadata, mostly, whose disk.img content is not what the log's last
   * write there left (a lied or torn write the disk lacks). struct
   * wtc_diff, by sector; NULL when the log or image could not be read. */
  GArray *meta_lacking;
  /* fsck.txt */
  bool fsck_ran;
  char *fsck_command, *fsck_verdict;
  int fsck_status;
  GPtrArray *fsck_lines;        /* the tool's first lines */
};

/* Reads cold_path (absent: the pass did not run) and fsck_path, compares
 * them with c's final manifest, reads base_path (the pre-run disk) for
 * stale sectors and the log for each bad sector's last write. Also marks
 * the warm bad sectors that hold their pre-run content as stale. */
void wtc_cold_check (struct wtc_check *c, const char *cold_path, const char *fsck_path,
                     const char *base_path);
void wtc_cold_clear (struct wtc_cold *k);
GArray *wtc_cold_file_runs (const struct wtc_cold *k, uint32_t fi);
/* Runs of meta_lacking: contiguous sectors, one last write. */
GArray *wtc_cold_meta_runs (const struct wtc_cold *k);
/* The cold section of the text report. */
void wtc_cold_report_text (const struct wtc_check *c, int max_runs, FILE *out);
/* The cold object as b's next value, at most max_runs runs (UINT64_MAX:
 * all). */
void wtc_cold_json_object (const struct wtc_check *c, uint64_t max_runs, JsonBuilder *b);

#endif
