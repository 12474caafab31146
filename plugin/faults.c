/* Fault injection.  Every rule owns a PRNG seeded from its seed= and draws
 * one number for every write request to the disk export, whether or not its
 * other selectors match, so the same request sequence gives the same faults. */
#include "faults.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "sector-hash.h"

struct wtp_fault_rule {
  enum wtp_fault_kind kind;
  double p;                     /* 1: always */
  bool has_lba;
  uint64_t lba_first, lba_last;
  uint64_t nth, every, count;   /* 0: not set */
  uint64_t from;                /* 0: not set; else writes from the from-th on */
  bool has_after;
  uint64_t after_ns;
  uint64_t rng;
  uint64_t fired;
};

static struct {
  pthread_mutex_t lock;
  struct wtp_fault_rule *rules;
  size_t nrules;
  uint64_t requests;
  FILE *truth;
  char *truth_path;
} wtp_faults = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const wtp_fault_names[] = {
  [WTP_FAULT_NONE] = "none", [WTP_FAULT_VANISH] = "vanish",
  [WTP_FAULT_LIE] = "lie", [WTP_FAULT_TEAR] = "tear", [WTP_FAULT_EIO] = "eio",
};

/* splitmix64: tiny, seedable with any value, good enough to pick faults. */
static uint64_t
wtp_fault_next (struct wtp_fault_rule *r)
{
  uint64_t z = (r->rng += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double
wtp_fault_uniform (struct wtp_fault_rule *r)
{
  return (double) (wtp_fault_next (r) >> 11) * 0x1.0p-53;
}

static int
wtp_parse_u64 (const char *spec, const char *key, const char *val,
               uint64_t *out)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull (val, &end, 0);
  if (errno || end == val || *end || val[0] == '-') {
    nbdkit_error ("fault: %s: %s=%s: not a number", spec, key, val);
    return -1;
  }
  *out = v;
  return 0;
}

/* nth, every, from and count count from 1: 0 would never match (or, for
 * from, mean what leaving it out means). */
static int
wtp_parse_positive (const char *spec, const char *key, const char *val,
                    uint64_t *out)
{
  if (wtp_parse_u64 (spec, key, val, out) == -1)
    return -1;
  if (*out == 0) {
    nbdkit_error ("fault: %s: %s=%s: must be at least 1", spec, key, val);
    return -1;
  }
  return 0;
}

static int
wtp_parse_lba (const char *spec, const char *val, struct wtp_fault_rule *r)
{
  char *end, *end2;
  errno = 0;
  r->lba_first = strtoull (val, &end, 0);
  if (errno || end == val || val[0] == '-'
      || (*end && *end != '-')) {
    nbdkit_error ("fault: %s: lba=%s: expected SECTOR or FIRST-LAST", spec, val);
    return -1;
  }
  r->lba_last = r->lba_first;
  if (*end == '-') {
    r->lba_last = strtoull (end + 1, &end2, 0);
    if (errno || end2 == end + 1 || *end2 || end[1] == '-'
        || r->lba_last < r->lba_first) {
      nbdkit_error ("fault: %s: lba=%s: expected FIRST-LAST with FIRST <= LAST",
                    spec, val);
      return -1;
    }
  }
  r->has_lba = true;
  return 0;
}

static int
wtp_parse_real (const char *spec, const char *key, const char *val,
                double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double v = strtod (val, &end);
  if (errno || end == val || *end || !isfinite (v) || v < lo || v > hi) {
    nbdkit_error ("fault: %s: %s=%s: expected a number from %g to %g",
                  spec, key, val, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int
wtp_parse_selector (const char *spec, char *kv, struct wtp_fault_rule *r)
{
  char *eq = strchr (kv, '=');
  if (!eq) {
    nbdkit_error ("fault: %s: %s: expected key=value", spec, kv);
    return -1;
  }
  *eq = '\0';
  const char *key = kv, *val = eq + 1;
  double seconds;
  uint64_t seed;

  if (strcmp (key, "p") == 0)
    return wtp_parse_real (spec, key, val, 0, 1, &r->p);
  if (strcmp (key, "lba") == 0)
    return wtp_parse_lba (spec, val, r);
  if (strcmp (key, "nth") == 0)
    return wtp_parse_positive (spec, key, val, &r->nth);
  if (strcmp (key, "every") == 0)
    return wtp_parse_positive (spec, key, val, &r->every);
  if (strcmp (key, "count") == 0)
    return wtp_parse_positive (spec, key, val, &r->count);
  if (strcmp (key, "from") == 0)
    return wtp_parse_positive (spec, key, val, &r->from);
  if (strcmp (key, "seed") == 0) {
    if (wtp_parse_u64 (spec, key, val, &seed) == -1)
      return -1;
    r->rng = seed;
    return 0;
  }
  if (strcmp (key, "after") == 0) {
    if (wtp_parse_real (spec, key, val, 0, 1e9, &seconds) == -1)
      return -1;
    r->has_after = true;
    r->after_ns = (uint64_t) (seconds * 1e9);
    return 0;
  }
  nbdkit_error ("fault: %s: unknown selector: %s (expected p, lba, nth, every, "
                "from, after, count or seed)", spec, key);
  return -1;
}

static int
wtp_parse_kind (const char *spec, const char *name, struct wtp_fault_rule *r)
{
  for (size_t k = WTP_FAULT_VANISH; k <= WTP_FAULT_EIO; k++)
    if (strcmp (name, wtp_fault_names[k]) == 0) {
      r->kind = k;
      return 0;
    }
  nbdkit_error ("fault: %s: unknown kind: %s (expected vanish, lie, tear or eio)",
                spec, name);
  return -1;
}

int
wtp_faults_add_rule (const char *spec)
{
  struct wtp_fault_rule rule = { .p = 1 };
  char *copy = strdup (spec), *save = NULL;
  if (!copy) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  int r = wtp_parse_kind (spec, strtok_r (copy, ":", &save) ?: "", &rule);
  for (char *kv; r == 0 && (kv = strtok_r (NULL, ":", &save)); )
    r = wtp_parse_selector (spec, kv, &rule);
  free (copy);
  if (r == -1)
    return -1;
  struct wtp_fault_rule *rules = realloc (wtp_faults.rules,
                                          (wtp_faults.nrules + 1) * sizeof *rules);
  if (!rules) {
    nbdkit_error ("realloc: %m");
    return -1;
  }
  rules[wtp_faults.nrules++] = rule;
  wtp_faults.rules = rules;
  return 0;
}

bool
wtp_faults_any (void)
{
  return wtp_faults.nrules > 0;
}

int
wtp_faults_open (const char *path)
{
  wtp_faults.truth_path = strdup (path);
  if (!wtp_faults.truth_path) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  wtp_faults.truth = fopen (path, "we");
  if (!wtp_faults.truth) {
    nbdkit_error ("open: faults: %s: %m", path);
    return -1;
  }
  return 0;
}

static bool
wtp_fault_rule_matches (const struct wtp_fault_rule *r, uint64_t req,
                        uint64_t first, uint64_t n, uint64_t now_ns)
{
  return (!r->has_lba || (first <= r->lba_last && first + n - 1 >= r->lba_first))
    && (!r->nth || req == r->nth)
    && (!r->every || req % r->every == 0)
    && req >= r->from
    && (!r->has_after || now_ns >= r->after_ns)
    && (!r->count || r->fired < r->count)
    /* A tear needs a non-empty proper subset: two sectors at least. */
    && (r->kind != WTP_FAULT_TEAR || n >= 2);
}

/* A non-empty proper subset of n >= 2 sectors, from the rule's PRNG. */
static int
wtp_fault_tear_subset (struct wtp_fault_rule *r, struct wtp_fault *f)
{
  f->stored = malloc (f->nsectors);
  if (!f->stored)
    return -1;
  uint64_t kept;
  do {
    kept = 0;
    for (uint64_t i = 0; i < f->nsectors; i++)
      kept += f->stored[i] = wtp_fault_next (r) & 1;
  } while (kept == 0 || kept == f->nsectors);
  return 0;
}

int
wtp_faults_decide (uint64_t offset, uint64_t count, uint64_t now_ns,
                   struct wtp_fault *f)
{
  struct wtp_fault_rule *chosen = NULL;
  int ret = 0;

  memset (f, 0, sizeof *f);
  f->first_sector = offset / WT_SECTOR_SIZE;
  f->nsectors = (offset + count - 1) / WT_SECTOR_SIZE - f->first_sector + 1;
  pthread_mutex_lock (&wtp_faults.lock);
  f->req = ++wtp_faults.requests;
  for (size_t i = 0; i < wtp_faults.nrules; i++) {
    struct wtp_fault_rule *r = &wtp_faults.rules[i];
    double u = wtp_fault_uniform (r);
    if (!chosen && u < r->p
        && wtp_fault_rule_matches (r, f->req, f->first_sector, f->nsectors,
                                   now_ns))
      chosen = r;
  }
  if (chosen) {
    chosen->fired++;
    f->kind = chosen->kind;
    if (f->kind == WTP_FAULT_TEAR && wtp_fault_tear_subset (chosen, f) == -1) {
      f->kind = WTP_FAULT_NONE;
      ret = -1;
    }
  }
  pthread_mutex_unlock (&wtp_faults.lock);
  return ret;
}

/* Writes the runs of sectors not stored as FIRST-LAST,FIRST-LAST. */
static void
wtp_fault_print_lost (FILE *fp, const struct wtp_fault *f)
{
  const char *sep = "";
  uint64_t i = 0;
  while (i < f->nsectors) {
    if (f->stored && f->stored[i]) {
      i++;
      continue;
    }
    uint64_t j = i;
    while (j + 1 < f->nsectors && !(f->stored && f->stored[j + 1]))
      j++;
    fprintf (fp, "%s%" PRIu64 "-%" PRIu64, sep, f->first_sector + i,
             f->first_sector + j);
    sep = ",";
    i = j + 1;
  }
}

void
wtp_faults_record (struct wtp_fault *f, uint64_t seq, uint64_t offset,
                   uint64_t count)
{
  nbdkit_debug ("fault: req %" PRIu64 " seq %" PRIu64 ": %s %" PRIu64 "+%" PRIu64,
                f->req, seq, wtp_fault_names[f->kind], offset, count);
  pthread_mutex_lock (&wtp_faults.lock);
  if (wtp_faults.truth) {
    FILE *fp = wtp_faults.truth;
    if (seq)
      fprintf (fp, "seq=%" PRIu64, seq);
    else
      fprintf (fp, "seq=- after_seq=%" PRIu64, f->after_seq);
    fprintf (fp, " req=%" PRIu64 " kind=%s offset=%" PRIu64 " length=%" PRIu64
             " sectors=%" PRIu64 "-%" PRIu64 " sectors_not_stored=",
             f->req, wtp_fault_names[f->kind], offset, count, f->first_sector,
             f->first_sector + f->nsectors - 1);
    wtp_fault_print_lost (fp, f);
    fputc ('\n', fp);
    /* Flushed to the kernel at once: a killed nbdkit keeps its ground truth. */
    if (fflush (fp) == EOF)
      nbdkit_error ("write: faults: %s: %m", wtp_faults.truth_path);
  }
  pthread_mutex_unlock (&wtp_faults.lock);
  free (f->stored);
  f->stored = NULL;
}

void
wtp_faults_sync (void)
{
  pthread_mutex_lock (&wtp_faults.lock);
  if (wtp_faults.truth && fdatasync (fileno (wtp_faults.truth)) == -1)
    nbdkit_error ("fdatasync: faults: %s: %m", wtp_faults.truth_path);
  pthread_mutex_unlock (&wtp_faults.lock);
}

void
wtp_faults_close (void)
{
  if (wtp_faults.truth) {
    wtp_faults_sync ();
    if (fclose (wtp_faults.truth) == EOF)
      nbdkit_error ("close: faults: %s: %m", wtp_faults.truth_path);
    wtp_faults.truth = NULL;
  }
  free (wtp_faults.truth_path);
  free (wtp_faults.rules);
  wtp_faults.truth_path = NULL;
  wtp_faults.rules = NULL;
  wtp_faults.nrules = 0;
}
