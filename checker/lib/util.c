/* Small helpers every command uses (lib/util.h). */
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "sector-hash.h"
#include "wtlog.h"

/* 8 MiB per pread: large enough that the syscall cost vanishes next to
 * hashing, small enough to stay in cache. */
#define WTC_IMAGE_WINDOW (8u << 20)

G_DEFINE_QUARK (wtc-error-quark, wtc_error)

char *
wtc_fmt_secs (uint64_t ns, char *buf, size_t len)
{
  snprintf (buf, len, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u,
            ns % 1000000000u / 1000u);
  return buf;
}

char *
wtc_fmt_iso (uint64_t realtime_ns, char *buf, size_t len)
{
  time_t secs = (time_t) (realtime_ns / 1000000000u);
  struct tm tm;
  char date[40];
  if (!gmtime_r (&secs, &tm)
      || strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    snprintf (date, sizeof date, "@%" PRIu64, (uint64_t) secs);
  snprintf (buf, len, "%s.%03" PRIu64 "Z", date,
            realtime_ns % 1000000000u / 1000000u);
  return buf;
}

char *
wtc_fmt_record_flags (uint16_t flags, char *buf, size_t len)
{
  static const struct { uint16_t bit; const char *name; } names[] = {
    { WTLOG_F_FUA, "FUA" }, { WTLOG_F_MAY_TRIM, "MAY_TRIM" },
    { WTLOG_F_FAST_ZERO, "FAST_ZERO" }, { WTLOG_F_DATA, "DATA" },
    { WTLOG_F_FAILED, "FAILED" }, { WTLOG_F_APPLIED, "APPLIED" },
    { WTLOG_F_IN_IMAGE, "IN_IMAGE" },
  };
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    if ((flags & names[i].bit) && used < len)
      used += (size_t) snprintf (buf + used, len - used, "%s%s",
                                 used ? "," : "", names[i].name);
  if (!used)
    snprintf (buf, len, "-");
  return buf;
}

const char *
wtc_errno_name (uint32_t err, char *buf, size_t len)
{
  const char *name = err <= INT32_MAX ? strerrorname_np ((int) err) : NULL;
  if (name)
    return name;
  snprintf (buf, len, "errno %" PRIu32, err);
  return buf;
}

char *
wtc_fmt_run_id (const uint8_t id[16], char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < 16 && used + 2 < len; i++)
    used += (size_t) snprintf (buf + used, len - used, "%02x", id[i]);
  return buf;
}

char *
wtc_fmt_bytes (uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double v = (double) bytes;
  unsigned u = 0;
  while (v >= 1024 && u + 1 < G_N_ELEMENTS (units)) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf (buf, len, "%" PRIu64 " B", bytes);
  else
    snprintf (buf, len, "%.1f %s", v, units[u]);
  return buf;
}

/* The code point of the UTF-8 sequence at s (at most left bytes), its
 * length in *n; -1 when the bytes there are not UTF-8 (one byte taken). */
static gint32
wtc_utf8_at (const char *s, size_t left, size_t *n)
{
  gunichar u = g_utf8_get_char_validated (s, (gssize) MIN (left, 6u));
  if (u == (gunichar) -1 || u == (gunichar) -2 || u == 0) {
    *n = 1;
    return -1;
  }
  *n = (size_t) (g_utf8_next_char (s) - s);
  return (gint32) u;
}

void
wtc_json_str_n (FILE *out, const char *s, size_t len)
{
  putc ('"', out);
  for (size_t i = 0, n; i < len; i += n) {
    unsigned char c = (unsigned char) s[i];
    n = 1;
    if (c == '"' || c == '\\')
      fprintf (out, "\\%c", c);
    else if (c == '\n')
      fputs ("\\n", out);
    else if (c == '\t')
      fputs ("\\t", out);
    else if (c < 0x20 || c == 0x7f)
      fprintf (out, "\\u%04x", c);
    else if (c < 0x80)
      putc (c, out);
    else {
      /* UTF-8 as its code points (surrogate pairs past U+FFFF); a byte
       * that is not UTF-8 cannot be said in JSON: U+FFFD stands for it. */
      gint32 u = wtc_utf8_at (s + i, len - i, &n);
      if (u < 0)
        fputs ("\\ufffd", out);
      else if (u < 0x10000)
        fprintf (out, "\\u%04x", (unsigned) u);
      else
        fprintf (out, "\\u%04x\\u%04x", 0xd800 + (((unsigned) u - 0x10000) >> 10),
                 0xdc00 + (((unsigned) u - 0x10000) & 0x3ff));
    }
  }
  putc ('"', out);
}

char *
wtc_text_safe (const char *s)
{
  if (!s)
    return NULL;
  GString *out = g_string_sized_new (strlen (s));
  size_t len = strlen (s);
  for (size_t i = 0, n; i < len; i += n) {
    unsigned char c = (unsigned char) s[i];
    n = 1;
    if (c == '\\')
      g_string_append (out, "\\\\");
    else if (c == '\n')
      g_string_append (out, "\\n");
    else if (c == '\r')
      g_string_append (out, "\\r");
    else if (c == '\t')
      g_string_append (out, "\\t");
    else if (c < 0x20 || c == 0x7f)
      g_string_append_printf (out, "\\x%02x", c);
    else if (c < 0x80)
      g_string_append_c (out, (char) c);
    else {
      /* Printable UTF-8 stays as it is; C1 controls (U+0080-U+009F, which
       * some terminals obey as escapes) and bytes that are not UTF-8 are
       * escaped byte by byte. */
      gint32 u = wtc_utf8_at (s + i, len - i, &n);
      if (u >= 0 && u >= 0xa0)
        g_string_append_len (out, s + i, (gssize) n);
      else
        for (size_t k = 0; k < n; k++)
          g_string_append_printf (out, "\\x%02x", (unsigned char) s[i + k]);
    }
  }
  return g_string_free (out, FALSE);
}

void
wtc_json_str (FILE *out, const char *s)
{
  wtc_json_str_n (out, s, strlen (s));
}

uint64_t
wtc_zero_hash (void)
{
  static uint64_t hash;
  static gsize done;
  if (g_once_init_enter (&done)) {
    static const unsigned char zeroes[WT_SECTOR_SIZE];
    hash = wt_sector_hash (zeroes);
    g_once_init_leave (&done, 1);
  }
  return hash;
}

struct wtc_image {
  int fd;
  char *path;
  uint64_t size;
  unsigned char *window;
  uint64_t win_first;           /* first sector in the window */
  uint64_t win_count;           /* sectors in the window */
};

struct wtc_image *
wtc_image_open (const char *path, GError **error)
{
  char why[512];
  int fd = wt_open_input (path, O_RDONLY | O_CLOEXEC, why, sizeof why);
  if (fd < 0) {
    g_set_error (error, WTC_ERROR, errno, "%s", why);
    return NULL;
  }
  off_t size = lseek (fd, 0, SEEK_END);
  if (size < 0) {
    g_set_error (error, WTC_ERROR, errno, "seek: %s: %s", path, g_strerror (errno));
    close (fd);
    return NULL;
  }
  posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  struct wtc_image *img = g_new0 (struct wtc_image, 1);
  img->fd = fd;
  img->path = g_strdup (path);
  img->size = (uint64_t) size;
  /* No bigger than the image: a small disk (a test's, a fuzzer's) is not
   * worth an 8 MiB buffer per open. */
  img->window = g_malloc (MIN ((uint64_t) WTC_IMAGE_WINDOW, img->size));
  return img;
}

uint64_t
wtc_image_size (const struct wtc_image *img)
{
  return img->size;
}

static bool
wtc_image_fill (struct wtc_image *img, uint64_t first, GError **error)
{
  uint64_t at = first * WT_SECTOR_SIZE;
  uint64_t want = MIN ((uint64_t) WTC_IMAGE_WINDOW, img->size - at);
  ssize_t got = wt_pread_full (img->fd, img->window, want, at);
  if (got < 0) {
    g_set_error (error, WTC_ERROR, errno, "read: %s at byte %" PRIu64 ": %s",
                 img->path, at, g_strerror (errno));
    return false;
  }
  if ((uint64_t) got < want) {
    g_set_error (error, WTC_ERROR, EIO, "read: %s: the image shrank to %" PRIu64
                 " bytes while read", img->path, at + (uint64_t) got);
    return false;
  }
  img->win_first = first;
  img->win_count = want / WT_SECTOR_SIZE;
  return true;
}

const unsigned char *
wtc_image_sector (struct wtc_image *img, uint64_t s, GError **error)
{
  if (s >= img->size / WT_SECTOR_SIZE) {
    g_set_error (error, WTC_ERROR, ERANGE, "sector %" PRIu64 " lies past the end of %s (%" PRIu64 " bytes)",
                 s, img->path, img->size);
    return NULL;
  }
  if (s < img->win_first || s >= img->win_first + img->win_count)
    if (!wtc_image_fill (img, s, error))
      return NULL;
  return img->window + (s - img->win_first) * WT_SECTOR_SIZE;
}

void
wtc_image_close (struct wtc_image *img)
{
  if (!img)
    return;
  close (img->fd);
  g_free (img->window);
  g_free (img->path);
  g_free (img);
}
