/* The kernel's own reports of I/O errors, read from its log (/dev/kmsg)
 * between the workload's start and its RESULT. A write the kernel fails in
 * writeback reaches no system call of the workload (unless an fsync happens
 * to collect it), yet a run whose disk failed must not pass as clean. */
#include "guest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Only inside a wtrack guest (its kernel command line names wtrack): the
 * same program run on a host must not count the host's errors. */
static bool
wtg_in_guest (void)
{
  char cmdline[4096];
  int fd = open ("/proc/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, cmdline, sizeof cmdline - 1);
  close (fd);
  if (n <= 0)
    return false;
  cmdline[n] = '\0';
  return strstr (cmdline, "wtrack.") != NULL;
}

void
wtg_kmsg_start (struct wtg_run *run)
{
  run->kmsg_fd = -1;
  if (!wtg_in_guest ())
    return;
  int fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return;
  /* only what the kernel says from here on */
  if (lseek (fd, 0, SEEK_END) < 0) {
    close (fd);
    return;
  }
  run->kmsg_fd = fd;
}

/* A record's text: after "PRIORITY,SEQ,TIME,FLAGS;", up to the newline. */
static void
wtg_kmsg_text (const char *rec, char *out, size_t cap)
{
  const char *text = strchr (rec, ';');
  text = text ? text + 1 : rec;
  size_t n = strcspn (text, "\n");
  if (n >= cap)
    n = cap - 1;
  memcpy (out, text, n);
  out[n] = '\0';
}

void
wtg_kmsg_finish (struct wtg_run *run)
{
  if (run->kmsg_fd < 0)
    return;
  char rec[8192];
  for (;;) {
    ssize_t n = read (run->kmsg_fd, rec, sizeof rec - 1);
    if (n < 0 && errno == EPIPE)
      continue;                 /* records overwritten before we read them */
    if (n <= 0)
      break;
    rec[n] = '\0';
    if (!strstr (rec, "I/O error"))
      continue;
    if (run->io_errors++ == 0)
      wtg_kmsg_text (rec, run->io_error_first, sizeof run->io_error_first);
  }
  close (run->kmsg_fd);
  run->kmsg_fd = -1;
  if (run->io_errors && !run->error[0])
    wtg_fail (run, "the kernel reported %" PRIu64 " I/O error%s (the first: %s)",
              run->io_errors, run->io_errors == 1 ? "" : "s", run->io_error_first);
}
