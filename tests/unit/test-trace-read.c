/* The trace reader (checker/check/trace-read.c, trace-event.c): the real
 * traces of Debian's 6.1 and 6.12 kernels in tests/fixtures/trace/ (every
 * line an event or a comment; the first event of each kind the join uses
 * read field by field, both kernels' layouts), then synthetic lines: each
 * layout the reader knows, and hostile ones (numbers that overflow, lines
 * too long or holding a NUL, a broken header). */
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "check/trace.h"
#include "tap.h"

static char fixtures[4096];

static struct wtc_trace *
fixture (const char *name)
{
  g_autofree char *path = g_build_filename (fixtures, name, NULL);
  g_autoptr (GError) error = NULL;
  struct wtc_trace *t = wtc_trace_read (path, &error);
  if (!t)
    printf ("# %s\n", error->message);
  return t;
}

/* The first event named name, or NULL. */
static const struct wtc_tr_event *
first (const struct wtc_trace *t, const char *name)
{
  for (guint i = 0; i < t->events->len; i++) {
    const struct wtc_tr_event *e = &g_array_index (t->events, struct wtc_tr_event, i);
    if (strcmp (e->name, name) == 0)
      return e;
  }
  return NULL;
}

static bool
inode_range (const struct wtc_tr_event *e, unsigned kind, uint64_t ino, uint64_t first,
             uint64_t last)
{
  if (!e)
    return false;
  if (e->kind != kind || !e->has_ino || e->ino != ino || !e->has_range || e->first != first
      || e->last != last) {
    printf ("# %s: kind %u ino %" PRIu64 " range %d %" PRIu64 "-%" PRIu64 "\n", e->name, e->kind,
            e->ino, e->has_range, e->first, e->last);
    return false;
  }
  return true;
}

static bool
block (const struct wtc_tr_event *e, unsigned kind, bool write, uint64_t first, uint64_t last)
{
  return e && e->kind == kind && e->dev == (254u << 20) && e->write == write
    && e->has_range && e->first == first && e->last == last;
}

/* Every non-comment line of the file an event. */
static bool
all_events (const struct wtc_trace *t)
{
  return t && t->malformed == 0 && t->events->len > 200 && t->has_disk
    && t->disk_dev == (254u << 20) && t->clock_mono && t->lost_total == 0;
}

static void
test_ext4 (const char *name, const char *kernel, bool v612)
{
  g_autoptr (wtc_trace) t = fixture (name);
  tap_ok (all_events (t) && strcmp (t->kernel, kernel) == 0 && t->files->len == 2
          && wtc_trace_file_ino (t, "/data/f1") == 13,
          "%s: header and every line an event", name);
  if (!t)
    return;
  tap_ok (inode_range (first (t, "writeback_dirty_folio"), WTC_TR_DIRTY, 13, 20480, 24575),
          "%s: writeback_dirty_folio ino=13 index=5", name);
  tap_ok (inode_range (first (t, "ext4_punch_hole"), WTC_TR_RANGE_OP, 13, 5350, 5442),
          "%s: ext4_punch_hole offset 5350 len 93", name);
  tap_ok (inode_range (first (t, "ext4_writepages"), WTC_TR_WRITEPAGES, 13, 86991, 87056),
          "%s: ext4_writepages range_start 86991 range_end 87056", name);
  tap_ok (inode_range (first (t, "ext4_da_write_pages"), WTC_TR_WRITEPAGES, 13, 20480,
                       UINT64_MAX - 1), "%s: ext4_da_write_pages first_page 5", name);
  tap_ok (inode_range (first (t, "ext4_insert_range"), WTC_TR_RANGE_OP, 14, 45056, 53247),
          "%s: ext4_insert_range offset 45056 len 8192", name);
  const struct wtc_tr_event *wb = first (t, "writeback_single_inode");
  tap_ok (wb && wb->kind == WTC_TR_WB_INODE && wb->ino == 12 && !wb->has_range,
          "%s: writeback_single_inode ino=12, no range", name);
  tap_ok (inode_range (first (t, "mm_filemap_delete_from_page_cache"), WTC_TR_PC_DEL, 13,
                       110592, 114687), "%s: mm_filemap_delete ino d (hex) ofs=110592", name);
  tap_ok (block (first (t, "block_bio_queue"), WTC_TR_BIO, true, 264048, 264063),
          "%s: block_bio_queue 254,0 WS 264048 + 16", name);
  const struct wtc_tr_event *rq = first (t, "block_rq_complete");
  tap_ok (block (rq, WTC_TR_RQ_DONE, true, 264048, 264055) && rq->error == 0,
          "%s: block_rq_complete%s 264048 + 8 [0]", name, v612 ? " (with ioprio)" : "");
  const struct wtc_tr_event *m = first (t, "tracing_mark_write");
  tap_ok (m && m->kind == WTC_TR_MARK && strcmp (m->fields, "start") == 0 && m->ts_ns > 0,
          "%s: tracing_mark_write start", name);
}

static void
test_xfs (const char *name)
{
  g_autoptr (wtc_trace) t = fixture (name);
  tap_ok (all_events (t), "%s: every line an event", name);
  if (!t)
    return;
  tap_ok (inode_range (first (t, "mm_filemap_delete_from_page_cache"), WTC_TR_PC_DEL, 132,
                       114688, 114688 + 16383), "%s: filemap ino 84 (hex) order=2", name);
  tap_ok (inode_range (first (t, "iomap_writepage_map"), WTC_TR_WRITEPAGES, 132, 0x4000,
                       0x7fff), "%s: iomap_writepage_map ino 0x84 offset 0x4000 length 0x4000", name);
  tap_ok (inode_range (first (t, "xfs_map_blocks_alloc"), WTC_TR_WRITEPAGES, 132, 0x4000,
                       0x4fff), "%s: xfs_map_blocks_alloc pos 0x4000 bytecount 0x1000", name);
  const struct wtc_tr_event *fr = first (t, "xfs_free_file_space");
  tap_ok (fr && fr->kind == WTC_TR_RANGE_OP && fr->ino == 132 && !fr->has_range,
          "%s: xfs_free_file_space ino 0x84, no range (the whole inode)", name);
  const struct wtc_tr_event *rd = first (t, "block_bio_queue");
  tap_ok (rd && rd->kind == WTC_TR_BIO && !rd->write, "%s: a read bio (RM) is no write", name);
}

static void
test_btrfs (const char *name, const char *writepage, uint64_t page)
{
  g_autoptr (wtc_trace) t = fixture (name);
  tap_ok (all_events (t), "%s: every line an event", name);
  if (!t)
    return;
  tap_ok (inode_range (first (t, writepage), WTC_TR_WRITEPAGES, 258, page * 4096,
                       page * 4096 + 4095), "%s: %s ino=258 page_index=%" PRIu64, name,
          writepage, page);
  tap_ok (inode_range (first (t, "btrfs_ordered_extent_add"), WTC_TR_WRITEPAGES, 258, 188416,
                       188416 + 8191), "%s: btrfs_ordered_extent_add file_offset len", name);
}

/* A trace of header then lines, parsed. */
static struct wtc_trace *
parse (const char *text, GError **error)
{
  return wtc_trace_parse ("t.txt", text, strlen (text), error);
}

#define HDR "# wtrack-trace 1\n# kernel k\n# disk 8,16\n# clock local\n# missing\n"

static void
test_synthetic (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_trace) t = parse (HDR "# lost 0=2 1=3 dropped\n# tracer: nop\n"
    "# entries-in-buffer/entries-written: 10/14   #P:2\n"
    "CPU:1 [LOST 7 EVENTS]\n"
    " a b-c-12 [001] d..1. 5.5: writeback_dirty_page: bdi 8:16: ino=7 index=2\n"
    " x-1 [000] 6: ext4_writepages: dev 8,16 ino 7 nr_to_write 1 pages_skipped 0 range_start 0 range_end -1 sync_mode 0\n"
    " x-1 [000] 7.000000001: block_rq_complete: 8,16 FWS () 100 + 8 [-5]\n"
    " x-1 [000] 8.0: writeback_dirty_folio: bdi 8:16: cgroup_ino=9 ino=99999999999999999999999 index=1\n"
    " x-1 [000] 1.1234567890: tracing_mark_write: ten digits\n"
    " x-1 [99999] 1.0: tracing_mark_write: cpu too big\n"
    " x-1 [000] 18446744073709551.0: tracing_mark_write: seconds overflow\n"
    " x-1 [000] 9.0: some_new_event: whatever 1 2 3\n", &error);
  tap_ok (t && t->lost_total == 2 + 3 + 4 + 7 && t->dropped && !t->clock_mono
          && t->disk_dev == (8u << 20 | 16) && t->missing->len == 0,
          "header: lost per CPU, dropped, overwritten entries and LOST lines all counted");
  if (!t)
    return;
  const struct wtc_tr_event *e = &g_array_index (t->events, struct wtc_tr_event, 0);
  tap_ok (t->events->len == 5 && e->kind == WTC_TR_DIRTY && e->cpu == 1 && e->ts_ns == 5500000000u
          && e->ino == 7 && e->first == 8192, "a task name with spaces and dashes, _page (older kernels)");
  e++;
  tap_ok (e->kind == WTC_TR_WRITEPAGES && e->ts_ns == 6 && e->first == 0 && e->last == UINT64_MAX - 1,
          "a counter clock's integer timestamp; range_end -1 is the whole file");
  e++;
  tap_ok (e->kind == WTC_TR_RQ_DONE && e->write && e->error == -5 && e->ts_ns == 7000000001u,
          "block_rq_complete FWS with an error; nanosecond timestamps");
  e++;
  tap_ok (e->kind == WTC_TR_OTHER, "an inode number that overflows: not a dirtying, kept opaque");
  e++;
  tap_ok (e->kind == WTC_TR_OTHER && strcmp (e->name, "some_new_event") == 0,
          "an event the join does not know: kept, opaque");
  tap_ok (t->malformed == 3 && t->first_malformed == 14,
          "ten fraction digits, a CPU past the bound, seconds that overflow: malformed lines, counted");
}

static void
test_hostile_lines (void)
{
  GString *s = g_string_new (HDR);
  g_string_append (s, " x-1 [000] 1.0: tracing_mark_write: ");
  for (int i = 0; i < WTC_TRACE_MAX_LINE; i++)
    g_string_append_c (s, 'a');
  g_string_append (s, "\n x-1 [000] 2.0: tracing_mark_write: nul");
  g_string_append_len (s, "\0x\n", 3);
  g_string_append (s, " x-1 [000] 3.0: tracing_mark_write: last, no newline");
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_trace) t = wtc_trace_parse ("t.txt", s->str, s->len, &error);
  tap_ok (t && t->malformed == 2 && t->events->len == 1
          && strcmp (g_array_index (t->events, struct wtc_tr_event, 0).fields,
                     "last, no newline") == 0,
          "a line past %d bytes and one with a NUL: malformed; a last line without newline read",
          WTC_TRACE_MAX_LINE);
  g_string_free (s, TRUE);
}

static void
test_bad_headers (void)
{
  static const char *const bad[][2] = {
    { "# wtrack-trace 2\n", "line 1: not \"# wtrack-trace 1\"" },
    { "", "empty" },
    { "# wtrack-trace 1\n# disk 8\n", "line 2: \"# disk 8\" is not a header line" },
    { "# wtrack-trace 1\n# lost 0=x\n", "line 2: \"# lost 0=x\"" },
    { "# wtrack-trace 1\n# lost dropped 0=1\n", "line 2:" },
    { "# wtrack-trace 1\n# file /data/f1\n", "line 2:" },
    { "# wtrack-trace 1\n# file /data/f1 0\n", "line 2:" },
    { "# wtrack-trace 1\n# clock a b\n", "line 2:" },
    { "# wtrack-trace 1\n# enabled ext4\n", "line 2:" },
    { "# wtrack-trace 1\n# kernel\n", "line 2:" },
    { "# wtrack-trace 1\n# kernel k\n# truncated 12x\n", "line 3: \"# truncated 12x\"" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (wtc_trace) t = parse (bad[i][0], &error);
    tap_ok (!t && error && strstr (error->message, "t.txt: ") == error->message
            && strstr (error->message, bad[i][1]),
            "bad header %zu: an error naming the file and the line (%s)", i,
            error ? error->message : "none");
  }
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_trace) t = parse ("# wtrack-trace 1\n# tracer: nop\n# disk 8\n", &error);
  tap_ok (t && !t->has_disk, "a header line after tracefs's own is tracefs's: not read");
}

int
main (int argc, char **argv)
{
  (void) argc;
  g_autofree char *self = g_strdup (argv[0]);
  g_snprintf (fixtures, sizeof fixtures, "%s/../fixtures/trace", dirname (self));
  tap_plan (2 * 11 + 2 * 6 + 2 * 3 + 1 + 7 + 1 + 12);
  test_ext4 ("debian-6.1-ext4-ops.txt", "6.1.0-57-amd64", false);
  test_ext4 ("debian-6.12-ext4-ops.txt", "6.12.118+deb13-amd64", true);
  test_xfs ("debian-6.1-xfs-ops.txt");
  test_xfs ("debian-6.12-xfs-ops.txt");
  test_btrfs ("debian-6.1-btrfs-ops.txt", "__extent_writepage", 5);
  test_btrfs ("debian-6.12-btrfs-ops.txt", "extent_writepage", 46);
  {
    g_autoptr (wtc_trace) t = fixture ("debian-6.1-ext4-linus2006.txt");
    tap_ok (all_events (t) && inode_range (first (t, "ext4_writepages"), WTC_TR_WRITEPAGES, 13,
                                           0, 4194303),
            "debian-6.1-ext4-linus2006.txt: every line an event; ext4_writepages 0-4194303");
  }
  test_synthetic ();
  test_hostile_lines ();
  test_bad_headers ();
  return tap_done ();
}
