/* Helpers of the libFuzzer harnesses: see fuzz-util.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "crc32c.h"
#include "fuzz-util.h"
#include "le.h"
#include "manifest.h"
#include "wtlog.h"

#define WTFZ_SLOTS 8

const char *
wtfz_file (int slot, const uint8_t *data, size_t len)
{
  static int fds[WTFZ_SLOTS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
  static char paths[WTFZ_SLOTS][40];
  if (fds[slot] < 0) {
    fds[slot] = memfd_create ("wtrack-fuzz", 0);
    if (fds[slot] < 0) {
      perror ("memfd_create");
      abort ();
    }
    snprintf (paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
  }
  if (ftruncate (fds[slot], 0) != 0
      || (len && pwrite (fds[slot], data, len, 0) != (ssize_t) len)) {
    perror ("memfd write");
    abort ();
  }
  return paths[slot];
}

void
wtfz_touch (const void *p, size_t len)
{
  const volatile unsigned char *b = p;
  unsigned char sum = 0;
  for (size_t i = 0; i < len; i++)
    sum ^= b[i];
  (void) sum;
}

static void
wtfz_die (const char *what, const char *object)
{
  fprintf (stderr, "fuzz: %s: %s: %s\n", what, object, strerror (errno));
  abort ();
}

void
wtfz_quiet_stdout (void)
{
  int null = open ("/dev/null", O_WRONLY);
  if (null < 0 || dup2 (null, STDOUT_FILENO) < 0)
    wtfz_die ("open", "/dev/null");
  close (null);
}

const char *
wtfz_seeds_dir (void)
{
  static char dir[PATH_MAX];
  const char *env = getenv ("WTRACK_FUZZ_SEEDS");
  if (env && *env)
    return env;
  if (!dir[0]) {
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0)
      wtfz_die ("readlink", "/proc/self/exe");
    exe[n] = '\0';
    snprintf (dir, sizeof dir, "%s/seeds", dirname (exe));
  }
  return dir;
}

uint8_t *
wtfz_slurp (const char *dir, const char *name, size_t *len)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "rb");
  if (!f)
    return NULL;
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n == cap && !(buf = realloc (buf, cap = cap * 2 + 65536)))
      abort ();
    got = fread (buf + n, 1, cap - n, f);
    n += got;
  } while (got);
  bool bad = ferror (f);
  fclose (f);
  if (bad) {
    free (buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static char wtfz_tmp[PATH_MAX];

/* Removes dir and what is in it (a harness's own files: no symlinks
 * followed, unlink removes them). */
static void
wtfz_rm_tree (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  while (d && (e = readdir (d))) {
    char path[PATH_MAX];
    if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
      continue;
    snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
    if (unlink (path) != 0 && errno == EISDIR)
      wtfz_rm_tree (path);
  }
  if (d)
    closedir (d);
  rmdir (dir);
}

static void
wtfz_tmpdir_remove (void)
{
  wtfz_rm_tree (wtfz_tmp);
}

const char *
wtfz_tmpdir (void)
{
  if (!wtfz_tmp[0]) {
    const char *tmp = getenv ("WTRACK_FUZZ_TMPDIR");
    if (!tmp || !*tmp)
      tmp = access ("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : getenv ("TMPDIR");
    snprintf (wtfz_tmp, sizeof wtfz_tmp, "%s/wtrack-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (wtfz_tmp))
      wtfz_die ("mkdtemp", wtfz_tmp);
    atexit (wtfz_tmpdir_remove);
  }
  return wtfz_tmp;
}

void
wtfz_write (const char *path, const uint8_t *data, size_t len)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || (len && write (fd, data, len) != (ssize_t) len) || close (fd) != 0)
    wtfz_die ("write", path);
}

void
wtfz_repair_wtlog (uint8_t *buf, size_t len)
{
  static const unsigned char zero[4];
  if (len < WTLOG_HEADER_SIZE)
    return;
  wt_put32 (buf + WTLOG_HEADER_SIZE - 4, wt_crc32c (buf, WTLOG_HEADER_SIZE - 4));
  for (size_t pos = WTLOG_HEADER_SIZE; len - pos >= WTLOG_FIXED_SIZE;) {
    uint8_t *p = buf + pos;
    uint32_t size = wt_get32 (p);
    if (size < WTLOG_FIXED_SIZE || size > len - pos)
      return;
    uint32_t crc = wt_crc32c_update (0, p, 4);
    crc = wt_crc32c_update (crc, zero, 4);
    wt_put32 (p + 4, wt_crc32c_update (crc, p + 8, size - 8));
    pos += size;
  }
}

/* The length of the manifest at buf up to its trailer, or 0 when its
 * counts run past len. */
static size_t
wtfz_manifest_body (const uint8_t *buf, size_t len)
{
  if (len < WTMF_HEADER_SIZE)
    return 0;
  uint32_t nfiles = wt_get32 (buf + 20), nops = wt_get32 (buf + 24);
  uint64_t at = WTMF_HEADER_SIZE;
  for (uint32_t i = 0; i < nfiles; i++) {
    if (at + WTMF_FILE_FIXED > len)
      return 0;
    uint64_t path_len = wt_get32 (buf + at + 4), size = wt_get64 (buf + at + 16);
    uint64_t nextents = wt_get32 (buf + at + 24);
    uint64_t nsectors = wtmf_sectors_of (size);
    if (nsectors > len)
      return 0;
    at += WTMF_FILE_FIXED + wt_align8 (path_len) + nextents * WTMF_EXTENT_SIZE
      + nsectors * 8 + wt_align8 (nsectors * 4);
    if (at > len)
      return 0;
  }
  at += (uint64_t) nops * WTMF_OP_SIZE;
  return at + WTMF_TRAILER_SIZE <= len ? (size_t) at : 0;
}

void
wtfz_repair_manifests (uint8_t *buf, size_t len)
{
  for (size_t pos = 0; pos < len;) {
    size_t body = wtfz_manifest_body (buf + pos, len - pos);
    if (!body)
      return;
    wt_put32 (buf + pos + body, wt_crc32c (buf + pos, body));
    pos += body + WTMF_TRAILER_SIZE;
  }
}

/* The channel's messages in place; MANIFEST payloads are gathered into one
 * stream, repaired, and put back before the payload checksums. */
void
wtfz_repair_channel (uint8_t *buf, size_t len)
{
  size_t nmsgs = 0, cap = 0, stream_len = 0;
  size_t *at = NULL;
  for (size_t pos = 0; len - pos >= WTCH_BLOCK; nmsgs++) {
    uint8_t *p = buf + pos;
    if (memcmp (p, WTCH_MAGIC, 4) != 0)
      break;
    uint32_t length = wt_get32 (p + 24);
    uint64_t size = wtch_encoded_size (length);
    if (length > WTCH_MAX_PAYLOAD || size > len - pos) {
      wt_put32 (p + 32, wt_crc32c (p, 32));
      break;
    }
    if (nmsgs == cap && !(at = realloc (at, (cap = cap * 2 + 16) * sizeof *at)))
      abort ();
    at[nmsgs] = pos;
    if (wt_get16 (p + 4) == WTCH_MANIFEST)
      stream_len += length;
    pos += size;
  }
  uint8_t *stream = malloc (stream_len + 1);
  if (!stream)
    abort ();
  size_t s = 0;
  for (size_t i = 0; i < nmsgs; i++)
    if (wt_get16 (buf + at[i] + 4) == WTCH_MANIFEST) {
      memcpy (stream + s, buf + at[i] + WTCH_HEADER_SIZE, wt_get32 (buf + at[i] + 24));
      s += wt_get32 (buf + at[i] + 24);
    }
  wtfz_repair_manifests (stream, stream_len);
  s = 0;
  for (size_t i = 0; i < nmsgs; i++) {
    uint8_t *p = buf + at[i];
    uint32_t length = wt_get32 (p + 24);
    if (wt_get16 (p + 4) == WTCH_MANIFEST) {
      memcpy (p + WTCH_HEADER_SIZE, stream + s, length);
      s += length;
    }
    wt_put32 (p + 28, wt_crc32c (p + WTCH_HEADER_SIZE, length));
    wt_put32 (p + 32, wt_crc32c (p, 32));
  }
  free (stream);
  free (at);
}

static bool
wtfz_repaired (const uint8_t *data, size_t len, uint8_t **out,
               void (*repair) (uint8_t *, size_t))
{
  uint8_t *copy = malloc (len ? len : 1);
  if (!copy)
    abort ();
  memcpy (copy, data, len);
  repair (copy, len);
  if (memcmp (copy, data, len) == 0) {
    free (copy);
    return false;
  }
  *out = copy;
  return true;
}

bool
wtfz_repaired_wtlog (const uint8_t *data, size_t len, uint8_t **out)
{
  return wtfz_repaired (data, len, out, wtfz_repair_wtlog);
}

bool
wtfz_repaired_channel (const uint8_t *data, size_t len, uint8_t **out)
{
  return wtfz_repaired (data, len, out, wtfz_repair_channel);
}

bool
wtfz_repaired_manifests (const uint8_t *data, size_t len, uint8_t **out)
{
  return wtfz_repaired (data, len, out, wtfz_repair_manifests);
}

void
wtfz_split (const uint8_t *data, size_t len, struct wtfz_part parts[3])
{
  const uint8_t *p = data, *end = data + len;
  for (int i = 0; i < 3; i++) {
    const uint8_t *sep = i < 2 ? memmem (p, (size_t) (end - p), WTFZ_SEP, WTFZ_SEP_LEN) : NULL;
    parts[i].p = p;
    parts[i].len = (size_t) ((sep ? sep : end) - p);
    p = sep ? sep + WTFZ_SEP_LEN : end;
  }
}

void
wtfz_fixed_run (const char *who, struct wtfz_run *run)
{
  size_t len;
  const char *seeds = wtfz_seeds_dir ();
  uint8_t *data = wtfz_slurp (seeds, "check/run-data.bin", &len);
  if (!data) {
    fprintf (stderr, "%s: cannot read %s/check/run-data.bin (make fuzz-build makes it; "
             "WTRACK_FUZZ_SEEDS names another seeds folder)\n", who, seeds);
    exit (1);
  }
  struct wtfz_part parts[3];
  wtfz_split (data, len, parts);
  run->log = wtfz_file (0, parts[0].p, parts[0].len);
  run->channel = wtfz_file (1, parts[1].p, parts[1].len);
  run->image = wtfz_file (2, parts[2].p, parts[2].len);
  free (data);
}
