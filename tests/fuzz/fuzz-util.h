/* Shared by the libFuzzer harnesses (tests/fuzz/fuzz-*.c).
 *
 * Every format checks CRC32C checksums before (or after) its fields, so
 * random mutations rarely get past them. Each harness therefore reads the
 * input twice: as it is (the checksum checks), and with every checksum that
 * can be located recomputed (the field checks behind them). */
#ifndef WTFZ_FUZZ_UTIL_H
#define WTFZ_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A memfd holding data, and its path (/proc/self/fd/N) for readers that
 * open a path. The descriptor is reused from call to call. */
const char *wtfz_file (int slot, const uint8_t *data, size_t len);

/* A malloc'ed copy of data with its checksums recomputed; false (and no
 * copy) when none could be located or none changed. */
bool wtfz_repaired_wtlog (const uint8_t *data, size_t len, uint8_t **out);
bool wtfz_repaired_channel (const uint8_t *data, size_t len, uint8_t **out);
bool wtfz_repaired_manifests (const uint8_t *data, size_t len, uint8_t **out);

/* In place, for the harnesses that repair several parts. */
void wtfz_repair_wtlog (uint8_t *buf, size_t len);
void wtfz_repair_channel (uint8_t *buf, size_t len);
void wtfz_repair_manifests (uint8_t *buf, size_t len);

/* fuzz-check's input: the log, the channel and the disk image, separated
 * by WTFZ_SEP (a missing part is empty). */
#define WTFZ_SEP "\n--wtrack-fuzz--\n"
#define WTFZ_SEP_LEN 17
struct wtfz_part {
  const uint8_t *p;
  size_t len;
};
void wtfz_split (const uint8_t *data, size_t len, struct wtfz_part parts[3]);

/* Reads every byte of p[0..len) so ASan checks the whole range. */
void wtfz_touch (const void *p, size_t len);

/* Makes stdout /dev/null: the reports the harnesses print go nowhere. */
void wtfz_quiet_stdout (void);

/* The seed corpora (tests/fuzz/mkseeds): $WTRACK_FUZZ_SEEDS, else the
 * folder seeds beside the harness's own binary (/proc/self/exe), so a
 * harness started from any directory finds them. */
const char *wtfz_seeds_dir (void);

/* A malloc'ed copy of the file at dir/name and its length, or NULL. */
uint8_t *wtfz_slurp (const char *dir, const char *name, size_t *len);

/* A private folder, made once and removed with what is in it at exit:
 * under $WTRACK_FUZZ_TMPDIR, else /dev/shm (a harness that writes files
 * runs about ten times faster on tmpfs than on ext4), else $TMPDIR or /tmp. */
const char *wtfz_tmpdir (void);

/* The fixed small run the harnesses that fuzz one more input of
 * wtrack check read (seeds/check/run-data.bin: log, channel, image) as
 * memory files in slots 0-2; exits naming who when it is missing. */
struct wtfz_run {
  const char *log, *channel, *image;
};
void wtfz_fixed_run (const char *who, struct wtfz_run *run);

/* Writes len bytes of data to path (created or truncated); aborts on error. */
void wtfz_write (const char *path, const uint8_t *data, size_t len);

#endif
