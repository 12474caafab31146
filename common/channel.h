/* channel.bin: the messages the guest sends (doc/formats.md).
 * The guest is not trusted: the decoder checks every field, and the reader
 * names the message number and byte offset of anything that is wrong. */
#ifndef WT_CHANNEL_H
#define WT_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WTCH_MAGIC "WTCH"
#define WTCH_HEADER_SIZE 36
#define WTCH_BLOCK 512u
/* The largest payload a message may carry: bounds what a corrupt length can
 * make the reader allocate. */
#define WTCH_MAX_PAYLOAD (4u << 20)
/* The largest HELLO, MARK, RESULT, TEXT or TRACE payload (a MARK's label,
 * the key=value lines, a piece of the kernel's trace): the guest sends at
 * most 4 KiB of text and TRACE pieces of WTCH_TRACE_PIECE bytes; the
 * checker keeps every one in memory. */
#define WTCH_MAX_TEXT (64u << 10)
/* A message must end within the first 1 GiB of the channel: bounds what the
 * checker holds (the messages, the manifest stream) and the MARK count
 * (one a block: 2,097,152). */
#define WTCH_MAX_CHANNEL (1ull << 30)

enum wtch_type {
  WTCH_HELLO = 1,
  WTCH_MARK = 2,
  WTCH_MANIFEST = 3,
  WTCH_RESULT = 4,
  WTCH_TEXT = 5,
  WTCH_TRACE = 6,               /* a piece of the guest kernel's trace text */
};
#define WTCH_TYPE_MAX WTCH_TRACE

/* TRACE flags: the last piece of the trace (a trace whose last piece never
 * arrived lost its tail on the way). */
#define WTCH_F_TRACE_LAST 1u
/* TRACE pieces fill whole blocks: 36 + 65500 bytes is 128 blocks. */
#define WTCH_TRACE_PIECE (128u * WTCH_BLOCK - WTCH_HEADER_SIZE)

struct wtch_message {
  uint16_t type;
  uint16_t flags;
  uint64_t number;              /* 1, 2, ... */
  uint64_t guest_ns;            /* guest CLOCK_MONOTONIC */
  uint32_t length;              /* payload bytes */
  uint32_t payload_crc;
  uint64_t offset;              /* byte offset of the message in the channel */
  const unsigned char *payload; /* valid until the next read */
};

const char *wtch_type_name (uint16_t type);

/* Bytes a message with this payload occupies: whole 512-byte blocks. */
uint64_t wtch_encoded_size (uint32_t length);

/* Encode into buf, which must hold wtch_encoded_size(length) bytes; the
 * padding is zeroed. Returns the encoded size. */
uint64_t wtch_encode (unsigned char *buf, uint16_t type, uint16_t flags,
                      uint64_t number, uint64_t guest_ns,
                      const void *payload, uint32_t length);

/* Decode the header at buf (WTCH_HEADER_SIZE bytes). Returns 0 when sound,
 * 1 when the block has no magic (the end of the stream), -1 with err set;
 * a block whose magic alone is wrong (its header checksum holds with the
 * magic put back) is -1, not the end. */
int wtch_decode_header (const unsigned char *buf, struct wtch_message *m,
                        char *err, size_t errlen);

/* Reader over a channel image (channel.bin). */
struct wtch_reader;
struct wtch_reader *wtch_reader_open (const char *path, char *err, size_t errlen);
/* 0: m filled; 1: end of the stream; -1: a bad message, err says which and
 * where. Numbers must run 1, 2, 3, ... */
int wtch_reader_next (struct wtch_reader *r, struct wtch_message *m,
                      char *err, size_t errlen);
void wtch_reader_close (struct wtch_reader *r);

/* key=value payloads (HELLO, RESULT): the value of key, copied into out;
 * returns false when absent. */
bool wtch_kv_get (const unsigned char *payload, uint32_t length,
                  const char *key, char *out, size_t outlen);

#endif
