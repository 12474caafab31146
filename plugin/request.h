/* The plugin's request callbacks (request.c), for the plugin's struct in
 * wtrack.c.  handle is a struct wtp_handle (wtrack.h). */
#ifndef WTP_REQUEST_H
#define WTP_REQUEST_H

#include <stdint.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#pragma GCC visibility push(hidden)

/* The largest write the plugin takes, advertised as the maximum block
 * size: its record, with the hashes (or the bytes) and the fixed part,
 * fits the 64 MiB ring, through which the queue (stage=on, data=off)
 * passes every record, the channel's with their bytes. */
#define WTP_MAX_WRITE (UINT32_C (32) << 20)

int wtp_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
               uint32_t flags);
int wtp_pwrite (void *handle, const void *buf, uint32_t count,
                uint64_t offset, uint32_t flags);
int wtp_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags);
int wtp_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags);
int wtp_flush (void *handle, uint32_t flags);
int wtp_extents (void *handle, uint32_t count, uint64_t offset,
                 uint32_t flags, struct nbdkit_extents *extents);

#pragma GCC visibility pop

#endif
