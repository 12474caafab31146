/* The ops workload's op list and model (guest/ops-list.c, guest/ops-model.c):
 * the model against a reference written independently here (byte by byte,
 * from the rules of doc/ops.md) on hand-made edge cases and on generated
 * lists; the ops.txt parser's refusals, each with its line and column;
 * --op-weights; the generator's determinism, limits and reach. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "guest.h"
#include "ops.h"

#define PAGE 4096u
#define LIMIT (64u << 10)

/* The reference: a file as bytes and a size; nothing shared with the model. */
struct ref {
  unsigned char b[LIMIT];
  uint64_t size;
};

static void
ref_set_size (struct ref *r, uint64_t size)
{
  for (uint64_t i = size; i < r->size; i++)
    r->b[i] = 0;                /* cut bytes are gone; regrown ones read 0 */
  r->size = size;
}

static void
ref_apply (struct ref *r, const struct wtg_op *op, const unsigned char *data)
{
  bool keep = op->flags & WTG_OPF_KEEP_SIZE;
  uint64_t end = op->off + op->len;
  switch (op->kind) {
  case WTG_OK_COPY_RANGE:       /* op->len: what it copied; 0 grows nothing */
    if (op->len == 0)
      break;
    /* fall through */
  case WTG_OK_PWRITE: case WTG_OK_WRITE: case WTG_OK_DWRITE: case WTG_OK_PWRITEV:
  case WTG_OK_REFLINK:          /* the source's bytes, all LEN of them */
    if (end > r->size)
      r->size = end;
    for (uint64_t i = 0; i < op->len; i++)
      r->b[op->off + i] = data[i];
    break;
  case WTG_OK_MWRITE:
    /* only bytes below EOF belong to the file, with or without -e */
    for (uint64_t i = 0; i < op->len; i++)
      if (op->off + i < r->size)
        r->b[op->off + i] = data[i];
    break;
  case WTG_OK_TRUNCATE:
    ref_set_size (r, op->off);
    break;
  case WTG_OK_FALLOC:
    if (!keep && end > r->size)
      r->size = end;
    break;
  case WTG_OK_FZERO:
    if (!keep && end > r->size)
      r->size = end;
    /* fall through */
  case WTG_OK_FPUNCH:
    for (uint64_t i = op->off; i < end && i < r->size; i++)
      r->b[i] = 0;
    break;
  case WTG_OK_FCOLLAPSE:        /* refused unless the range ends before EOF */
    if (end < r->size) {
      for (uint64_t i = op->off; i + op->len < r->size; i++)
        r->b[i] = r->b[i + op->len];
      ref_set_size (r, r->size - op->len);
    }
    break;
  case WTG_OK_FINSERT:          /* refused unless it starts before EOF */
    if (op->off < r->size) {
      for (uint64_t i = r->size; i-- > op->off; )
        r->b[i + op->len] = r->b[i];
      for (uint64_t i = op->off; i < end; i++)
        r->b[i] = 0;
      r->size += op->len;
    }
    break;
  default:                      /* dedupe shares equal bytes: none changes */
    break;
  }
}

struct model {
  struct wtg_file_model m;
  unsigned char image[LIMIT];
  uint32_t sector_op[LIMIT / 512];
};

static void
model_init (struct model *x)
{
  memset (x, 0, sizeof *x);
  x->m = (struct wtg_file_model) { .image = x->image, .sector_op = x->sector_op, .cap = LIMIT };
}

/* The model equals the reference: size, every byte below it, zeros past. */
static bool
same (const struct model *x, const struct ref *r, char *why, size_t cap)
{
  if (x->m.size != r->size) {
    snprintf (why, cap, "size %" PRIu64 ", reference %" PRIu64, x->m.size, r->size);
    return false;
  }
  for (uint64_t i = 0; i < LIMIT; i++)
    if (x->image[i] != (i < r->size ? r->b[i] : 0)) {
      snprintf (why, cap, "byte %" PRIu64 ": 0x%02x, reference 0x%02x", i, x->image[i],
                i < r->size ? r->b[i] : 0);
      return false;
    }
  return true;
}

static void
fill (unsigned char *data, uint64_t len, unsigned seed)
{
  for (uint64_t i = 0; i < len; i++)
    data[i] = (unsigned char) (1 + (i * 7 + seed) % 251);     /* never 0 */
}

/* An op's bytes: a write's own, a copy's from the reference's source (its
 * length cut to what the source holds, as the call copies), a reflink's
 * LEN bytes of the source (zeros past its EOF). */
static struct wtg_op
op_data (const struct wtg_op *op, const struct ref *src, unsigned char *data, unsigned seed)
{
  struct wtg_op done = *op;
  if (op->kind == WTG_OK_REFLINK) {
    for (uint64_t i = 0; i < op->len; i++)
      data[i] = op->src_off + i < src->size ? src->b[op->src_off + i] : 0;
    return done;
  }
  if (op->kind != WTG_OK_COPY_RANGE) {
    fill (data, op->len, seed);
    return done;
  }
  done.len = 0;
  for (uint64_t i = op->src_off; i < src->size && done.len < op->len; i++)
    data[done.len++] = src->b[i];
  return done;
}

static struct wtg_op
op_of (const char *line)
{
  struct wtg_op op;
  struct wtg_op_limits lim = { .files = 2, .size_limit = LIMIT };
  bool is_op;
  unsigned column;
  char err[200];
  if (wtg_op_parse (line, &lim, &op, &is_op, &column, err, sizeof err) < 0 || !is_op) {
    fprintf (stderr, "# cannot parse '%s': %s\n", line, err);
    exit (1);
  }
  return op;
}

/* Each line applied to the model and the reference, compared after each. */
static void
case_lines (const char *name, const char *const *lines, size_t n)
{
  static struct model x;
  static struct ref r;
  static unsigned char data[LIMIT];
  model_init (&x);
  memset (&r, 0, sizeof r);
  char why[200] = "";
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    struct wtg_op op = op_of (lines[i]);
    struct wtg_op done = op_data (&op, &r, data, (unsigned) i);
    wtg_op_apply (&x.m, &done, data, (uint32_t) i + 1, PAGE);
    ref_apply (&r, &done, data);
    if (!same (&x, &r, why, sizeof why)) {
      ok = false;
      size_t used = strlen (why);
      snprintf (why + used, sizeof why - used, " after '%s'", lines[i]);
    }
  }
  tap_ok (ok, "model = reference: %s%s%s", name, ok ? "" : ": ", why);
}

#define CASE(name, ...) do {                                             \
    static const char *const l[] = { __VA_ARGS__ };                       \
    case_lines (name, l, sizeof l / sizeof l[0]);                         \
  } while (0)

static void
test_edge_cases (void)
{
  CASE ("1-byte and page-straddling unaligned pwrite/write/dwrite",
        "f1 pwrite 0x0 0x1", "f1 write 0xfff 0x2", "f1 pwrite 0x1ffe 0x1003",
        "f1 dwrite 0x1000 0x1000", "f1 write 0x5 0x3ffb");
  CASE ("mwrite within EOF, and -e past EOF inside the EOF page",
        "f1 pwrite 0x0 0x1801", "f1 mwrite 0x17f0 0x800", "f1 mwrite -e 0x1000 0x1000",
        "f1 truncate 0x3000");
  CASE ("mwrite past EOF then every extension reads zeros",
        "f1 pwrite 0x0 0x861", "f1 mwrite -e 0x800 0x800", "f1 pwrite 0x2000 0x10",
        "f1 mwrite -e 0x2000 0x1000", "f1 dwrite 0x3000 0x1000", "f1 fzero 0x4000 0x123",
        "f1 falloc 0x4200 0x1000");
  CASE ("truncate down and up to unaligned sizes",
        "f1 pwrite 0x0 0x5000", "f1 truncate 0x1234", "f1 truncate 0x3001",
        "f1 truncate 0x0", "f1 pwrite 0x100 0x10", "f1 truncate 0x1ff", "f1 truncate 0x4000");
  CASE ("fpunch and fzero inside, across and past EOF, with and without -k",
        "f1 pwrite 0x0 0x4000", "f1 fpunch 0x7ff 0x802", "f1 fpunch 0x3f00 0x2000",
        "f1 fzero -k 0x3800 0x1000", "f1 fzero 0x3ffe 0x1003", "f1 fzero 0x10 0x1",
        "f1 fzero -k 0x8000 0x1000");
  CASE ("falloc with and without -k",
        "f1 falloc -k 0x0 0x3000", "f1 falloc 0x0 0x1001", "f1 pwrite 0x800 0x1000",
        "f1 falloc 0x100 0x10", "f1 falloc 0x2000 0x3");
  CASE ("fcollapse and finsert shift the rest of the file, EOF page and all",
        "f1 pwrite 0x0 0x5123", "f1 fcollapse 0x1000 0x1000", "f1 finsert 0x0 0x2000",
        "f1 finsert 0x4000 0x1000", "f1 fcollapse 0x0 0x3000", "f1 fcollapse 0x1000 0x2000",
        "f1 finsert 0x3000 0x1000", "f1 mwrite -e 0x2100 0x2000", "f1 finsert 0x1000 0x1000",
        "f1 truncate 0x3000", "f1 fcollapse 0x2000 0x1000");
  CASE ("copy_range within the file, past EOF, and from past the source's end",
        "f1 pwrite 0x0 0x2345", "f1 copy_range f1 0x100 0x3000 0x1000",
        "f1 copy_range f1 0x3f00 0x5001 0x800", "f1 copy_range f1 0x9000 0x0 0x100",
        "f1 copy_range f1 0x9000 0xa000 0x100",
        "f1 copy_range f1 0x0 0x7fff 0x1");
  CASE ("syncs and cache drops change nothing",
        "f1 pwrite 0x10 0x3000", "f1 msync", "f1 msync -a", "f1 munmap", "f1 fsync",
        "f1 fdatasync", "f1 sync_range 0x0 0x1000", "f1 fadvise 0x0 0x4000", "f1 syncfs",
        "f1 drop_caches");
  CASE ("pwritev of 2 to 4 unequal iovecs straddling pages, and past EOF",
        "f1 pwritev 0xffe 0x3 0x1001 0x7ff", "f1 pwritev 0x0 0x1 0x2",
        "f1 pwritev 0x2fff 0x1 0x1 0x1 0x2001", "f1 pwritev 0x7000 0x1000 0x1");
  CASE ("dwrite -s at the file position, growing the file",
        "f1 dwrite -s 0x0 0x2000", "f1 dwrite -s 0x2000 0x1000", "f1 pwrite 0x10 0x1",
        "f1 dwrite -s 0x1000 0x1000");
  CASE ("reflink of whole pages and of a range ending at the source's EOF, past EOF too",
        "f1 pwrite 0x0 0x5123", "f1 reflink f1 0x1000 0x6000 0x2000",
        "f1 reflink f1 0x0 0x2000 0x1000", "f1 truncate 0x5123",
        "f1 reflink f1 0x5000 0x6000 0x123", "f1 reflink f1 0x0 0x9000 0x2000");
  CASE ("dedupe of equal and of differing ranges changes no byte",
        "f1 pwrite 0x0 0x4000", "f1 reflink f1 0x0 0x2000 0x1000",
        "f1 dedupe f1 0x0 0x2000 0x1000", "f1 dedupe f1 0x1000 0x3000 0x1000",
        "f1 dedupe f1 0x0 0x3000 0x800");
}

static void
test_mwrite_reach (void)
{
  tap_ok (wtg_mwrite_reach (0x1801, 0x1000, 0x2000, PAGE, true) == 0x1000
          && wtg_mwrite_reach (0x1801, 0x1000, 0x2000, PAGE, false) == 0x801
          && wtg_mwrite_reach (0x1801, 0x2000, 0x10, PAGE, true) == 0
          && wtg_mwrite_reach (0x2000, 0x2000, 0x10, PAGE, true) == 0
          && wtg_mwrite_reach (0, 0, 0x10, PAGE, true) == 0,
          "a mapped write reaches EOF, with -e the end of the EOF page, never a page past it");
}

static void
test_fits (void)
{
  struct wtg_op ins = op_of ("f1 finsert 0x1000 0x2000");
  struct wtg_op w = op_of ("f1 pwrite 0xe000 0x2000");
  tap_ok (wtg_op_fits (&ins, 0xe000, LIMIT) && !wtg_op_fits (&ins, 0xe001, LIMIT)
          && wtg_op_fits (&ins, 0x1000, LIMIT) && wtg_op_fits (&w, 0xffff, LIMIT),
          "finsert fits while the grown file stays within the limit (past EOF it is refused)");
}

static void
test_sector_ops (void)
{
  static struct model x;
  static unsigned char data[LIMIT];
  model_init (&x);
  struct wtg_op w = op_of ("f1 pwrite 0x100 0x300");
  wtg_op_apply (&x.m, &w, data, 1, PAGE);
  bool ok = x.sector_op[0] == 1 && x.sector_op[1] == 1 && x.sector_op[2] == 0;
  struct wtg_op p = op_of ("f1 fpunch 0x200 0x10");
  wtg_op_apply (&x.m, &p, data, 2, PAGE);
  ok &= x.sector_op[0] == 1 && x.sector_op[1] == 2;
  struct wtg_op t = op_of ("f1 truncate 0x1000");
  wtg_op_apply (&x.m, &t, data, 3, PAGE);
  ok &= x.sector_op[1] == 2 && x.sector_op[2] == 0 && x.sector_op[7] == 0; /* grown whole */
  struct wtg_op d = op_of ("f1 truncate 0x201");
  wtg_op_apply (&x.m, &d, data, 4, PAGE);
  ok &= x.sector_op[1] == 2 && x.sector_op[2] == 0; /* cut off */
  struct wtg_op g = op_of ("f1 pwrite 0x1000 0x10");
  wtg_op_apply (&x.m, &g, data, 5, PAGE);
  ok &= x.sector_op[1] == 5 && x.sector_op[2] == 0 && x.sector_op[8] == 5; /* old EOF's tail */
  struct wtg_op dd = op_of ("f1 dedupe f1 0x0 0x800 0x200");
  wtg_op_apply (&x.m, &dd, data, 6, PAGE);
  ok &= x.sector_op[0] == 1 && x.sector_op[4] == 0;
  struct wtg_op rl = op_of ("f1 reflink f1 0x0 0x1000 0x200");
  wtg_op_apply (&x.m, &rl, data, 7, PAGE);
  ok &= x.sector_op[8] == 7 && x.sector_op[9] == 0;
  tap_ok (ok, "sector ops: writes, reflinks and zeroing name the op, growth the old EOF's "
          "sector, a dedupe none");
}

/* What a generated list holds of the ops that need shaping: pwritev's
 * iovecs, dwrite -s, reflinks the kernel takes, dedupes of equal bytes. */
struct gen_stats {
  uint64_t iov_bad, iov_unequal, pwritevs;
  uint64_t sequential;
  uint64_t reflinks, reflinks_taken;
  uint64_t dedupes, dedupes_equal;
};

/* The kernel's rules for FICLONERANGE (fs/remap_range.c), blocks of a
 * page: block-aligned starts, the source range inside the source, a whole
 * number of blocks unless it ends at the source's EOF and lands at or past
 * the destination's; no overlap within one file. */
static bool
reflink_taken (const struct wtg_op *op, const struct ref *src, const struct ref *dst)
{
  uint64_t span = (op->len + PAGE - 1) / PAGE * PAGE;
  bool overlap = src == dst && op->off < op->src_off + span && op->src_off < op->off + span;
  return op->src_off % PAGE == 0 && op->off % PAGE == 0 && op->src_off < src->size
    && op->src_off + op->len <= src->size && !overlap
    && (op->len % PAGE == 0
        || (op->src_off + op->len == src->size && op->off + op->len >= dst->size));
}

static void
gen_stats_note (struct gen_stats *st, const struct wtg_op *op, const struct ref *r)
{
  const struct ref *src = &r[op->src_file ? op->src_file - 1 : 0], *dst = &r[op->file - 1];
  if (op->kind == WTG_OK_PWRITEV) {
    uint64_t sum = 0;
    bool unequal = false;
    for (uint32_t i = 0; i < op->niov && i < WTG_IOV_MAX; i++) {
      sum += op->iov[i];
      unequal |= op->iov[i] != op->iov[0];
    }
    st->pwritevs++;
    st->iov_bad += op->niov < 2 || op->niov > WTG_IOV_MAX || sum != op->len;
    st->iov_unequal += unequal;
  }
  st->sequential += op->kind == WTG_OK_DWRITE && (op->flags & WTG_OPF_SEQUENTIAL);
  if (op->kind == WTG_OK_REFLINK) {
    st->reflinks++;
    st->reflinks_taken += reflink_taken (op, src, dst);
  }
  if (op->kind == WTG_OK_DEDUPE) {
    st->dedupes++;
    st->dedupes_equal += op->src_off + op->len <= src->size && op->off + op->len <= dst->size
      && memcmp (src->b + op->src_off, dst->b + op->off, op->len) == 0;
  }
}

/* Generated lists over two files, applied to model and reference (a
 * reflink the kernel would refuse is not applied, as the workload does). */
static void
test_generated (uint64_t seed, uint32_t *seen, struct gen_stats *st)
{
  static struct model x[2];
  static struct ref r[2];
  static unsigned char data[LIMIT];
  uint32_t weights[WTG_W_COUNT];
  wtg_op_default_weights (weights);
  struct wtg_rng rng;
  wtg_rng_init (&rng, seed, "ops list");
  struct wtg_op_gen_params p = { .files = 2, .size_limit = LIMIT, .page = PAGE,
                                 .weights = weights };
  struct wtg_op *ops;
  const uint64_t n = 3000;
  if (wtg_ops_generate (&rng, &p, n, &ops) < 0) {
    tap_ok (0, "generate %" PRIu64 " ops", n);
    return;
  }
  for (int i = 0; i < 2; i++) {
    model_init (&x[i]);
    memset (&r[i], 0, sizeof r[i]);
  }
  char why[200] = "", line[128];
  bool ok = true, fits = true;
  for (uint64_t i = 0; i < n && ok; i++) {
    struct wtg_op *op = &ops[i];
    struct model *m = &x[op->file - 1];
    wtg_op_format (op, line, sizeof line);
    struct wtg_op again = op_of (line);
    fits &= memcmp (&again, op, sizeof again) == 0 && wtg_op_fits (op, m->m.size, LIMIT);
    if (!wtg_op_fits (op, m->m.size, LIMIT)) {
      snprintf (why, sizeof why, "op %" PRIu64 " '%s' does not fit", i + 1, line);
      break;
    }
    seen[op->kind]++;
    gen_stats_note (st, op, r);
    if (op->kind == WTG_OK_REFLINK
        && !reflink_taken (op, &r[op->src_file - 1], &r[op->file - 1]))
      continue;
    struct wtg_op done = op_data (op, &r[op->src_file ? op->src_file - 1 : 0], data,
                                  (unsigned) i);
    wtg_op_apply (&m->m, &done, data, (uint32_t) i + 1, PAGE);
    ref_apply (&r[op->file - 1], &done, data);
    if (!same (m, &r[op->file - 1], why, sizeof why)) {
      ok = false;
      size_t used = strlen (why);
      snprintf (why + used, sizeof why - used, " after op %" PRIu64 " '%s'", i + 1, line);
    }
  }
  tap_ok (fits, "seed %" PRIu64 ": every generated op formats, parses back the same and fits", seed);
  tap_ok (ok, "seed %" PRIu64 ": model = reference over %" PRIu64 " generated ops%s%s", seed, n,
          ok ? "" : ": ", why);
  free (ops);
}

static void
test_generator (void)
{
  uint32_t seen[WTG_OK_COUNT] = { 0 };
  struct gen_stats st = { 0 };
  test_generated (1, seen, &st);
  test_generated (2, seen, &st);
  bool every = st.sequential > 0;
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++)
    every &= seen[k] > 0;
  tap_ok (every, "the default weights reach every op kind, and dwrite -s (%" PRIu64 ")",
          st.sequential);
  printf ("# pwritev: %" PRIu64 " of %" PRIu64 " with unequal iovecs; reflinks the kernel"
          " takes: %" PRIu64 " of %" PRIu64 "; dedupes of equal bytes: %" PRIu64 " of %"
          PRIu64 "\n", st.iov_unequal, st.pwritevs, st.reflinks_taken, st.reflinks,
          st.dedupes_equal, st.dedupes);
  tap_ok (st.iov_bad == 0 && st.iov_unequal * 10 >= st.pwritevs * 8,
          "pwritev: 2 to 4 iovecs summing to its length, 8 in 10 at least unequal");
  tap_ok (st.reflinks_taken * 10 >= st.reflinks * 8,
          "8 in 10 reflinks at least are ones the kernel takes");
  tap_ok (st.dedupes_equal * 2 >= st.dedupes, "half the dedupes at least are of equal bytes");
  uint32_t weights[WTG_W_COUNT];
  wtg_op_default_weights (weights);
  struct wtg_op_gen_params p = { .files = 3, .size_limit = LIMIT, .page = PAGE,
                                 .weights = weights };
  struct wtg_op *a, *b;
  struct wtg_rng ra, rb;
  wtg_rng_init (&ra, 7, "ops list");
  wtg_rng_init (&rb, 7, "ops list");
  bool ok = wtg_ops_generate (&ra, &p, 500, &a) == 0 && wtg_ops_generate (&rb, &p, 500, &b) == 0
    && memcmp (a, b, 500 * sizeof *a) == 0;
  tap_ok (ok, "the same seed gives the same list");
  /* ops meet: how many range ops touch a page the previous range op on
   * the same file touched */
  uint64_t meet = 0, range_ops = 0, last_lo[3], last_hi[3];
  bool had[3] = { false, false, false };
  for (int i = 0; i < 500; i++) {
    if (wtg_op_shape (a[i].kind) != WTG_SHAPE_RANGE)
      continue;
    uint32_t f = a[i].file - 1;
    uint64_t lo = a[i].off / PAGE, hi = (a[i].off + a[i].len - 1) / PAGE;
    range_ops++;
    meet += had[f] && lo <= last_hi[f] && hi >= last_lo[f];
    had[f] = true;
    last_lo[f] = lo;
    last_hi[f] = hi;
  }
  printf ("# %" PRIu64 " of %" PRIu64 " range ops share a page with the previous one on their file\n",
          meet, range_ops);
  tap_ok (meet * 4 >= range_ops, "at least a quarter of the range ops meet the previous one");
  free (a);
  free (b);
}

/* Ops applied to per-file models, each noted in a meet table with the
 * sizes before and after it (a reflink the kernel would refuse skipped). */
static void
meet_run (struct wtg_op_meet *mt, const struct wtg_op *ops, size_t n)
{
  static struct model x[2];
  static struct ref r[2];
  static unsigned char data[LIMIT];
  for (int i = 0; i < 2; i++) {
    model_init (&x[i]);
    memset (&r[i], 0, sizeof r[i]);
  }
  for (size_t i = 0; i < n; i++) {
    const struct wtg_op *op = &ops[i];
    struct model *m = &x[op->file - 1];
    if (op->kind == WTG_OK_REFLINK
        && !reflink_taken (op, &r[op->src_file - 1], &r[op->file - 1]))
      continue;
    struct wtg_op done = op_data (op, &r[op->src_file ? op->src_file - 1 : 0], data,
                                  (unsigned) i);
    uint64_t before = m->m.size;
    wtg_op_apply (&m->m, &done, data, (uint32_t) i + 1, PAGE);
    ref_apply (&r[op->file - 1], &done, data);
    wtg_op_meet_note (mt, &done, before, m->m.size);
  }
}

static uint64_t
meet_total (const struct wtg_op_meet *mt)
{
  uint64_t t = 0;
  for (uint32_t a = 0; a < WTG_OK_COUNT; a++)
    for (uint32_t b = 0; b < WTG_OK_COUNT; b++)
      t += mt->count[a][b];
  return t;
}

static void
test_meet (void)
{
  static const char *const lines[] = {
    "f1 pwrite 0x0 0x1000", "f1 mwrite 0x800 0x10", "f1 fzero 0x0 0x2000",
    "f1 mwrite 0x100 0x1", "f1 pwrite 0x0 0x2000", "f1 fsync", "f2 pwrite 0x0 0x10",
    "f1 truncate 0x1800", "f1 copy_range f1 0x0 0x1000 0x10", "f1 pwrite 0x0 0x1",
    "f1 mwrite -e 0x5000 0x10", "f1 fpunch 0x0 0x10", "f1 mwrite 0x0 0x1",
  };
  struct wtg_op ops[sizeof lines / sizeof lines[0]];
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
    ops[i] = op_of (lines[i]);
  struct wtg_op_meet mt;
  if (wtg_op_meet_init (&mt, 2, LIMIT, PAGE) < 0) {
    tap_ok (0, "meet table");
    return;
  }
  meet_run (&mt, ops, sizeof ops / sizeof ops[0]);
  uint64_t (*c)[WTG_OK_COUNT] = mt.count;
  bool ok = c[WTG_OK_PWRITE][WTG_OK_MWRITE] == 1 && c[WTG_OK_MWRITE][WTG_OK_FZERO] == 1
    && c[WTG_OK_FZERO][WTG_OK_MWRITE] == 1 && c[WTG_OK_MWRITE][WTG_OK_PWRITE] == 1
    && c[WTG_OK_FZERO][WTG_OK_PWRITE] == 1 && c[WTG_OK_PWRITE][WTG_OK_TRUNCATE] == 1
    && c[WTG_OK_PWRITE][WTG_OK_COPY_RANGE] == 1 && c[WTG_OK_TRUNCATE][WTG_OK_COPY_RANGE] == 1
    && c[WTG_OK_COPY_RANGE][WTG_OK_PWRITE] == 1 && c[WTG_OK_PWRITE][WTG_OK_FPUNCH] == 1
    && c[WTG_OK_FPUNCH][WTG_OK_MWRITE] == 1 && meet_total (&mt) == 11;
  tap_ok (ok, "pairs: each kind that last touched one of an op's pages, once per op; a "
          "copy's source pages too; syncs, other files and stores past EOF meet none "
          "(%" PRIu64 " pairs)", meet_total (&mt));
  tap_ok (mt.chains == 1, "one write / mwrite / range op / mwrite chain on a page, not "
          "write / range op / mwrite (%" PRIu64 ")", mt.chains);
  wtg_op_meet_free (&mt);
  /* a default list of 400 ops: the pairs the issue names meet */
  uint32_t weights[WTG_W_COUNT];
  wtg_op_default_weights (weights);
  struct wtg_rng rng;
  wtg_rng_init (&rng, 1, "ops list");
  struct wtg_op_gen_params p = { .files = 2, .size_limit = LIMIT, .page = PAGE,
                                 .weights = weights };
  struct wtg_op *list;
  if (wtg_ops_generate (&rng, &p, 400, &list) < 0 || wtg_op_meet_init (&mt, 2, LIMIT, PAGE) < 0) {
    tap_ok (0, "a generated list's pairs");
    return;
  }
  meet_run (&mt, list, 400);
  uint64_t range_mwrite = 0, mwrite_range = 0;
  static const uint32_t range_kinds[] = { WTG_OK_FPUNCH, WTG_OK_FZERO, WTG_OK_FCOLLAPSE,
                                          WTG_OK_FINSERT, WTG_OK_TRUNCATE, WTG_OK_FALLOC };
  for (size_t i = 0; i < sizeof range_kinds / sizeof range_kinds[0]; i++) {
    range_mwrite += c[range_kinds[i]][WTG_OK_MWRITE];
    mwrite_range += c[WTG_OK_MWRITE][range_kinds[i]];
  }
  printf ("# 400 ops (seed 1, 2 files of 64K): pwrite>mwrite %" PRIu64 ", mwrite>range op %"
          PRIu64 ", range op>mwrite %" PRIu64 ", write/mwrite/range op/mwrite chains %" PRIu64
          ", %" PRIu64 " pairs in all\n", c[WTG_OK_PWRITE][WTG_OK_MWRITE], mwrite_range,
          range_mwrite, mt.chains, meet_total (&mt));
  tap_ok (c[WTG_OK_PWRITE][WTG_OK_MWRITE] && mwrite_range && range_mwrite && mt.chains,
          "400 default ops: write then mwrite, mwrite then a range op, a range op then "
          "mwrite, and the whole chain, meet on a page");
  wtg_op_meet_free (&mt);
  free (list);
}

/* A bad ops file names its line and column. */
static void
bad (const char *text, const char *want)
{
  struct wtg_op_limits lim = { .files = 2, .size_limit = LIMIT };
  struct wtg_op *ops = NULL;
  uint64_t n;
  char err[300] = "";
  int rc = wtg_ops_parse_text (text, &lim, &ops, &n, err, sizeof err);
  tap_ok (rc < 0 && strstr (err, want), "refused with '%s': got '%s'", want, err);
  if (rc == 0)
    free (ops);
}

static void
test_parser (void)
{
  struct wtg_op_limits lim = { .files = 2, .size_limit = LIMIT };
  struct wtg_op *ops;
  uint64_t n;
  char err[300] = "";
  const char *good = "# a comment\n\nf1 pwrite 0x2000 0x800\n  f2 mwrite -e 4096 16 # trailing\n"
    "f1 fzero -k 0x0 0x1\nf2 truncate 0\nf1 msync -a\r\nf1 falloc 0xffff 0x1";
  int rc = wtg_ops_parse_text (good, &lim, &ops, &n, err, sizeof err);
  bool ok = rc == 0 && n == 6 && ops[0].kind == WTG_OK_PWRITE && ops[0].off == 0x2000
    && ops[0].len == 0x800 && ops[1].file == 2 && ops[1].flags == WTG_OPF_PAST_EOF
    && ops[1].off == 4096 && ops[2].flags == WTG_OPF_KEEP_SIZE && ops[3].off == 0
    && ops[4].flags == WTG_OPF_ASYNC && ops[5].off == 0xffff;
  tap_ok (ok, "a good file: comments, blanks, flags, decimal and hex (%s)", rc ? err : "parsed");
  if (rc == 0)
    free (ops);
  const char *added = "f1 pwritev 0x10 1 0x2 3 4\nf2 dwrite -s 0x1000 0x1000\n"
    "f1 reflink f2 0 0x1000 0x2000\nf2 dedupe f1 0x1000 0 1\nf1 syncfs\nf2 drop_caches\n";
  rc = wtg_ops_parse_text (added, &lim, &ops, &n, err, sizeof err);
  ok = rc == 0 && n == 6 && ops[0].kind == WTG_OK_PWRITEV && ops[0].off == 0x10
    && ops[0].niov == 4 && ops[0].iov[1] == 2 && ops[0].iov[3] == 4 && ops[0].len == 10
    && ops[1].kind == WTG_OK_DWRITE && ops[1].flags == WTG_OPF_SEQUENTIAL
    && ops[2].kind == WTG_OK_REFLINK && ops[2].src_file == 2 && ops[2].src_off == 0
    && ops[2].off == 0x1000 && ops[2].len == 0x2000 && ops[3].kind == WTG_OK_DEDUPE
    && ops[3].src_file == 1 && ops[3].src_off == 0x1000 && ops[3].len == 1
    && ops[4].kind == WTG_OK_SYNCFS && ops[5].kind == WTG_OK_DROP_CACHES && ops[5].file == 2;
  tap_ok (ok, "pwritev, dwrite -s, reflink, dedupe, syncfs, drop_caches (%s)",
          rc ? err : "parsed");
  char line[128];
  if (rc == 0) {
    wtg_op_format (&ops[0], line, sizeof line);
    tap_ok (strcmp (line, "f1 pwritev 0x10 0x1 0x2 0x3 0x4") == 0, "pwritev formats: %s", line);
    free (ops);
  } else {
    tap_ok (0, "pwritev formats");
  }
  bad ("f1 pwritev 0x10 0x1\n", "line 1, column 20: pwritev needs an offset and 2 to 4 lengths");
  bad ("f1 pwritev 0 1 2 3 4 5\n", "line 1, column 22: unexpected '5' after pwritev's 5 arguments");
  bad ("f1 pwritev 0 1 0 3\n", "line 1, column 16: a length of 0");
  bad ("f1 pwritev 0xfff0 0x8 0x8 0x1\n", "line 1, column 27: past the size limit");
  bad ("f1 reflink f2 0x0 0x1000\n", "line 1, column 25: reflink needs an offset and a length");
  bad ("f1 dedupe\n", "line 1, column 10: dedupe needs a source file");
  bad ("f1 reflink f2 0xf000 0x0 0x1001\n", "line 1, column 26: past the size limit");
  bad ("f1 syncfs 0\n", "line 1, column 11: unexpected '0'");
  bad ("f1 dwrite -k 0 1\n", "line 1, column 11: dwrite takes no flag '-k'");
  bad ("f1 pwrite 0 1\nf1 frobnicate 0 1\n", "line 2, column 4: unknown op 'frobnicate'");
  bad ("f1 pwrite -0x10 0x10\n", "line 1, column 11: a negative number");
  bad ("\n\nf2 fpunch 0x10 -5\n", "line 3, column 16: a negative number");
  bad ("f1 pwrite 0x10000000000000000 1\n", "line 1, column 11: a number that overflows");
  bad ("f1 pwrite 99999999999999999999 1\n", "line 1, column 11: a number that overflows");
  bad ("f1 pwrite 0x8000000000000000 1\n", "line 1, column 11: a number that overflows");
  bad ("f1 pwrite 0xffff 0x2\n", "line 1, column 18: past the size limit (65536 bytes");
  bad ("f1 truncate 0x10001\n", "line 1, column 13: past the size limit");
  bad ("f3 pwrite 0 1\n", "line 1, column 1: expected a file f1..f2, got 'f3'");
  bad ("pwrite 0 1\n", "line 1, column 1: expected a file");
  bad ("f1\n", "line 1, column 3: an op name must follow the file");
  bad ("f1 pwrite 0x10\n", "line 1, column 15: pwrite needs an offset and a length");
  bad ("f1 fsync 0x10\n", "line 1, column 10: unexpected '0x10'");
  bad ("f1 pwrite 0x10 0\n", "line 1, column 16: a length of 0");
  bad ("f1 pwrite -k 0 1\n", "line 1, column 11: pwrite takes no flag '-k'");
  bad ("f1 pwrite 12ab 1\n", "line 1, column 11: not a number");
  bad ("f1 copy_range f3 0 0 1\n", "line 1, column 15: expected a file f1..f2, got 'f3'");
  bad ("f1 copy_range f2 0xffff 0x0 0x2\n", "line 1, column 29: past the size limit");
  bad ("f1 copy_range f2 0x0 0x1\n", "line 1, column 25: copy_range needs an offset and a length");
}

static void
test_weights (void)
{
  uint32_t w[WTG_W_COUNT];
  char err[200] = "";
  wtg_op_default_weights (w);
  bool ok = wtg_op_parse_weights ("all=0,pwrite=3:mwrite_eof=1", w, err, sizeof err) == 0
    && w[WTG_OK_PWRITE] == 3 && w[WTG_W_MWRITE_EOF] == 1 && w[WTG_OK_FZERO] == 0;
  tap_ok (ok, "all=0,pwrite=3:mwrite_eof=1 (',' or ':' between) (%s)", err);
  wtg_op_default_weights (w);
  {
    /* dedupe=0: no dedupe, not even those that follow reflinks */
    wtg_op_default_weights (w);
    w[WTG_OK_DEDUPE] = 0;
    struct wtg_rng rng;
    wtg_rng_init (&rng, 3, "ops list");
    struct wtg_op_gen_params p = { .files = 2, .size_limit = LIMIT, .page = PAGE, .weights = w };
    struct wtg_op *list;
    uint64_t dedupes = 0, reflinks = 0;
    if (wtg_ops_generate (&rng, &p, 1000, &list) == 0) {
      for (int i = 0; i < 1000; i++) {
        dedupes += list[i].kind == WTG_OK_DEDUPE;
        reflinks += list[i].kind == WTG_OK_REFLINK;
      }
      free (list);
    }
    tap_ok (dedupes == 0 && reflinks > 0, "dedupe=0 draws no dedupe (%" PRIu64 "), reflinks still (%"
            PRIu64 ")", dedupes, reflinks);
  }
  wtg_op_default_weights (w);
  tap_ok (wtg_op_parse_weights ("pwrite=1,frob=2", w, err, sizeof err) < 0
          && strstr (err, "unknown op 'frob'"), "an unknown name is refused: %s", err);
  tap_ok (wtg_op_parse_weights ("all=0", w, err, sizeof err) < 0
          && strstr (err, "every weight is 0"), "all zero is refused: %s", err);
  tap_ok (wtg_op_parse_weights ("pwrite=-1", w, err, sizeof err) < 0
          && strstr (err, "not a number"), "a bad weight is refused: %s", err);
  tap_ok (wtg_op_parse_weights ("pwrite", w, err, sizeof err) < 0
          && strstr (err, "NAME=WEIGHT"), "a name without a weight is refused: %s", err);
}

int
main (void)
{
  tap_plan (13 + 1 + 2 + 10 + 3 + 31 + 6);
  test_edge_cases ();
  test_mwrite_reach ();
  test_sector_ops ();
  test_fits ();
  test_generator ();
  test_meet ();
  test_parser ();
  test_weights ();
  return tap_done ();
}
