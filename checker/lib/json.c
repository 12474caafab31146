/* JSON through json-glib (lib/json.h). */
#include "lib/json.h"

#include <string.h>

static void
wtc_jb_key (JsonBuilder *b, const char *key)
{
  if (key)
    json_builder_set_member_name (b, key);
}

void
wtc_jb_str (JsonBuilder *b, const char *key, const char *value)
{
  wtc_jb_key (b, key);
  if (!value) {
    json_builder_add_null_value (b);
    return;
  }
  /* A guest's string can hold any byte; JSON holds only Unicode. */
  g_autofree char *valid = g_utf8_make_valid (value, -1);
  json_builder_add_string_value (b, valid);
}

void
wtc_jb_u64 (JsonBuilder *b, const char *key, uint64_t value)
{
  wtc_jb_key (b, key);
  /* Sectors, bytes, nanoseconds and seqs stay far below 2^63. */
  json_builder_add_int_value (b, (gint64) MIN (value, (uint64_t) G_MAXINT64));
}

void
wtc_jb_int (JsonBuilder *b, const char *key, gint64 value)
{
  wtc_jb_key (b, key);
  json_builder_add_int_value (b, value);
}

void
wtc_jb_double (JsonBuilder *b, const char *key, double value)
{
  wtc_jb_key (b, key);
  json_builder_add_double_value (b, value);
}

void
wtc_jb_bool (JsonBuilder *b, const char *key, bool value)
{
  wtc_jb_key (b, key);
  json_builder_add_boolean_value (b, value);
}

void
wtc_jb_null (JsonBuilder *b, const char *key)
{
  wtc_jb_key (b, key);
  json_builder_add_null_value (b);
}

void
wtc_jb_object (JsonBuilder *b, const char *key)
{
  wtc_jb_key (b, key);
  json_builder_begin_object (b);
}

void
wtc_jb_array (JsonBuilder *b, const char *key)
{
  wtc_jb_key (b, key);
  json_builder_begin_array (b);
}

void
wtc_jb_strings (JsonBuilder *b, const char *key, const GPtrArray *strings)
{
  wtc_jb_array (b, key);
  for (guint i = 0; i < strings->len; i++)
    wtc_jb_str (b, NULL, g_ptr_array_index (strings, i));
  json_builder_end_array (b);
}

char *
wtc_json_text (JsonNode *node)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, node);
  return json_generator_to_data (gen, NULL);
}

void
wtc_json_out_begin (struct wtc_json_out *o, FILE *out)
{
  *o = (struct wtc_json_out) { .out = out };
  fputs ("{", out);
}

static void
wtc_json_out_key (struct wtc_json_out *o, const char *key)
{
  g_autoptr (JsonNode) name = json_node_init_string (json_node_alloc (), key);
  g_autofree char *text = wtc_json_text (name);
  fprintf (o->out, "%s\n  %s: ", o->members++ ? "," : "", text);
}

void
wtc_json_out_members (struct wtc_json_out *o, JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  JsonObject *obj = json_node_get_object (root);
  g_autoptr (GList) names = json_object_get_members (obj);
  for (GList *l = names; l; l = l->next) {
    g_autofree char *text = wtc_json_text (json_object_get_member (obj, l->data));
    wtc_json_out_key (o, l->data);
    fputs (text, o->out);
  }
}

void
wtc_json_out_array_begin (struct wtc_json_out *o, const char *key)
{
  wtc_json_out_key (o, key);
  fputs ("[", o->out);
  o->items = 0;
}

void
wtc_json_out_item (struct wtc_json_out *o, JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = wtc_json_text (root);
  fprintf (o->out, "%s\n    %s", o->items++ ? "," : "", text);
}

void
wtc_json_out_array_end (struct wtc_json_out *o)
{
  fputs (o->items ? "\n  ]" : "]", o->out);
}

void
wtc_json_out_end (struct wtc_json_out *o)
{
  fputs (o->members ? "\n}\n" : "}\n", o->out);
}
