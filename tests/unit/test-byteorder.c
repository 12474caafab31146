/* Every format's byte order, byte by byte: common/'s writers put each
 * integer little-endian at its offset (doc/formats.md), whatever the host,
 * and its readers give the values back. Built for the host and, with
 * each cross compiler, for the other architectures (tests/tests.mk): the
 * s390x build runs big-endian under qemu-s390x
 * (tests/test-unit-byteorder-cross.sh), where a host-order store would
 * show. Integers are chosen with eight distinct bytes, so any swap shows. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "crc32c.h"
#include "le.h"
#include "manifest.h"
#include "sector-hash.h"
#include "tap.h"
#include "wtlog-ring.h"
#include "wtlog.h"

#define V64 UINT64_C (0x0102030405060708)
#define V32 UINT32_C (0x0a0b0c0d)
#define V16 UINT16_C (0x0e0f)

/* Whether p holds v as n little-endian bytes. */
static int
is_le (const unsigned char *p, uint64_t v, int n)
{
  for (int i = 0; i < n; i++)
    if (p[i] != (unsigned char) (v >> (8 * i)))
      return 0;
  return 1;
}

static void
test_accessors (void)
{
  unsigned char b[8];
  wt_put64 (b, V64);
  tap_ok (is_le (b, V64, 8) && wt_get64 (b) == V64, "wt_put64/wt_get64: little-endian");
  wt_put32 (b, V32);
  tap_ok (is_le (b, V32, 4) && wt_get32 (b) == V32, "wt_put32/wt_get32: little-endian");
  wt_put16 (b, V16);
  tap_ok (is_le (b, V16, 2) && wt_get16 (b) == V16, "wt_put16/wt_get16: little-endian");
  uint64_t a64[2] = { V64, ~V64 }, r64[2];
  unsigned char b64[16];
  wt_put64_array (b64, a64, 2);
  wt_get64_array (r64, b64, 2);
  tap_ok (is_le (b64, V64, 8) && is_le (b64 + 8, ~V64, 8) && r64[0] == V64 && r64[1] == ~V64,
          "u64 arrays: little-endian, and back");
  uint32_t a32[2] = { V32, ~V32 }, r32[2];
  unsigned char b32[8];
  wt_put32_array (b32, a32, 2);
  wt_get32_array (r32, b32, 2);
  tap_ok (is_le (b32, V32, 4) && is_le (b32 + 4, ~V32, 4) && r32[0] == V32 && r32[1] == ~V32,
          "u32 arrays: little-endian, and back");
}

/* The values every host must compute alike: CRC32C's check value and
 * XXH3-64 of a known sector. */
static void
test_checksums (void)
{
  tap_ok (wt_crc32c ("123456789", 9) == UINT32_C (0xe3069283),
          "CRC32C of \"123456789\" is 0xe3069283 (%s)", wt_crc32c_kind ());
  unsigned char long_buf[40000];
  for (size_t i = 0; i < sizeof long_buf; i++)
    long_buf[i] = (unsigned char) (i * 7 + 3);
  uint32_t whole = wt_crc32c (long_buf, sizeof long_buf);
  uint32_t parts = wt_crc32c_update (wt_crc32c (long_buf, 13), long_buf + 13, sizeof long_buf - 13);
  tap_ok (whole == parts, "CRC32C over 40000 bytes: whole and in two parts agree");
  unsigned char sector[WT_SECTOR_SIZE];
  for (int i = 0; i < (int) WT_SECTOR_SIZE; i++)
    sector[i] = (unsigned char) i;
  tap_ok (wt_sector_hash (sector) == XXH3_64bits (sector, WT_SECTOR_SIZE)
          && XXH3_64bits ("", 0) == UINT64_C (0x2d06800538d394c2),
          "XXH3-64: the sector hash is XXH3's, whose empty-input value is 0x2d06800538d394c2");
}

static void
test_wtlog_header (void)
{
  struct wtlog_header h, back;
  unsigned char buf[WTLOG_HEADER_SIZE];
  char err[256];
  wtlog_header_init (&h, V64, V64 + 1, true, "test");
  h.start_realtime_ns = V64 + 2;
  h.start_monotonic_ns = V64 + 3;
  wtlog_header_encode (&h, buf);
  tap_ok (is_le (buf + 8, 1, 4) && is_le (buf + 12, 4096, 4) && is_le (buf + 16, 512, 4)
          && is_le (buf + 20, 1, 4) && is_le (buf + 24, WTLOG_H_DATA, 4)
          && is_le (buf + 32, V64, 8) && is_le (buf + 40, V64 + 1, 8)
          && is_le (buf + 48, V64 + 2, 8) && is_le (buf + 56, V64 + 3, 8)
          && is_le (buf + 4092, wt_crc32c (buf, 4092), 4),
          "writes.wtlog header: every integer little-endian at its offset");
  tap_ok (wtlog_header_decode (buf, &back, err, sizeof err) == 0 && back.disk_size == V64
          && back.channel_size == V64 + 1 && back.start_monotonic_ns == V64 + 3,
          "writes.wtlog header: read back");
}

static void
test_wtlog_record (void)
{
  uint64_t hashes[2] = { V64, ~V64 };
  struct wtlog_record rec = { .type = WTLOG_WRITE, .flags = WTLOG_F_FUA, .conn = V32,
                              .seq = V64, .t_start = V64 + 1, .t_end = V64 + 2,
                              .offset = 512, .length = 1024 };
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  int n = wtlog_encode (&rec, hashes, NULL, fixed, iov);
  tap_ok (n == 2 && is_le (fixed, 80, 4) && is_le (fixed + 4, rec.crc, 4)
          && is_le (fixed + 8, WTLOG_WRITE, 2) && is_le (fixed + 10, WTLOG_F_FUA, 2)
          && is_le (fixed + 12, V32, 4) && is_le (fixed + 24, V64, 8)
          && is_le (fixed + 32, V64 + 1, 8) && is_le (fixed + 40, V64 + 2, 8)
          && is_le (fixed + 48, 512, 8) && is_le (fixed + 56, 1024, 8),
          "writes.wtlog record: the fixed part little-endian at its offsets");
  tap_ok (n == 2 && iov[1].iov_len == 16 && is_le (iov[1].iov_base, V64, 8)
          && is_le ((unsigned char *) iov[1].iov_base + 8, ~V64, 8),
          "writes.wtlog record: the sector hashes little-endian");

  /* through a file: the writer, then the reader */
  char path[] = "/tmp/wtrack-byteorder-XXXXXX";
  int fd = mkstemp (path);
  close (fd);
  struct wtlog_header h;
  char err[256];
  wtlog_header_init (&h, 1 << 20, 0, false, "test");
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  struct wtlog_record out = { .type = WTLOG_WRITE, .conn = 1, .offset = 512, .length = 1024 };
  int wrote = w && wtlog_writer_append (w, &out, hashes, NULL) == 0 && wtlog_writer_close (w) == 0;
  struct wtlog_reader *r = wrote ? wtlog_reader_open_plain (path, &h, err, sizeof err) : NULL;
  struct wtlog_record in;
  tap_ok (r && wtlog_reader_next (r, &in) == 0 && in.nhashes == 2 && in.hashes[0] == V64
          && in.hashes[1] == ~V64, "writes.wtlog record: the reader gives the hashes back");
  if (r)
    wtlog_reader_close (r);
  unlink (path);
}

static void
test_ring_header (void)
{
  struct wtlog_ring_header h = { .ring_size = V64 << 12, .moved = V64 }, back;
  unsigned char buf[WTLOG_RING_HEADER_SIZE];
  char err[256];
  wtlog_ring_header_encode (&h, buf);
  tap_ok (is_le (buf + 8, 1, 4) && is_le (buf + 12, 4096, 4) && is_le (buf + 16, V64 << 12, 8)
          && is_le (buf + 40, V64, 8),
          "writes.wtlog.ring header: little-endian at its offsets");
  tap_ok (wtlog_ring_header_decode (buf, &back, err, sizeof err) == 0 && back.moved == V64
          && back.ring_size == V64 << 12, "writes.wtlog.ring header: read back");
}

static void
test_channel (void)
{
  unsigned char buf[512];
  struct wtch_message m;
  char err[256];
  wtch_encode (buf, WTCH_MARK, 0, V64, V64 + 1, "123456789", 9);
  tap_ok (memcmp (buf, "WTCH", 4) == 0 && is_le (buf + 4, WTCH_MARK, 2) && is_le (buf + 8, V64, 8)
          && is_le (buf + 16, V64 + 1, 8) && is_le (buf + 24, 9, 4)
          && is_le (buf + 28, 0xe3069283, 4) && is_le (buf + 32, wt_crc32c (buf, 32), 4),
          "channel.bin message header: little-endian at its offsets");
  tap_ok (wtch_decode_header (buf, &m, err, sizeof err) == 0 && m.number == V64
          && m.guest_ns == V64 + 1 && m.length == 9 && m.payload_crc == 0xe3069283,
          "channel.bin message header: read back");
}

/* One manifest of one file (two sectors, one extent) and one op; its
 * parts' offsets: header 0, file 40, path 72, extent 80, hashes 112,
 * ops 128, op table 136, trailer 168. */
static void
test_manifest (int cold)
{
  uint64_t hashes[2] = { V64, ~V64 };
  uint32_t ops[2] = { 1, cold ? 5 : 0 };
  struct wtmf_extent ext = { .logical = 0, .physical = V64, .length = 1024, .flags = WTMF_EXT_UNWRITTEN };
  struct wtmf_file f = { .id = V32, .path = "/data/f", .inode = V64 + 1, .size = 1000,
                         .nextents = 1, .extents = &ext, .hashes = hashes, .ops = ops,
                         .error = cold ? 2 : 0 };
  struct wtmf_op op = { .guest_ns = V64 + 2, .file_id = V32, .kind = WTMF_OP_PWRITE,
                        .offset = V64 + 3, .length = 1000 };
  struct wtmf_buf b = { 0 };
  if (cold)
    wtmf_buf_header_cold (&b, 1);
  else
    wtmf_buf_header (&b, 1, 1, V32);
  wtmf_buf_file (&b, &f);
  if (!cold)
    wtmf_buf_op (&b, &op);
  int built = wtmf_buf_finish (&b) == 0;
  const unsigned char *p = b.p;
  const char *what = cold ? "cold manifest" : "manifest";
  size_t trailer = cold ? 136 : 168;
  tap_ok (built && b.len == trailer + 8 && is_le (p + 8, 1, 4) && is_le (p + 12, 512, 4)
          && is_le (p + 16, 1, 4) && is_le (p + 20, 1, 4) && is_le (p + 24, cold ? 0 : 1, 4)
          && is_le (p + 28, cold ? 0 : V32, 4) && is_le (p + 32, cold ? WTMF_FLAG_COLD : 0, 4),
          "%s header: little-endian at its offsets", what);
  tap_ok (built && is_le (p + 40, V32, 4) && is_le (p + 44, 7, 4) && is_le (p + 48, V64 + 1, 8)
          && is_le (p + 56, 1000, 8) && is_le (p + 64, 1, 4) && is_le (p + 68, cold ? 2 : 0, 4),
          "%s file entry: little-endian at its offsets", what);
  tap_ok (built && is_le (p + 80, 0, 8) && is_le (p + 88, V64, 8) && is_le (p + 96, 1024, 8)
          && is_le (p + 104, WTMF_EXT_UNWRITTEN, 4),
          "%s extent: little-endian at its offsets", what);
  tap_ok (built && is_le (p + 112, V64, 8) && is_le (p + 120, ~V64, 8)
          && is_le (p + 128, 1, 4) && is_le (p + 132, ops[1], 4),
          "%s sector hashes (u64) and %s (u32): little-endian", what, cold ? "errnos" : "op numbers");
  if (!cold)
    tap_ok (built && is_le (p + 136, V64 + 2, 8) && is_le (p + 144, V32, 4)
            && is_le (p + 148, WTMF_OP_PWRITE, 4) && is_le (p + 152, V64 + 3, 8)
            && is_le (p + 160, 1000, 8), "manifest op: little-endian at its offsets");
  tap_ok (built && is_le (p + trailer, wt_crc32c (p, trailer), 4)
          && memcmp (p + trailer + 4, "WTME", 4) == 0, "%s trailer: its CRC32C little-endian", what);

  struct wtmf_manifest m;
  size_t used;
  char err[256];
  int parsed = built && wtmf_parse (b.p, b.len, &m, &used, err, sizeof err) == 0;
  tap_ok (parsed && m.nfiles == 1 && m.files[0].id == V32 && m.files[0].inode == V64 + 1
          && m.files[0].extents[0].physical == V64 && m.files[0].hashes[0] == V64
          && m.files[0].hashes[1] == ~V64 && m.files[0].ops[1] == ops[1]
          && (cold || (m.nops == 1 && m.ops[0].guest_ns == V64 + 2 && m.ops[0].offset == V64 + 3)),
          "%s: read back%s%s", what, parsed ? "" : ": ", parsed ? "" : err);
  if (parsed)
    wtmf_free (&m);
  wtmf_buf_free (&b);
}

int
main (void)
{
  tap_plan (30);
  test_accessors ();
  test_checksums ();
  test_wtlog_header ();
  test_wtlog_record ();
  test_ring_header ();
  test_channel ();
  test_manifest (0);
  test_manifest (1);
  return tap_done ();
}
