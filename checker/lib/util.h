/* Small helpers every command uses: time and flag formatting, JSON strings,
 * guest text made safe for a terminal, and a windowed reader of the disk
 * image. */
#ifndef WTC_LIB_UTIL_H
#define WTC_LIB_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#define WTC_ERROR (wtc_error_quark ())
GQuark wtc_error_quark (void);

/* "12.345678": log nanoseconds as seconds with microseconds. */
char *wtc_fmt_secs (uint64_t ns, char *buf, size_t len);
/* "2024-05-01T10:11:12.123Z" from CLOCK_REALTIME ns. */
char *wtc_fmt_iso (uint64_t realtime_ns, char *buf, size_t len);
/* "FUA,DATA", or "-" with no flags. */
char *wtc_fmt_record_flags (uint16_t flags, char *buf, size_t len);
/* "EIO", or "errno 1234" for a number without a name. */
const char *wtc_errno_name (uint32_t err, char *buf, size_t len);
/* 32 lower-case hex digits. */
char *wtc_fmt_run_id (const uint8_t id[16], char *buf, size_t len);
/* "4.0 MiB" */
char *wtc_fmt_bytes (uint64_t bytes, char *buf, size_t len);

/* A JSON string literal, quotes included, of len bytes of s, in ASCII:
 * controls and non-ASCII characters as \uXXXX (UTF-8 decoded), bytes that
 * are not UTF-8 as \ufffd, so any guest text stays valid JSON. */
void wtc_json_str_n (FILE *out, const char *s, size_t len);
void wtc_json_str (FILE *out, const char *s);

/* Guest text fit for a terminal, g_free it (NULL for NULL): control
 * characters, newlines, C1 controls and bytes that are not UTF-8 written
 * C-style (\x1b, \n, \\), so a guest can neither send escape sequences
 * to the reader's terminal nor forge a line of the report. */
char *wtc_text_safe (const char *s);

/* The hash of a sector of zeroes. */
uint64_t wtc_zero_hash (void);

/* Reads sectors of a disk image through a large window, so a sorted walk
 * over the sectors costs one big pread per window, not one per sector. */
typedef struct wtc_image wtc_image;
struct wtc_image *wtc_image_open (const char *path, GError **error);
uint64_t wtc_image_size (const struct wtc_image *img);
/* The 512 bytes of sector s, valid until the next call; NULL with error set
 * when the sector lies past the end of the image or the read fails. */
const unsigned char *wtc_image_sector (struct wtc_image *img, uint64_t s,
                                       GError **error);
void wtc_image_close (struct wtc_image *img);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_image, wtc_image_close)

#endif
