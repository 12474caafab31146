/* wtrack campaign cell-facts: what wtrack-campaign keeps of a cell's
 * report.json in its cell.ini, printed by the command that wrote the
 * report, so the script needs no JSON reader of its own. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "campaign/campaign.h"

/* The member KEY of OBJ when it holds a number, as text; NULL otherwise
 * (absent, null, a string, an object). */
static char *
wtc_facts_number (JsonObject *obj, const char *key)
{
  JsonNode *n = obj ? json_object_get_member (obj, key) : NULL;
  if (!n || JSON_NODE_TYPE (n) != JSON_NODE_VALUE)
    return NULL;
  GType t = json_node_get_value_type (n);
  if (t == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (n));
  if (t == G_TYPE_DOUBLE) {
    /* 15 digits: 0.815 stays 0.815 (what jq printed here before) */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.15g", json_node_get_double (n)));
  }
  return NULL;
}

/* Whether the member KEY of OBJ is a number above zero (0.5 is: its text
 * starts with '0'). */
static bool
wtc_facts_positive (JsonObject *obj, const char *key)
{
  JsonNode *n = json_object_get_member (obj, key);
  GType t = n && JSON_NODE_TYPE (n) == JSON_NODE_VALUE ? json_node_get_value_type (n) : G_TYPE_NONE;
  return t == G_TYPE_INT64 ? json_node_get_int (n) > 0
    : t == G_TYPE_DOUBLE ? json_node_get_double (n) > 0 : false;
}

static JsonObject *
wtc_facts_object (JsonObject *obj, const char *key)
{
  JsonNode *n = obj ? json_object_get_member (obj, key) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

/* KEY=VALUE for each member of OBJ holding a number; only the positive
 * ones when positive_only (the classes that occurred). */
static void
wtc_facts_numbers (FILE *out, JsonObject *obj, bool positive_only)
{
  if (!obj)
    return;
  g_autoptr (GList) keys = json_object_get_members (obj);
  for (GList *k = keys; k; k = k->next) {
    g_autofree char *v = wtc_facts_number (obj, k->data);
    if (!v || (positive_only && !wtc_facts_positive (obj, k->data)))
      continue;
    /* a key is a report.json name: no '=' or line breaks to escape */
    if (!strpbrk (k->data, "=\n\r["))
      fprintf (out, "%s=%s\n", (const char *) k->data, v);
  }
}

bool
wtc_campaign_cell_facts (const char *report, FILE *out, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, report, error)) {
    g_prefix_error (error, "cannot read %s: ", report);
    return false;
  }
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root)) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a JSON object", report);
    return false;
  }
  JsonObject *obj = json_node_get_object (root);
  JsonObject *guest = wtc_facts_object (obj, "guest");
  const char *verdict = json_object_has_member (obj, "verdict")
    && JSON_NODE_HOLDS_VALUE (json_object_get_member (obj, "verdict"))
    ? json_object_get_string_member (obj, "verdict") : NULL;
  if (verdict && !strpbrk (verdict, "\n\r"))
    fprintf (out, "verdict=%s\n", verdict);
  g_autofree char *bad = wtc_facts_number (obj, "bad_sectors");
  fprintf (out, "bad_sectors=%s\n", bad ? bad : "0");
  g_autofree char *page = wtc_facts_number (guest, "page_size");
  g_autofree char *block = wtc_facts_number (guest, "block_size");
  if (page)
    fprintf (out, "page_size=%s\n", page);
  if (block)
    fprintf (out, "block_size=%s\n", block);
  fputs ("[classes]\n", out);
  wtc_facts_numbers (out, wtc_facts_object (obj, "by_class"), true);
  fputs ("[timings]\n", out);
  wtc_facts_numbers (out, wtc_facts_object (obj, "timings"), false);
  return true;
}
