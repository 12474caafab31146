/* Opening the files the tools read.  A run directory comes from elsewhere:
 * a FIFO in it would block open(2) forever, and a character device would
 * read without end, so readers accept only regular files and block
 * devices. */
#ifndef WT_FILEIO_H
#define WT_FILEIO_H

#include <stddef.h>

/* Opens path with flags (O_RDONLY or O_RDWR, O_CLOEXEC, ...) without
 * blocking, and keeps it only if it is a regular file or a block device.
 * Returns the descriptor (blocking again), or -1 with errno set and err
 * holding "open: PATH: reason" or "PATH: a FIFO, not a regular file or
 * block device" (errno EINVAL). */
int wt_open_input (const char *path, int flags, char *err, size_t errlen);

#endif
