/* The guest's channel as the checker sees it (dump, check, replay, export,
 * crash): its messages in order, the manifest stream they carry, and where
 * each message sits in the log. */
#ifndef WTC_LIB_CHANNEL_READ_H
#define WTC_LIB_CHANNEL_READ_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "channel.h"
#include "manifest.h"
#include "wtlog.h"

struct wtc_msg {
  uint16_t type;
  uint16_t flags;               /* TRACE: WTCH_F_TRACE_LAST */
  uint64_t number;
  uint64_t guest_ns;
  uint64_t offset;              /* in the channel export */
  uint32_t length;
  char *text;                   /* payload, NUL added; NULL for MANIFEST */
  /* The CHANNEL record that carried it (wtc_channel_place). */
  bool placed;
  uint64_t log_seq;
  uint64_t log_t_start;
  uint64_t log_t_end;
};

struct wtc_channel {
  GArray *msgs;                 /* struct wtc_msg, in stream order */
  GByteArray *manifest;         /* every MANIFEST payload, concatenated */
  char *error;                  /* why the stream stopped early, or NULL */
  guint last_of_type[WTCH_TYPE_MAX + 1];  /* index + 1 of each type's last message */
};

/* CHANNEL records of the log: writes to the channel export. */
struct wtc_chanrec {
  uint64_t seq;
  uint64_t t_start;
  uint64_t t_end;
  uint64_t offset;
  uint64_t length;
};

/* Reads every good message; a bad one stops the reading and is described
 * in ch->error (the good ones before it are kept). NULL only when the file
 * cannot be opened. */
struct wtc_channel *wtc_channel_read (const char *path, GError **error);
void wtc_channel_free (struct wtc_channel *ch);
typedef struct wtc_channel wtc_channel;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_channel, wtc_channel_free)

/* Ties each message to the last CHANNEL record whose range holds its
 * offset (records in log order). */
void wtc_channel_place (struct wtc_channel *ch, const GArray *chanrecs);
/* The same, one record at a time as the log streams by (in log order): a
 * binary search, then only the messages inside the record, so placing costs
 * O(log n) a record plus the sectors the records carry. */
void wtc_channel_place_record (struct wtc_channel *ch, const struct wtlog_record *rec);
/* The last message of a type, or NULL. */
const struct wtc_msg *wtc_channel_last (const struct wtc_channel *ch, uint16_t type);

/* Remembers rec when it is a good CHANNEL record. */
void wtc_chanrec_note (GArray *chanrecs, const struct wtlog_record *rec);

/* Every manifest in the stream, in order (struct wtmf_manifest *, freed by
 * the array). Returns false with error naming the byte of the stream where
 * parsing failed; the manifests before it are still in *out. */
bool wtc_manifests_parse (const struct wtc_channel *ch, GPtrArray **out,
                          GError **error);
/* The final manifest (checkpoint 0; the last one if several), or NULL. */
const struct wtmf_manifest *wtc_manifest_final (const GPtrArray *manifests);

/* The value of key in a key=value message, or NULL; g_free it. */
char *wtc_msg_kv (const struct wtc_msg *m, const char *key);

/* A MARK's label: its text without trailing newlines (g_free it). */
char *wtc_mark_label (const struct wtc_msg *m);
/* Whether m is a MARK labelled label (trailing newlines aside). */
bool wtc_mark_is (const struct wtc_msg *m, const char *label);

/* The channel's messages, each tied to the CHANNEL record of log that
 * carried it (wtc_channel_place). A channel that breaks after some good
 * messages adds a warning to warnings (char *; NULL: none wanted). */
struct wtc_channel *wtc_channel_read_placed (const char *log, const char *channel,
                                             GPtrArray *warnings, GError **error);

#endif
