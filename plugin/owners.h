/* data=on's one copy of large writes (owners.c, doc/formats.md "One copy
 * of large writes"): a large whole-sector WRITE is written into the image
 * by its request and logged without its bytes (IN_IMAGE); the owner map
 * says which ranges of the image still hold such a record's bytes, and
 * before any change overwrites them their bytes go into the log as a
 * SAVED record. */
#ifndef WTP_OWNERS_H
#define WTP_OWNERS_H

#include <stdbool.h>
#include <stdint.h>

#include "export.h"

#pragma GCC visibility push(hidden)

/* The owner map of disk, when the log is its store with data=on (else
 * nothing).  0, or -1 after nbdkit_error. */
int wtp_owners_open (const struct wtp_export *disk, bool data);
bool wtp_owners_active (void);
/* Called under the range lock of a change of [offset, offset+length) that
 * will happen (its record not reserved yet, the image not changed yet):
 * each piece of the sectors it touches whose bytes are still an IN_IMAGE
 * record's is logged as a SAVED record (conn's), read from the image;
 * then those sectors belong to the change when in_image, else to no
 * record.  0, or an errno (the change must then fail: nothing changed). */
int wtp_owners_before_change (uint32_t conn, uint64_t offset, uint64_t length,
                              bool in_image);
void wtp_owners_close (void);

#pragma GCC visibility pop

#endif
