/* Stores and loads through a shared mapping fault with SIGBUS when the
 * filesystem cannot back the page (ENOSPC, an I/O error, a file truncated
 * under us): the guard turns that into an error the workload can report,
 * instead of a dead process and no RESULT. */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "guest.h"

/* volatile: memcpy is known not to read it, so the compiler would drop
 * the store that arms the guard. */
static __thread sigjmp_buf *volatile wtg_guard_jmp;

static void
wtg_guard_on_sigbus (int sig, siginfo_t *si, void *uc)
{
  (void) si;
  (void) uc;
  if (wtg_guard_jmp)
    siglongjmp (*wtg_guard_jmp, 1);
  /* A SIGBUS outside a guarded access is a bug: die of it. */
  signal (sig, SIG_DFL);
  raise (sig);
}

void
wtg_guard_install (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = wtg_guard_on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGBUS, &sa, NULL);
}

/* 0, or -1 when the access raised SIGBUS. */
int
wtg_guarded_copy (void *dst, const void *src, size_t len)
{
  sigjmp_buf jb;
  if (sigsetjmp (jb, 1)) {
    wtg_guard_jmp = NULL;
    return -1;
  }
  wtg_guard_jmp = &jb;
  memcpy (dst, src, len);
  wtg_guard_jmp = NULL;
  return 0;
}

int
wtg_guarded_compare (const void *map, const void *expected, size_t len,
                     int *differs)
{
  sigjmp_buf jb;
  if (sigsetjmp (jb, 1)) {
    wtg_guard_jmp = NULL;
    return -1;
  }
  wtg_guard_jmp = &jb;
  *differs = memcmp (map, expected, len) != 0;
  wtg_guard_jmp = NULL;
  return 0;
}
