/* channel.bin messages: encoding for the guest, checked decoding for the host. */
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "fileio.h"
#include "le.h"

const char *
wtch_type_name (uint16_t type)
{
  switch (type) {
  case WTCH_HELLO: return "HELLO";
  case WTCH_MARK: return "MARK";
  case WTCH_MANIFEST: return "MANIFEST";
  case WTCH_RESULT: return "RESULT";
  case WTCH_TEXT: return "TEXT";
  case WTCH_TRACE: return "TRACE";
  default: return "?";
  }
}

uint64_t
wtch_encoded_size (uint32_t length)
{
  uint64_t n = WTCH_HEADER_SIZE + (uint64_t) length;
  return (n + WTCH_BLOCK - 1) / WTCH_BLOCK * WTCH_BLOCK;
}

uint64_t
wtch_encode (unsigned char *buf, uint16_t type, uint16_t flags,
             uint64_t number, uint64_t guest_ns, const void *payload,
             uint32_t length)
{
  uint64_t size = wtch_encoded_size (length);
  memset (buf, 0, size);
  memcpy (buf, WTCH_MAGIC, 4);
  wt_put16 (buf + 4, type);
  wt_put16 (buf + 6, flags);
  wt_put64 (buf + 8, number);
  wt_put64 (buf + 16, guest_ns);
  wt_put32 (buf + 24, length);
  wt_put32 (buf + 28, wt_crc32c (payload, length));
  wt_put32 (buf + 32, wt_crc32c (buf, 32));
  if (length)
    memcpy (buf + WTCH_HEADER_SIZE, payload, length);
  return size;
}

/* A block without the magic ends the stream, unless its header checksum
 * says it is a message whose magic was damaged: then ending there would drop
 * every message after it without a word. */
static bool
wtch_magic_damaged (const unsigned char *buf)
{
  unsigned char fixed[32];
  memcpy (fixed, buf, sizeof fixed);
  memcpy (fixed, WTCH_MAGIC, 4);
  return wt_crc32c (fixed, sizeof fixed) == wt_get32 (buf + 32);
}

int
wtch_decode_header (const unsigned char *buf, struct wtch_message *m,
                    char *err, size_t errlen)
{
  if (memcmp (buf, WTCH_MAGIC, 4) != 0) {
    if (!wtch_magic_damaged (buf))
      return 1;
    snprintf (err, errlen, "damaged magic %02x %02x %02x %02x (the header checksum is a message's)",
              buf[0], buf[1], buf[2], buf[3]);
    return -1;
  }
  uint32_t want = wt_get32 (buf + 32), got = wt_crc32c (buf, 32);
  if (want != got) {
    snprintf (err, errlen, "header checksum mismatch (stored 0x%08x, computed 0x%08x)",
              want, got);
    return -1;
  }
  m->type = wt_get16 (buf + 4);
  m->flags = wt_get16 (buf + 6);
  m->number = wt_get64 (buf + 8);
  m->guest_ns = wt_get64 (buf + 16);
  m->length = wt_get32 (buf + 24);
  m->payload_crc = wt_get32 (buf + 28);
  if (m->type < WTCH_HELLO || m->type > WTCH_TYPE_MAX) {
    snprintf (err, errlen, "unknown message type %u", m->type);
    return -1;
  }
  if (m->length > WTCH_MAX_PAYLOAD) {
    snprintf (err, errlen, "payload length %" PRIu32 " exceeds the %u-byte limit",
              m->length, WTCH_MAX_PAYLOAD);
    return -1;
  }
  if (m->type != WTCH_MANIFEST && m->length > WTCH_MAX_TEXT) {
    snprintf (err, errlen, "%s payload length %" PRIu32 " exceeds the %u-byte limit of text",
              wtch_type_name (m->type), m->length, WTCH_MAX_TEXT);
    return -1;
  }
  return 0;
}

struct wtch_reader {
  int fd;
  char *path;
  uint64_t pos;                 /* offset of the next message */
  uint64_t size;                /* of the channel image */
  uint64_t next_number;
  unsigned char *buf;
  size_t cap;
  bool done;
};

struct wtch_reader *
wtch_reader_open (const char *path, char *err, size_t errlen)
{
  struct wtch_reader *r = calloc (1, sizeof *r);
  if (!r || !(r->path = strdup (path))) {
    snprintf (err, errlen, "malloc: %s", strerror (errno));
    free (r);
    return NULL;
  }
  r->fd = wt_open_input (path, O_RDONLY | O_CLOEXEC, err, errlen);
  if (r->fd < 0) {
    free (r->path);
    free (r);
    return NULL;
  }
  off_t size = lseek (r->fd, 0, SEEK_END);
  r->size = size > 0 ? (uint64_t) size : 0;
  r->next_number = 1;
  return r;
}

static int
wtch_read_at (struct wtch_reader *r, uint64_t size, char *err, size_t errlen)
{
  if (size > r->cap) {
    unsigned char *nb = realloc (r->buf, size);
    if (!nb) {
      snprintf (err, errlen, "malloc: %s", strerror (errno));
      return -1;
    }
    r->buf = nb;
    r->cap = size;
  }
  ssize_t got = wt_pread_full (r->fd, r->buf, size, r->pos);
  if (got < 0) {
    snprintf (err, errlen, "read: %s at byte %" PRIu64 ": %s", r->path,
              r->pos, strerror (errno));
    return -1;
  }
  return (uint64_t) got == size ? 0 : 1;
}

int
wtch_reader_next (struct wtch_reader *r, struct wtch_message *m, char *err,
                  size_t errlen)
{
  char why[160];
  if (r->done || r->pos + WTCH_BLOCK > r->size) {
    r->done = true;
    return 1;
  }
  int rr = wtch_read_at (r, WTCH_BLOCK, err, errlen);
  if (rr != 0) {
    r->done = true;
    return rr;
  }
  int d = wtch_decode_header (r->buf, m, why, sizeof why);
  if (d == 1) {
    r->done = true;
    return 1;
  }
  if (d == 0 && m->number != r->next_number) {
    snprintf (why, sizeof why, "message number %" PRIu64 " where %" PRIu64
              " was due", m->number, r->next_number);
    d = -1;
  }
  uint64_t size = d == 0 ? wtch_encoded_size (m->length) : 0;
  if (d == 0 && r->pos + size > WTCH_MAX_CHANNEL) {
    snprintf (why, sizeof why, "it ends past the %llu-byte limit of a channel",
              (unsigned long long) WTCH_MAX_CHANNEL);
    d = -1;
  }
  if (d == 0 && r->pos + size > r->size) {
    snprintf (why, sizeof why, "payload of %" PRIu32 " bytes runs past the end of the channel",
              m->length);
    d = -1;
  }
  if (d == 0 && (rr = wtch_read_at (r, size, err, errlen)) == -1) {
    r->done = true;
    return -1;
  }
  if (d == 0 && rr == 1) {
    snprintf (why, sizeof why, "the channel ends inside its payload (it shrank while read)");
    d = -1;
  }
  if (d == 0) {
    uint32_t crc = wt_crc32c (r->buf + WTCH_HEADER_SIZE, m->length);
    if (crc != m->payload_crc) {
      snprintf (why, sizeof why, "payload checksum mismatch (stored 0x%08x, computed 0x%08x)",
                m->payload_crc, crc);
      d = -1;
    }
  }
  if (d == -1) {
    snprintf (err, errlen, "%s: bad message %" PRIu64 " at byte %" PRIu64 ": %s",
              r->path, r->next_number, r->pos, why);
    r->done = true;
    return -1;
  }
  m->offset = r->pos;
  m->payload = r->buf + WTCH_HEADER_SIZE;
  r->pos += size;
  r->next_number++;
  return 0;
}

void
wtch_reader_close (struct wtch_reader *r)
{
  if (!r)
    return;
  close (r->fd);
  free (r->buf);
  free (r->path);
  free (r);
}

bool
wtch_kv_get (const unsigned char *payload, uint32_t length, const char *key,
             char *out, size_t outlen)
{
  size_t klen = strlen (key);
  const char *p = (const char *) payload, *end = p + length;
  while (p < end) {
    const char *nl = memchr (p, '\n', (size_t) (end - p));
    const char *eol = nl ? nl : end;
    if ((size_t) (eol - p) > klen && memcmp (p, key, klen) == 0 && p[klen] == '=') {
      size_t vlen = (size_t) (eol - p) - klen - 1;
      if (outlen) {
        if (vlen >= outlen)
          vlen = outlen - 1;
        memcpy (out, p + klen + 1, vlen);
        out[vlen] = '\0';
      }
      return true;
    }
    p = eol + 1;
  }
  return false;
}
