/* The full read and write helpers (common/fileio.h): what they return at
 * the end of a file, after a short write, and on an error.  A short write
 * is made for real: under RLIMIT_FSIZE the kernel writes up to the limit
 * and fails the next call with EFBIG. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"

enum { FILE_BYTES = 10000, LIMIT = 4096 };

static int
temp_file (void)
{
  const char *dir = getenv ("TMPDIR");
  char path[4096];
  snprintf (path, sizeof path, "%s/test-fileio.XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp (path);
  if (fd < 0) {
    perror ("mkstemp");
    exit (1);
  }
  unlink (path);
  return fd;
}

static void
fill (unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char) (i * 31 + seed);
}

static void
test_reads (int fd, const unsigned char *data)
{
  unsigned char buf[FILE_BYTES + 512];
  tap_ok (wt_pread_full (fd, buf, FILE_BYTES, 0) == FILE_BYTES
          && memcmp (buf, data, FILE_BYTES) == 0, "a whole file reads in full");
  tap_ok (wt_pread_full (fd, buf, 100, 1234) == 100
          && memcmp (buf, data + 1234, 100) == 0, "a part in the middle reads in full");
  errno = 0;
  ssize_t got = wt_pread_full (fd, buf, 512, FILE_BYTES - 10);
  tap_ok (got == 10 && errno == 0 && memcmp (buf, data + FILE_BYTES - 10, 10) == 0,
          "a read over the end returns the bytes before it (%zd), errno untouched", got);
  tap_ok (wt_pread_full (fd, buf, 512, FILE_BYTES) == 0, "a read at the end returns 0");
  tap_ok (wt_pread_full (fd, buf, 512, FILE_BYTES + 4096) == 0, "a read past the end returns 0");
  tap_ok (wt_pread_full (fd, buf, 0, 0) == 0, "an empty read returns 0");
  errno = 0;
  tap_ok (wt_pread_full (-1, buf, 512, 0) == -1 && errno == EBADF, "a bad descriptor: -1, EBADF");
}

static void
test_writes (const unsigned char *data)
{
  int fd = temp_file ();
  unsigned char back[FILE_BYTES];
  tap_ok (wt_pwrite_full (fd, data, FILE_BYTES, 0) == FILE_BYTES,
          "a write returns its length");
  tap_ok (wt_pread_full (fd, back, FILE_BYTES, 0) == FILE_BYTES
          && memcmp (back, data, FILE_BYTES) == 0, "and the file holds it");
  tap_ok (wt_pwrite_full (fd, data, 0, 0) == 0, "an empty write returns 0");
  test_reads (fd, data);
  close (fd);
  errno = 0;
  tap_ok (wt_pwrite_full (fd, data, 10, 0) == -1 && errno == EBADF,
          "a write to a closed descriptor: -1, EBADF");
}

static void
test_vectors (const unsigned char *data)
{
  int fd = temp_file ();
  unsigned char back[FILE_BYTES];
  struct iovec iov[5] = {
    { NULL, 0 }, { (void *) data, 1000 }, { NULL, 0 },
    { (void *) (data + 1000), 3000 }, { (void *) (data + 4000), FILE_BYTES - 4000 },
  };
  uint64_t pos = 0;
  tap_ok (wt_pwritev_full (fd, iov, 5, &pos) == 0 && pos == FILE_BYTES,
          "buffers (some empty) are written in order, pos moves past them");
  tap_ok (wt_pread_full (fd, back, FILE_BYTES, 0) == FILE_BYTES
          && memcmp (back, data, FILE_BYTES) == 0, "and the file holds them");
  struct iovec none[2] = { { NULL, 0 }, { NULL, 0 } };
  pos = 7;
  tap_ok (wt_pwritev_full (fd, none, 2, &pos) == 0 && pos == 7,
          "only empty buffers: done, nothing written");
  close (fd);
}

/* Past RLIMIT_FSIZE: the first pwrite is short, the next one fails. */
static void
test_short_write (const unsigned char *data)
{
  struct rlimit old, lim = { LIMIT, LIMIT };
  int fd = temp_file ();
  getrlimit (RLIMIT_FSIZE, &old);
  lim.rlim_max = old.rlim_max;
  signal (SIGXFSZ, SIG_IGN);
  if (setrlimit (RLIMIT_FSIZE, &lim) == -1) {
    perror ("setrlimit");
    exit (1);
  }
  errno = 0;
  ssize_t r = wt_pwrite_full (fd, data, LIMIT * 2, 0);
  int e = errno;
  struct iovec iov[2] = { { (void *) data, 1000 }, { (void *) (data + 1000), LIMIT } };
  uint64_t pos = 0;
  int cut = ftruncate (fd, 0);
  errno = 0;
  int rv = wt_pwritev_full (fd, iov, 2, &pos);
  int ev = errno;
  setrlimit (RLIMIT_FSIZE, &old);
  tap_ok (r == -1 && e == EFBIG, "a write that stops short is retried and its error "
          "returned (%zd, %s)", r, strerror (e));
  tap_ok (cut == 0, "the file is emptied for the vector write");
  tap_ok (rv == -1 && ev == EFBIG && pos == LIMIT,
          "a vector write that stops short: -1, EFBIG, pos past what was written (%llu)",
          (unsigned long long) pos);
  unsigned char back[LIMIT];
  tap_ok (wt_pread_full (fd, back, LIMIT, 0) == LIMIT && memcmp (back, data, LIMIT) == 0,
          "the part written is in the file");
  close (fd);
}

int
main (void)
{
  static unsigned char data[FILE_BYTES];
  fill (data, sizeof data, 7);
  tap_plan (18);
  test_writes (data);
  test_vectors (data);
  test_short_write (data);
  return tap_done ();
}
