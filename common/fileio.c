/* Opening inputs that might be FIFOs or devices: see fileio.h. */
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
