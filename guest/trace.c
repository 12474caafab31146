/* The guest kernel's trace (wtrack-run --trace; doc/design.md "Tracing"):
 * the workload's MARKs also go to tracefs's trace_marker, and after the
 * workload "wtrack-guest trace" sends the trace text, bounded and with its
 * header (doc/formats.md, trace.txt), to the channel in TRACE pieces. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "channel.h"
#include "channel-writer.h"
#include "guest.h"

/* The header file init writes (its "# disk", "# enabled" and "# missing"
 * lines) is read up to this much. */
#define WTG_TRACE_HEAD_MAX (256u << 10)
#define WTG_TRACE_READ (64u << 10)

/* A growing text. */
struct wtg_text {
  char *p;
  size_t len, cap;
  bool failed;                  /* out of memory: what follows is dropped */
};

static void
wtg_text_add (struct wtg_text *t, const char *s, size_t n)
{
  if (t->failed)
    return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + n + 1)
      cap *= 2;
    char *p = realloc (t->p, cap);
    if (!p) {
      t->failed = true;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
  memcpy (t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void
wtg_text_printf (struct wtg_text *t, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
wtg_text_printf (struct wtg_text *t, const char *fmt, ...)
{
  char line[4096];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  if (n > 0)
    wtg_text_add (t, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
}

/* ---- the workload's side: MARKs into trace_marker ---------------------- */

void
wtg_trace_marker_open (struct wtg_run *run)
{
  run->trace_marker_fd = -1;
  if (!run->opt->trace_marker)
    return;
  run->trace_marker_fd = open (run->opt->trace_marker, O_WRONLY | O_CLOEXEC);
  if (run->trace_marker_fd < 0)
    wtg_text (run, "trace: cannot open %s: %m; MARKs are not in the trace",
              run->opt->trace_marker);
}

/* One write a MARK: the kernel stamps it as one event, in the same
 * timeline as the tracepoints. */
void
wtg_trace_marker_write (struct wtg_run *run, const char *label, size_t n)
{
  if (run->trace_marker_fd < 0)
    return;
  if (write (run->trace_marker_fd, label, n) < 0 && errno != EBADF) {
    /* a full or disabled buffer refuses it; the trace's lost counts say
     * the rest */
  }
}

/* ---- the "trace" command: header and text to the channel -------------- */

/* "# lost 0=N 1=N ...": per CPU, the events the ring buffer overwrote
 * (overrun) or refused (dropped events), from per_cpu/cpuN/stats. */
static void
wtg_trace_lost (const char *tracefs, struct wtg_text *h)
{
  wtg_text_printf (h, "# lost");
  for (unsigned cpu = 0; cpu < 4096; cpu++) {
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s/per_cpu/cpu%u/stats", tracefs, cpu);
    FILE *fp = fopen (path, "re");
    if (!fp)
      break;
    uint64_t lost = 0, v;
    char line[256];
    while (fgets (line, sizeof line, fp))
      if (sscanf (line, "overrun: %" SCNu64, &v) == 1
          || sscanf (line, "dropped events: %" SCNu64, &v) == 1)
        lost += v;
    fclose (fp);
    wtg_text_printf (h, " %u=%" PRIu64, cpu, lost);
  }
  wtg_text_printf (h, "\n");
}

/* nftw's callback has no argument: the walk's state. */
static struct wtg_run *wtg_walk_run;
static struct wtg_text *wtg_walk_head;

static int
wtg_trace_file (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) ftw;
  if (flag != FTW_F || !S_ISREG (st->st_mode))
    return 0;
  char *name = NULL;
  if (wtg_fs_path (wtg_walk_run, path, &name) < 0)
    return 1;
  for (char *c = name; *c; c++)         /* one word on one line */
    if (*c == ' ' || *c == '\n' || *c == '\r' || *c == '\t')
      *c = '?';
  wtg_text_printf (wtg_walk_head, "# file %s %" PRIu64 "\n", name, (uint64_t) st->st_ino);
  free (name);
  return 0;
}

/* "# file NAME INODE" for every regular file under dir, named as the
 * manifest names them (from the file system's root). */
static int
wtg_trace_files (struct wtg_run *run, const char *dir, struct wtg_text *h)
{
  if (!realpath (dir, run->dir_abs))
    return wtg_fail (run, "trace: realpath: %s: %m", dir);
  if (wtg_locate (run, run->dir_abs) < 0)
    return -1;
  wtg_walk_run = run;
  wtg_walk_head = h;
  if (nftw (run->dir_abs, wtg_trace_file, 16, FTW_PHYS) != 0)
    return run->error[0] ? -1 : wtg_fail (run, "trace: walking %s: %m", run->dir_abs);
  return 0;
}

/* Init's lines ("# disk", "# enabled", "# missing"), as they are; only
 * lines starting "# " are taken. */
static void
wtg_trace_head_file (const char *path, struct wtg_text *h)
{
  FILE *fp = path ? fopen (path, "re") : NULL;
  if (!fp) {
    wtg_text_printf (h, "# disk ?\n# enabled\n# missing\n");
    return;
  }
  char *line = NULL;
  size_t cap = 0, total = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, fp)) > 0 && total < WTG_TRACE_HEAD_MAX) {
    if (strncmp (line, "# ", 2) != 0)
      continue;
    wtg_text_add (h, line, (size_t) n);
    if (line[n - 1] != '\n')
      wtg_text_add (h, "\n", 1);
    total += (size_t) n;
  }
  free (line);
  fclose (fp);
}

/* The trace file's text, at most max bytes cut at a line's end; the bytes
 * past the cut are counted in *dropped. */
static int
wtg_trace_text (struct wtg_run *run, const char *tracefs, uint64_t max,
                struct wtg_text *t, uint64_t *dropped)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/trace", tracefs);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  *dropped = 0;
  if (fd < 0) {
    fprintf (stderr, "wtrack-guest: trace: %s: %m (no trace text)\n", path);
    return 0;
  }
  char *buf = malloc (WTG_TRACE_READ);
  if (!buf) {
    close (fd);
    return wtg_fail (run, "trace: malloc: %m");
  }
  bool cut = false;
  for (;;) {
    ssize_t n = read (fd, buf, WTG_TRACE_READ);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      fprintf (stderr, "wtrack-guest: trace: read %s: %m (the text ends here)\n", path);
      break;
    }
    if (n == 0)
      break;
    size_t take = (size_t) n;
    if (!cut && t->len + take > max) {
      cut = true;
      size_t room = max > t->len ? (size_t) (max - t->len) : 0;
      /* back to the end of the last whole line that fits */
      size_t end = room;
      while (end > 0 && buf[end - 1] != '\n')
        end--;
      if (end == 0 && t->len) {
        /* the line began in an earlier read: cut back there */
        char *nl = memrchr (t->p, '\n', t->len);
        size_t keep = nl ? (size_t) (nl - t->p) + 1 : 0;
        *dropped += t->len - keep;
        t->len = keep;
      }
      wtg_text_add (t, buf, end);
      *dropped += take - end;
      continue;
    }
    if (cut)
      *dropped += take;
    else
      wtg_text_add (t, buf, take);
  }
  free (buf);
  close (fd);
  if (t->failed)
    return wtg_fail (run, "trace: out of memory for the trace's text");
  return 0;
}

/* wtrack-guest trace [--trace-head FILE] [--trace-max-kb N] TRACEFS DIR */
int
wtg_trace_send (struct wtg_run *run)
{
  const char *tracefs = run->opt->operands[0], *dir = run->opt->operands[1];
  struct wtg_text head = { 0 }, text = { 0 };
  struct utsname u;
  if (uname (&u) < 0)
    snprintf (u.release, sizeof u.release, "unknown");
  wtg_text_printf (&head, "# wtrack-trace 1\n# kernel %s\n", u.release);
  wtg_trace_head_file (run->opt->trace_head, &head);
  wtg_trace_lost (tracefs, &head);
  uint64_t dropped = 0, t0 = wtg_now_ns ();
  int rc = wtg_trace_files (run, dir, &head);
  if (rc == 0)
    rc = wtg_trace_text (run, tracefs, run->opt->trace_max_kb << 10, &text, &dropped);
  uint64_t t_read = wtg_now_ns ();
  if (rc == 0 && dropped)
    wtg_text_printf (&head, "# truncated %" PRIu64 "\n", dropped);
  if (rc == 0 && head.failed)
    rc = wtg_fail (run, "trace: out of memory for the trace's header");
  if (rc == 0) {
    wtg_text_add (&head, text.p ? text.p : "", text.len);
    free (text.p);
    text.p = NULL;
    if (head.failed)
      rc = wtg_fail (run, "trace: out of memory for the trace");
  }
  for (size_t off = 0; rc == 0 && off < head.len; off += WTCH_TRACE_PIECE) {
    size_t n = head.len - off < WTCH_TRACE_PIECE ? head.len - off : WTCH_TRACE_PIECE;
    uint16_t flags = off + n == head.len ? WTCH_F_TRACE_LAST : 0;
    if (wtg_channel_send_flags (run->chan, WTCH_TRACE, flags, head.p + off, (uint32_t) n) < 0)
      rc = -1;
  }
  if (rc == 0)
    printf ("wtrack-guest: trace: %zu bytes sent in %zu pieces (read in %.2f s, sent in %.2f s)%s\n",
            head.len, (head.len + WTCH_TRACE_PIECE - 1) / WTCH_TRACE_PIECE,
            (double) (t_read - t0) / 1e9, (double) (wtg_now_ns () - t_read) / 1e9,
            dropped ? " (the text was cut: see \"# truncated\")" : "");
  free (head.p);
  free (text.p);
  if (run->error[0]) {
    fprintf (stderr, "wtrack-guest: %s\n", run->error);
    return WTG_EXIT_FAILED;
  }
  return rc == 0 ? WTG_EXIT_OK : WTG_EXIT_CHANNEL;
}
