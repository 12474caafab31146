/* Reading the guest's channel: its messages, its manifests, and the CHANNEL
 * records of the log that carried them (lib/channel-read.h). */
#include "lib/channel-read.h"

#include <inttypes.h>
#include <string.h>

#include "channel.h"
#include "search.h"
#include "lib/util.h"

static void
wtc_msg_clear (gpointer p)
{
  struct wtc_msg *m = p;
  g_free (m->text);
}

static void
wtc_channel_take (struct wtc_channel *ch, const struct wtch_message *wm)
{
  struct wtc_msg m = {
    .type = wm->type, .flags = wm->flags, .number = wm->number, .guest_ns = wm->guest_ns,
    .offset = wm->offset, .length = wm->length,
  };
  if (wm->type == WTCH_MANIFEST)
    g_byte_array_append (ch->manifest, wm->payload, wm->length);
  else
    m.text = g_strndup ((const char *) wm->payload, wm->length);
  g_array_append_val (ch->msgs, m);
  if (wm->type < G_N_ELEMENTS (ch->last_of_type))
    ch->last_of_type[wm->type] = ch->msgs->len;
}

struct wtc_channel *
wtc_channel_read (const char *path, GError **error)
{
  char err[512];
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return NULL;
  }
  struct wtc_channel *ch = g_new0 (struct wtc_channel, 1);
  ch->msgs = g_array_new (FALSE, TRUE, sizeof (struct wtc_msg));
  g_array_set_clear_func (ch->msgs, wtc_msg_clear);
  ch->manifest = g_byte_array_new ();
  struct wtch_message wm;
  int rc;
  while ((rc = wtch_reader_next (r, &wm, err, sizeof err)) == 0)
    wtc_channel_take (ch, &wm);
  if (rc == -1)
    ch->error = g_strdup (err);
  wtch_reader_close (r);
  return ch;
}

void
wtc_channel_free (struct wtc_channel *ch)
{
  if (!ch)
    return;
  g_array_unref (ch->msgs);
  g_byte_array_unref (ch->manifest);
  g_free (ch->error);
  g_free (ch);
}

void
wtc_chanrec_note (GArray *chanrecs, const struct wtlog_record *rec)
{
  if (rec->type != WTLOG_CHANNEL || (rec->flags & WTLOG_F_FAILED))
    return;
  struct wtc_chanrec c = {
    .seq = rec->seq, .t_start = rec->t_start, .t_end = rec->t_end,
    .offset = rec->offset, .length = rec->length,
  };
  g_array_append_val (chanrecs, c);
}

const struct wtc_msg *
wtc_channel_last (const struct wtc_channel *ch, uint16_t type)
{
  if (type >= G_N_ELEMENTS (ch->last_of_type) || !ch->last_of_type[type])
    return NULL;
  return &g_array_index (ch->msgs, struct wtc_msg, ch->last_of_type[type] - 1);
}

/* The first message at or after offset (messages are in offset order: the
 * reader takes them at increasing offsets). */
static uint64_t
wtc_msg_offset_at (size_t i, const void *msgs)
{
  return g_array_index ((const GArray *) msgs, struct wtc_msg, i).offset;
}

static guint
wtc_msg_lower_bound (const struct wtc_channel *ch, uint64_t offset)
{
  return (guint) wt_lower_bound (0, ch->msgs->len, offset, wtc_msg_offset_at, ch->msgs);
}

static void
wtc_channel_place_one (struct wtc_channel *ch, const struct wtc_chanrec *c)
{
  /* The last write wins: a block rewritten later holds the later bytes. */
  for (guint i = wtc_msg_lower_bound (ch, c->offset); i < ch->msgs->len; i++) {
    struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->offset - c->offset >= c->length)
      break;
    m->placed = true;
    m->log_seq = c->seq;
    m->log_t_start = c->t_start;
    m->log_t_end = c->t_end;
  }
}

void
wtc_channel_place_record (struct wtc_channel *ch, const struct wtlog_record *rec)
{
  if (rec->type != WTLOG_CHANNEL || (rec->flags & WTLOG_F_FAILED))
    return;
  struct wtc_chanrec c = {
    .seq = rec->seq, .t_start = rec->t_start, .t_end = rec->t_end,
    .offset = rec->offset, .length = rec->length,
  };
  wtc_channel_place_one (ch, &c);
}

void
wtc_channel_place (struct wtc_channel *ch, const GArray *chanrecs)
{
  for (guint j = 0; j < chanrecs->len; j++)
    wtc_channel_place_one (ch, &g_array_index (chanrecs, struct wtc_chanrec, j));
}

static void
wtc_manifest_destroy (gpointer p)
{
  wtmf_free (p);
  g_free (p);
}

bool
wtc_manifests_parse (const struct wtc_channel *ch, GPtrArray **out,
                     GError **error)
{
  char err[512];
  size_t at = 0;
  *out = g_ptr_array_new_with_free_func (wtc_manifest_destroy);
  while (at < ch->manifest->len) {
    struct wtmf_manifest *m = g_new0 (struct wtmf_manifest, 1);
    size_t used = 0;
    if (wtmf_parse (ch->manifest->data + at, ch->manifest->len - at, m, &used,
                    err, sizeof err) == -1) {
      g_free (m);
      g_set_error (error, WTC_ERROR, 0, "bad manifest %u at byte %zu of the manifest stream: %s",
                   (*out)->len + 1, at, err);
      return false;
    }
    g_ptr_array_add (*out, m);
    at += used;
  }
  return true;
}

const struct wtmf_manifest *
wtc_manifest_final (const GPtrArray *manifests)
{
  for (guint i = manifests->len; i-- > 0;) {
    const struct wtmf_manifest *m = g_ptr_array_index (manifests, i);
    if (m->checkpoint == 0)
      return m;
  }
  return NULL;
}

char *
wtc_msg_kv (const struct wtc_msg *m, const char *key)
{
  char value[4096];
  if (!m->text || !wtch_kv_get ((const unsigned char *) m->text, m->length, key,
                                value, sizeof value))
    return NULL;
  return g_strdup (value);
}

/* The CHANNEL records of the log, in log order. */
static GArray *
wtc_log_chanrecs (const char *log, GError **error)
{
  char err[512];
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (log, NULL, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return NULL;
  }
  GArray *chanrecs = g_array_new (false, false, sizeof (struct wtc_chanrec));
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_chanrec_note (chanrecs, &rec);
  wtlog_reader_close (r);
  return chanrecs;
}

bool
wtc_mark_is (const struct wtc_msg *m, const char *label)
{
  if (m->type != WTCH_MARK || !m->text)
    return false;
  size_t n = strlen (m->text);
  while (n > 0 && (m->text[n - 1] == '\n' || m->text[n - 1] == '\0'))
    n--;
  return n == strlen (label) && memcmp (m->text, label, n) == 0;
}

char *
wtc_mark_label (const struct wtc_msg *m)
{
  size_t n = m->text ? strlen (m->text) : 0;
  while (n > 0 && m->text[n - 1] == '\n')
    n--;
  return g_strndup (m->text ? m->text : "", n);
}

struct wtc_channel *
wtc_channel_read_placed (const char *log, const char *channel,
                         GPtrArray *warnings, GError **error)
{
  g_autoptr (wtc_channel) ch = wtc_channel_read (channel, error);
  if (!ch)
    return NULL;
  if (ch->error && warnings)
    g_ptr_array_add (warnings, g_strdup_printf ("%s: %s (later messages are ignored)",
                                                channel, ch->error));
  g_autoptr (GArray) chanrecs = wtc_log_chanrecs (log, error);
  if (!chanrecs)
    return NULL;
  wtc_channel_place (ch, chanrecs);
  return g_steal_pointer (&ch);
}
