/* Opening inputs that might be FIFOs or devices, full reads and writes:
 * see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *
wt_file_kind (mode_t mode)
{
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISSOCK (mode))
    return "a socket";
  if (S_ISDIR (mode))
    return "a directory";
  return "not a file";
}

int
wt_open_input (const char *path, int flags, char *err, size_t errlen)
{
  struct stat st;
  /* O_NONBLOCK: opening a FIFO for reading returns at once instead of
   * waiting for a writer that never comes. */
  int fd = open (path, flags | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    snprintf (err, errlen, "open: %s: %s", path, strerror (e));
    errno = e;
    return -1;
  }
  if (fstat (fd, &st) == -1) {
    int e = errno;
    snprintf (err, errlen, "stat: %s: %s", path, strerror (e));
    close (fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode)) {
    snprintf (err, errlen, "%s: %s, not a regular file or block device",
              path, wt_file_kind (st.st_mode));
    close (fd);
    errno = EINVAL;
    return -1;
  }
  int fl = fcntl (fd, F_GETFL);
  if (fl == -1 || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
    int e = errno;
    snprintf (err, errlen, "fcntl: %s: %s", path, strerror (e));
    close (fd);
    errno = e;
    return -1;
  }
  return fd;
}

ssize_t
wt_pread_full (int fd, void *buf, size_t len, uint64_t off)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread (fd, (char *) buf + done, len - done, (off_t) (off + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    done += (size_t) n;
  }
  return (ssize_t) done;
}

ssize_t
wt_pwrite_full (int fd, const void *buf, size_t len, uint64_t off)
{
  struct iovec iov = { (void *) buf, len };
  if (wt_pwritev_full (fd, &iov, 1, &off) == -1)
    return -1;
  return (ssize_t) len;
}

/* Steps past r bytes written from the n buffers at *iov: returns how many
 * buffers are left, the first of them trimmed to what is still to write. */
static int
wt_iov_advance (struct iovec **iov, int n, size_t r)
{
  while (n > 0 && r >= (*iov)->iov_len) {
    r -= (*iov)->iov_len;
    (*iov)++;
    n--;
  }
  if (n > 0) {
    (*iov)->iov_base = (char *) (*iov)->iov_base + r;
    (*iov)->iov_len -= r;
  }
  return n;
}

int
wt_pwritev_full (int fd, struct iovec *iov, int n, uint64_t *pos)
{
  /* Empty buffers first: a request that is all empty is done, not full. */
  n = wt_iov_advance (&iov, n, 0);
  while (n > 0) {
    /* One buffer left goes by pwrite: the kernel has no iovec to copy in,
     * and the plugin writes the image this way on every request. */
    ssize_t r = n == 1
      ? pwrite (fd, iov->iov_base, iov->iov_len, (off_t) *pos)
      : pwritev (fd, iov, n, (off_t) *pos);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0) {               /* a file that takes nothing is full */
      errno = ENOSPC;
      return -1;
    }
    *pos += (uint64_t) r;
    n = wt_iov_advance (&iov, n, (size_t) r);
  }
  return 0;
}
