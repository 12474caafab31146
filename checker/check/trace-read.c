/* Reading RUN_DIR/trace.txt (check/trace.h; doc/formats.md "trace.txt"):
 * wtrack-run's header lines, then tracefs's text. The header is the contract between the run and the check: a line
 * of it that does not read is an error that names the line. The text after
 * it comes from the guest's kernel: a line that does not read as an event
 * is counted and skipped. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check/trace.h"
#include "lib/util.h"

static bool
wtc_tr_u64 (const char *s, uint64_t *v)
{
  char *end;
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long long n = strtoull (s, &end, 10);
  if (errno || *end)
    return false;
  *v = n;
  return true;
}

/* "# disk MAJ,MIN" */
static bool
wtc_tr_header_disk (struct wtc_trace *t, const char *v)
{
  unsigned maj, min;
  char tail;
  if (sscanf (v, "%u,%u%c", &maj, &min, &tail) != 2 || maj >= 4096 || min >= (1u << 20))
    return false;
  t->has_disk = true;
  t->disk_dev = maj << 20 | min;
  return true;
}

/* "# lost CPU=N CPU=N ..." */
static bool
wtc_tr_header_lost (struct wtc_trace *t, const char *v)
{
  g_auto (GStrv) words = g_strsplit (v, " ", -1);
  for (guint i = 0; words[i]; i++) {
    if (!words[i][0])
      continue;
    char *eq = strchr (words[i], '=');
    struct wtc_tr_lost l;
    uint64_t cpu;
    if (!eq && strcmp (words[i], "dropped") == 0 && !words[i + 1]) {
      t->dropped = true;
      break;
    }
    if (!eq)
      return false;
    *eq = '\0';
    if (!wtc_tr_u64 (words[i], &cpu) || cpu >= WTC_TRACE_MAX_CPUS
        || !wtc_tr_u64 (eq + 1, &l.events) || t->lost->len >= WTC_TRACE_MAX_CPUS)
      return false;
    l.cpu = (uint32_t) cpu;
    g_array_append_val (t->lost, l);
    t->lost_total = l.events > UINT64_MAX - t->lost_total ? UINT64_MAX : t->lost_total + l.events;
  }
  return true;
}

/* "# clock CLOCK": mono ties the trace's clock to the channel's guest_ns. */
static bool
wtc_tr_header_clock (struct wtc_trace *t, const char *v)
{
  if (!*v || strchr (v, ' '))
    return false;
  g_free (t->clock);
  t->clock = g_strdup (v);
  t->clock_mono = strcmp (v, "mono") == 0;
  return true;
}

/* "# file NAME INODE": the name may hold spaces; the inode is the last word. */
static bool
wtc_tr_header_file (struct wtc_trace *t, const char *v)
{
  const char *sp = strrchr (v, ' ');
  struct wtc_tr_file f;
  if (!sp || sp == v || !wtc_tr_u64 (sp + 1, &f.ino) || f.ino == 0)
    return false;
  f.name = g_string_chunk_insert_len (t->strings, v, sp - v);
  g_array_append_val (t->files, f);
  return true;
}

static bool
wtc_tr_header_list (struct wtc_trace *t, GPtrArray *list, const char *v)
{
  g_auto (GStrv) words = g_strsplit (v, " ", -1);
  for (guint i = 0; words[i]; i++)
    if (words[i][0]) {
      if (!strchr (words[i], ':'))
        return false;
      g_ptr_array_add (list, g_string_chunk_insert (t->strings, words[i]));
    }
  return true;
}

enum { WTC_HDR_NOT_OURS, WTC_HDR_OK, WTC_HDR_BAD };

/* One "# KEY VALUE" line of the wtrack header. */
static int
wtc_tr_header_line (struct wtc_trace *t, const char *line)
{
  static const char *const keys[] = { "kernel", "disk", "enabled", "missing", "lost",
                                      "file", "truncated", "clock" };
  if (strncmp (line, "# ", 2) != 0)
    return WTC_HDR_NOT_OURS;
  const char *key = line + 2;
  for (size_t k = 0; k < G_N_ELEMENTS (keys); k++) {
    size_t n = strlen (keys[k]);
    if (strncmp (key, keys[k], n) != 0 || (key[n] != ' ' && key[n] != '\0'))
      continue;
    const char *v = key[n] ? key + n + 1 : key + n;
    bool ok = k == 0 ? (g_free (t->kernel), t->kernel = g_strdup (v), *v != '\0')
      : k == 1 ? wtc_tr_header_disk (t, v)
      : k == 2 ? wtc_tr_header_list (t, t->enabled, v)
      : k == 3 ? wtc_tr_header_list (t, t->missing, v)
      : k == 4 ? wtc_tr_header_lost (t, v)
      : k == 5 ? wtc_tr_header_file (t, v)
      : k == 6 ? (t->truncated = true, wtc_tr_u64 (v, &t->truncated_bytes))
      : wtc_tr_header_clock (t, v);
    return ok ? WTC_HDR_OK : WTC_HDR_BAD;
  }
  return WTC_HDR_NOT_OURS;
}

/* tracefs's own '#' lines: "entries-in-buffer/entries-written: A/B" says
 * B - A events were overwritten when the buffer wrapped. */
static void
wtc_tr_ftrace_comment (struct wtc_trace *t, const char *line)
{
  const char *p = strstr (line, "entries-in-buffer/entries-written:");
  uint64_t in, written;
  if (p && sscanf (p, "entries-in-buffer/entries-written: %" SCNu64 "/%" SCNu64, &in,
                   &written) == 2 && written > in)
    t->lost_total = written - in > UINT64_MAX - t->lost_total ? UINT64_MAX
      : t->lost_total + (written - in);
}

/* "CPU:N [LOST M EVENTS]" in the text: ftrace's own account of a drop. */
static bool
wtc_tr_lost_line (struct wtc_trace *t, const char *line)
{
  unsigned cpu;
  uint64_t n;
  if (sscanf (line, "CPU:%u [LOST %" SCNu64 " EVENTS]", &cpu, &n) != 2)
    return false;
  t->lost_total = n > UINT64_MAX - t->lost_total ? UINT64_MAX : t->lost_total + n;
  return true;
}

static void
wtc_tr_malformed (struct wtc_trace *t)
{
  t->malformed++;
  if (!t->first_malformed)
    t->first_malformed = (uint32_t) MIN (t->lines, UINT32_MAX);
}

static void
wtc_tr_text_line (struct wtc_trace *t, char *line)
{
  struct wtc_tr_event e;
  if (line[0] == '#') {
    wtc_tr_ftrace_comment (t, line);
    return;
  }
  if (!line[0] || wtc_tr_lost_line (t, line) || strncmp (line, "##### CPU", 9) == 0)
    return;
  if (!wtc_tr_event_parse (line, &e)) {
    wtc_tr_malformed (t);
    return;
  }
  if (t->events->len >= WTC_TRACE_MAX_EVENTS) {
    t->over_limit++;
    return;
  }
  e.line = (uint32_t) MIN (t->lines, UINT32_MAX);
  e.name = g_string_chunk_insert_const (t->strings, e.name);
  e.fields = g_string_chunk_insert (t->strings, e.fields);
  wtc_tr_event_classify (&e);
  g_array_append_val (t->events, e);
}

static struct wtc_trace *
wtc_trace_new (const char *name)
{
  struct wtc_trace *t = g_new0 (struct wtc_trace, 1);
  t->path = g_strdup (name);
  t->enabled = g_ptr_array_new ();
  t->missing = g_ptr_array_new ();
  t->lost = g_array_new (FALSE, FALSE, sizeof (struct wtc_tr_lost));
  t->files = g_array_new (FALSE, FALSE, sizeof (struct wtc_tr_file));
  t->events = g_array_new (FALSE, FALSE, sizeof (struct wtc_tr_event));
  t->strings = g_string_chunk_new (65536);
  return t;
}

/* The next line of text[*pos..len) as a NUL-terminated copy in buf; a line
 * longer than the bound is cut (*long_line set) and the rest skipped. */
static bool
wtc_tr_next_line (const char *text, size_t len, size_t *pos, char *buf, bool *long_line)
{
  if (*pos >= len)
    return false;
  const char *s = text + *pos;
  const char *nl = memchr (s, '\n', len - *pos);
  size_t n = nl ? (size_t) (nl - s) : len - *pos;
  *pos += n + (nl != NULL);
  *long_line = n >= WTC_TRACE_MAX_LINE;
  n = MIN (n, WTC_TRACE_MAX_LINE - 1);
  memcpy (buf, s, n);
  buf[n] = '\0';
  if (n && buf[n - 1] == '\r')
    buf[n - 1] = '\0';
  if (strlen (buf) != n && !*long_line)
    *long_line = true;          /* a NUL byte: not text */
  return true;
}

struct wtc_trace *
wtc_trace_parse (const char *name, const char *text, size_t len, GError **error)
{
  g_autoptr (wtc_trace) t = wtc_trace_new (name);
  g_autofree char *buf = g_malloc (WTC_TRACE_MAX_LINE);
  size_t pos = 0;
  bool long_line, header = true;
  while (wtc_tr_next_line (text, len, &pos, buf, &long_line)) {
    t->lines++;
    if (t->lines == 1 && (long_line || strcmp (buf, "# wtrack-trace 1") != 0)) {
      g_set_error (error, WTC_ERROR, 0, "%s: line 1: not \"# wtrack-trace 1\": not a trace.txt of wtrack-run --trace", name);
      return NULL;
    }
    if (t->lines == 1)
      continue;
    int h = header && !long_line ? wtc_tr_header_line (t, buf) : WTC_HDR_NOT_OURS;
    if (h == WTC_HDR_BAD || (h == WTC_HDR_OK && t->lines > WTC_TRACE_MAX_HEADER)) {
      g_autofree char *safe = wtc_text_safe (buf);
      g_set_error (error, WTC_ERROR, 0, "%s: line %" PRIu64 ": \"%s\" is not a header line of trace.txt (doc/formats.md)",
                   name, t->lines, safe);
      return NULL;
    }
    if (h == WTC_HDR_OK)
      continue;
    header = false;
    if (long_line)
      wtc_tr_malformed (t);
    else
      wtc_tr_text_line (t, buf);
  }
  if (t->lines == 0) {
    g_set_error (error, WTC_ERROR, 0, "%s: empty: not a trace.txt of wtrack-run --trace", name);
    return NULL;
  }
  return g_steal_pointer (&t);
}

struct wtc_trace *
wtc_trace_read (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  return wtc_trace_parse (path, text, len, error);
}

void
wtc_trace_free (struct wtc_trace *t)
{
  if (!t)
    return;
  g_free (t->path);
  g_free (t->kernel);
  g_free (t->clock);
  g_ptr_array_unref (t->enabled);
  g_ptr_array_unref (t->missing);
  g_array_unref (t->lost);
  g_array_unref (t->files);
  g_array_unref (t->events);
  g_string_chunk_free (t->strings);
  g_free (t);
}

bool
wtc_trace_has_event (const struct wtc_trace *t, const char *event)
{
  for (guint i = 0; i < t->missing->len; i++)
    if (strcmp (g_ptr_array_index (t->missing, i), event) == 0)
      return false;
  for (guint i = 0; i < t->enabled->len; i++)
    if (strcmp (g_ptr_array_index (t->enabled, i), event) == 0)
      return true;
  if (t->enabled->len)
    return false;
  const char *name = strchr (event, ':');
  name = name ? name + 1 : event;
  for (guint i = 0; i < t->events->len; i++)
    if (strcmp (g_array_index (t->events, struct wtc_tr_event, i).name, name) == 0)
      return true;
  return false;
}

uint64_t
wtc_trace_file_ino (const struct wtc_trace *t, const char *name)
{
  for (guint i = 0; i < t->files->len; i++) {
    const struct wtc_tr_file *f = &g_array_index (t->files, struct wtc_tr_file, i);
    if (strcmp (f->name, name) == 0)
      return f->ino;
  }
  return 0;
}
