/* The guest kernel's trace (RUN_DIR/trace.txt; doc/design.md, "The
 * kernel's account"): wtrack-run --trace's header, then tracefs's `trace`
 * file. trace-read.c reads it (the text comes from the guest: every
 * length, count and number is bounded and checked); trace-event.c reads
 * one event line; trace-join.c ties the events to each bad page (its
 * story), trace-rules.c judges it; report-trace.c prints them. */
#ifndef WTC_TRACE_H
#define WTC_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* Bounds on what the guest may make the checker hold. */
#define WTC_TRACE_MAX_LINE 4096         /* longer lines are malformed */
#define WTC_TRACE_MAX_EVENTS 4000000
#define WTC_TRACE_MAX_HEADER 4096       /* wtrack header lines */
#define WTC_TRACE_MAX_CPUS 4096

/* What an event says about a file page or a disk sector. */
enum wtc_tr_kind {
  WTC_TR_OTHER,         /* an event the join does not use: kept, opaque */
  WTC_TR_MARK,          /* tracing_mark_write: the workload's MARK */
  WTC_TR_DIRTY,         /* writeback_dirty_folio/_page: a page marked dirty */
  WTC_TR_WB_INODE,      /* writeback_single_inode(_start): the inode written back */
  WTC_TR_WRITEPAGES,    /* the fs's writepages: a range of the inode written back */
  WTC_TR_RANGE_OP,      /* punch, zero, collapse, insert range */
  WTC_TR_PC_ADD,        /* mm_filemap_add_to_page_cache */
  WTC_TR_PC_DEL,        /* mm_filemap_delete_from_page_cache */
  WTC_TR_BIO,           /* block_bio_queue */
  WTC_TR_RQ_DONE,       /* block_rq_complete */
  WTC_TR_NKINDS,
};
const char *wtc_tr_kind_name (unsigned kind);

struct wtc_tr_event {
  uint64_t ts_ns;       /* the trace clock */
  uint32_t line;        /* in trace.txt, from 1 */
  uint32_t cpu;
  uint8_t kind;
  bool has_ino, has_range, write;
  int32_t error;        /* RQ_DONE */
  uint32_t dev;         /* block events: major << 20 | minor */
  uint64_t ino;
  /* File bytes [first, last] (inode events), disk sectors (block events). */
  uint64_t first, last;
  const char *name;     /* the event's name */
  const char *fields;   /* the rest of the line, verbatim */
};

struct wtc_tr_file {
  const char *name;
  uint64_t ino;
};

struct wtc_tr_lost {
  uint32_t cpu;
  uint64_t events;
};

struct wtc_trace {
  char *path;
  char *kernel;
  bool has_disk;
  uint32_t disk_dev;    /* major << 20 | minor */
  char *clock;          /* "# clock": mono (the channel's guest clock), local, none */
  bool clock_mono;
  bool dropped;         /* "# lost ... dropped": the trace's end never reached the host */
  GPtrArray *enabled, *missing;   /* "group:event" (char *) */
  GArray *lost;                   /* struct wtc_tr_lost */
  uint64_t lost_total;            /* lost + overwritten (entries-written) */
  GArray *files;                  /* struct wtc_tr_file */
  bool truncated;
  uint64_t truncated_bytes;
  GArray *events;                 /* struct wtc_tr_event, in file order */
  GStringChunk *strings;
  uint64_t lines, malformed, over_limit;
  uint32_t first_malformed;       /* its line, 0: none */
};

/* Reads path; NULL with error naming path and the line for a header that is
 * not the contract's or a file that cannot be read. Event lines that do not
 * parse are counted (malformed), never an error. */
struct wtc_trace *wtc_trace_read (const char *path, GError **error);
/* The same from memory (the fuzz harness and the unit tests). */
struct wtc_trace *wtc_trace_parse (const char *name, const char *text, size_t len,
                                   GError **error);
void wtc_trace_free (struct wtc_trace *t);
typedef struct wtc_trace wtc_trace;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_trace, wtc_trace_free)

/* trace-event.c: one event line "task-pid [cpu] flags ts: name: fields"
 * into *e (name and fields point into line, which is modified); false when
 * it is not one. */
bool wtc_tr_event_parse (char *line, struct wtc_tr_event *e);
/* Fills the kind and what it says (inode, range, dev) from name and fields;
 * an event whose fields do not read stays WTC_TR_OTHER. */
void wtc_tr_event_classify (struct wtc_tr_event *e);

/* trace-join.c: each bad page's story from the trace, and its finding. */
enum wtc_tr_rule {
  WTC_RULE_CANNOT_SAY,        /* the trace cannot say (why, in the finding) */
  WTC_RULE_STORE_NOT_SEEN,    /* written, never marked dirty after it */
  WTC_RULE_DIRTY_DROPPED,     /* dirty, never written back */
  WTC_RULE_DELETED_DIRTY,     /* removed from the page cache while dirty */
  WTC_RULE_BIO_MISSED,        /* written back; no bio covered the sector */
  WTC_RULE_DEVICE_LOST,       /* a bio covered it; no write reached the disk */
  WTC_RULE_BIO_REACHED,       /* a bio covered it and reached the disk */
  WTC_RULE_NOT_ISSUED,        /* O_DIRECT write, no bio covered the sector */
  WTC_NRULES,
};
const char *wtc_tr_rule_name (unsigned rule);

#define WTC_STORY_MAX_EVENTS 200    /* kept per page; the rest counted */
#define WTC_MAX_STORIES 1000        /* pages with a story; the rest counted */
/* Pages times the events a page is compared with, at most: a hostile trace
 * of millions of events gives fewer pages a story, not an hour's check. */
#define WTC_TRACE_MAX_WORK 400000000ull

struct wtc_story {
  uint32_t file;
  uint64_t page;                    /* the 4 KiB page's index in the file */
  guint first_bad;                  /* its first bad sector, in c->bad */
  uint64_t ino;                     /* 0: unknown */
  uint32_t op;                      /* the last op that wrote it, 0: none */
  uint64_t op_ns;                   /* its trace time, 0: unknown */
  uint8_t rule;
  guint evidence;                   /* the event the finding rests on (in events), or G_MAXUINT */
  char *finding;                    /* one line */
  GArray *events;                   /* guint: indices in trace->events, in time order */
  guint events_more;                /* past WTC_STORY_MAX_EVENTS */
};

/* A MARK in both the trace and the channel: the clocks tied together. */
struct wtc_tr_anchor {
  uint64_t trace_ns, other_ns;
};

struct wtc_trace_join {
  struct wtc_trace *trace;
  const struct wtc_check *check;    /* its guest-to-log clock (mono traces) */
  GArray *to_log, *to_guest;        /* struct wtc_tr_anchor, both columns rising */
  uint64_t marks, marks_matched;    /* the trace's MARKs, those found in the channel */
  GArray *stories;                  /* struct wtc_story, by file and page */
  guint stories_more;
  guint max_stories;                /* WTC_MAX_STORIES, less for a long trace */
  GArray *candidates;               /* guint: the events any page may concern */
  GArray *write_bios;               /* guint: write bios on the test disk */
};

/* Whether "group:event" was enabled (the header) or, with no header list,
 * appears at all. */
bool wtc_trace_has_event (const struct wtc_trace *t, const char *event);
/* The inode the header's "# file" lines give for name, 0: none. */
uint64_t wtc_trace_file_ino (const struct wtc_trace *t, const char *name);

struct wtc_check;
/* Takes t; the stories of c's bad pages. */
struct wtc_trace_join *wtc_trace_join (const struct wtc_check *c, struct wtc_trace *t);
void wtc_trace_join_free (struct wtc_trace_join *j);
/* Whether the trace's clock is tied to the log's: a MARK in both, or a
 * mono trace and a placed channel MARK. */
bool wtc_trace_clocks_tied (const struct wtc_trace_join *j);
/* The log time of a trace time; false when no MARK ties the clocks. */
bool wtc_trace_to_log (const struct wtc_trace_join *j, uint64_t trace_ns, uint64_t *log_ns);

#endif
