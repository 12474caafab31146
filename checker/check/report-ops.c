/* The ops workload's counts in the JSON report (doc/report-json.md, "ops"),
 * from the guest's RESULT (doc/ops.md "On the channel"): the op kinds that
 * ran and were refused, and how often kinds met on a page. The RESULT is
 * the guest's text: a line that is not KEY=NUMBER (or KIND:N,... for the
 * pairs) is left out; names go through json-glib like every string. */
#include <inttypes.h>
#include <string.h>

#include "check/check.h"

/* Each line "KEY=VALUE" of the RESULT's text, in order. */
typedef void (*wtc_result_line_fn) (const char *key, size_t keylen, const char *value,
                                    size_t valuelen, void *data);

static void
wtc_result_lines (const struct wtc_msg *m, wtc_result_line_fn fn, void *data)
{
  const char *p = m->text, *end = m->text + m->length;
  while (p < end) {
    const char *nl = memchr (p, '\n', (size_t) (end - p));
    const char *eol = nl ? nl : end;
    const char *eq = memchr (p, '=', (size_t) (eol - p));
    if (eq)
      fn (p, (size_t) (eq - p), eq + 1, (size_t) (eol - eq - 1), data);
    p = eol + 1;
  }
}

/* A decimal count of exactly len characters. */
static bool
wtc_count_n (const char *s, size_t len, uint64_t *out)
{
  char buf[24];
  if (!len || len >= sizeof buf || strspn (s, "0123456789") < len)
    return false;
  memcpy (buf, s, len);
  buf[len] = '\0';
  return g_ascii_string_to_unsigned (buf, 10, 0, G_MAXUINT64, out, NULL);
}

struct wtc_ops_group {
  JsonBuilder *b;
  const char *prefix;           /* "ops_", "refused_" */
};

static void
wtc_ops_group_line (const char *key, size_t keylen, const char *value, size_t valuelen,
                    void *data)
{
  struct wtc_ops_group *g = data;
  size_t plen = strlen (g->prefix);
  uint64_t count;
  if (keylen <= plen || memcmp (key, g->prefix, plen) != 0
      || !wtc_count_n (value, valuelen, &count))
    return;
  /* ops_refused and ops_skipped are totals, not kinds */
  if (strcmp (g->prefix, "ops_") == 0
      && ((keylen == 11 && memcmp (key, "ops_refused", 11) == 0)
          || (keylen == 11 && memcmp (key, "ops_skipped", 11) == 0)))
    return;
  g_autofree char *name = g_strndup (key + plen, keylen - plen);
  wtc_jb_u64 (g->b, name, count);
}

/* pairs_A=B:N,B:N: "A>B": N each. */
static void
wtc_ops_pairs_line (const char *key, size_t keylen, const char *value, size_t valuelen,
                    void *data)
{
  struct wtc_ops_group *g = data;
  if (keylen <= 6 || memcmp (key, "pairs_", 6) != 0)
    return;
  const char *p = value, *end = value + valuelen;
  while (p < end) {
    const char *comma = memchr (p, ',', (size_t) (end - p));
    const char *item_end = comma ? comma : end;
    const char *colon = memchr (p, ':', (size_t) (item_end - p));
    uint64_t count;
    if (colon && colon > p
        && wtc_count_n (colon + 1, (size_t) (item_end - colon - 1), &count)) {
      g_autofree char *name = g_strdup_printf ("%.*s>%.*s", (int) (keylen - 6), key + 6,
                                               (int) (colon - p), p);
      wtc_jb_u64 (g->b, name, count);
    }
    p = item_end + 1;
  }
}

static void
wtc_json_ops_object (const struct wtc_msg *m, const char *field, const char *prefix,
                     wtc_result_line_fn fn, JsonBuilder *b)
{
  struct wtc_ops_group g = { b, prefix };
  wtc_jb_object (b, field);
  wtc_result_lines (m, fn, &g);
  json_builder_end_object (b);
}

static void
wtc_json_ops_count (const struct wtc_msg *m, const char *key, JsonBuilder *b)
{
  g_autofree char *v = wtc_msg_kv (m, key);
  uint64_t n;
  if (v && wtc_count_n (v, strlen (v), &n))
    wtc_jb_u64 (b, key, n);
  else
    wtc_jb_null (b, key);
}

void
wtc_report_json_ops (const struct wtc_check *c, JsonBuilder *b)
{
  const struct wtc_msg *m = c->channel ? wtc_channel_last (c->channel, WTCH_RESULT) : NULL;
  g_autofree char *list = m && m->text ? wtc_msg_kv (m, "op_list") : NULL;
  uint64_t n;
  if (!list || !wtc_count_n (list, strlen (list), &n)) {
    wtc_jb_null (b, "ops");
    return;
  }
  wtc_jb_object (b, "ops");
  wtc_jb_u64 (b, "list", n);
  wtc_json_ops_object (m, "executed", "ops_", wtc_ops_group_line, b);
  wtc_json_ops_object (m, "refused", "refused_", wtc_ops_group_line, b);
  wtc_json_ops_count (m, "surprises", b);
  wtc_json_ops_object (m, "pairs", "pairs_", wtc_ops_pairs_line, b);
  wtc_json_ops_count (m, "chains_wmrm", b);
  json_builder_end_object (b);
}
