/* The ops workload's op list: kind names, the ops.txt line syntax (parse
 * and format), --op-weights and the seeded generator. No system calls
 * here; doc/ops.md describes the syntax. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"
#include "ops.h"

struct wtg_op_info {
  const char *name;
  enum wtg_op_shape shape;
  char flag;                    /* the one flag it takes, or 0 */
  uint32_t weight;              /* default --op-weights */
};

/* Default weights reach every kind in a few hundred ops: the rarest (1 in
 * about 80) comes about 5 times in 400. Writes dominate so the range ops
 * have data to punch, zero, cut and share. */
static const struct wtg_op_info wtg_op_infos[WTG_OK_COUNT] = {
  [WTG_OK_PWRITE] = { "pwrite", WTG_SHAPE_RANGE, 0, 10 },
  [WTG_OK_WRITE] = { "write", WTG_SHAPE_RANGE, 0, 4 },
  [WTG_OK_DWRITE] = { "dwrite", WTG_SHAPE_RANGE, 's', 4 },
  [WTG_OK_MWRITE] = { "mwrite", WTG_SHAPE_RANGE, 'e', 10 },
  [WTG_OK_MSYNC] = { "msync", WTG_SHAPE_NONE, 'a', 3 },
  [WTG_OK_MUNMAP] = { "munmap", WTG_SHAPE_NONE, 0, 2 },
  [WTG_OK_TRUNCATE] = { "truncate", WTG_SHAPE_SIZE, 0, 4 },
  [WTG_OK_FALLOC] = { "falloc", WTG_SHAPE_RANGE, 'k', 2 },
  [WTG_OK_FPUNCH] = { "fpunch", WTG_SHAPE_RANGE, 0, 3 },
  [WTG_OK_FZERO] = { "fzero", WTG_SHAPE_RANGE, 'k', 4 },
  [WTG_OK_FSYNC] = { "fsync", WTG_SHAPE_NONE, 0, 1 },
  [WTG_OK_FDATASYNC] = { "fdatasync", WTG_SHAPE_NONE, 0, 1 },
  [WTG_OK_SYNC_RANGE] = { "sync_range", WTG_SHAPE_RANGE, 0, 1 },
  [WTG_OK_FADVISE] = { "fadvise", WTG_SHAPE_RANGE, 0, 2 },
  [WTG_OK_FCOLLAPSE] = { "fcollapse", WTG_SHAPE_RANGE, 0, 2 },
  [WTG_OK_FINSERT] = { "finsert", WTG_SHAPE_RANGE, 0, 2 },
  [WTG_OK_COPY_RANGE] = { "copy_range", WTG_SHAPE_RANGE, 0, 2 },
  [WTG_OK_PWRITEV] = { "pwritev", WTG_SHAPE_IOV, 0, 4 },
  [WTG_OK_REFLINK] = { "reflink", WTG_SHAPE_RANGE, 0, 3 },
  [WTG_OK_DEDUPE] = { "dedupe", WTG_SHAPE_RANGE, 0, 1 },
  [WTG_OK_SYNCFS] = { "syncfs", WTG_SHAPE_NONE, 0, 1 },
  [WTG_OK_DROP_CACHES] = { "drop_caches", WTG_SHAPE_NONE, 0, 1 },
};

const char *
wtg_op_name (uint32_t kind)
{
  return kind < WTG_OK_COUNT ? wtg_op_infos[kind].name : "?";
}

enum wtg_op_shape
wtg_op_shape (uint32_t kind)
{
  return wtg_op_infos[kind].shape;
}

char
wtg_op_flag_letter (uint32_t kind)
{
  return wtg_op_infos[kind].flag;
}

bool
wtg_op_has_source (uint32_t kind)
{
  return kind == WTG_OK_COPY_RANGE || kind == WTG_OK_REFLINK || kind == WTG_OK_DEDUPE;
}

bool
wtg_op_writes_data (uint32_t kind)
{
  return kind == WTG_OK_PWRITE || kind == WTG_OK_WRITE || kind == WTG_OK_DWRITE
    || kind == WTG_OK_MWRITE || kind == WTG_OK_PWRITEV;
}

static uint32_t
wtg_op_flag_bit (char letter)
{
  return letter == 'k' ? WTG_OPF_KEEP_SIZE : letter == 'a' ? WTG_OPF_ASYNC
    : letter == 'e' ? WTG_OPF_PAST_EOF : letter == 's' ? WTG_OPF_SEQUENTIAL : 0;
}

void
wtg_op_format (const struct wtg_op *op, char *out, size_t cap)
{
  char letter = wtg_op_flag_letter (op->kind);
  char flag[4] = "";
  if (letter && (op->flags & wtg_op_flag_bit (letter)))
    snprintf (flag, sizeof flag, " -%c", letter);
  if (wtg_op_has_source (op->kind)) {
    snprintf (out, cap, "f%" PRIu32 " %s f%" PRIu32 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64,
              op->file, wtg_op_name (op->kind), op->src_file, op->src_off, op->off, op->len);
    return;
  }
  switch (wtg_op_shape (op->kind)) {
  case WTG_SHAPE_IOV: {
    int used = snprintf (out, cap, "f%" PRIu32 " %s 0x%" PRIx64, op->file,
                         wtg_op_name (op->kind), op->off);
    for (uint32_t i = 0; i < op->niov && used > 0 && (size_t) used < cap; i++)
      used += snprintf (out + used, cap - (size_t) used, " 0x%" PRIx64, op->iov[i]);
    break;
  }
  case WTG_SHAPE_RANGE:
    snprintf (out, cap, "f%" PRIu32 " %s%s 0x%" PRIx64 " 0x%" PRIx64, op->file,
              wtg_op_name (op->kind), flag, op->off, op->len);
    break;
  case WTG_SHAPE_SIZE:
    snprintf (out, cap, "f%" PRIu32 " %s 0x%" PRIx64, op->file, wtg_op_name (op->kind), op->off);
    break;
  case WTG_SHAPE_NONE:
    snprintf (out, cap, "f%" PRIu32 " %s%s", op->file, wtg_op_name (op->kind), flag);
    break;
  }
}

/* The parser's cursor over one line. */
struct wtg_lex {
  const char *line;
  const char *p;
  const char *tok;              /* the current token */
  size_t toklen;
};

/* The next word, or false at the end of the line (or a comment). */
static bool
wtg_lex_next (struct wtg_lex *x)
{
  while (*x->p == ' ' || *x->p == '\t' || *x->p == '\r')
    x->p++;
  if (!*x->p || *x->p == '#' || *x->p == '\n')
    return false;
  x->tok = x->p;
  while (*x->p && *x->p != ' ' && *x->p != '\t' && *x->p != '\r' && *x->p != '\n'
         && *x->p != '#')
    x->p++;
  x->toklen = (size_t) (x->p - x->tok);
  return true;
}

static unsigned
wtg_lex_column (const struct wtg_lex *x)
{
  return (unsigned) (x->tok - x->line) + 1;
}

static bool
wtg_tok_is (const struct wtg_lex *x, const char *word)
{
  return strlen (word) == x->toklen && memcmp (x->tok, word, x->toklen) == 0;
}

/* A number: decimal, or hex with 0x. NULL, or what is wrong with it. */
static const char *
wtg_tok_number (const struct wtg_lex *x, uint64_t *out)
{
  char buf[32];
  if (x->tok[0] == '-')
    return "a negative number";
  if (x->toklen >= sizeof buf)
    return "a number that overflows 64 bits";
  memcpy (buf, x->tok, x->toklen);
  buf[x->toklen] = '\0';
  bool hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
  const char *digits = hex ? buf + 2 : buf;
  if (!*digits || strspn (digits, hex ? "0123456789abcdefABCDEF" : "0123456789") != strlen (digits))
    return "not a number (decimal or 0x hex)";
  errno = 0;
  unsigned long long v = strtoull (digits, NULL, hex ? 16 : 10);
  if (errno == ERANGE || v > INT64_MAX)
    return "a number that overflows (past 2^63 - 1)";
  *out = v;
  return NULL;
}

#define WTG_PARSE_FAIL(x, ...) do {                 \
    *column = wtg_lex_column (x);                    \
    snprintf (err, errlen, __VA_ARGS__);             \
    return -1;                                       \
  } while (0)

static int
wtg_parse_file (struct wtg_lex *x, const struct wtg_op_limits *lim, uint32_t *file,
                unsigned *column, char *err, size_t errlen)
{
  uint64_t n;
  struct wtg_lex digits = *x;
  digits.tok++, digits.toklen--;
  if (x->tok[0] != 'f' || !digits.toklen || wtg_tok_number (&digits, &n)
      || n < 1 || n > lim->files)
    WTG_PARSE_FAIL (x, "expected a file f1..f%" PRIu32 ", got '%.*s'", lim->files,
                    (int) x->toklen, x->tok);
  *file = (uint32_t) n;
  return 0;
}

/* The source before the range of copy_range, reflink, dedupe: "fS SRC". */
static int
wtg_parse_source (struct wtg_lex *x, const struct wtg_op_limits *lim, struct wtg_op *op,
                  unsigned *column, char *err, size_t errlen)
{
  if (!wtg_lex_next (x)) {
    *column = (unsigned) (x->p - x->line) + 1;
    snprintf (err, errlen, "%s needs a source file, its offset, an offset and a length",
              wtg_op_name (op->kind));
    return -1;
  }
  if (wtg_parse_file (x, lim, &op->src_file, column, err, errlen) < 0)
    return -1;
  if (!wtg_lex_next (x)) {
    *column = (unsigned) (x->p - x->line) + 1;
    snprintf (err, errlen, "%s needs the source's offset", wtg_op_name (op->kind));
    return -1;
  }
  const char *why = wtg_tok_number (x, &op->src_off);
  if (why)
    WTG_PARSE_FAIL (x, "%s: '%.*s'", why, (int) x->toklen, x->tok);
  if (op->src_off > lim->size_limit)
    WTG_PARSE_FAIL (x, "past the size limit (%" PRIu64 " bytes, --size)", lim->size_limit);
  return 0;
}

static int
wtg_parse_kind (struct wtg_lex *x, struct wtg_op *op, unsigned *column, char *err,
                size_t errlen)
{
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++)
    if (wtg_tok_is (x, wtg_op_infos[k].name)) {
      op->kind = k;
      return 0;
    }
  WTG_PARSE_FAIL (x, "unknown op '%.*s'", (int) x->toklen, x->tok);
}

/* How many numbers a shape takes, at least and at most. */
static void
wtg_shape_arity (enum wtg_op_shape shape, unsigned *least, unsigned *most)
{
  switch (shape) {
  case WTG_SHAPE_RANGE: *least = *most = 2; break;
  case WTG_SHAPE_SIZE: *least = *most = 1; break;
  case WTG_SHAPE_IOV: *least = 3; *most = 1 + WTG_IOV_MAX; break;
  default: *least = *most = 0; break;
  }
}

static const char *
wtg_shape_wants (enum wtg_op_shape shape)
{
  return shape == WTG_SHAPE_RANGE ? "an offset and a length"
    : shape == WTG_SHAPE_IOV ? "an offset and 2 to 4 lengths" : "a size";
}

/* The arguments after the op's name: an optional flag, then its numbers
 * (the first an offset or size, the others lengths, each at least 1 and
 * all of them together within the size limit). */
static int
wtg_parse_args (struct wtg_lex *x, const struct wtg_op_limits *lim, struct wtg_op *op,
                unsigned *column, char *err, size_t errlen)
{
  char letter = wtg_op_flag_letter (op->kind);
  enum wtg_op_shape shape = wtg_op_shape (op->kind);
  unsigned least, most, got = 0;
  wtg_shape_arity (shape, &least, &most);
  uint64_t v[1 + WTG_IOV_MAX] = { 0 }, lengths = 0;
  if (wtg_op_has_source (op->kind) && wtg_parse_source (x, lim, op, column, err, errlen) < 0)
    return -1;
  while (wtg_lex_next (x)) {
    if (x->tok[0] == '-' && x->toklen == 2 && !got && letter && x->tok[1] == letter) {
      op->flags |= wtg_op_flag_bit (letter);
      continue;
    }
    if (got == most)
      WTG_PARSE_FAIL (x, "unexpected '%.*s' after %s's %u argument%s", (int) x->toklen,
                      x->tok, wtg_op_name (op->kind), most, most == 1 ? "" : "s");
    if (x->tok[0] == '-' && x->toklen == 2 && x->tok[1] >= 'a' && x->tok[1] <= 'z')
      WTG_PARSE_FAIL (x, "%s takes no flag '%.*s'", wtg_op_name (op->kind), (int) x->toklen,
                      x->tok);
    const char *why = wtg_tok_number (x, &v[got]);
    if (why)
      WTG_PARSE_FAIL (x, "%s: '%.*s'", why, (int) x->toklen, x->tok);
    if (got > 0 && shape != WTG_SHAPE_SIZE && v[got] == 0)
      WTG_PARSE_FAIL (x, "a length of 0");
    lengths += got > 0 ? v[got] : 0;     /* each below 2^63: no wrap in 4 */
    if (v[got] > lim->size_limit || lengths > lim->size_limit - v[0]
        || (got > 0 && op->src_off + lengths > lim->size_limit))
      WTG_PARSE_FAIL (x, "past the size limit (%" PRIu64 " bytes, --size)", lim->size_limit);
    got++;
  }
  if (got < least) {
    *column = (unsigned) (x->p - x->line) + 1;
    snprintf (err, errlen, "%s needs %s", wtg_op_name (op->kind), wtg_shape_wants (shape));
    return -1;
  }
  op->off = v[0];
  op->len = lengths;
  if (shape == WTG_SHAPE_IOV) {
    op->niov = got - 1;
    memcpy (op->iov, v + 1, op->niov * sizeof *op->iov);
  }
  return 0;
}

int
wtg_op_parse (const char *line, const struct wtg_op_limits *lim, struct wtg_op *op,
              bool *is_op, unsigned *column, char *err, size_t errlen)
{
  struct wtg_lex x = { .line = line, .p = line };
  memset (op, 0, sizeof *op);
  *is_op = false;
  if (!wtg_lex_next (&x))
    return 0;
  if (wtg_parse_file (&x, lim, &op->file, column, err, errlen) < 0)
    return -1;
  if (!wtg_lex_next (&x)) {
    *column = (unsigned) (x.p - x.line) + 1;
    snprintf (err, errlen, "an op name must follow the file");
    return -1;
  }
  if (wtg_parse_kind (&x, op, column, err, errlen) < 0
      || wtg_parse_args (&x, lim, op, column, err, errlen) < 0)
    return -1;
  *is_op = true;
  return 0;
}

int
wtg_ops_parse_text (const char *text, const struct wtg_op_limits *lim,
                    struct wtg_op **ops, uint64_t *nops, char *err, size_t errlen)
{
  uint64_t n = 0, cap = 0, lineno = 0;
  struct wtg_op *list = NULL;
  for (const char *line = text; *line; ) {
    const char *nl = strchr (line, '\n');
    size_t len = nl ? (size_t) (nl - line) : strlen (line);
    char buf[512];
    lineno++;
    if (len >= sizeof buf) {
      snprintf (err, errlen, "line %" PRIu64 ": longer than %zu bytes", lineno, sizeof buf - 1);
      goto fail;
    }
    memcpy (buf, line, len);
    buf[len] = '\0';
    struct wtg_op op;
    bool is_op;
    unsigned column = 1;
    char why[256];
    if (wtg_op_parse (buf, lim, &op, &is_op, &column, why, sizeof why) < 0) {
      snprintf (err, errlen, "line %" PRIu64 ", column %u: %s", lineno, column, why);
      goto fail;
    }
    if (is_op) {
      if (n == cap) {
        cap = cap ? cap * 2 : 256;
        struct wtg_op *grown = realloc (list, cap * sizeof *list);
        if (!grown) {
          snprintf (err, errlen, "malloc: %" PRIu64 " ops: %s", cap, strerror (errno));
          goto fail;
        }
        list = grown;
      }
      list[n++] = op;
    }
    line += len + (nl ? 1 : 0);
  }
  *ops = list;
  *nops = n;
  return 0;
 fail:
  free (list);
  return -1;
}

#define WTG_MWRITE_EOF_WEIGHT 2u
#define WTG_DWRITE_SEQ_WEIGHT 2u

void
wtg_op_default_weights (uint32_t *weights)
{
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++)
    weights[k] = wtg_op_infos[k].weight;
  weights[WTG_W_MWRITE_EOF] = WTG_MWRITE_EOF_WEIGHT;
  weights[WTG_W_DWRITE_SEQ] = WTG_DWRITE_SEQ_WEIGHT;
}

static const char *
wtg_weight_name (uint32_t w)
{
  return w == WTG_W_MWRITE_EOF ? "mwrite_eof" : w == WTG_W_DWRITE_SEQ ? "dwrite_seq"
    : wtg_op_infos[w].name;
}

int
wtg_op_parse_weights (const char *spec, uint32_t *weights, char *err, size_t errlen)
{
  const char *p = spec;
  while (*p) {
    /* ':' too: wtrack-run's kernel command line turns commas into spaces */
    size_t itemlen = strcspn (p, ",:");
    const char *eq = memchr (p, '=', itemlen);
    if (!eq) {
      snprintf (err, errlen, "'%.*s': expected NAME=WEIGHT", (int) itemlen, p);
      return -1;
    }
    size_t namelen = (size_t) (eq - p);
    char num[16];
    size_t numlen = itemlen - namelen - 1;
    uint64_t w = 0;
    struct wtg_lex x = { .tok = num, .toklen = numlen };
    if (numlen == 0 || numlen >= sizeof num
        || (memcpy (num, eq + 1, numlen), num[numlen] = '\0', wtg_tok_number (&x, &w))
        || w > 1000000) {
      snprintf (err, errlen, "'%.*s': the weight is not a number in 0..1000000",
                (int) itemlen, p);
      return -1;
    }
    bool all = namelen == 3 && memcmp (p, "all", 3) == 0, known = all;
    for (uint32_t k = 0; k < WTG_W_COUNT; k++)
      if (all || (strlen (wtg_weight_name (k)) == namelen
                  && memcmp (p, wtg_weight_name (k), namelen) == 0)) {
        weights[k] = (uint32_t) w;
        known = true;
      }
    if (!known) {
      snprintf (err, errlen, "unknown op '%.*s'", (int) namelen, p);
      return -1;
    }
    p += itemlen + (p[itemlen] == ',' || p[itemlen] == ':');
  }
  uint64_t total = 0;
  for (uint32_t k = 0; k < WTG_W_COUNT; k++)
    total += weights[k];
  if (!total) {
    snprintf (err, errlen, "every weight is 0: no op to draw");
    return -1;
  }
  return 0;
}

/* The generator's view of the files: their sizes as the ops leave them
 * and where the last op on each was. */
struct wtg_gen {
  struct wtg_rng *rng;
  const struct wtg_op_gen_params *p;
  uint64_t *size;
  uint64_t *last_off, *last_end;
  uint64_t *dpos;               /* each O_DIRECT descriptor's position (dwrite -s) */
  uint32_t last_file;
  uint64_t total_weight;
  struct wtg_op share;          /* the last reflink: a dedupe's likely equal ranges */
  bool have_share;
  uint32_t dedupe_in;           /* a dedupe of share comes in this many ops (0: none) */
};

static uint64_t
wtg_gen_below (struct wtg_gen *g, uint64_t n)
{
  return n ? wtg_rng_below (g->rng, n) : 0;
}

/* A slot of the weights: an op kind, or WTG_W_MWRITE_EOF. */
static uint32_t
wtg_gen_slot (struct wtg_gen *g)
{
  uint64_t r = wtg_gen_below (g, g->total_weight);
  for (uint32_t k = 0; k < WTG_W_COUNT; k++) {
    if (r < g->p->weights[k])
      return k;
    r -= g->p->weights[k];
  }
  return WTG_OK_PWRITE;
}

/* A signed nudge of up to span bytes either way from base, kept >= 0. */
static uint64_t
wtg_gen_near (struct wtg_gen *g, uint64_t base, uint64_t span)
{
  uint64_t d = wtg_gen_below (g, span + 1);
  return wtg_gen_below (g, 2) ? base + d : (base > d ? base - d : 0);
}

/* Where an op starts: near the last op on the file, at EOF, on a page or
 * block edge, or anywhere up to two pages past EOF. */
static uint64_t
wtg_gen_offset (struct wtg_gen *g, uint32_t fi)
{
  uint64_t page = g->p->page, limit = g->p->size_limit;
  uint64_t r = wtg_gen_below (g, 100), off;
  if (r < 30)
    off = wtg_gen_near (g, wtg_gen_below (g, 2) ? g->last_off[fi] : g->last_end[fi], page);
  else if (r < 50)
    off = wtg_gen_near (g, g->size[fi], page / 2);
  else if (r < 70)
    off = wtg_gen_near (g, page * wtg_gen_below (g, limit / page + 1), 16);
  else if (r < 80)
    off = 512 * wtg_gen_below (g, limit / 512 + 1);
  else {
    uint64_t span = g->size[fi] + 2 * page < limit ? g->size[fi] + 2 * page : limit;
    off = wtg_gen_below (g, span + 1);
  }
  return off < limit ? off : limit - 1;
}

/* From 1 byte to several pages; most within two pages. */
static uint64_t
wtg_gen_length (struct wtg_gen *g)
{
  uint64_t page = g->p->page, r = wtg_gen_below (g, 100);
  if (r < 30)
    return 1 + wtg_gen_below (g, 512);
  if (r < 75)
    return 1 + wtg_gen_below (g, 2 * page);
  return 1 + wtg_gen_below (g, 6 * page);
}

static uint64_t
wtg_round_up (uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

/* The size after op, as the model will have it. */
static uint64_t
wtg_gen_new_size (const struct wtg_op *op, uint64_t size)
{
  bool keep = op->flags & WTG_OPF_KEEP_SIZE;
  uint64_t end = op->off + op->len;
  switch (op->kind) {
  case WTG_OK_PWRITE: case WTG_OK_WRITE: case WTG_OK_DWRITE: case WTG_OK_PWRITEV:
    return end > size ? end : size;
  case WTG_OK_FALLOC: case WTG_OK_FZERO:
    return !keep && end > size ? end : size;
  case WTG_OK_TRUNCATE:
    return op->off;
  case WTG_OK_FCOLLAPSE:
    return end < size ? size - op->len : size;
  case WTG_OK_FINSERT:
    return op->off < size ? size + op->len : size;
  default:
    return size;
  }
}

/* copy_range: from a file with data (its own too: the kernel refuses
 * overlapping ranges, EINVAL), to where any op would start. A copy grows
 * its destination by what it copied. */
static void
wtg_gen_copy (struct wtg_gen *g, struct wtg_op *op, uint32_t fi)
{
  uint64_t limit = g->p->size_limit;
  uint32_t src = (uint32_t) wtg_gen_below (g, g->p->files);
  op->src_file = src + 1;
  op->src_off = g->size[src] ? wtg_gen_below (g, g->size[src]) : 0;
  op->off = wtg_gen_offset (g, fi);
  op->len = wtg_gen_length (g);
  uint64_t room = limit - (op->off > op->src_off ? op->off : op->src_off);
  if (op->len > room)
    op->len = room;
  /* within its own file, the source ends at EOF: past it the kernel may
   * copy what the copy itself brought into the file */
  if (src == fi && g->size[src] && op->len > g->size[src] - op->src_off)
    op->len = g->size[src] - op->src_off;
  uint64_t copied = op->src_off < g->size[src] ? g->size[src] - op->src_off : 0;
  copied = copied < op->len ? copied : op->len;
  if (op->off + copied > g->size[fi])
    g->size[fi] = op->off + copied;
}

/* A file holding data, to be a reflink's or dedupe's source: a random
 * one, or the first non-empty after it. */
static uint32_t
wtg_gen_source_file (struct wtg_gen *g)
{
  uint32_t n = g->p->files, first = (uint32_t) wtg_gen_below (g, n);
  for (uint32_t i = 0; i < n; i++)
    if (g->size[(first + i) % n])
      return (first + i) % n;
  return first;
}

/* reflink (FICLONERANGE): page-aligned offsets (a page is a multiple of
 * the block size), a whole number of pages inside the source, or a range
 * that ends at the source's EOF linked at or past the destination's EOF
 * (the kernel refuses a partial block in the middle of a file). Within
 * one file the ranges do not overlap. An empty source gives an op the
 * kernel refuses (EINVAL) and that changes nothing. */
static void
wtg_gen_reflink (struct wtg_gen *g, struct wtg_op *op, uint32_t fi)
{
  uint64_t page = g->p->page, limit = g->p->size_limit;
  uint32_t src = wtg_gen_source_file (g);
  uint64_t ssize = g->size[src], pages = ssize / page;
  bool to_eof = ssize % page && (!pages || !wtg_gen_below (g, 3));
  op->src_file = src + 1;
  if (to_eof) {
    op->src_off = page * wtg_gen_below (g, pages + 1);
    op->len = ssize - op->src_off;
  } else if (pages) {
    op->src_off = page * wtg_gen_below (g, pages);
    uint64_t most = pages - op->src_off / page;
    op->len = page * (1 + wtg_gen_below (g, most < 4 ? most : 4));
  } else {
    op->src_off = 0;
    op->len = page;
  }
  uint64_t dsize = g->size[fi], span = wtg_round_up (op->len, page);
  if (to_eof)                   /* at or past the destination's EOF */
    op->off = wtg_round_up (dsize > op->len ? dsize - op->len : 0, page)
      + page * wtg_gen_below (g, 2);
  else
    op->off = wtg_gen_offset (g, fi) / page * page;
  if (src == fi && op->off < op->src_off + span && op->src_off < op->off + span)
    op->off = wtg_round_up (op->src_off + span, page);    /* past the source */
  if (op->off + op->len > limit)
    op->off = (limit - op->len) / page * page;
  bool ok = ssize && op->src_off + op->len <= ssize
    && (op->len % page == 0 || op->off + op->len >= dsize)
    && !(src == fi && op->off < op->src_off + span && op->src_off < op->off + span);
  if (!ok)                      /* the kernel will refuse it: no change */
    return;
  g->share = *op;
  g->have_share = true;
  /* half the time, a dedupe of its ranges soon (unless dedupe's weight is 0) */
  if (g->p->weights[WTG_OK_DEDUPE] && wtg_gen_below (g, 2))
    g->dedupe_in = 1 + (uint32_t) wtg_gen_below (g, 2);
  if (op->off + op->len > dsize)
    g->size[fi] = op->off + op->len;
}

/* dedupe (FIDEDUPERANGE): 3 times in 4 the ranges the last reflink shared
 * (still equal unless an op changed one since), else two random page-
 * aligned ranges inside the files (most often differing: the kernel
 * then shares nothing and says so). Both ranges must lie below EOF; a
 * length that is not a whole number of blocks is shortened by the kernel. */
static void
wtg_gen_dedupe (struct wtg_gen *g, struct wtg_op *op, uint32_t fi, bool asked)
{
  uint64_t page = g->p->page;
  if (g->have_share && (asked || wtg_gen_below (g, 4))) {
    op->file = g->share.file;
    op->src_file = g->share.src_file;
    op->src_off = g->share.src_off;
    op->off = g->share.off;
    op->len = g->share.len;
    return;
  }
  uint32_t src = wtg_gen_source_file (g);
  uint64_t spages = g->size[src] / page, dpages = g->size[fi] / page;
  op->src_file = src + 1;
  op->src_off = page * wtg_gen_below (g, spages);
  op->off = page * wtg_gen_below (g, dpages);
  op->len = page * (1 + wtg_gen_below (g, 2));
  uint64_t room = g->p->size_limit - (op->off > op->src_off ? op->off : op->src_off);
  if (op->len > room)
    op->len = room;
}

/* pwritev: 2 to 4 iovecs of unequal, random lengths summing to LEN. */
static void
wtg_gen_iov (struct wtg_gen *g, struct wtg_op *op)
{
  op->niov = 2 + (uint32_t) wtg_gen_below (g, WTG_IOV_MAX - 1);
  if (op->len < op->niov) {
    op->len = op->niov;
    if (op->off + op->len > g->p->size_limit)
      op->off = g->p->size_limit - op->len;
  }
  uint64_t left = op->len;
  for (uint32_t i = 0; i + 1 < op->niov; i++) {
    uint32_t after = op->niov - 1 - i;     /* iovecs still to come, a byte each at least */
    op->iov[i] = 1 + wtg_gen_below (g, left - after);
    left -= op->iov[i];
  }
  op->iov[op->niov - 1] = left;
}

static void
wtg_gen_truncate (struct wtg_gen *g, struct wtg_op *op, uint32_t fi)
{
  uint64_t page = g->p->page, limit = g->p->size_limit, r = wtg_gen_below (g, 100);
  if (r < 45)
    op->off = wtg_gen_near (g, g->size[fi], 2 * page);
  else if (r < 70)
    op->off = wtg_gen_near (g, page * wtg_gen_below (g, limit / page + 1), 16);
  else
    op->off = wtg_gen_below (g, limit + 1);
  if (op->off > limit)
    op->off = limit;
}

/* fcollapse and finsert: whole pages (a multiple of the block size, as
 * the calls want) inside the file, an insert kept under the size limit. A
 * file too small for one gets an op the kernel refuses (EINVAL). */
static void
wtg_gen_shift (struct wtg_gen *g, struct wtg_op *op, uint32_t fi)
{
  uint64_t page = g->p->page, pages = g->size[fi] / page;
  uint64_t room = (g->p->size_limit - wtg_round_up (g->size[fi], page)) / page;
  if (!room)                    /* no insert fits: take a range out instead */
    op->kind = WTG_OK_FCOLLAPSE;
  uint64_t most = op->kind == WTG_OK_FCOLLAPSE ? (pages > 1 ? pages - 1 : 1) : (room ? room : 1);
  op->len = page * (1 + wtg_gen_below (g, most < 4 ? most : 4));
  uint64_t last = op->kind == WTG_OK_FCOLLAPSE
    ? (g->size[fi] > op->len ? (g->size[fi] - op->len - 1) / page : 0)
    : (g->size[fi] ? (g->size[fi] - 1) / page : 0);
  /* near the last op on the file half the time */
  uint64_t near = g->last_off[fi] / page;
  op->off = page * (wtg_gen_below (g, 2) && near <= last ? near : wtg_gen_below (g, last + 1));
  if (op->off + op->len > g->p->size_limit)
    op->off = 0;
}

/* An op's range, shaped for its kind and kept under the size limit. */
static void
wtg_gen_range (struct wtg_gen *g, struct wtg_op *op, uint32_t fi)
{
  uint64_t page = g->p->page, limit = g->p->size_limit;
  op->off = wtg_gen_offset (g, fi);
  op->len = wtg_gen_length (g);
  if (op->kind == WTG_OK_DWRITE) {
    /* a page is a multiple of every logical block size we meet */
    op->off = op->off / page * page;
    op->len = wtg_round_up (op->len, page);
    if (op->len > limit / 2)
      op->len = page;
    /* -s: mostly on from where the descriptor's last write left it */
    if ((op->flags & WTG_OPF_SEQUENTIAL) && wtg_gen_below (g, 4))
      op->off = g->dpos[fi];
    if (op->off + op->len > limit)
      op->off = limit / page * page - op->len;
    if (op->flags & WTG_OPF_SEQUENTIAL)
      g->dpos[fi] = op->off + op->len;
  }
  bool past_eof = op->flags & WTG_OPF_PAST_EOF;
  if (op->kind == WTG_OK_FCOLLAPSE || op->kind == WTG_OK_FINSERT) {
    wtg_gen_shift (g, op, fi);
    return;
  }
  if (op->kind == WTG_OK_MWRITE && past_eof) {
    /* from a little before EOF into the rest of its page */
    uint64_t size = g->size[fi], eof_page_end = wtg_round_up (size, page);
    uint64_t before = wtg_gen_below (g, (size < 512 ? size : 512) + 1);
    op->off = size - before;
    op->len = before + 1 + wtg_gen_below (g, eof_page_end > size ? eof_page_end - size : 1);
  } else if (op->kind == WTG_OK_MWRITE
             && !wtg_mwrite_reach (g->size[fi], op->off, op->len, page, false))
    op->off = wtg_gen_below (g, g->size[fi]);
  if (op->len > limit - op->off)
    op->len = limit - op->off;
  if (op->kind == WTG_OK_PWRITEV)
    wtg_gen_iov (g, op);
}

static void
wtg_gen_one (struct wtg_gen *g, struct wtg_op *op)
{
  uint32_t fi = wtg_gen_below (g, 10) < 7 ? g->last_file
    : (uint32_t) wtg_gen_below (g, g->p->files);
  memset (op, 0, sizeof *op);
  op->file = fi + 1;
  uint32_t slot = wtg_gen_slot (g);
  bool asked = g->dedupe_in && --g->dedupe_in == 0;
  if (asked)
    slot = WTG_OK_DEDUPE;       /* the one a reflink asked for: its ranges */
  op->kind = slot == WTG_W_MWRITE_EOF ? WTG_OK_MWRITE
    : slot == WTG_W_DWRITE_SEQ ? WTG_OK_DWRITE : slot;
  if (slot == WTG_W_MWRITE_EOF)
    op->flags = WTG_OPF_PAST_EOF;
  if (slot == WTG_W_DWRITE_SEQ)
    op->flags = WTG_OPF_SEQUENTIAL;
  /* a mapped write needs a byte of the file to land in */
  if (op->kind == WTG_OK_MWRITE && g->size[fi] == 0)
    op->kind = WTG_OK_PWRITE, op->flags = 0;
  char letter = wtg_op_flag_letter (op->kind);
  if ((letter == 'k' || letter == 'a') && wtg_gen_below (g, 2))
    op->flags = wtg_op_flag_bit (letter);
  if (op->kind == WTG_OK_TRUNCATE)
    wtg_gen_truncate (g, op, fi);
  else if (op->kind == WTG_OK_COPY_RANGE)
    wtg_gen_copy (g, op, fi);
  else if (op->kind == WTG_OK_REFLINK)
    wtg_gen_reflink (g, op, fi);
  else if (op->kind == WTG_OK_DEDUPE)
    wtg_gen_dedupe (g, op, fi, asked);
  else if (wtg_op_shape (op->kind) != WTG_SHAPE_NONE)
    wtg_gen_range (g, op, fi);
  fi = op->file - 1;            /* a dedupe may take the last reflink's file */
  g->size[fi] = wtg_gen_new_size (op, g->size[fi]);
  if (wtg_op_shape (op->kind) != WTG_SHAPE_NONE) {
    g->last_off[fi] = op->off;
    g->last_end[fi] = op->off + op->len;
  }
  g->last_file = fi;
}

int
wtg_ops_generate (struct wtg_rng *rng, const struct wtg_op_gen_params *p, uint64_t n,
                  struct wtg_op **ops)
{
  struct wtg_gen g = { .rng = rng, .p = p };
  for (uint32_t k = 0; k < WTG_W_COUNT; k++)
    g.total_weight += p->weights[k];
  g.size = calloc (p->files, sizeof *g.size);
  g.last_off = calloc (p->files, sizeof *g.last_off);
  g.last_end = calloc (p->files, sizeof *g.last_end);
  g.dpos = calloc (p->files, sizeof *g.dpos);
  struct wtg_op *list = malloc ((n ? n : 1) * sizeof *list);
  int rc = 0;
  if (!g.size || !g.last_off || !g.last_end || !g.dpos || !list || !g.total_weight
      || p->size_limit < 4 * p->page) {
    free (list);
    list = NULL;
    rc = -1;
  }
  for (uint64_t i = 0; rc == 0 && i < n; i++)
    wtg_gen_one (&g, &list[i]);
  free (g.size);
  free (g.last_off);
  free (g.last_end);
  free (g.dpos);
  *ops = list;
  return rc;
}
