/* JSON through json-glib for every file wtrack writes in JSON (report.json,
 * report.html's data, summary.json, ...): json-glib escapes and formats;
 * these helpers add what wtrack's data needs (NULL strings as null, guest
 * strings that are not UTF-8 with U+FFFD for each bad byte, unsigned
 * numbers) and a writer that puts a top-level object out member by member,
 * so that a report of 100,000 files is never one tree in memory.
 *
 * The layout written: "{", then one top-level member a line, indented two
 * spaces (`"key": value`, the value compact), a streamed array one element
 * a line indented four, and "}" on a line of its own. */
#ifndef WTC_LIB_JSON_H
#define WTC_LIB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-glib/json-glib.h>

/* Members of the builder's open object (key) or elements of its open array
 * (key NULL). */
void wtc_jb_str (JsonBuilder *b, const char *key, const char *value); /* NULL: null */
void wtc_jb_u64 (JsonBuilder *b, const char *key, uint64_t value);
void wtc_jb_int (JsonBuilder *b, const char *key, gint64 value);
void wtc_jb_double (JsonBuilder *b, const char *key, double value);
void wtc_jb_bool (JsonBuilder *b, const char *key, bool value);
void wtc_jb_null (JsonBuilder *b, const char *key);
/* Opens an object or an array as the next member or element. */
void wtc_jb_object (JsonBuilder *b, const char *key);
void wtc_jb_array (JsonBuilder *b, const char *key);
/* An array of strings (char *). */
void wtc_jb_strings (JsonBuilder *b, const char *key, const GPtrArray *strings);

/* A node as compact JSON text. */
char *wtc_json_text (JsonNode *node);

struct wtc_json_out {
  FILE *out;
  guint members;     /* top-level members written */
  guint items;       /* elements of the open streamed array */
};

void wtc_json_out_begin (struct wtc_json_out *o, FILE *out);
/* Each member of the object b built (b's root, closed) as a top-level member. */
void wtc_json_out_members (struct wtc_json_out *o, JsonBuilder *b);
/* A top-level member whose value is an array written element by element. */
void wtc_json_out_array_begin (struct wtc_json_out *o, const char *key);
void wtc_json_out_item (struct wtc_json_out *o, JsonBuilder *b);
void wtc_json_out_array_end (struct wtc_json_out *o);
void wtc_json_out_end (struct wtc_json_out *o);

#endif
