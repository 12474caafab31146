/* A kernel finding of the ops workload (doc/ops.md "Found so far"), outside
 * wtrack: bytes stored through a shared mapping past EOF, inside the page
 * that holds EOF, must never become the file's (POSIX: "modifications to
 * that region are not written to the file"). Extending the file then must
 * expose zeros there. Each way of extending is tried on a file of its own:
 *
 *   eof-mmap-dio DIR
 *
 * prints what each way leaves past the old EOF up to the end of its page
 * (how many bytes read non-zero, the first of them), before and after
 * fsync and a cache drop, and exits 1 when any way shows stored bytes
 * (ext4 under 6.18 does for the O_DIRECT write; with blocks smaller than
 * the page, 6.12 zeroes only the EOF's block: the page's later blocks show
 * for every way), 0 when none does, 2 when a call failed. Run it on a
 * fresh file system of each block size (tests/tools/eof-mmap-dio-boot.sh
 * boots a kernel on one, no wtrack involved). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
  OLD_EOF = 0x22061, STORE_AT = 0x2207c, EOF_PAGE_END = 0x23000, NEW_EOF = 0x24000,
  MAP_LEN = 0x40000
};

static const char *const ways[] = {
  "pwrite", "O_DIRECT pwrite", "ftruncate", "fallocate", "fallocate ZERO_RANGE",
};

static int
extend (const char *path, int fd, int way)
{
  static char buf[4096] __attribute__ ((aligned (4096)));
  memset (buf, 0xcd, sizeof buf);
  switch (way) {
  case 0: return pwrite (fd, buf, sizeof buf, NEW_EOF - 0x1000) == sizeof buf ? 0 : -1;
  case 1: {
    int dfd = open (path, O_RDWR | O_DIRECT);
    int rc = dfd >= 0 && pwrite (dfd, buf, sizeof buf, NEW_EOF - 0x1000) == sizeof buf ? 0 : -1;
    if (dfd >= 0)
      close (dfd);
    return rc;
  }
  case 2: return ftruncate (fd, NEW_EOF);
  case 3: return fallocate (fd, 0, NEW_EOF - 0x1000, 0x1000);
  default: return fallocate (fd, FALLOC_FL_ZERO_RANGE, NEW_EOF - 0x1000, 0x1000);
  }
}

/* The bytes past the old EOF to the end of its page that read non-zero:
 * their count, and the first one's offset in *first (0 when none); -1 when
 * the read fails. */
static int
nonzero_past_eof (int fd, unsigned *first)
{
  static unsigned char buf[EOF_PAGE_END - OLD_EOF];
  if (pread (fd, buf, sizeof buf, OLD_EOF) != (ssize_t) sizeof buf)
    return -1;
  int n = 0;
  *first = 0;
  for (unsigned i = 0; i < sizeof buf; i++)
    if (buf[i] && n++ == 0)
      *first = OLD_EOF + i;
  return n;
}

/* 1: the stored bytes show, 0: zeros, -1: a call failed. */
static int
try_way (const char *dir, int way)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/eof-mmap-dio.%d", dir, way);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate (fd, OLD_EOF) < 0) {
    perror (path);
    return -1;
  }
  unsigned char *m = mmap (NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    perror ("mmap");
    return -1;
  }
  memset (m + STORE_AT, 0xab, EOF_PAGE_END - STORE_AT);     /* to the end of the EOF page */
  msync (m, MAP_LEN, MS_ASYNC);
  if (extend (path, fd, way) < 0) {
    perror (ways[way]);
    return -1;
  }
  unsigned first_before, first_after;
  int before = nonzero_past_eof (fd, &first_before), after = -1;
  if (before < 0 || munmap (m, MAP_LEN) < 0 || fsync (fd) < 0
      || posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED)
      || (after = nonzero_past_eof (fd, &first_after)) < 0) {
    perror ("read back");
    return -1;
  }
  printf ("%-22s past the old EOF 0x%x to 0x%x: %d bytes non-zero (first 0x%x), after fsync and "
          "DONTNEED %d (first 0x%x) (want 0)\n", ways[way], OLD_EOF, EOF_PAGE_END, before,
          first_before, after, first_after);
  close (fd);
  unlink (path);
  return before || after;
}

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: eof-mmap-dio DIR\n");
    return 2;
  }
  int status = 0;
  for (int way = 0; way < 5; way++) {
    int r = try_way (argv[1], way);
    if (r < 0)
      return 2;
    status |= r;
  }
  return status;
}
