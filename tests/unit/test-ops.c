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
  case WTG_OK_PWRITE: case WTG_OK_WRITE: case WTG_OK_DWRITE:
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
  default:
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
 * length cut to what the source holds, as the call copies). */
static struct wtg_op
op_data (const struct wtg_op *op, const struct ref *src, unsigned char *data, unsigned seed)
{
  struct wtg_op done = *op;
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
        "f1 fdatasync", "f1 sync_range 0x0 0x1000", "f1 fadvise 0x0 0x4000");
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
  tap_ok (ok, "sector ops: writes and zeroing name the op, growth the old EOF's sector");
}

/* Generated lists over two files, applied to model and reference. */
static void
test_generated (uint64_t seed, uint32_t *seen)
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
  test_generated (1, seen);
  test_generated (2, seen);
  bool every = true;
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++)
    every &= seen[k] > 0;
  tap_ok (every, "the default weights reach every op kind");
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
  tap_plan (9 + 1 + 2 + 7 + 20 + 5);
  test_edge_cases ();
  test_mwrite_reach ();
  test_sector_ops ();
  test_fits ();
  test_generator ();
  test_parser ();
  test_weights ();
  return tap_done ();
}
