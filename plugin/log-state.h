/* The state of the plugin's log (log-state.c), which its three parts share:
 * log.c reserves positions and moves the watermark (the API of log.h),
 * log-ring.c maps the ring and prefaults it,
 * log-mover.c moves the ring's bytes into the log file; log.c calls the
 * other two, which use only this state.  Only plugin/log*.c include this. */
#ifndef WTP_LOG_STATE_H
#define WTP_LOG_STATE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wtlog.h"

struct wtp_slot;                /* log.h: a reservation */

/* Inside the plugin only: no lookup through the GOT on the request path. */
#pragma GCC visibility push(hidden)

/* A record written straight into the file, which the mover steps over. */
struct wtp_hole { uint64_t start, end; };

struct wtp_log_state {
  int fd;                       /* the log: header, allocation, sync, close */
  bool owned;                   /* emptied and written by this plugin */
  int dfd;                      /* the log again, O_DIRECT if it can be: moves */
  char *path;
  uint64_t start_monotonic_ns;
  /* The ring: its header page, then ring_size bytes mapped twice in a row,
   * so that a record that wraps around the end is contiguous in memory. */
  int ring_fd;
  bool ring_locked;             /* this plugin holds the ring's flock */
  char *ring_path;
  unsigned char *ring_base;     /* the header page */
  unsigned char *ring;          /* ring_size * 2 bytes of addresses */
  uint64_t ring_size;
  pthread_mutex_t lock;
  pthread_cond_t room;          /* freed or the watermark moved, or a break */
  unsigned room_waiters;
  uint64_t seq;                 /* last seq handed out */
  uint64_t pos;                 /* next free byte */
  uint64_t allocated;           /* the file's size: bytes allocated */
  uint64_t written;             /* every record before this is copied */
  uint64_t kicked;              /* pos when the mover was last woken */
  /* Log positions below freed are in the file, and their bytes in the ring
   * may be overwritten (read atomically by wtp_log_drain_to). */
  uint64_t freed;
  struct wtp_slot *head, *tail; /* reserved, not yet under the watermark */
  /* Records written straight into the file that the mover has not passed,
   * in log order: the mover skips them (holes[first..n)). */
  struct wtp_hole *holes;
  size_t holes_first, holes_n, holes_cap;
  bool broken;                  /* no more reservations */
  /* The queue (stage=on, data=off; log-queue.c): the mover applies each
   * record onto the image and writes it into the log without its payload,
   * at file_end; ring positions are then the ring's own. */
  bool queue;
  /* The mover writes each record's change onto the image as it moves it:
   * the queue, and data=on with stage=on (there the log file still gets
   * the records whole, at the ring's positions). */
  bool apply_image;
  int image_fd;
  const char *image_path;
  uint64_t image_size;
  bool image_blockdev;
  uint64_t file_end;            /* the log file's records end here */
  uint64_t apply_end;           /* end of the last record the mover applies */
  unsigned char *qbuf;          /* the mover's records on their way */
  /* Moves: one at a time, under move_lock. */
  pthread_mutex_t move_lock;
  uint64_t moved;               /* every byte below this is in the file */
  /* The mover thread. */
  pthread_t mover;
  bool mover_running;           /* set before any request, by after_fork */
  bool mover_stop;
  sem_t move_wanted;
  /* The prefault helper: maps the ring's pages once, at SCHED_IDLE.  It
   * never takes the mutex: at SCHED_IDLE it could be preempted while
   * holding it, and every request would then wait for an idle CPU. */
  pthread_t prefaulter;
  bool prefaulter_running;
  bool prefault_stop;
  uint64_t page_size;
};

/* The one log of the plugin. */
extern struct wtp_log_state wtp_log;

/* Called with the mutex held: no more reservations, and the requests
 * waiting for room fail. */
void wtp_log_break (void);

/* log-ring.c: the ring. */
int wtp_log_create_ring (const struct wtlog_header *h);
void wtp_log_close_ring (bool all_moved);
void wtp_log_start_prefault (void);
void wtp_log_stop_prefault (void);

/* log-mover.c: the ring's bytes into the log file. */
void wtp_log_open_direct (const char *path);
int wtp_log_move (void);
void wtp_log_start_mover (void);
void wtp_log_stop_mover (void);

/* log-queue.c: the queue's move (wtp_log_move calls it in queue mode). */
int wtp_log_move_queue (void);
/* Called under move_lock after a move: the ring's space below moved is
 * free, the waiters woken; or on err the log is broken.  0 or -1. */
int wtp_log_moved (uint64_t target, int err);
/* With apply_image: the changes of the records in [from, to) of the ring
 * (or, for a record written straight into the file, of the one at from
 * in the file's mapping: whole is false) onto the image, in order.  0 or
 * an errno. */
int wtp_log_apply_ring (uint64_t from, uint64_t to);
int wtp_log_apply_file (uint64_t at);

#pragma GCC visibility pop

#endif
