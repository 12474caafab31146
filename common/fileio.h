/* Opening the files the tools read, and reading and writing them in full.
 * A run directory comes from elsewhere: a FIFO in it would block open(2)
 * forever, and a character device would read without end, so readers
 * accept only regular files and block devices.  pread(2) and pwrite(2) may
 * do part of a request or be interrupted by a signal; every part of
 * wtrack (the plugin, the guest, the checker) reads and writes through the
 * helpers below, which retry until the request is done. */
#ifndef WT_FILEIO_H
#define WT_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Opens path with flags (O_RDONLY or O_RDWR, O_CLOEXEC, ...) without
 * blocking, and keeps it only if it is a regular file or a block device.
 * Returns the descriptor (blocking again), or -1 with errno set and err
 * holding "open: PATH: reason" or "PATH: a FIFO, not a regular file or
 * block device" (errno EINVAL). */
int wt_open_input (const char *path, int flags, char *err, size_t errlen);

/* Reads len bytes at byte off, again after EINTR and short reads.  Returns
 * the bytes read: len, or fewer only where the file ends first (errno
 * untouched; what the end means is the caller's to say), or -1 with errno
 * (the bytes read before the error are not counted). */
ssize_t wt_pread_full (int fd, void *buf, size_t len, uint64_t off);

/* Writes len bytes at byte off, again after EINTR and short writes.
 * Returns len, or -1 with errno; a pwrite that takes nothing (a full file
 * system, the end of a device) is ENOSPC. */
ssize_t wt_pwrite_full (int fd, const void *buf, size_t len, uint64_t off);

/* wt_pwrite_full for n buffers written in order from byte *pos: 0, or -1
 * with errno.  *pos moves past what was written, even on an error; iov is
 * used up (the caller's entries are changed). */
int wt_pwritev_full (int fd, struct iovec *iov, int n, uint64_t *pos);

#endif
