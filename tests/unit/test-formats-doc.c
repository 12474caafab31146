/* doc/formats.md against the code: the sizes its headings state, the
 * offsets, types, names and fixed values of its field tables, and the
 * numbered values of its flag and type tables.  Where the code has an
 * encoder (wtlog, channel, manifest), a structure is encoded with a distinct
 * value in every field and each documented field is read back from the
 * bytes at the documented offset; dm-log-writes lives in the checker, so
 * its tables are held to the constants of checker/interchange/dmlog-format.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "crc32c.h"
#include "interchange/dmlog-format.h"
#include "le.h"
#include "manifest.h"
#include "sector-hash.h"
#include "tap.h"
#include "wtlog-ring.h"
#include "wtlog.h"

#define MAX_ROWS 64
#define MAX_CELLS 6

struct row {
  int ncells;
  char cell[MAX_CELLS][512];
};

/* A field the code writes: its name in the doc, width and expected bytes
 * (NULL: not known here, only its presence and place are checked). */
struct want {
  const char *name;
  size_t width;
  const unsigned char *bytes;
};

struct named {
  const char *name;
  uint64_t value;
};

static char *doc;

static char *
read_doc (void)
{
  char exe[4096], path[4200];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0)
    return NULL;
  exe[n] = '\0';
  /* The test is TOP/tests/unit/test-formats-doc. */
  for (int up = 0; up < 3; up++) {
    char *slash = strrchr (exe, '/');
    if (!slash)
      return NULL;
    *slash = '\0';
  }
  snprintf (path, sizeof path, "%s/doc/formats.md", exe);
  FILE *f = fopen (path, "r");
  if (!f)
    return NULL;
  static char buf[1 << 20];
  size_t len = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[len] = '\0';
  return buf;
}

static bool
line_starts (const char *line, const char *prefix)
{
  return strncmp (line, prefix, strlen (prefix)) == 0;
}

static const char *
next_line (const char *p)
{
  const char *nl = strchr (p, '\n');
  return nl ? nl + 1 : p + strlen (p);
}

/* Whether the line is the heading "## H2" exactly: "## writes.wtlog" is not
 * "## writes.wtlog.ring". */
static bool
is_section (const char *line, const char *want2)
{
  size_t n = strlen (want2);
  return line_starts (line, want2) && (line[n] == '\n' || line[n] == '\0');
}

/* The heading "### SUB..." or "#### SUB..." inside the section "## H2". */
static const char *
find_heading (const char *h2, const char *sub)
{
  char want2[128], want3[128], want4[128];
  snprintf (want2, sizeof want2, "## %s", h2);
  snprintf (want3, sizeof want3, "### %s", sub);
  snprintf (want4, sizeof want4, "#### %s", sub);
  bool in = false;
  for (const char *p = doc; *p; p = next_line (p)) {
    if (line_starts (p, "## "))
      in = is_section (p, want2);
    else if (in && (line_starts (p, want3) || line_starts (p, want4)))
      return p;
  }
  return NULL;
}

/* "(N bytes" in the heading line. */
static long
heading_size (const char *h)
{
  const char *end = next_line (h);
  for (const char *p = h; p < end; p++)
    if (*p == '(') {
      char *after;
      long n = strtol (p + 1, &after, 10);
      if (after != p + 1 && strncmp (after, " bytes", 6) == 0)
        return n;
    }
  return -1;
}

static void
trim_cell (char *c)
{
  size_t n = strlen (c);
  while (n && (c[n - 1] == ' ' || c[n - 1] == '`'))
    c[--n] = '\0';
  size_t s = strspn (c, " `");
  memmove (c, c + s, n - s + 1);
}

/* The body rows of the first table after the heading, before the next. */
static int
table_rows (const char *h, struct row *rows)
{
  int n = 0, seen = 0;
  bool started = false;
  for (const char *p = next_line (h); *p && *p != '#'; p = next_line (p)) {
    if (*p != '|') {
      if (started)
        break;
      continue;
    }
    started = true;
    if (seen++ < 2 || n == MAX_ROWS)  /* the header row and the |---| row */
      continue;
    struct row *r = &rows[n++];
    r->ncells = 0;
    const char *c = p + 1, *eol = next_line (p);
    while (c < eol && r->ncells < MAX_CELLS) {
      const char *bar = memchr (c, '|', (size_t) (eol - c));
      if (!bar)
        break;
      size_t len = (size_t) (bar - c);
      if (len >= sizeof r->cell[0])
        len = sizeof r->cell[0] - 1;
      memcpy (r->cell[r->ncells], c, len);
      r->cell[r->ncells][len] = '\0';
      trim_cell (r->cell[r->ncells++]);
      c = bar + 1;
    }
  }
  return n;
}

/* u16, u32, u64, char[N], u8[N]: the width in bytes, or 0. */
static size_t
type_width (const char *t)
{
  if (strcmp (t, "u16") == 0)
    return 2;
  if (strcmp (t, "u32") == 0)
    return 4;
  if (strcmp (t, "u64") == 0)
    return 8;
  const char *br = strchr (t, '[');
  if (br && (line_starts (t, "char[") || line_starts (t, "u8[")))
    return (size_t) strtoul (br + 1, NULL, 10);
  return 0;
}

/* A "..." literal with \0 \r \n \\ \" escapes; returns its length or -1. */
static long
c_string (const char *s, unsigned char *out, size_t cap)
{
  size_t n = 0;
  if (*s++ != '"')
    return -1;
  for (; *s && *s != '"'; s++) {
    char c = *s;
    if (c == '\\') {
      c = *++s;
      c = c == '0' ? '\0' : c == 'r' ? '\r' : c == 'n' ? '\n' : c;
    }
    if (n == cap)
      return -1;
    out[n++] = (unsigned char) c;
  }
  return *s == '"' ? (long) n : -1;
}

static const struct want *
want_named (const struct want *w, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (w[i].name, name) == 0)
      return &w[i];
  return NULL;
}

/* The documented fixed value of a row matches the expected bytes. */
static bool
value_matches (const char *value, const struct want *w)
{
  unsigned char lit[256];
  if (value[0] == '"') {
    long n = c_string (value, lit, sizeof lit);
    return n == (long) w->width && memcmp (lit, w->bytes, w->width) == 0;
  }
  char *end;
  uint64_t v = strtoull (value, &end, 0);
  if (*end || w->width > 8)
    return false;
  uint64_t have = 0;
  memcpy (&have, w->bytes, w->width);
  return v == have;
}

/* Heading size, tiling, names, offsets and values of one field table. */
static void
check_fields (const char *what, const char *h2, const char *sub, long size,
              const unsigned char *enc, const struct want *w, size_t nw)
{
  struct row rows[MAX_ROWS];
  const char *h = find_heading (h2, sub);
  if (!tap_ok (h != NULL, "%s: doc/formats.md has \"%s\" under \"%s\"", what, sub, h2))
    return;
  long stated = heading_size (h);
  tap_ok (stated == size, "%s: the heading states %ld bytes, the code %ld",
          what, stated, size);
  int n = table_rows (h, rows);
  long at = 0;
  bool tiles = n > 0, known = true, placed = true, values = true;
  bool documented[64] = { false };
  for (int i = 0; i < n; i++) {
    struct row *r = &rows[i];
    long off = r->ncells >= 4 ? strtol (r->cell[0], NULL, 10) : -1;
    size_t width = r->ncells >= 4 ? type_width (r->cell[1]) : 0;
    if (off != at || width == 0) {
      printf ("# %s: row %d (%s) at offset %ld, type %s: expected offset %ld\n",
              what, i + 1, r->ncells >= 3 ? r->cell[2] : "?", off,
              r->ncells >= 2 ? r->cell[1] : "?", at);
      tiles = false;
      break;
    }
    at += (long) width;
    const struct want *f = want_named (w, nw, r->cell[2]);
    if (!f) {
      printf ("# %s: field %s is not one the code writes\n", what, r->cell[2]);
      known = false;
      continue;
    }
    documented[f - w] = true;
    if (f->width != width) {
      printf ("# %s: %s is %zu bytes in the doc, %zu in the code\n", what,
              f->name, width, f->width);
      placed = false;
      continue;
    }
    if (enc && f->bytes && memcmp (enc + off, f->bytes, width) != 0) {
      printf ("# %s: the bytes at offset %ld are not %s's\n", what, off, f->name);
      placed = false;
    }
    if (r->cell[3][0] && (!f->bytes || !value_matches (r->cell[3], f))) {
      printf ("# %s: %s: the doc's value %s is not the code's\n", what,
              f->name, r->cell[3]);
      values = false;
    }
  }
  tap_ok (tiles && at == size, "%s: the fields tile offsets 0 to %ld (end at %ld)",
          what, size, at);
  bool all = true;
  for (size_t i = 0; i < nw; i++)
    if (!documented[i]) {
      printf ("# %s: %s is not in the table\n", what, w[i].name);
      all = false;
    }
  tap_ok (known && all, "%s: the table names every field the code writes, no other", what);
  if (enc)
    tap_ok (placed, "%s: each field is at its documented offset in the encoded bytes", what);
  tap_ok (values, "%s: the documented fixed values (magic, version, ...) are the code's", what);
}

/* A value table (types, flags, kinds) against the code's enum; mask_or_max
 * is the code's all-flags mask (or_values) or its highest value. */
static void
check_values (const char *what, const char *h2, const char *sub,
              const struct named *v, size_t nv, bool or_values,
              uint64_t mask_or_max)
{
  struct row rows[MAX_ROWS];
  const char *h = find_heading (h2, sub);
  if (!tap_ok (h != NULL, "%s: doc/formats.md has \"%s\" under \"%s\"", what, sub, h2))
    return;
  int n = table_rows (h, rows);
  bool good = n == (int) nv;
  uint64_t acc = 0;
  for (int i = 0; i < n; i++) {
    char *end;
    uint64_t value = strtoull (rows[i].cell[0], &end, 0);
    const struct named *k = NULL;
    for (size_t j = 0; j < nv; j++)
      if (rows[i].ncells >= 2 && strcmp (v[j].name, rows[i].cell[1]) == 0)
        k = &v[j];
    if (*end || !k || k->value != value) {
      printf ("# %s: row %s %s: %s\n", what, rows[i].cell[0], rows[i].cell[1],
              k ? "another value in the code" : "no such name in the code");
      good = false;
    }
    acc = or_values ? acc | value : (value > acc ? value : acc);
  }
  if (n != (int) nv)
    printf ("# %s: %d rows, the code has %zu\n", what, n, nv);
  tap_ok (good && acc == mask_or_max, "%s: the table's values are the code's "
          "(%s 0x%" PRIx64 ", code 0x%" PRIx64 ")", what,
          or_values ? "all flags" : "highest", acc, mask_or_max);
}

/* Expected bytes for a number. */
static const unsigned char *
le (uint64_t v, size_t width)
{
  static unsigned char pool[64][8];
  static int next;
  unsigned char *p = pool[next++ % 64];
  memset (p, 0, 8);
  memcpy (p, &v, width);
  return p;
}

static const unsigned char zeroes[4096];

static void
check_wtlog (void)
{
  struct wtlog_header h;
  unsigned char enc[WTLOG_HEADER_SIZE], run_id[16], creator[WTLOG_CREATOR_LEN] = { 0 };
  wtlog_header_init (&h, 0x1111222233334444ull, 0x5555666677778888ull, true,
                     "test-formats-doc creator");
  h.flags |= WTLOG_H_NOTIME;
  h.start_realtime_ns = 0x0102030405060708ull;
  h.start_monotonic_ns = 0x1112131415161718ull;
  for (int i = 0; i < 16; i++)
    run_id[i] = h.run_id[i] = (uint8_t) (0xa0 + i);
  memcpy (creator, h.creator, strlen (h.creator));
  wtlog_header_encode (&h, enc);
  const struct want hw[] = {
    { "magic", WTLOG_MAGIC_LEN, (const unsigned char *) WTLOG_MAGIC },
    { "version", 4, le (WTLOG_VERSION, 4) },
    { "header_size", 4, le (WTLOG_HEADER_SIZE, 4) },
    { "sector_size", 4, le (WT_SECTOR_SIZE, 4) },
    { "hash_id", 4, le (WT_HASH_XXH3_64, 4) },
    { "flags", 4, le (h.flags, 4) },
    { "reserved", 4, zeroes },
    { "disk_size", 8, le (h.disk_size, 8) },
    { "channel_size", 8, le (h.channel_size, 8) },
    { "start_realtime_ns", 8, le (h.start_realtime_ns, 8) },
    { "start_monotonic_ns", 8, le (h.start_monotonic_ns, 8) },
    { "run_id", 16, run_id },
    { "creator", WTLOG_CREATOR_LEN, creator },
    { "zero", WTLOG_HEADER_SIZE - 4 - 80 - WTLOG_CREATOR_LEN, zeroes },
    { "header_crc", 4, le (wt_crc32c (enc, WTLOG_HEADER_SIZE - 4), 4) },
  };
  check_fields ("wtlog header", "writes.wtlog", "Header (", WTLOG_HEADER_SIZE,
                enc, hw, sizeof hw / sizeof hw[0]);

  /* A WRITE with hashes and data over a partial first and last sector. */
  struct wtlog_record rec = {
    .type = WTLOG_WRITE, .flags = WTLOG_F_FUA | WTLOG_F_DATA, .conn = 0x01020304,
    .err = 0x0a0b0c0d, .seq = 0x2122232425262728ull, .t_start = 0x3132333435363738ull,
    .t_end = 0x4142434445464748ull, .offset = 3 * 512 + 100, .length = 1000,
  };
  uint64_t hashes[3] = { 1, 2, 3 };
  unsigned char data[1000] = { 0 }, fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  wtlog_encode (&rec, hashes, data, fixed, iov);
  const struct want rw[] = {
    { "size", 4, le (rec.size, 4) },
    { "crc", 4, le (rec.crc, 4) },
    { "type", 2, le (rec.type, 2) },
    { "flags", 2, le (rec.flags, 2) },
    { "conn", 4, le (rec.conn, 4) },
    { "err", 4, le (rec.err, 4) },
    { "reserved", 4, zeroes },
    { "seq", 8, le (rec.seq, 8) },
    { "t_start", 8, le (rec.t_start, 8) },
    { "t_end", 8, le (rec.t_end, 8) },
    { "offset", 8, le (rec.offset, 8) },
    { "length", 8, le (rec.length, 8) },
  };
  check_fields ("wtlog record", "writes.wtlog", "Fixed part (", WTLOG_FIXED_SIZE,
                fixed, rw, sizeof rw / sizeof rw[0]);
  /* The payload rule: sectors offset/512 to (offset+length-1)/512. */
  uint64_t touched = (rec.offset + rec.length - 1) / 512 - rec.offset / 512 + 1;
  tap_ok (rec.size == wt_align8 (WTLOG_FIXED_SIZE + 8 * touched + rec.length),
          "wtlog record: size %" PRIu32 " is 64 + 8 x %" PRIu64 " sectors + length, "
          "rounded to 8", rec.size, touched);

  const struct named hflags[] = {
    { "DATA", WTLOG_H_DATA }, { "NOTIME", WTLOG_H_NOTIME }, { "STORE", WTLOG_H_STORE },
  };
  check_values ("wtlog header flags", "writes.wtlog", "Header flags", hflags, 3,
                true, WTLOG_H_DATA | WTLOG_H_NOTIME | WTLOG_H_STORE);
  const struct named types[] = {
    { "WRITE", WTLOG_WRITE }, { "ZERO", WTLOG_ZERO }, { "TRIM", WTLOG_TRIM },
    { "FLUSH", WTLOG_FLUSH }, { "CHANNEL", WTLOG_CHANNEL }, { "OPEN", WTLOG_OPEN },
    { "CLOSE", WTLOG_CLOSE }, { "SAVED", WTLOG_SAVED },
  };
  check_values ("wtlog record types", "writes.wtlog", "Record types", types, 8,
                false, WTLOG_TYPE_MAX);
  const struct named rflags[] = {
    { "FUA", WTLOG_F_FUA }, { "MAY_TRIM", WTLOG_F_MAY_TRIM },
    { "FAST_ZERO", WTLOG_F_FAST_ZERO }, { "DATA", WTLOG_F_DATA },
    { "FAILED", WTLOG_F_FAILED }, { "APPLIED", WTLOG_F_APPLIED },
    { "IN_IMAGE", WTLOG_F_IN_IMAGE },
  };
  check_values ("wtlog record flags", "writes.wtlog", "Record flags", rflags, 7,
                true, WTLOG_F_ALL);
}

static void
check_ring (void)
{
  struct wtlog_ring_header h = {
    .ring_size = 0x0102030405060000ull, .moved = 0x1112131415161718ull,
  };
  unsigned char enc[WTLOG_RING_HEADER_SIZE], run_id[16];
  for (int i = 0; i < 16; i++)
    run_id[i] = h.run_id[i] = (uint8_t) (0xb0 + i);
  wtlog_ring_header_encode (&h, enc);
  const struct want w[] = {
    { "magic", WTLOG_RING_MAGIC_LEN, (const unsigned char *) WTLOG_RING_MAGIC },
    { "version", 4, le (WTLOG_RING_VERSION, 4) },
    { "header_size", 4, le (WTLOG_RING_HEADER_SIZE, 4) },
    { "ring_size", 8, le (h.ring_size, 8) },
    { "run_id", 16, run_id },
    { "moved", 8, le (h.moved, 8) },
    { "zero", WTLOG_RING_HEADER_SIZE - WTLOG_RING_FIELDS_END, zeroes },
  };
  check_fields ("wtlog ring header", "writes.wtlog.ring", "Header (",
                WTLOG_RING_HEADER_SIZE, enc, w, sizeof w / sizeof w[0]);
  /* The offsets the plugin writes the header's fields at. */
  tap_ok (WTLOG_RING_OFF_MAGIC == 0 && WTLOG_RING_OFF_VERSION == 8
          && WTLOG_RING_OFF_HEADER_SIZE == 12 && WTLOG_RING_OFF_RING_SIZE == 16
          && WTLOG_RING_OFF_RUN_ID == 24 && WTLOG_RING_OFF_MOVED == 40
          && WTLOG_RING_FIELDS_END == 48,
          "wtlog ring header: the offset macros are the documented offsets");
}

static void
check_channel (void)
{
  static unsigned char enc[WTCH_BLOCK];
  const char payload[] = "status=0\n";
  uint32_t len = sizeof payload - 1;
  uint64_t size = wtch_encode (enc, WTCH_RESULT, 0, 0x0102030405060708ull,
                               0x1112131415161718ull, payload, len);
  const struct want w[] = {
    { "magic", 4, (const unsigned char *) WTCH_MAGIC },
    { "type", 2, le (WTCH_RESULT, 2) },
    { "flags", 2, le (0, 2) },
    { "number", 8, le (0x0102030405060708ull, 8) },
    { "guest_ns", 8, le (0x1112131415161718ull, 8) },
    { "length", 4, le (len, 4) },
    { "payload_crc", 4, le (wt_crc32c (payload, len), 4) },
    { "header_crc", 4, le (wt_crc32c (enc, 32), 4) },
  };
  check_fields ("channel message header", "channel.bin", "Message header (",
                WTCH_HEADER_SIZE, enc, w, sizeof w / sizeof w[0]);
  tap_ok (size == WTCH_BLOCK && memcmp (enc + WTCH_HEADER_SIZE, payload, len) == 0,
          "channel message: the payload follows the header, padded to 512 bytes");
  const struct named types[] = {
    { "HELLO", WTCH_HELLO }, { "MARK", WTCH_MARK }, { "MANIFEST", WTCH_MANIFEST },
    { "RESULT", WTCH_RESULT }, { "TEXT", WTCH_TEXT }, { "TRACE", WTCH_TRACE },
  };
  check_values ("channel message types", "channel.bin", "Message types", types, 6,
                false, WTCH_TYPE_MAX);
}

/* A cold manifest: flag COLD in the header, a file's errno in its entry. */
static void
check_cold_manifest (void)
{
  struct wtmf_file f = { .id = 7, .path = (char *) "/data/f2", .error = 2 };
  struct wtmf_buf b = { 0 };
  wtmf_buf_header_cold (&b, 1);
  wtmf_buf_file (&b, &f);
  if (!tap_ok (wtmf_buf_finish (&b) == 0, "cold manifest: encoded"))
    return;
  tap_ok (b.p[32] == WTMF_FLAG_COLD && b.p[24] == 0 && b.p[28] == 0,
          "cold manifest: flags (byte 32) say COLD, no ops, checkpoint 0");
  tap_ok (b.p[WTMF_HEADER_SIZE + 28] == 2,
          "cold manifest: the file's error is at byte 28 of its entry");
  struct wtmf_manifest m;
  size_t used;
  char err[256];
  bool parsed = wtmf_parse (b.p, b.len, &m, &used, err, sizeof err) == 0;
  tap_ok (parsed && m.flags == WTMF_FLAG_COLD && m.files[0].error == 2,
          "cold manifest: parsed back with its flag and the file's errno");
  if (parsed)
    wtmf_free (&m);
  b.p[32] = 0;                  /* the same file error, not flagged cold */
  wt_put32 (b.p + b.len - 8, wt_crc32c (b.p, b.len - 8));
  parsed = wtmf_parse (b.p, b.len, &m, &used, err, sizeof err) == 0;
  tap_ok (!parsed && strstr (err, "byte 68") && strstr (err, "not flagged cold"),
          "manifest: a file error without the COLD flag is refused at its byte: %s", err);
  if (parsed)
    wtmf_free (&m);
  wtmf_buf_free (&b);
}

static void
check_manifest (void)
{
  struct wtmf_extent ext = { 0x0100000001ull, 0x0200000002ull, 0x0300000003ull,
                             WTMF_EXT_UNWRITTEN | WTMF_EXT_UNMAPPABLE };
  uint64_t hashes[2] = { 0xaaaa, 0xbbbb };
  uint32_t sector_ops[2] = { 1, 2 };
  struct wtmf_file f = {
    .id = 0x0a0b0c0d, .path = (char *) "/data/f1", .inode = 0x1122334455667788ull,
    .size = 1000, .nextents = 1, .extents = &ext, .hashes = hashes, .ops = sector_ops,
  };
  struct wtmf_op ops[2] = {
    { 0x5152535455565758ull, 0x0a0b0c0d, WTMF_OP_PWRITE, 0x61626364ull, 0x71727374ull },
    { 0x5152535455565759ull, 0x0a0b0c0d, WTMF_OP_FSYNC, 0, 0 },
  };
  struct wtmf_buf b = { 0 };
  wtmf_buf_header (&b, 1, 2, 0x0c0d0e0f);
  wtmf_buf_file (&b, &f);
  wtmf_buf_op (&b, &ops[0]);
  wtmf_buf_op (&b, &ops[1]);
  if (!tap_ok (wtmf_buf_finish (&b) == 0, "manifest: encoded"))
    return;
  /* The parts, as the doc lays them out. */
  size_t file_at = WTMF_HEADER_SIZE;
  size_t ext_at = file_at + WTMF_FILE_FIXED + wt_align8 (strlen (f.path));
  size_t op_at = ext_at + WTMF_EXTENT_SIZE + 8 * 2 + wt_align8 (4 * 2);
  size_t trailer_at = op_at + 2 * WTMF_OP_SIZE;
  tap_ok (b.len == trailer_at + WTMF_TRAILER_SIZE,
          "manifest: header, file, path, extent, hashes, op numbers, ops and "
          "trailer follow each other as documented (%zu bytes)", b.len);
  if (b.len != trailer_at + WTMF_TRAILER_SIZE) {
    wtmf_buf_free (&b);
    return;
  }
  const struct want hw[] = {
    { "magic", 8, (const unsigned char *) WTMF_MAGIC },
    { "version", 4, le (WTMF_VERSION, 4) },
    { "sector_size", 4, le (WT_SECTOR_SIZE, 4) },
    { "hash_id", 4, le (WT_HASH_XXH3_64, 4) },
    { "nfiles", 4, le (1, 4) },
    { "nops", 4, le (2, 4) },
    { "checkpoint", 4, le (0x0c0d0e0f, 4) },
    { "flags", 4, zeroes },
    { "reserved2", 4, zeroes },
  };
  check_fields ("manifest header", "The manifest", "Header (", WTMF_HEADER_SIZE,
                b.p, hw, sizeof hw / sizeof hw[0]);
  const struct want fw[] = {
    { "id", 4, le (f.id, 4) },
    { "path_len", 4, le (strlen (f.path), 4) },
    { "inode", 8, le (f.inode, 8) },
    { "size", 8, le (f.size, 8) },
    { "nextents", 4, le (1, 4) },
    { "error", 4, zeroes },
  };
  check_fields ("manifest file entry", "The manifest", "File entry (",
                WTMF_FILE_FIXED, b.p + file_at, fw, sizeof fw / sizeof fw[0]);
  tap_ok (memcmp (b.p + file_at + WTMF_FILE_FIXED, f.path, strlen (f.path)) == 0
          && memcmp (b.p + ext_at + WTMF_EXTENT_SIZE, hashes, 16) == 0
          && memcmp (b.p + ext_at + WTMF_EXTENT_SIZE + 16, sector_ops, 8) == 0,
          "manifest: the path, then the hashes and op numbers after the extents");
  const struct want ew[] = {
    { "logical", 8, le (ext.logical, 8) },
    { "physical", 8, le (ext.physical, 8) },
    { "length", 8, le (ext.length, 8) },
    { "flags", 4, le (ext.flags, 4) },
    { "reserved", 4, zeroes },
  };
  check_fields ("manifest extent", "The manifest", "Extent (", WTMF_EXTENT_SIZE,
                b.p + ext_at, ew, sizeof ew / sizeof ew[0]);
  const struct want ow[] = {
    { "guest_ns", 8, le (ops[0].guest_ns, 8) },
    { "file_id", 4, le (ops[0].file_id, 4) },
    { "kind", 4, le (ops[0].kind, 4) },
    { "offset", 8, le (ops[0].offset, 8) },
    { "length", 8, le (ops[0].length, 8) },
  };
  check_fields ("manifest op", "The manifest", "Op (", WTMF_OP_SIZE,
                b.p + op_at, ow, sizeof ow / sizeof ow[0]);
  const struct want tw[] = {
    { "crc", 4, le (wt_crc32c (b.p, trailer_at), 4) },
    { "magic", 4, (const unsigned char *) WTMF_TRAILER_MAGIC },
  };
  check_fields ("manifest trailer", "The manifest", "Trailer (", WTMF_TRAILER_SIZE,
                b.p + trailer_at, tw, sizeof tw / sizeof tw[0]);
  const struct named eflags[] = {
    { "UNWRITTEN", WTMF_EXT_UNWRITTEN }, { "UNMAPPABLE", WTMF_EXT_UNMAPPABLE },
    { "DELALLOC", WTMF_EXT_DELALLOC },
  };
  check_values ("manifest extent flags", "The manifest", "Extent flags", eflags, 3,
                true, WTMF_EXT_ALL);
  const struct named kinds[] = {
    { "MMAP_STORE", WTMF_OP_MMAP_STORE }, { "PWRITE", WTMF_OP_PWRITE },
    { "TRUNCATE", WTMF_OP_TRUNCATE }, { "PUNCH", WTMF_OP_PUNCH },
    { "MSYNC", WTMF_OP_MSYNC }, { "FSYNC", WTMF_OP_FSYNC },
    { "FALLOCATE", WTMF_OP_FALLOCATE }, { "MUNMAP", WTMF_OP_MUNMAP },
    { "DIRECT_WRITE", WTMF_OP_DIRECT_WRITE }, { "ZERO", WTMF_OP_ZERO },
    { "SYNC_RANGE", WTMF_OP_SYNC_RANGE }, { "FDATASYNC", WTMF_OP_FDATASYNC },
    { "FADVISE", WTMF_OP_FADVISE }, { "COLLAPSE", WTMF_OP_COLLAPSE },
    { "INSERT", WTMF_OP_INSERT }, { "COPY", WTMF_OP_COPY },
    { "SYNCFS", WTMF_OP_SYNCFS }, { "DROP_CACHES", WTMF_OP_DROP_CACHES },
    { "CLONE", WTMF_OP_CLONE }, { "DEDUPE", WTMF_OP_DEDUPE },
  };
  check_values ("manifest op kinds", "The manifest", "Op kinds", kinds, 20,
                false, WTMF_OP_KIND_MAX);
  const struct named mflags[] = { { "COLD", WTMF_FLAG_COLD } };
  check_values ("manifest flags", "The manifest", "Manifest flags", mflags, 1,
                true, WTMF_FLAG_ALL);
  wtmf_buf_free (&b);
  check_cold_manifest ();
}

static void
check_dmlog (void)
{
  const struct want sw[] = {
    { "magic", 8, le (WTC_DMLOG_MAGIC, 8) },
    { "version", 8, le (WTC_DMLOG_VERSION, 8) },
    { "nr_entries", 8, NULL },
    { "sector_size", 4, NULL },
  };
  check_fields ("dm-log-writes super block", "dm-log-writes", "Super block (",
                WTC_DMLOG_SUPER_SIZE, NULL, sw, sizeof sw / sizeof sw[0]);
  const struct want ew[] = {
    { "sector", 8, NULL }, { "nr_sectors", 8, NULL },
    { "flags", 8, NULL }, { "data_len", 8, NULL },
  };
  check_fields ("dm-log-writes entry", "dm-log-writes", "Entry (",
                WTC_DMLOG_ENTRY_SIZE, NULL, ew, sizeof ew / sizeof ew[0]);
  const struct named flags[] = {
    { "FLUSH", WTC_DMLOG_FLUSH }, { "FUA", WTC_DMLOG_FUA },
    { "DISCARD", WTC_DMLOG_DISCARD }, { "MARK", WTC_DMLOG_MARK },
    { "METADATA", WTC_DMLOG_METADATA },
  };
  check_values ("dm-log-writes entry flags", "dm-log-writes", "Entry flags", flags, 5,
                true, WTC_DMLOG_FLAGS_ALL);
}

int
main (void)
{
  doc = read_doc ();
  if (!tap_ok (doc != NULL, "doc/formats.md is read")) {
    tap_plan (tap_count);
    return tap_done ();
  }
  check_wtlog ();
  check_ring ();
  check_channel ();
  check_manifest ();
  check_dmlog ();
  tap_plan (tap_count);
  return tap_done ();
}
