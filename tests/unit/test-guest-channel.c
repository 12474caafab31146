/* wtrack-guest on the host: run the real binary (guest/wtrack-guest) on a
 * temporary folder with --channel-file, then read what it sent with the
 * common readers (wtch_reader, wtmf_parse) and hold it to the contract:
 * numbering, HELLO, MARKs, RESULT, manifests whose expected hashes are those
 * of the bytes the files really hold, sector ops that name ops which wrote
 * those sectors, the same seed giving the same hashes, checkpoints, failures
 * that still send a RESULT, and result/mark/text continuing the numbering.
 *
 * Also a helper for tests/test-guest-host.sh:
 *   test-guest-channel --summary CHANNEL [--image DISK]
 * prints one line per fact (see summary()); with --image, every file sector
 * is looked up through its extents in DISK and compared with its expected
 * hash. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel.h"
#include "manifest.h"
#include "sector-hash.h"
#include "tap.h"

#define MAX_MANIFESTS 64
#define MAX_MARKS 4096

struct decoded {
  unsigned messages;
  char hello[8192];
  char result[8192];
  bool have_hello, have_result;
  uint16_t first_type, last_type;
  char *marks[MAX_MARKS];
  unsigned nmarks;
  unsigned char *manifest;      /* MANIFEST payloads, concatenated */
  size_t manifest_len;
  struct wtmf_manifest m[MAX_MANIFESTS];
  unsigned nmanifests;
  char err[512];                /* empty when all decoded */
};

static void
decoded_free (struct decoded *d)
{
  for (unsigned i = 0; i < d->nmarks; i++)
    free (d->marks[i]);
  for (unsigned i = 0; i < d->nmanifests; i++)
    wtmf_free (&d->m[i]);
  free (d->manifest);
  memset (d, 0, sizeof *d);
}

static void
keep_payload (char *dst, size_t cap, const struct wtch_message *msg)
{
  size_t n = msg->length < cap - 1 ? msg->length : cap - 1;
  memcpy (dst, msg->payload, n);
  dst[n] = '\0';
}

static void
take_message (struct decoded *d, const struct wtch_message *msg)
{
  if (!d->messages)
    d->first_type = msg->type;
  d->last_type = msg->type;
  d->messages++;
  if (msg->type == WTCH_HELLO && !d->have_hello) {
    keep_payload (d->hello, sizeof d->hello, msg);
    d->have_hello = true;
  } else if (msg->type == WTCH_RESULT) {
    keep_payload (d->result, sizeof d->result, msg);
    d->have_result = true;
  } else if (msg->type == WTCH_MARK && d->nmarks < MAX_MARKS) {
    d->marks[d->nmarks++] = strndup ((const char *) msg->payload, msg->length);
  } else if (msg->type == WTCH_MANIFEST) {
    d->manifest = realloc (d->manifest, d->manifest_len + msg->length);
    memcpy (d->manifest + d->manifest_len, msg->payload, msg->length);
    d->manifest_len += msg->length;
  }
}

/* 0 when the whole channel and every manifest in it decoded. */
static int
decode (const char *path, struct decoded *d)
{
  memset (d, 0, sizeof *d);
  struct wtch_reader *r = wtch_reader_open (path, d->err, sizeof d->err);
  if (!r)
    return -1;
  struct wtch_message msg;
  int rc;
  while ((rc = wtch_reader_next (r, &msg, d->err, sizeof d->err)) == 0)
    take_message (d, &msg);
  wtch_reader_close (r);
  if (rc == -1)
    return -1;
  size_t at = 0, used;
  while (at < d->manifest_len && d->nmanifests < MAX_MANIFESTS) {
    if (wtmf_parse (d->manifest + at, d->manifest_len - at, &d->m[d->nmanifests],
                    &used, d->err, sizeof d->err) < 0)
      return -1;
    d->nmanifests++;
    at += used;
  }
  if (at != d->manifest_len) {
    snprintf (d->err, sizeof d->err, "%zu manifest bytes left over", d->manifest_len - at);
    return -1;
  }
  return 0;
}

static const struct wtmf_manifest *
final_manifest (const struct decoded *d)
{
  for (unsigned i = d->nmanifests; i > 0; i--)
    if (d->m[i - 1].checkpoint == 0)
      return &d->m[i - 1];
  return NULL;
}

static bool
kv_is (const char *payload, const char *key, const char *want)
{
  char v[1024];
  return wtch_kv_get ((const unsigned char *) payload, (uint32_t) strlen (payload), key, v,
                      sizeof v) && strcmp (v, want) == 0;
}

static bool
kv (const char *payload, const char *key, char *out, size_t cap)
{
  return wtch_kv_get ((const unsigned char *) payload, (uint32_t) strlen (payload), key,
                      out, cap);
}

/* The extents, sorted by FIEMAP, leave no byte of the file out. */
static bool
extents_cover (const struct wtmf_file *f)
{
  uint64_t covered = 0;
  for (uint32_t i = 0; i < f->nextents; i++) {
    if (f->extents[i].logical > covered)
      return false;
    if (f->extents[i].logical + f->extents[i].length > covered)
      covered = f->extents[i].logical + f->extents[i].length;
  }
  return covered >= f->size;
}

/* Sectors whose expected hash matches the disk image at the place the
 * extents give; the last sector is zero-padded past EOF as the guest did. */
static uint64_t
image_matches (const struct wtmf_file *f, int img, uint64_t *mappable)
{
  uint64_t good = 0;
  *mappable = 0;
  for (uint64_t s = 0; s < f->nsectors; s++) {
    uint64_t lo = s * WT_SECTOR_SIZE;
    for (uint32_t i = 0; i < f->nextents; i++) {
      const struct wtmf_extent *e = &f->extents[i];
      if (lo < e->logical || lo >= e->logical + e->length || (e->flags & WTMF_EXT_UNMAPPABLE))
        continue;
      unsigned char sec[WT_SECTOR_SIZE] = { 0 };
      size_t n = f->size - lo < WT_SECTOR_SIZE ? f->size - lo : WT_SECTOR_SIZE;
      (*mappable)++;
      if (pread (img, sec, n, (off_t) (e->physical + lo - e->logical)) == (ssize_t) n
          && wt_sector_hash (sec) == f->hashes[s])
        good++;
      break;
    }
  }
  return good;
}

static uint64_t
digest (const struct wtmf_file *f)
{
  return XXH3_64bits (f->hashes, 8 * f->nsectors);
}

/* --summary: the facts the shell tests grep for, one per line:
 *   messages N first=TYPE last=TYPE
 *   hello KEY=VALUE                  (one line per HELLO line)
 *   mark LABEL                       (in order)
 *   result KEY=VALUE                 (one line per RESULT line)
 *   manifest checkpoint=K files=N ops=N
 *   file PATH size=N sectors=N extents=N covered=yes|no ops_zero=N digest=HEX
 *        [disk_match=GOOD/MAPPABLE]
 *   error TEXT                       (exit 2) */
static int
summary (const char *chan, const char *image)
{
  struct decoded d;
  int rc = decode (chan, &d);
  int img = image ? open (image, O_RDONLY) : -1;
  if (image && img < 0) {
    printf ("error open: %s: %s\n", image, strerror (errno));
    return 2;
  }
  printf ("messages %u first=%s last=%s\n", d.messages, wtch_type_name (d.first_type),
          wtch_type_name (d.last_type));
  for (char *line = strtok (d.hello, "\n"); line; line = strtok (NULL, "\n"))
    printf ("hello %s\n", line);
  for (unsigned i = 0; i < d.nmarks; i++)
    printf ("mark %s\n", d.marks[i]);
  for (char *line = strtok (d.result, "\n"); line; line = strtok (NULL, "\n"))
    printf ("result %s\n", line);
  for (unsigned i = 0; i < d.nmanifests; i++) {
    const struct wtmf_manifest *m = &d.m[i];
    printf ("manifest checkpoint=%" PRIu32 " files=%" PRIu32 " ops=%" PRIu32 "\n",
            m->checkpoint, m->nfiles, m->nops);
    for (uint32_t j = 0; j < m->nfiles; j++) {
      const struct wtmf_file *f = &m->files[j];
      uint64_t zero = 0;
      for (uint64_t s = 0; s < f->nsectors; s++)
        zero += f->ops[s] == 0;
      printf ("file %s size=%" PRIu64 " sectors=%" PRIu64 " extents=%" PRIu32
              " covered=%s ops_zero=%" PRIu64 " digest=%016" PRIx64, f->path, f->size,
              f->nsectors, f->nextents, extents_cover (f) ? "yes" : "no", zero, digest (f));
      if (img >= 0) {
        uint64_t mappable, good = image_matches (f, img, &mappable);
        printf (" disk_match=%" PRIu64 "/%" PRIu64, good, mappable);
      }
      putchar ('\n');
    }
  }
  if (rc < 0)
    printf ("error %s\n", d.err);
  if (img >= 0)
    close (img);
  decoded_free (&d);
  return rc < 0 ? 2 : 0;
}

/* ---- the TAP self-test ---------------------------------------------- */

static const char *guest = "guest/wtrack-guest";
static char tmp[] = "/tmp/wtg-test.XXXXXX";
static char logpath[300];

/* Run wtrack-guest with argv (NULL-terminated); its output goes to a log. */
static int
run_guest (char *const *args)
{
  pid_t pid = fork ();
  if (pid == 0) {
    int fd = open (logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2 (fd, 1);
      dup2 (fd, 2);
    }
    execv (guest, args);
    _exit (127);
  }
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

#define GUEST(...) run_guest ((char *const[]) { (char *) guest, __VA_ARGS__, NULL })

static char *
tpath (const char *name)
{
  static char bufs[8][400];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf (b, sizeof bufs[0], "%s/%s", tmp, name);
  return b;
}

/* The expected hashes are those of the bytes the file holds now (the
 * host's kernel loses nothing: the model and the file must agree). */
static bool
hashes_match_file (const struct wtmf_file *f, const char *path)
{
  int fd = open (path, O_RDONLY);
  if (fd < 0)
    return false;
  bool good = true;
  for (uint64_t s = 0; s < f->nsectors && good; s++) {
    unsigned char sec[WT_SECTOR_SIZE] = { 0 };
    ssize_t n = pread (fd, sec, WT_SECTOR_SIZE, (off_t) (s * WT_SECTOR_SIZE));
    good = n > 0 && wt_sector_hash (sec) == f->hashes[s];
  }
  close (fd);
  return good;
}

/* Every sector's op wrote that sector, with a data-writing kind. */
static bool
sector_ops_sound (const struct wtmf_manifest *m, uint32_t want_kind)
{
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    for (uint64_t s = 0; s < f->nsectors; s++) {
      uint32_t n = f->ops[s];
      if (n == 0 || n > m->nops)
        return false;
      const struct wtmf_op *op = &m->ops[n - 1];
      uint64_t lo = s * WT_SECTOR_SIZE;
      if (op->kind != want_kind || op->file_id != f->id
          || op->offset >= lo + WT_SECTOR_SIZE || op->offset + op->length <= lo)
        return false;
    }
  }
  return true;
}

static uint32_t
count_ops (const struct wtmf_manifest *m, uint32_t kind)
{
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nops; i++)
    n += m->ops[i].kind == kind;
  return n;
}

static bool
has_mark (const struct decoded *d, const char *label)
{
  for (unsigned i = 0; i < d->nmarks; i++)
    if (strcmp (d->marks[i], label) == 0)
      return true;
  return false;
}

static bool
same_hashes (const struct wtmf_manifest *a, const struct wtmf_manifest *b)
{
  if (!a || !b || a->nfiles != b->nfiles)
    return false;
  for (uint32_t i = 0; i < a->nfiles; i++)
    if (a->files[i].nsectors != b->files[i].nsectors
        || memcmp (a->files[i].hashes, b->files[i].hashes, 8 * a->files[i].nsectors) != 0)
      return false;
  return true;
}

static void
test_pwrite (void)
{
  mkdir (tpath ("p1"), 0755);
  int st = GUEST ("pwrite", "--files", "2", "--size", "300K", "--ops", "200", "--seed", "5",
                  "--fsync-every", "50", "--checkpoint", "--channel-file", tpath ("p1.chan"),
                  tpath ("p1"));
  tap_ok (st == 0, "pwrite exits 0 (got %d)", st);
  struct decoded d;
  int rc = decode (tpath ("p1.chan"), &d);
  tap_ok (rc == 0, "pwrite: the channel and its manifests decode%s%s", rc ? ": " : "", d.err);
  tap_ok (d.first_type == WTCH_HELLO && d.last_type == WTCH_RESULT,
          "pwrite: HELLO first, RESULT last");
  tap_ok (kv_is (d.hello, "workload", "pwrite") && kv_is (d.hello, "seed", "5"),
          "pwrite: HELLO names the workload and the seed");
  tap_ok (d.nmarks && strcmp (d.marks[0], "start") == 0 && has_mark (&d, "fsync file 2")
          && has_mark (&d, "checkpoint 4") && has_mark (&d, "phase manifest"),
          "pwrite: MARKs start, fsync file 2, checkpoint 4, phase manifest");
  tap_ok (kv_is (d.result, "status", "0") && kv_is (d.result, "readback", "match"),
          "pwrite: RESULT status=0 readback=match");
  tap_ok (d.nmanifests == 5 && d.m[0].checkpoint == 1 && d.m[3].checkpoint == 4
          && d.m[4].checkpoint == 0, "pwrite: checkpoints 1..4 then the final manifest (%u)",
          d.nmanifests);
  const struct wtmf_manifest *m = final_manifest (&d);
  char want[400];
  char real[300];
  snprintf (want, sizeof want, "%s/f2", realpath (tpath ("p1"), real) ? real : "?");
  tap_ok (m && m->nfiles == 2 && strcmp (m->files[1].path, want) == 0
          && m->files[1].size == 300 << 10,
          "pwrite: 2 files, paths from the filesystem root (%s)", m ? m->files[1].path : "-");
  tap_ok (m && hashes_match_file (&m->files[0], tpath ("p1/f1"))
          && hashes_match_file (&m->files[1], tpath ("p1/f2")),
          "pwrite: expected hashes are the files' real content");
  tap_ok (m && sector_ops_sound (m, WTMF_OP_PWRITE),
          "pwrite: every sector's op is a pwrite of that sector");
  tap_ok (m && count_ops (m, WTMF_OP_PWRITE) == 200 + 2 * 5 && count_ops (m, WTMF_OP_FSYNC) == 4 * 2 + 2,
          "pwrite: op table holds 10 fill + 200 random pwrites and 10 fsyncs");
  tap_ok (m && extents_cover (&m->files[0]) && extents_cover (&m->files[1]),
          "pwrite: the extents cover every byte");

  mkdir (tpath ("p2"), 0755);
  st = GUEST ("pwrite", "--files", "2", "--size", "300K", "--ops", "200", "--seed", "5",
              "--channel-file", tpath ("p2.chan"), tpath ("p2"));
  struct decoded d2;
  decode (tpath ("p2.chan"), &d2);
  tap_ok (st == 0 && same_hashes (m, final_manifest (&d2)),
          "pwrite: the same seed gives the same manifest hashes");
  mkdir (tpath ("p3"), 0755);
  st = GUEST ("pwrite", "--files", "2", "--size", "300K", "--ops", "200", "--seed", "6",
              "--channel-file", tpath ("p3.chan"), tpath ("p3"));
  struct decoded d3;
  decode (tpath ("p3.chan"), &d3);
  tap_ok (st == 0 && final_manifest (&d3) && !same_hashes (m, final_manifest (&d3)),
          "pwrite: another seed gives other hashes");
  decoded_free (&d);
  decoded_free (&d2);
  decoded_free (&d3);
}

static void
test_linus (void)
{
  mkdir (tpath ("l1"), 0755);
  int st = GUEST ("linus2006", "--size", "1M", "--passes", "2", "--seed", "3",
                  "--manifest-out", tpath ("l1.manifest"),
                  "--channel-file", tpath ("l1.chan"), tpath ("l1"));
  struct decoded d;
  int rc = decode (tpath ("l1.chan"), &d);
  tap_ok (st == 0 && rc == 0, "linus2006 exits 0 and its channel decodes%s%s", rc ? ": " : "",
          d.err);
  tap_ok (kv_is (d.result, "status", "0") && kv_is (d.result, "readback", "match")
          && kv_is (d.result, "remap_check", "match"),
          "linus2006: RESULT readback=match remap_check=match");
  const struct wtmf_manifest *m = final_manifest (&d);
  uint32_t chunks = ((1 << 20) + 1459) / 1460;
  tap_ok (m && count_ops (m, WTMF_OP_MMAP_STORE) == 2 * chunks,
          "linus2006: one mmap-store op per chunk and pass (%" PRIu32 ")",
          m ? count_ops (m, WTMF_OP_MMAP_STORE) : 0);
  tap_ok (m && hashes_match_file (&m->files[0], tpath ("l1/f1")),
          "linus2006: expected hashes are the file's real content");
  tap_ok (m && sector_ops_sound (m, WTMF_OP_MMAP_STORE),
          "linus2006: every sector's op is an mmap store of that sector");
  /* The last pass wrote every sector's last bytes: its ops come after the
   * first pass's. */
  bool second = m != NULL;
  for (uint64_t s = 0; m && s < m->files[0].nsectors; s++)
    second = second && m->files[0].ops[s] > chunks;
  tap_ok (second, "linus2006: every sector last written by pass 2");
  static unsigned char buf[1 << 20];
  int fd = open (tpath ("l1.manifest"), O_RDONLY);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf) : -1;
  if (fd >= 0)
    close (fd);
  tap_ok (n > 0 && n < (ssize_t) sizeof buf && (size_t) n == d.manifest_len
          && memcmp (buf, d.manifest, (size_t) n) == 0,
          "linus2006: --manifest-out holds the bytes sent on the channel");

  st = GUEST ("manifest", "--channel-file", tpath ("l1m.chan"), tpath ("l1/f1"));
  struct decoded dm;
  rc = decode (tpath ("l1m.chan"), &dm);
  const struct wtmf_manifest *mm = final_manifest (&dm);
  bool zero_ops = mm && mm->nops == 0;
  for (uint64_t s = 0; zero_ops && s < mm->files[0].nsectors; s++)
    zero_ops = mm->files[0].ops[s] == 0;
  tap_ok (st == 0 && rc == 0 && same_hashes (m, mm) && zero_ops,
          "manifest FILE: the hashes the workload expected, no ops");
  decoded_free (&d);
  decoded_free (&dm);
}

static void
test_torrent (void)
{
  struct decoded d[2];
  for (int i = 0; i < 2; i++) {
    /* Sized for any int, so no compiler can prove the name cut short. */
    char dir[sizeof "t-2147483648"], chan[sizeof "t-2147483648.chan"];
    snprintf (dir, sizeof dir, "t%d", i);
    snprintf (chan, sizeof chan, "t%d.chan", i);
    mkdir (tpath (dir), 0755);
    int st = GUEST ("torrent", "--files", "3", "--size", "1M", "--piece", "256K",
                    "--threads", "3", "--windows", "4", "--seed", "8",
                    "--channel-file", tpath (chan), tpath (dir));
    int rc = decode (tpath (chan), &d[i]);
    tap_ok (st == 0 && rc == 0, "torrent run %d exits 0 and decodes%s%s", i + 1,
            rc ? ": " : "", d[i].err);
  }
  const struct wtmf_manifest *m = final_manifest (&d[0]);
  char v[64] = "0", w[64] = "0";
  kv (d[0].result, "rewritten_pieces", v, sizeof v);
  kv (d[0].result, "shared_window_maps", w, sizeof w);
  tap_ok (kv_is (d[0].result, "readback", "match") && atoi (v) >= 1 && atoi (w) >= 1,
          "torrent: readback=match, %s pieces rewritten, %s windows mapped over shared pages",
          v, w);
  tap_ok (m && m->nfiles == 3 && hashes_match_file (&m->files[2], tpath ("t0/f3")),
          "torrent: expected hashes are the files' real content");
  tap_ok (m && sector_ops_sound (m, WTMF_OP_MMAP_STORE),
          "torrent: every sector's op is an mmap store of that sector");
  tap_ok (m && count_ops (m, WTMF_OP_MSYNC) > 0 && has_mark (&d[0], "phase write"),
          "torrent: msync ops on window eviction");
  tap_ok (same_hashes (m, final_manifest (&d[1])),
          "torrent: 3 threads, the same seed gives the same manifest hashes");
  decoded_free (&d[0]);
  decoded_free (&d[1]);
}

/* ops: every sector's op is 0 or an op of its file, and a sector that
 * holds data was written by some op. */
static bool
ops_sector_ops_sound (const struct wtmf_manifest *m)
{
  uint64_t zero = 0;
  {
    unsigned char sec[WT_SECTOR_SIZE] = { 0 };
    zero = wt_sector_hash (sec);
  }
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    for (uint64_t s = 0; s < f->nsectors; s++) {
      uint32_t n = f->ops[s];
      if (n > m->nops || (n && m->ops[n - 1].file_id != f->id) || (!n && f->hashes[s] != zero))
        return false;
    }
  }
  return true;
}

static void
test_ops (void)
{
  struct decoded d;
  mkdir (tpath ("o"), 0755);
  /* no mapped stores past EOF: kernels show them (doc/ops.md) */
  int st = GUEST ("ops", "--files", "2", "--size", "128K", "--ops", "400", "--seed", "5",
                  "--op-weights", "mwrite_eof=0", "--channel-file", tpath ("o.chan"),
                  tpath ("o"));
  int rc = decode (tpath ("o.chan"), &d);
  tap_ok (st == 0 && rc == 0, "ops exits 0 and decodes%s%s", rc ? ": " : "", d.err);
  const struct wtmf_manifest *m = final_manifest (&d);
  char ran[64] = "", surprises[64] = "";
  kv (d.result, "ops_pwrite", ran, sizeof ran);
  kv (d.result, "surprises", surprises, sizeof surprises);
  tap_ok (kv_is (d.result, "readback", "match") && strcmp (surprises, "0") == 0 && atoi (ran) > 0,
          "ops: readback=match, surprises=%s, %s pwrites", surprises, ran);
  tap_ok (m && m->nfiles == 2 && hashes_match_file (&m->files[0], tpath ("o/f1"))
          && hashes_match_file (&m->files[1], tpath ("o/f2")),
          "ops: expected hashes are the files' real content");
  tap_ok (m && ops_sector_ops_sound (m) && m->nops >= 400,
          "ops: sector ops name ops of their file; every sector with data has one");
  tap_ok (has_mark (&d, "phase ops 400") && has_mark (&d, "phase ops done"),
          "ops: MARKs phase ops 400 .. phase ops done");
  decoded_free (&d);
}

static void
test_failures (void)
{
  int st = GUEST ("pwrite", "--size", "64K", "--channel-file", tpath ("f1.chan"),
                  tpath ("no-such-dir"));
  struct decoded d;
  decode (tpath ("f1.chan"), &d);
  char err[512] = "";
  kv (d.result, "error", err, sizeof err);
  tap_ok (st == 1 && kv_is (d.result, "status", "1") && strstr (err, "no-such-dir"),
          "a missing DIR: exit 1, RESULT status=1 naming it (%s)", err);
  decoded_free (&d);

  st = GUEST ("linus2006", "--piece", "4K", "--channel-file", tpath ("f2.chan"), tmp);
  decode (tpath ("f2.chan"), &d);
  kv (d.result, "error", err, sizeof err);
  tap_ok (st == 2 && kv_is (d.result, "status", "2") && strstr (err, "--piece"),
          "an option of another workload: exit 2, RESULT status=2 (%s)", err);
  decoded_free (&d);

  st = GUEST ("nosuch", "--channel-file", tpath ("f3.chan"), tmp);
  decode (tpath ("f3.chan"), &d);
  tap_ok (st == 2 && kv_is (d.result, "status", "2"),
          "an unknown workload: exit 2, RESULT status=2");
  decoded_free (&d);
}

static void
test_messages (void)
{
  char *chan = tpath ("p1.chan");  /* written by test_pwrite */
  struct decoded before;
  decode (chan, &before);
  int a = GUEST ("mark", "--channel-file", chan, "after", "the", "run");
  int b = GUEST ("text", "--channel-file", chan, "free text");
  int c = GUEST ("result", "--channel-file", chan, "--status", "7", "--error", "mount failed\nbadly");
  struct decoded d;
  int rc = decode (chan, &d);
  tap_ok (a == 0 && b == 0 && c == 0 && rc == 0 && d.messages == before.messages + 3,
          "mark, text, result append after %u messages, numbered on (%u)", before.messages,
          d.messages);
  tap_ok (d.nmarks && strcmp (d.marks[d.nmarks - 1], "after the run") == 0
          && kv_is (d.result, "status", "7") && kv_is (d.result, "error", "mount failed badly"),
          "the MARK label and the RESULT status and error (newline flattened)");
  decoded_free (&before);
  decoded_free (&d);
  int st = GUEST ("result", "--status", "1");
  tap_ok (st == 2, "result without a channel: exit 2");
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "--summary") == 0)
    return summary (argv[2], argc >= 5 && strcmp (argv[3], "--image") == 0 ? argv[4] : NULL);
  if (getenv ("WTRACK_GUEST"))
    guest = getenv ("WTRACK_GUEST");
  if (access (guest, X_OK) != 0) {
    const char *ci = getenv ("CI");
    if (ci && strcmp (ci, "true") == 0) {
      printf ("1..1\nnot ok 1 - not built: %s (CI=true: no test may skip)\n", guest);
      return 1;
    }
    printf ("1..0 # SKIP not built: %s\n", guest);
    return 0;
  }
  if (!mkdtemp (tmp)) {
    perror ("mkdtemp");
    return 2;
  }
  snprintf (logpath, sizeof logpath, "%s/guest.log", tmp);
  tap_plan (40);
  test_pwrite ();
  test_linus ();
  test_torrent ();
  test_ops ();
  test_failures ();
  test_messages ();
  if (tap_failed) {
    fprintf (stderr, "# guest output kept in %s\n", logpath);
  } else {
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system (cmd) != 0)
      fprintf (stderr, "# could not remove %s\n", tmp);
  }
  return tap_done ();
}
