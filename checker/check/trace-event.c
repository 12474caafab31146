/* One line of tracefs's `trace` file: "task-pid [cpu] flags secs.usecs:
 * name: fields" (check/trace.h). The fields are the kernel's TP_printk
 * text, which changes between kernels: each event's numbers are found by
 * their names ("ino=", "ino ", "ino = "), so the 6.1 and 6.12 layouts read
 * alike, and an event whose fields do not read is kept as opaque. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/trace.h"

#define WTC_PAGE_BYTES 4096u

const char *
wtc_tr_kind_name (unsigned kind)
{
  static const char *const names[WTC_TR_NKINDS] = {
    "other", "mark", "dirty", "writeback_inode", "writepages", "range_op",
    "page_cache_add", "page_cache_delete", "bio_queue", "rq_complete",
  };
  return kind < WTC_TR_NKINDS ? names[kind] : "?";
}

/* A whole unsigned number at *p (0x: hex; else base), *p moved past it. */
static bool
wtc_tr_number (const char **p, int base, uint64_t *v)
{
  const char *s = *p;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2, base = 16;
  if (!isxdigit ((unsigned char) *s) || (base == 10 && !isdigit ((unsigned char) *s)))
    return false;
  char *end;
  errno = 0;
  unsigned long long n = strtoull (s, &end, base);
  if (errno || end == s)
    return false;
  *v = n;
  *p = end;
  return true;
}

/* The number after the word key in fields: "key=N", "key N", "key = N".
 * The word must start the fields or follow a space, comma or '(' (so "ino"
 * is not "cgroup_ino"). */
static bool
wtc_tr_field (const char *fields, const char *key, int base, uint64_t *v)
{
  size_t klen = strlen (key);
  for (const char *p = strstr (fields, key); p; p = strstr (p + 1, key)) {
    if (p != fields && p[-1] != ' ' && p[-1] != ',' && p[-1] != '(')
      continue;
    const char *q = p + klen;
    while (*q == ' ')
      q++;
    if (*q == '=' || *q == ':')
      q++;
    else if (q == p + klen)
      continue;                 /* "inode" for "ino" */
    while (*q == ' ')
      q++;
    if (wtc_tr_number (&q, base, v))
      return true;
  }
  return false;
}

/* A signed number after key: range_end may print as -1. */
static bool
wtc_tr_field_signed (const char *fields, const char *key, int64_t *v)
{
  uint64_t u;
  const char *p = strstr (fields, key);
  if (p && wtc_tr_field (fields, key, 10, &u)) {
    *v = u > INT64_MAX ? INT64_MAX : (int64_t) u;
    return true;
  }
  for (; p; p = strstr (p + 1, key)) {
    const char *q = p + strlen (key);
    while (*q == ' ' || *q == '=')
      q++;
    if (*q == '-' && isdigit ((unsigned char) q[1])) {
      *v = -1;
      return true;
    }
  }
  return false;
}

static void
wtc_tr_set_range (struct wtc_tr_event *e, uint64_t first, uint64_t count)
{
  if (count == 0)
    return;
  e->has_range = true;
  e->first = first;
  e->last = count - 1 > UINT64_MAX - first ? UINT64_MAX : first + count - 1;
}

/* "MAJ,MIN RWBS [(cmd)] SECTOR + NR ...": block_bio_queue (6.1 and 6.12),
 * block_rq_complete (6.12 adds the I/O priority before "[error]"). */
static bool
wtc_tr_block (struct wtc_tr_event *e)
{
  const char *p = e->fields;
  uint64_t maj, min, sector, nr;
  if (!wtc_tr_number (&p, 10, &maj) || *p++ != ',' || !wtc_tr_number (&p, 10, &min)
      || maj >= 4096 || min >= (1u << 20) || *p++ != ' ')
    return false;
  e->dev = (uint32_t) (maj << 20 | min);
  e->write = *p == 'W' || (*p == 'F' && p[1] == 'W');
  const char *plus = strstr (p, " + ");
  if (!plus)
    return false;
  const char *s = plus;
  while (s > p && isdigit ((unsigned char) s[-1]))
    s--;
  const char *n = plus + 3;
  if (s == plus || !wtc_tr_number (&s, 10, &sector) || !wtc_tr_number (&n, 10, &nr))
    return false;
  wtc_tr_set_range (e, sector, nr);
  const char *bracket = strrchr (e->fields, '[');
  if (e->kind == WTC_TR_RQ_DONE && bracket) {
    long err = strtol (bracket + 1, NULL, 10);
    e->error = err < INT32_MIN || err > INT32_MAX ? INT32_MIN : (int32_t) err;
  }
  return true;
}

/* The inode's range in bytes, from whichever fields the event has. */
static void
wtc_tr_inode_range (struct wtc_tr_event *e)
{
  uint64_t a, b;
  int64_t end;
  if (wtc_tr_field (e->fields, "index", 10, &a) && e->kind == WTC_TR_DIRTY)
    wtc_tr_set_range (e, a * WTC_PAGE_BYTES, WTC_PAGE_BYTES);
  else if (wtc_tr_field (e->fields, "page_index", 10, &a))
    wtc_tr_set_range (e, a * WTC_PAGE_BYTES, WTC_PAGE_BYTES);
  else if (wtc_tr_field (e->fields, "file_offset", 10, &a)
           && wtc_tr_field (e->fields, "len", 10, &b))
    wtc_tr_set_range (e, a, b);
  else if (wtc_tr_field (e->fields, "range_start", 10, &a)
           && wtc_tr_field_signed (e->fields, "range_end", &end))
    wtc_tr_set_range (e, a, end < 0 || (uint64_t) end < a ? UINT64_MAX - a
                      : (uint64_t) end - a + 1);
  else if (wtc_tr_field (e->fields, "first_page", 10, &a))
    wtc_tr_set_range (e, a * WTC_PAGE_BYTES, UINT64_MAX - a * WTC_PAGE_BYTES);
  else if (wtc_tr_field (e->fields, "ofs", 10, &a)) {
    uint64_t order = 0;
    wtc_tr_field (e->fields, "order", 10, &order);
    wtc_tr_set_range (e, a, (uint64_t) WTC_PAGE_BYTES << (order < 20 ? order : 20));
  } else if (wtc_tr_field (e->fields, "offset", 10, &a)
             && (wtc_tr_field (e->fields, "len", 10, &b)
                 || wtc_tr_field (e->fields, "length", 10, &b)
                 || wtc_tr_field (e->fields, "count", 10, &b)))
    wtc_tr_set_range (e, a, b);
  else if (wtc_tr_field (e->fields, "pos", 16, &a)
           && wtc_tr_field (e->fields, "bytecount", 16, &b))
    wtc_tr_set_range (e, a, b);
  else if (wtc_tr_field (e->fields, "start", 10, &a) && wtc_tr_field (e->fields, "end", 10, &b)
           && b >= a)
    wtc_tr_set_range (e, a, b - a + 1);
}

struct wtc_tr_name {
  const char *name;
  uint8_t kind;
  uint8_t ino_base;             /* filemap prints the inode in hex */
};

static const struct wtc_tr_name wtc_tr_names[] = {
  { "tracing_mark_write", WTC_TR_MARK, 10 },
  { "print", WTC_TR_MARK, 10 },
  { "writeback_dirty_folio", WTC_TR_DIRTY, 10 },
  { "writeback_dirty_page", WTC_TR_DIRTY, 10 },
  { "writeback_single_inode", WTC_TR_WB_INODE, 10 },
  { "writeback_single_inode_start", WTC_TR_WB_INODE, 10 },
  { "ext4_writepages", WTC_TR_WRITEPAGES, 10 },
  { "ext4_da_write_pages", WTC_TR_WRITEPAGES, 10 },
  { "ext4_writepages_result", WTC_TR_WRITEPAGES, 10 },
  { "__extent_writepage", WTC_TR_WRITEPAGES, 10 },      /* btrfs, 6.1 */
  { "extent_writepage", WTC_TR_WRITEPAGES, 10 },        /* btrfs, 6.12 */
  { "btrfs_ordered_extent_add", WTC_TR_WRITEPAGES, 10 },
  { "btrfs_writepage_end_io_hook", WTC_TR_WRITEPAGES, 10 },
  { "iomap_writepage", WTC_TR_WRITEPAGES, 10 },
  { "iomap_writepage_map", WTC_TR_WRITEPAGES, 10 },
  { "xfs_map_blocks_found", WTC_TR_WRITEPAGES, 10 },
  { "xfs_map_blocks_alloc", WTC_TR_WRITEPAGES, 10 },
  { "ext4_fallocate_enter", WTC_TR_RANGE_OP, 10 },
  { "ext4_punch_hole", WTC_TR_RANGE_OP, 10 },
  { "ext4_zero_range", WTC_TR_RANGE_OP, 10 },
  { "ext4_collapse_range", WTC_TR_RANGE_OP, 10 },
  { "ext4_insert_range", WTC_TR_RANGE_OP, 10 },
  { "xfs_free_file_space", WTC_TR_RANGE_OP, 10 },
  { "xfs_zero_file_space", WTC_TR_RANGE_OP, 10 },
  { "xfs_collapse_file_space", WTC_TR_RANGE_OP, 10 },
  { "xfs_insert_file_space", WTC_TR_RANGE_OP, 10 },
  { "mm_filemap_add_to_page_cache", WTC_TR_PC_ADD, 16 },
  { "mm_filemap_delete_from_page_cache", WTC_TR_PC_DEL, 16 },
  { "block_bio_queue", WTC_TR_BIO, 10 },
  { "block_rq_complete", WTC_TR_RQ_DONE, 10 },
};

void
wtc_tr_event_classify (struct wtc_tr_event *e)
{
  const struct wtc_tr_name *n = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS (wtc_tr_names); i++)
    if (strcmp (e->name, wtc_tr_names[i].name) == 0)
      n = &wtc_tr_names[i];
  if (!n)
    return;
  e->kind = n->kind;
  if (e->kind == WTC_TR_MARK)
    return;
  if (e->kind == WTC_TR_BIO || e->kind == WTC_TR_RQ_DONE) {
    if (!wtc_tr_block (e))
      e->kind = WTC_TR_OTHER;
    return;
  }
  e->has_ino = wtc_tr_field (e->fields, "ino", n->ino_base, &e->ino) && e->ino != 0;
  if (!e->has_ino) {
    e->kind = WTC_TR_OTHER;
    return;
  }
  wtc_tr_inode_range (e);
  if (e->kind == WTC_TR_DIRTY && !e->has_range)
    e->kind = WTC_TR_OTHER;
}

/* "SECS.FRACTION:" (the local and global clocks) or "COUNT:" (counter
 * clocks, taken as ns) at *p. */
static bool
wtc_tr_timestamp (char **p, uint64_t *ns)
{
  uint64_t secs, frac = 0;
  const char *s = *p;
  if (!wtc_tr_number (&s, 10, &secs))
    return false;
  uint64_t scale = 1;
  if (*s == '.') {
    const char *f = ++s;
    if (!wtc_tr_number (&s, 10, &frac) || s - f > 9)
      return false;
    for (long d = s - f; d < 9; d++)
      scale *= 10;
    if (secs > UINT64_MAX / 1000000000u)
      return false;
    *ns = secs * 1000000000u + frac * scale;
  } else
    *ns = secs;
  if (*s != ':')
    return false;
  *p = (char *) s + 1;
  return true;
}

/* "[NNN] " after the task-pid: the first such bracket in the line. */
static char *
wtc_tr_cpu (char *line, uint32_t *cpu)
{
  for (char *b = strchr (line, '['); b; b = strchr (b + 1, '[')) {
    char *q = b + 1;
    uint64_t n;
    if (b > line && b[-1] == ' ' && wtc_tr_number ((const char **) &q, 10, &n)
        && *q == ']' && n < WTC_TRACE_MAX_CPUS) {
      *cpu = (uint32_t) n;
      return q + 1;
    }
  }
  return NULL;
}

bool
wtc_tr_event_parse (char *line, struct wtc_tr_event *e)
{
  memset (e, 0, sizeof *e);
  char *p = wtc_tr_cpu (line, &e->cpu);
  if (!p)
    return false;
  while (*p == ' ')
    p++;
  if (!isdigit ((unsigned char) *p) || !wtc_tr_timestamp (&p, &e->ts_ns)) {
    while (*p && *p != ' ')     /* the irq-info flags "d..1." */
      p++;
    while (*p == ' ')
      p++;
    if (!wtc_tr_timestamp (&p, &e->ts_ns))
      return false;
  }
  while (*p == ' ')
    p++;
  char *name = p;
  while (isalnum ((unsigned char) *p) || *p == '_')
    p++;
  if (p == name || *p != ':')
    return false;
  *p++ = '\0';
  if (*p == ' ')
    p++;
  size_t len = strlen (p);
  while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
    p[--len] = '\0';
  e->name = name;
  e->fields = p;
  return true;
}
