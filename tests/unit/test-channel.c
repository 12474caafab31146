/* channel.bin: the guest is not trusted, so the reader is tested as a reader
 * of hostile input: round trip of every field for every type and payload
 * size, numbering, the end of the stream, a file cut at every byte of the
 * last message, a bit flipped at every byte of a message, oversized lengths,
 * and the key=value lookup. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "crc32c.h"
#include "le.h"
#include "tap.h"

static char dir[] = "/tmp/wtch-test.XXXXXX";
static char path[256];

/* One message as the guest would send it. */
struct spec {
  uint16_t type;
  uint16_t flags;
  uint64_t number;
  uint64_t guest_ns;
  uint32_t length;
  unsigned char *payload;
};

/* An encoded stream and where each message starts in it. */
struct stream {
  unsigned char *bytes;
  size_t len;
  size_t *offsets;
  size_t count;
};

static void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (!p) {
    perror ("malloc");
    exit (2);
  }
  return p;
}

/* A payload no two messages share, so a mixed-up message is seen. */
static unsigned char *
make_payload (uint32_t length, unsigned seed)
{
  unsigned char *p = xmalloc (length);
  uint32_t x = 0x9e3779b9u * (seed + 1);
  for (uint32_t i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (unsigned char) x;
  }
  return p;
}

static struct spec
make_spec (uint16_t type, uint64_t number, uint32_t length)
{
  struct spec s = {
    .type = type,
    .flags = (uint16_t) (0x8000u | (number * 37u)),
    .number = number,
    .guest_ns = 1700000000000000000ull + number * 1000003ull,
    .length = length,
    .payload = make_payload (length, (unsigned) number * 7u + type),
  };
  return s;
}

static void
free_specs (struct spec *specs, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (specs[i].payload);
}

static struct stream
encode_stream (const struct spec *specs, size_t n)
{
  struct stream st = { .offsets = xmalloc (n * sizeof (size_t)), .count = n };
  for (size_t i = 0; i < n; i++)
    st.len += wtch_encoded_size (specs[i].length);
  st.bytes = xmalloc (st.len);
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    st.offsets[i] = at;
    at += wtch_encode (st.bytes + at, specs[i].type, specs[i].flags,
                       specs[i].number, specs[i].guest_ns, specs[i].payload,
                       specs[i].length);
  }
  return st;
}

static void
free_stream (struct stream *st)
{
  free (st->bytes);
  free (st->offsets);
}

static void
write_file (const void *bytes, size_t len)
{
  int fd = open (path, O_WRONLY | O_CREAT, 0600);
  struct stat sb;
  if (fd < 0 || fstat (fd, &sb) != 0
      || (len && pwrite (fd, bytes, len, 0) != (ssize_t) len)
      || ((size_t) sb.st_size > len && ftruncate (fd, (off_t) len) != 0)) {
    perror (path);
    exit (2);
  }
  close (fd);
}

static bool
same_message (const struct wtch_message *m, const struct spec *s,
              uint64_t offset)
{
  return m->type == s->type && m->flags == s->flags && m->number == s->number
    && m->guest_ns == s->guest_ns && m->length == s->length
    && m->payload_crc == wt_crc32c (s->payload, s->length)
    && m->offset == offset && m->payload != NULL
    && (s->length == 0 || memcmp (m->payload, s->payload, s->length) == 0);
}

/* Reads the channel file to its end or first error. Returns how many
 * messages came back; *same says whether each matched expect[] in order at
 * the offsets of the stream; *rc is the last return; err holds its text. */
static size_t
read_all (const struct spec *expect, const struct stream *st, size_t nexpect,
          int *rc, bool *same, char *err, size_t errlen)
{
  err[0] = '\0';
  struct wtch_reader *r = wtch_reader_open (path, err, errlen);
  *same = true;
  if (!r) {
    *rc = -2;
    return 0;
  }
  struct wtch_message m;
  size_t n = 0;
  while ((*rc = wtch_reader_next (r, &m, err, errlen)) == 0) {
    if (n >= nexpect || !same_message (&m, &expect[n], st->offsets[n]))
      *same = false;
    n++;
  }
  wtch_reader_close (r);
  return n;
}

/* err is "PATH: bad message N at byte OFF: why". */
static bool
names_message (const char *err, uint64_t number, uint64_t offset)
{
  char want[400];
  snprintf (want, sizeof want, "%s: bad message %" PRIu64 " at byte %" PRIu64 ": ",
            path, number, offset);
  return strncmp (err, want, strlen (want)) == 0;
}

static void
test_sizes (void)
{
  tap_ok (wtch_encoded_size (0) == 512 && wtch_encoded_size (1) == 512
          && wtch_encoded_size (475) == 512 && wtch_encoded_size (476) == 512
          && wtch_encoded_size (477) == 1024 && wtch_encoded_size (4000) == 4096
          && wtch_encoded_size (1u << 20) == (1u << 20) + 512
          && wtch_encoded_size (UINT32_MAX) == ((uint64_t) UINT32_MAX + 36 + 511) / 512 * 512,
          "encoded sizes fill whole blocks (476 bytes is the last that fits one)");
  tap_ok (strcmp (wtch_type_name (WTCH_HELLO), "HELLO") == 0
          && strcmp (wtch_type_name (WTCH_MARK), "MARK") == 0
          && strcmp (wtch_type_name (WTCH_MANIFEST), "MANIFEST") == 0
          && strcmp (wtch_type_name (WTCH_RESULT), "RESULT") == 0
          && strcmp (wtch_type_name (WTCH_TEXT), "TEXT") == 0
          && strcmp (wtch_type_name (WTCH_TRACE), "TRACE") == 0
          && strcmp (wtch_type_name (0), "?") == 0
          && strcmp (wtch_type_name (7), "?") == 0, "type names");
}

/* Every type with every payload size, interleaved, each field compared. */
static void
test_round_trip (void)
{
  static const uint32_t sizes[] = { 0, 1, 475, 476, 477, 4000, 1u << 20 };
  enum { NSIZES = sizeof sizes / sizeof sizes[0], NTYPES = WTCH_TYPE_MAX, N = NSIZES * NTYPES };
  struct spec specs[N];
  size_t n = 0;
  for (size_t s = 0; s < NSIZES; s++)
    for (uint16_t t = WTCH_HELLO; t <= WTCH_TYPE_MAX; t++, n++)
      specs[n] = make_spec (t, n + 1, t == WTCH_MANIFEST || sizes[s] <= WTCH_MAX_TEXT
                            ? sizes[s] : WTCH_MAX_TEXT);
  struct stream st = encode_stream (specs, N);
  write_file (st.bytes, st.len);

  /* The padding is zero: the guest's O_DIRECT blocks carry nothing stale. */
  bool zero_padding = true;
  for (size_t i = 0; i < N; i++) {
    size_t end = st.offsets[i] + wtch_encoded_size (specs[i].length);
    for (size_t b = st.offsets[i] + WTCH_HEADER_SIZE + specs[i].length; b < end; b++)
      zero_padding &= st.bytes[b] == 0;
  }
  tap_ok (zero_padding, "the encoder zeroes the padding");

  char err[512];
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  struct wtch_message m;
  size_t good = 0;
  int rc = -2;
  while (r && (rc = wtch_reader_next (r, &m, err, sizeof err)) == 0) {
    if (good < N && same_message (&m, &specs[good], st.offsets[good]))
      good++;
    else
      fprintf (stderr, "# message %" PRIu64 " at byte %" PRIu64 " differs\n",
               m.number, m.offset);
  }
  tap_ok (good == N && rc == 1,
          "every field of %zu messages (5 types, payloads of 0 to 1 MiB, text to 64 KiB) round trips (rc %d)",
          good, rc);
  rc = r ? wtch_reader_next (r, &m, err, sizeof err) : -2;
  tap_ok (rc == 1, "the end of the stream stays the end");
  wtch_reader_close (r);
  free_stream (&st);
  free_specs (specs, N);
}

/* Numbers must run 1, 2, 3: the first wrong one is named, with its offset. */
static void
test_numbering (void)
{
  static const struct {
    uint64_t numbers[4];
    size_t count;
    size_t good;                /* messages read before the error */
    const char *why;
  } cases[] = {
    { { 1, 2, 4 }, 3, 2, "message number 4 where 3 was due" },
    { { 1, 2, 2 }, 3, 2, "message number 2 where 3 was due" },
    { { 2 }, 1, 0, "message number 2 where 1 was due" },
    { { 0, 1 }, 2, 0, "message number 0 where 1 was due" },
    { { 1, UINT64_MAX }, 2, 1, "message number 18446744073709551615 where 2 was due" },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    struct spec specs[4];
    for (size_t i = 0; i < cases[c].count; i++)
      specs[i] = make_spec (WTCH_MARK, cases[c].numbers[i], 600);
    struct stream st = encode_stream (specs, cases[c].count);
    write_file (st.bytes, st.len);
    int rc;
    bool same;
    char err[512];
    size_t n = read_all (specs, &st, cases[c].count, &rc, &same, err, sizeof err);
    size_t bad = cases[c].good;
    char numbers[128] = "";
    for (size_t i = 0; i < cases[c].count; i++)
      snprintf (numbers + strlen (numbers), sizeof numbers - strlen (numbers),
                "%s%" PRIu64, i ? "," : "", cases[c].numbers[i]);
    tap_ok (n == bad && same && rc == -1
            && names_message (err, bad + 1, st.offsets[bad])
            && strstr (err, cases[c].why) != NULL,
            "numbers %s refused at message %zu: %s", numbers, bad + 1, err);
    free_stream (&st);
    free_specs (specs, cases[c].count);
  }
}

/* The stream ends at the first block without the magic, or at the end of
 * the file; what follows is never read. */
static void
test_end_of_stream (void)
{
  struct spec specs[3] = {
    make_spec (WTCH_HELLO, 1, 100),
    make_spec (WTCH_TEXT, 2, 700),
    make_spec (WTCH_MARK, 3, 5),
  };
  struct stream st = encode_stream (specs, 3);
  size_t two = st.offsets[2];
  unsigned char *buf = xmalloc (st.len + 2048);
  int rc;
  bool same;
  char err[512];

  static const unsigned char fills[] = { 0x00, 0xa5, 0xff };
  for (size_t f = 0; f < sizeof fills; f++) {
    /* Messages 1 and 2, a block without magic, then message 3. */
    memcpy (buf, st.bytes, two);
    memset (buf + two, fills[f], WTCH_BLOCK);
    memcpy (buf + two + WTCH_BLOCK, st.bytes + two, st.len - two);
    write_file (buf, st.len + WTCH_BLOCK);
    size_t n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
    tap_ok (n == 2 && same && rc == 1,
            "a block of 0x%02x ends the stream before the message after it (n %zu rc %d)",
            fills[f], n, rc);
  }

  /* A block whose magic is right but whose header is not: not the end. */
  memcpy (buf, st.bytes, two);
  memset (buf + two, 0, WTCH_BLOCK);
  memcpy (buf + two, WTCH_MAGIC, 4);
  write_file (buf, two + WTCH_BLOCK);
  size_t n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
  tap_ok (n == 2 && same && rc == -1 && names_message (err, 3, two)
          && strstr (err, "header checksum mismatch"),
          "a block with the magic and nothing else is an error: %s", err);

  write_file (st.bytes, st.len);
  n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
  tap_ok (n == 3 && same && rc == 1, "the end of the file ends the stream");

  /* A partial block after the last message is not a message. */
  memcpy (buf, st.bytes, st.len);
  memcpy (buf + st.len, st.bytes, 511);
  write_file (buf, st.len + 511);
  n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
  tap_ok (n == 3 && same && rc == 1,
          "511 bytes of a header after the last message end the stream");

  write_file (NULL, 0);
  n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
  tap_ok (n == 0 && rc == 1, "an empty channel is an empty stream");

  strcpy (err, "");
  struct wtch_reader *r = wtch_reader_open ("/nonexistent/channel.bin", err, sizeof err);
  tap_ok (r == NULL && strstr (err, "open: /nonexistent/channel.bin: No such file"),
          "a missing channel is named: %s", err);

  free (buf);
  free_stream (&st);
  free_specs (specs, 3);
}

/* The file cut short at every byte of its last message: the messages before
 * come back whole; the last is an error or the end, never half a message.
 * A cut inside the first block leaves no full block: the end (a torn block
 * cannot be told from the end). A cut after it: the header promised more,
 * so an error naming the message. */
static void
test_truncation (void)
{
  struct spec specs[3] = {
    make_spec (WTCH_HELLO, 1, 0),
    make_spec (WTCH_MARK, 2, 1),
    make_spec (WTCH_MANIFEST, 3, 4000),
  };
  struct stream st = encode_stream (specs, 3);
  size_t last = st.offsets[2];
  size_t ended = 0, refused = 0;
  bool all_ok = true;
  for (size_t cut = last; cut < st.len && all_ok; cut++) {
    write_file (st.bytes, cut);
    int rc;
    bool same;
    char err[512];
    size_t n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
    bool in_first_block = cut < last + WTCH_BLOCK;
    bool ok = n == 2 && same
      && (in_first_block ? rc == 1
          : rc == -1 && names_message (err, 3, last) && strstr (err, "runs past the end"));
    if (!ok) {
      fprintf (stderr, "# cut at %zu: n %zu rc %d: %s\n", cut, n, rc, err);
      all_ok = false;
    }
    ended += rc == 1;
    refused += rc == -1;
  }
  tap_ok (all_ok, "a cut at each of %zu bytes of the last message: %zu end the stream, "
          "%zu are errors naming message 3 at byte %zu", st.len - last, ended,
          refused, last);
  free_stream (&st);
  free_specs (specs, 3);
}

/* The file shrinks between open and read (the channel is a live file while
 * nbdkit runs): a short read of a payload is an error with its text. */
static void
test_shrink_after_open (void)
{
  struct spec specs[2] = {
    make_spec (WTCH_HELLO, 1, 10),
    make_spec (WTCH_TEXT, 2, 1000),
  };
  struct stream st = encode_stream (specs, 2);
  write_file (st.bytes, st.len);
  char err[512] = "";
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  if (!r) {
    tap_ok (0, "open: %s", err);
    return;
  }
  struct wtch_message m;
  int rc1 = wtch_reader_next (r, &m, err, sizeof err);
  if (truncate (path, (off_t) (st.offsets[1] + 700)) != 0)
    exit (2);
  strcpy (err, "");
  int rc2 = wtch_reader_next (r, &m, err, sizeof err);
  tap_ok (rc1 == 0 && rc2 == -1 && names_message (err, 2, st.offsets[1]),
          "a payload cut short after open is an error naming the message: %s", err);
  wtch_reader_close (r);
  free_stream (&st);
  free_specs (specs, 2);
}

/* One bit flipped at every byte of a message in the middle of the stream
 * (every bit of the byte: a CRC32C catches any single-bit error). The
 * header and the payload are covered by their CRCs: an error naming the
 * message and its offset. The padding is covered by nothing, and a flip
 * there must leave the stream intact. */
static void
test_bit_flips (void)
{
  struct spec specs[3] = {
    make_spec (WTCH_HELLO, 1, 10),
    make_spec (WTCH_TEXT, 2, 1000),
    make_spec (WTCH_MARK, 3, 5),
  };
  struct stream st = encode_stream (specs, 3);
  size_t at = st.offsets[1];
  size_t payload_end = at + WTCH_HEADER_SIZE + specs[1].length;
  size_t msg_end = st.offsets[2];
  size_t bad_header = 0, bad_payload = 0, bad_padding = 0;
  for (size_t b = at; b < msg_end; b++) {
    for (int bit = 0; bit < 8; bit++) {
      st.bytes[b] ^= (unsigned char) (1u << bit);
      write_file (st.bytes, st.len);
      st.bytes[b] ^= (unsigned char) (1u << bit);
      int rc;
      bool same;
      char err[512];
      size_t n = read_all (specs, &st, 3, &rc, &same, err, sizeof err);
      bool ok;
      if (b < payload_end) {
        ok = n == 1 && same && rc == -1 && names_message (err, 2, at);
        if (b < at + 4)
          ok = ok && strstr (err, "damaged magic");
        else if (b >= at + WTCH_HEADER_SIZE)
          ok = ok && strstr (err, "payload checksum mismatch");
      }
      else
        ok = n == 3 && same && rc == 1;
      if (!ok) {
        fprintf (stderr, "# flip at byte %zu bit %d: n %zu rc %d: %s\n",
                 b, bit, n, rc, rc == -1 ? err : "");
        if (b < at + WTCH_HEADER_SIZE)
          bad_header++;
        else if (b < payload_end)
          bad_payload++;
        else
          bad_padding++;
      }
    }
  }
  tap_ok (bad_header == 0, "a flipped bit in each of the 36 header bytes is an "
          "error naming message 2 at byte %zu (%zu missed)", at, bad_header);
  tap_ok (bad_payload == 0, "a flipped bit in each of the %" PRIu32 " payload bytes "
          "is a payload checksum error (%zu missed)", specs[1].length, bad_payload);
  tap_ok (bad_padding == 0, "a flipped bit in each of the %zu padding bytes leaves "
          "all 3 messages intact (%zu differ)", msg_end - payload_end, bad_padding);
  free_stream (&st);
  free_specs (specs, 3);
}

/* Re-seals a hand-made header's CRC, so only the field checks can refuse it. */
static void
reseal_header (unsigned char *block)
{
  wt_put32 (block + 32, wt_crc32c (block, 32));
}

/* Lengths past WTCH_MAX_PAYLOAD and unknown types are refused from the
 * header alone, before anything is allocated for them. */
static void
test_header_fields (void)
{
  unsigned char block[WTCH_BLOCK];
  struct wtch_message m;
  char err[256];

  static const uint32_t too_long[] = { WTCH_MAX_PAYLOAD + 1, UINT32_MAX };
  for (size_t i = 0; i < 2; i++) {
    wtch_encode (block, WTCH_TEXT, 0, 1, 5, "x", 1);
    wt_put32 (block + 24, too_long[i]);
    reseal_header (block);
    int d = wtch_decode_header (block, &m, err, sizeof err);
    tap_ok (d == -1 && strstr (err, "exceeds") && strstr (err, "4194304"),
            "payload length %" PRIu32 " refused: %s", too_long[i], err);

    /* The same through the reader, with the file as long as it claims. */
    write_file (block, WTCH_BLOCK);
    if (truncate (path, (off_t) wtch_encoded_size (too_long[i])) != 0)
      exit (2);
    struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
    d = r ? wtch_reader_next (r, &m, err, sizeof err) : -2;
    tap_ok (d == -1 && names_message (err, 1, 0) && strstr (err, "exceeds"),
            "the reader refuses it too: %s", err);
    wtch_reader_close (r);
  }

  /* Exactly the limit is a message. */
  unsigned char *payload = make_payload (WTCH_MAX_PAYLOAD, 99);
  struct spec big = { WTCH_MANIFEST, 0, 1, 42, WTCH_MAX_PAYLOAD, payload };
  struct stream st = encode_stream (&big, 1);
  write_file (st.bytes, st.len);
  int rc;
  bool same;
  size_t n = read_all (&big, &st, 1, &rc, &same, err, sizeof err);
  tap_ok (n == 1 && same && rc == 1, "a payload of exactly WTCH_MAX_PAYLOAD bytes is read");
  free_stream (&st);
  free (payload);

  static const uint16_t bad_types[] = { 0, WTCH_TYPE_MAX + 1, 0xffff };
  for (size_t i = 0; i < 3; i++) {
    wtch_encode (block, bad_types[i], 0, 1, 5, "x", 1);
    write_file (block, WTCH_BLOCK);
    struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
    int d = r ? wtch_reader_next (r, &m, err, sizeof err) : -2;
    char want[64];
    snprintf (want, sizeof want, "unknown message type %u", bad_types[i]);
    tap_ok (d == -1 && names_message (err, 1, 0) && strstr (err, want),
            "type %u refused: %s", bad_types[i], err);
    wtch_reader_close (r);
  }
}

static bool
kv_is (const char *payload, const char *key, const char *want)
{
  char out[64];
  memset (out, 'Z', sizeof out);
  bool found = wtch_kv_get ((const unsigned char *) payload, (uint32_t) strlen (payload),
                            key, out, sizeof out);
  if (!want)
    return !found;
  return found && strcmp (out, want) == 0;
}

static void
test_kv (void)
{
  tap_ok (kv_is ("seeds=1\nseed=42\n", "seed", "42")
          && kv_is ("seed=42\nseeds=1\n", "seeds", "1")
          && kv_is ("seeds=1\n", "seed", NULL)
          && kv_is ("seed=1\n", "see", NULL),
          "a key that is a prefix of another is not confused with it");
  tap_ok (kv_is ("a=1\nkernel=6.1.0-18-amd64", "kernel", "6.1.0-18-amd64")
          && kv_is ("kernel=6.1", "kernel", "6.1")
          && kv_is ("a=1\nk=", "k", ""),
          "the last line needs no newline");
  tap_ok (kv_is ("a=1\nb=2\n", "c", NULL) && kv_is ("", "a", NULL)
          && kv_is ("a\n", "a", NULL) && kv_is ("x=a=1\n", "a", NULL)
          && kv_is ("\n\n", "a", NULL) && kv_is ("a=1\n", "", NULL),
          "missing keys, a key without '=', a key inside a value");
  tap_ok (kv_is ("a=\nb=2\n", "a", "") && kv_is ("a=1\na=2\n", "a", "1")
          && kv_is ("a==b\n", "a", "=b") && kv_is ("\na=1\n", "a", "1"),
          "an empty value, the first of two, a value holding '=', a blank line first");

  /* Truncation to outlen, and never a byte past length. */
  const unsigned char text[] = "error=no space left on device\nstatus=1";
  char out[8];
  bool found = wtch_kv_get (text, sizeof text - 1, "error", out, sizeof out);
  tap_ok (found && strcmp (out, "no spac") == 0, "a value is cut to outlen - 1 bytes: '%s'", out);
  char one[1] = { 'Z' };
  found = wtch_kv_get (text, sizeof text - 1, "error", one, 1);
  tap_ok (found && one[0] == '\0', "outlen 1 gives an empty string");
  found = wtch_kv_get (text, sizeof text - 1, "status", NULL, 0);
  tap_ok (found, "outlen 0 only says whether the key is there");
  char exact[8];
  found = wtch_kv_get ((const unsigned char *) "k=1234567\n", 10, "k", exact, sizeof exact);
  tap_ok (found && strcmp (exact, "1234567") == 0, "a value of outlen - 1 bytes fits whole");

  /* The payload is not NUL-terminated: the value stops at length. */
  unsigned char *heap = xmalloc (9);
  memcpy (heap, "status=12", 9);
  char status[16];
  found = wtch_kv_get (heap, 8, "status", status, sizeof status);
  bool cut_ok = found && strcmp (status, "1") == 0;
  found = wtch_kv_get (heap, 6, "status", status, sizeof status);
  tap_ok (cut_ok && !found, "the value stops at the payload length, and a key cut "
          "before its '=' is absent");
  free (heap);
}

/* Text payloads: WTCH_MAX_TEXT bytes are a message, one more is refused
 * from the header; a MANIFEST may be longer. */
static void
test_text_limit (void)
{
  char err[256];
  struct wtch_message m;
  unsigned char *payload = make_payload (WTCH_MAX_TEXT + 1, 7);
  unsigned char *buf = xmalloc (wtch_encoded_size (WTCH_MAX_TEXT + 1));
  static const uint16_t types[] = { WTCH_HELLO, WTCH_MARK, WTCH_RESULT, WTCH_TEXT, WTCH_TRACE };
  bool limit_ok = true, over_refused = true;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    wtch_encode (buf, types[i], 0, 1, 5, payload, WTCH_MAX_TEXT);
    limit_ok &= wtch_decode_header (buf, &m, err, sizeof err) == 0;
    wtch_encode (buf, types[i], 0, 1, 5, payload, WTCH_MAX_TEXT + 1);
    over_refused &= wtch_decode_header (buf, &m, err, sizeof err) == -1
      && strstr (err, "65536-byte limit of text") != NULL;
  }
  tap_ok (limit_ok && over_refused, "HELLO, MARK, RESULT, TEXT, TRACE: %u payload bytes are a message, "
          "%u are refused: %s", WTCH_MAX_TEXT, WTCH_MAX_TEXT + 1, err);
  wtch_encode (buf, WTCH_MANIFEST, 0, 1, 5, payload, WTCH_MAX_TEXT + 1);
  tap_ok (wtch_decode_header (buf, &m, err, sizeof err) == 0,
          "a MANIFEST of %u bytes is a message", WTCH_MAX_TEXT + 1);
  free (buf);
  free (payload);
}

/* The channel limit: 256 messages of 4 MiB (payloads of zeroes, left as
 * holes in a sparse file) end exactly at WTCH_MAX_CHANNEL and are read; one
 * more block-sized message after them is refused, naming it. */
static void
test_channel_limit (void)
{
  char err[256];
  uint32_t len = WTCH_MAX_PAYLOAD - WTCH_HEADER_SIZE;
  uint64_t each = wtch_encoded_size (len);
  uint64_t count = WTCH_MAX_CHANNEL / each;
  unsigned char *zeroes = xmalloc (len);
  memset (zeroes, 0, len);
  unsigned char *block = xmalloc (each);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  bool wrote = fd >= 0 && each * count == WTCH_MAX_CHANNEL;
  wtch_encode (block, WTCH_MANIFEST, 0, 1, 5, zeroes, len);
  for (uint64_t i = 0; wrote && i < count; i++) {
    wt_put64 (block + 8, i + 1);      /* the number, and the header CRC over it */
    reseal_header (block);
    wrote = pwrite (fd, block, WTCH_BLOCK, (off_t) (i * each)) == WTCH_BLOCK;
  }
  wrote = wrote && ftruncate (fd, (off_t) WTCH_MAX_CHANNEL) == 0;
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  struct wtch_message m;
  uint64_t n = 0;
  int rc;
  while (r && (rc = wtch_reader_next (r, &m, err, sizeof err)) == 0)
    n++;
  tap_ok (wrote && r && rc == 1 && n == count, "%" PRIu64 " messages ending at the %llu-byte "
          "limit are read (%" PRIu64 ")", count, (unsigned long long) WTCH_MAX_CHANNEL, n);
  wtch_reader_close (r);
  wtch_encode (block, WTCH_MARK, 0, count + 1, 5, "past", 4);
  wrote = fd >= 0 && pwrite (fd, block, WTCH_BLOCK, (off_t) WTCH_MAX_CHANNEL) == WTCH_BLOCK;
  r = wtch_reader_open (path, err, sizeof err);
  n = 0;
  while (r && (rc = wtch_reader_next (r, &m, err, sizeof err)) == 0)
    n++;
  tap_ok (wrote && r && rc == -1 && n == count && names_message (err, count + 1, WTCH_MAX_CHANNEL)
          && strstr (err, "limit of a channel"), "one block more is refused: %s", err);
  wtch_reader_close (r);
  if (fd >= 0)
    close (fd);
  free (block);
  free (zeroes);
}

int
main (void)
{
  if (!mkdtemp (dir))
    return 2;
  snprintf (path, sizeof path, "%s/channel.bin", dir);
  tap_plan (44);
  test_sizes ();
  test_round_trip ();
  test_numbering ();
  test_end_of_stream ();
  test_truncation ();
  test_shrink_after_open ();
  test_bit_flips ();
  test_header_fields ();
  test_kv ();
  test_text_limit ();
  test_channel_limit ();
  unlink (path);
  rmdir (dir);
  return tap_done ();
}
