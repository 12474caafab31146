/* The guest's side of channel.bin: append messages to the channel device.
 * Every read and write runs in an I/O thread and is waited for with a
 * timeout, so a hung device costs the workload its report, not its life. */
#ifndef WTG_CHANNEL_WRITER_H
#define WTG_CHANNEL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wtg_channel;

/* Open the channel at path (NULL: a channel that drops every message) and
 * find where its stream ends, so numbering continues after the messages
 * already there. create: make a missing regular file. Returns NULL with
 * err set. */
struct wtg_channel *wtg_channel_open (const char *path, bool create,
                                      unsigned timeout_s, char *err,
                                      size_t errlen);

/* Append one message. Returns 0, or -1 when the channel is broken (the
 * reason went to stderr once, when it broke). */
int wtg_channel_send (struct wtg_channel *ch, uint16_t type,
                      const void *payload, uint32_t length);
/* The same with the header's flags (TRACE's WTCH_F_TRACE_LAST). */
int wtg_channel_send_flags (struct wtg_channel *ch, uint16_t type, uint16_t flags,
                            const void *payload, uint32_t length);

/* Whether a message was lost: the host will miss part of the report. */
bool wtg_channel_broken (const struct wtg_channel *ch);
/* Why the channel broke (valid once wtg_channel_broken says so). */
const char *wtg_channel_why (const struct wtg_channel *ch);
uint64_t wtg_channel_next_number (const struct wtg_channel *ch);
void wtg_channel_close (struct wtg_channel *ch);

#endif
