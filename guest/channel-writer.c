/* Channel writer: messages at increasing 512-byte-aligned offsets, written
 * with O_DIRECT|O_SYNC from an aligned buffer (doc/design.md). */
#include "channel-writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "channel.h"
#include "guest.h"

#define WTG_CHAN_ALIGN 4096u

enum wtg_io_state { WTG_IO_IDLE, WTG_IO_PENDING, WTG_IO_DONE, WTG_IO_QUIT };

struct wtg_channel {
  char *path;
  int fd;                       /* -1: messages go nowhere */
  bool direct;
  bool broken;
  char why[300];                /* why it broke, for the guest's summary */
  uint64_t offset;              /* where the next message goes */
  uint64_t number;              /* its number */
  uint64_t limit;               /* device size; 0: a file that may grow */
  unsigned timeout_s;
  unsigned char *buf;           /* aligned for O_DIRECT */
  size_t bufcap;
  pthread_mutex_t send_lock;    /* one message at a time, from any thread */

  /* The I/O thread and the one request it serves. */
  pthread_t io_thread;
  bool io_started;
  pthread_mutex_t io_lock;
  pthread_cond_t io_cond;
  enum wtg_io_state io_state;
  bool io_write;
  size_t io_len;
  uint64_t io_off;
  ssize_t io_done;
  int io_errno;
};

static void *
wtg_chan_io_main (void *arg)
{
  struct wtg_channel *ch = arg;
  pthread_mutex_lock (&ch->io_lock);
  for (;;) {
    while (ch->io_state != WTG_IO_PENDING && ch->io_state != WTG_IO_QUIT)
      pthread_cond_wait (&ch->io_cond, &ch->io_lock);
    if (ch->io_state == WTG_IO_QUIT)
      break;
    bool write = ch->io_write;
    size_t len = ch->io_len;
    uint64_t off = ch->io_off;
    pthread_mutex_unlock (&ch->io_lock);
    ssize_t rc = write ? wt_pwrite_full (ch->fd, ch->buf, len, off)
      : wt_pread_full (ch->fd, ch->buf, len, off);
    int saved = errno;
    pthread_mutex_lock (&ch->io_lock);
    ch->io_done = rc < 0 ? -1 : rc;
    ch->io_errno = saved;
    ch->io_state = WTG_IO_DONE;
    pthread_cond_broadcast (&ch->io_cond);
  }
  pthread_mutex_unlock (&ch->io_lock);
  return NULL;
}

static int
wtg_chan_start_io (struct wtg_channel *ch)
{
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&ch->io_cond, &ca);
  pthread_condattr_destroy (&ca);
  pthread_mutex_init (&ch->io_lock, NULL);
  int e = pthread_create (&ch->io_thread, NULL, wtg_chan_io_main, ch);
  if (e) {
    errno = e;
    return -1;
  }
  ch->io_started = true;
  return 0;
}

/* Hand one read or write of ch->buf to the I/O thread and wait for it, at
 * most timeout_s. Returns the bytes done (a read may stop short at the end
 * of a file), or -1 with errno (ETIMEDOUT: the thread still owns buf). */
static ssize_t
wtg_chan_io (struct wtg_channel *ch, bool write, size_t len, uint64_t off)
{
  struct timespec deadline;
  clock_gettime (CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += ch->timeout_s;
  pthread_mutex_lock (&ch->io_lock);
  ch->io_write = write;
  ch->io_len = len;
  ch->io_off = off;
  ch->io_state = WTG_IO_PENDING;
  pthread_cond_broadcast (&ch->io_cond);
  int e = 0;
  while (ch->io_state != WTG_IO_DONE && e != ETIMEDOUT)
    e = pthread_cond_timedwait (&ch->io_cond, &ch->io_lock, &deadline);
  ssize_t done = -1;
  int saved = ETIMEDOUT;
  if (ch->io_state == WTG_IO_DONE) {
    done = ch->io_done;
    saved = ch->io_errno;
    ch->io_state = WTG_IO_IDLE;
  }
  pthread_mutex_unlock (&ch->io_lock);
  errno = saved;
  return done;
}

static int
wtg_chan_reserve (struct wtg_channel *ch, size_t size)
{
  if (size <= ch->bufcap)
    return 0;
  size_t cap = (size + WTG_CHAN_ALIGN - 1) / WTG_CHAN_ALIGN * WTG_CHAN_ALIGN;
  void *p;
  int e = posix_memalign (&p, WTG_CHAN_ALIGN, cap);
  if (e) {
    errno = e;
    return -1;
  }
  free (ch->buf);
  ch->buf = p;
  ch->bufcap = cap;
  return 0;
}

static int
wtg_chan_open_fd (struct wtg_channel *ch, bool direct, bool create)
{
  int flags = O_RDWR | O_SYNC | O_CLOEXEC | (direct ? O_DIRECT : 0)
    | (create ? O_CREAT : 0);
  int fd = open (ch->path, flags, 0644);
  if (fd < 0)
    return -1;
  if (ch->fd >= 0)
    close (ch->fd);
  ch->fd = fd;
  ch->direct = direct;
  return 0;
}

/* Some filesystems refuse O_DIRECT (at open, or for 512-byte requests):
 * a channel file on them is written through the page cache with O_SYNC. */
static ssize_t
wtg_chan_io_fallback (struct wtg_channel *ch, bool write, size_t len,
                      uint64_t off)
{
  ssize_t done = wtg_chan_io (ch, write, len, off);
  if (done >= 0 || errno != EINVAL || !ch->direct)
    return done;
  if (wtg_chan_open_fd (ch, false, false) < 0)
    return -1;
  return wtg_chan_io (ch, write, len, off);
}

static int
wtg_chan_size (struct wtg_channel *ch, char *err, size_t errlen)
{
  struct stat st;
  if (fstat (ch->fd, &st) < 0) {
    snprintf (err, errlen, "stat: %s: %m", ch->path);
    return -1;
  }
  if (S_ISBLK (st.st_mode)) {
    uint64_t bytes;
    if (ioctl (ch->fd, BLKGETSIZE64, &bytes) < 0) {
      snprintf (err, errlen, "ioctl BLKGETSIZE64: %s: %m", ch->path);
      return -1;
    }
    ch->limit = bytes;
  } else if (!S_ISREG (st.st_mode)) {
    snprintf (err, errlen, "channel: %s: neither a block device nor a regular file",
              ch->path);
    return -1;
  }
  return 0;
}

/* Find the end of the stream already in the channel: its first block
 * without the magic. A damaged message is skipped block by block so that
 * nothing already there is overwritten; the host's reader stops at the
 * damage anyway, and says where. */
static int
wtg_chan_find_end (struct wtg_channel *ch, char *err, size_t errlen)
{
  ch->offset = 0;
  ch->number = 1;
  if (wtg_chan_reserve (ch, WTCH_BLOCK) < 0) {
    snprintf (err, errlen, "malloc: %m");
    return -1;
  }
  bool warned = false;
  for (;;) {
    if (ch->limit && ch->offset + WTCH_BLOCK > ch->limit)
      return 0;
    ssize_t got = wtg_chan_io_fallback (ch, false, WTCH_BLOCK, ch->offset);
    if (got < 0 && errno == ETIMEDOUT) {
      ch->buf = NULL;           /* the stuck I/O thread still owns it */
      ch->broken = true;
    }
    if (got < 0) {
      snprintf (err, errlen, "read: %s at byte %" PRIu64 ": %m", ch->path, ch->offset);
      return -1;
    }
    if (got < (ssize_t) WTCH_BLOCK)
      return 0;
    struct wtch_message m;
    char why[160] = "";
    int d = wtch_decode_header (ch->buf, &m, why, sizeof why);
    if (d == 1)
      return 0;
    if (d == 0 && m.number != ch->number) {
      snprintf (why, sizeof why, "message number %" PRIu64 " where %" PRIu64 " was due",
                m.number, ch->number);
      d = -1;
    }
    if (d == -1) {
      if (!warned)
        fprintf (stderr, "wtrack-guest: channel: %s: bad message at byte %" PRIu64
                 ": %s; appending after it\n", ch->path, ch->offset, why);
      warned = true;
      ch->offset += WTCH_BLOCK;
      continue;
    }
    ch->offset += wtch_encoded_size (m.length);
    ch->number++;
  }
}

struct wtg_channel *
wtg_channel_open (const char *path, bool create, unsigned timeout_s, char *err,
                  size_t errlen)
{
  struct wtg_channel *ch = calloc (1, sizeof *ch);
  if (!ch) {
    snprintf (err, errlen, "malloc: %m");
    return NULL;
  }
  ch->fd = -1;
  ch->number = 1;
  ch->timeout_s = timeout_s ? timeout_s : 60;
  pthread_mutex_init (&ch->send_lock, NULL);
  if (!path)
    return ch;
  if (!(ch->path = strdup (path))) {
    snprintf (err, errlen, "malloc: %m");
    goto fail;
  }
  if (wtg_chan_open_fd (ch, true, create) < 0
      && (errno != EINVAL || wtg_chan_open_fd (ch, false, create) < 0)) {
    snprintf (err, errlen, "open: channel %s: %m", path);
    goto fail;
  }
  if (wtg_chan_size (ch, err, errlen) < 0)
    goto fail;
  if (wtg_chan_start_io (ch) < 0) {
    snprintf (err, errlen, "pthread_create: channel I/O thread: %m");
    goto fail;
  }
  if (wtg_chan_find_end (ch, err, errlen) < 0)
    goto fail;
  return ch;
 fail:
  wtg_channel_close (ch);
  return NULL;
}

static uint64_t
wtg_chan_guest_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int
wtg_chan_broke (struct wtg_channel *ch, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static int
wtg_chan_broke (struct wtg_channel *ch, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (ch->why, sizeof ch->why, fmt, ap);
  va_end (ap);
  fprintf (stderr, "wtrack-guest: channel: %s; no more messages will be sent\n", ch->why);
  ch->broken = true;
  return -1;
}

static int
wtg_chan_send_locked (struct wtg_channel *ch, uint16_t type, uint16_t flags,
                      const void *payload, uint32_t length)
{
  if (ch->broken)
    return -1;
  if (ch->fd < 0)
    return 0;
  uint64_t size = wtch_encoded_size (length);
  if (length > WTCH_MAX_PAYLOAD)
    return wtg_chan_broke (ch, "message %" PRIu64 " (%s): payload of %" PRIu32
                           " bytes exceeds the limit", ch->number,
                           wtch_type_name (type), length);
  if (ch->limit && ch->offset + size > ch->limit)
    return wtg_chan_broke (ch, "%s: full: message %" PRIu64 " (%s) needs %" PRIu64
                           " bytes at byte %" PRIu64 " of %" PRIu64, ch->path,
                           ch->number, wtch_type_name (type), size, ch->offset,
                           ch->limit);
  if (wtg_chan_reserve (ch, size) < 0)
    return wtg_chan_broke (ch, "malloc: message buffer of %" PRIu64 " bytes: %m", size);
  wtch_encode (ch->buf, type, flags, ch->number, wtg_chan_guest_ns (), payload, length);
  ssize_t done = wtg_chan_io_fallback (ch, true, size, ch->offset);
  if (done < 0 && errno == ETIMEDOUT)
    ch->buf = NULL;             /* the stuck I/O thread still owns it */
  if (done < 0)
    return wtg_chan_broke (ch, "write: %s at byte %" PRIu64 " (message %" PRIu64
                           ", %s): %s", ch->path, ch->offset, ch->number,
                           wtch_type_name (type),
                           errno == ETIMEDOUT ? "no answer within the timeout" : strerror (errno));
  ch->offset += size;
  ch->number++;
  return 0;
}

int
wtg_channel_send (struct wtg_channel *ch, uint16_t type, const void *payload,
                  uint32_t length)
{
  return wtg_channel_send_flags (ch, type, 0, payload, length);
}

int
wtg_channel_send_flags (struct wtg_channel *ch, uint16_t type, uint16_t flags,
                        const void *payload, uint32_t length)
{
  pthread_mutex_lock (&ch->send_lock);
  int rc = wtg_chan_send_locked (ch, type, flags, payload, length);
  pthread_mutex_unlock (&ch->send_lock);
  return rc;
}

bool
wtg_channel_broken (const struct wtg_channel *ch)
{
  return ch->broken;
}

const char *
wtg_channel_why (const struct wtg_channel *ch)
{
  return ch->why[0] ? ch->why : "an I/O on the channel did not finish in time";
}

uint64_t
wtg_channel_next_number (const struct wtg_channel *ch)
{
  return ch->number;
}

void
wtg_channel_close (struct wtg_channel *ch)
{
  if (!ch)
    return;
  /* A thread stuck in the device keeps its buffer and its descriptor. */
  bool stuck = ch->io_started && !ch->buf && ch->broken;
  if (ch->io_started && !stuck) {
    pthread_mutex_lock (&ch->io_lock);
    ch->io_state = WTG_IO_QUIT;
    pthread_cond_broadcast (&ch->io_cond);
    pthread_mutex_unlock (&ch->io_lock);
    pthread_join (ch->io_thread, NULL);
  }
  if (stuck)
    return;
  if (ch->fd >= 0)
    close (ch->fd);
  free (ch->buf);
  free (ch->path);
  free (ch);
}
