/* btrfs's chunk map: FIEMAP's "physical" on btrfs is a btrfs logical
 * address, the disk offset only inside mkfs's first data chunk. The run
 * script writes the final chunk tree's map (btrfs-chunks.txt, doc/formats.md);
 * the check translates every manifest extent through it once, when the
 * manifests are read, so the rest of the check sees disk offsets. */
#ifndef WTC_CHUNKS_H
#define WTC_CHUNKS_H

#include <stdint.h>

#include <glib.h>

struct wtc_chunk {
  uint64_t logical, length, offset;   /* offset: the byte on the disk */
};

/* An extent flag of the check's own, never in a manifest: the extent's
 * btrfs address lies in no chunk of the map (its chunk was refused, or the
 * guest lied). Set with WTMF_EXT_UNMAPPABLE, so the cold pass reads no disk
 * sector for it; check/map.c counts its sectors unchecked. */
#define WTC_EXT_NO_CHUNK (1u << 31)

/* Reads path, sorted by logical; NULL with error on a bad line. */
GArray *wtc_chunks_read (const char *path, GError **error);

/* Rewrites each extent of every manifest (struct wtmf_manifest *) from
 * logical to disk offsets, split where it crosses chunks. An extent some of
 * whose bytes no chunk holds is flagged WTC_EXT_NO_CHUNK. Returns how many did; *example describes the
 * first (g_free it). */
uint64_t wtc_chunks_translate (const GArray *chunks, GPtrArray *manifests, char **example);

#endif
