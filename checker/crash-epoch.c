/* An epoch's writes and the undo stack (crash-epoch.h). */
#include "crash-epoch.h"

#include <string.h>

static void
wtc_epoch_write_clear (gpointer p)
{
  g_free (((struct wtc_epoch_write *) p)->data);
}

static void
wtc_undo_clear (gpointer p)
{
  g_free (((struct wtc_undo *) p)->old);
}

GArray *
wtc_epoch_new (void)
{
  GArray *a = g_array_new (false, false, sizeof (struct wtc_epoch_write));
  g_array_set_clear_func (a, wtc_epoch_write_clear);
  return a;
}

GArray *
wtc_undo_new (void)
{
  GArray *a = g_array_new (false, false, sizeof (struct wtc_undo));
  g_array_set_clear_func (a, wtc_undo_clear);
  return a;
}

void
wtc_epoch_add (GArray *epoch, const struct wtlog_record *rec)
{
  struct wtc_epoch_write w = {
    .seq = rec->seq, .offset = rec->offset, .length = rec->length,
    .data = rec->type == WTLOG_WRITE && rec->data
      ? g_memdup2 (rec->data, rec->length) : NULL,
  };
  g_array_append_val (epoch, w);
}

bool
wtc_epoch_apply (struct wt_image *t, const struct wtc_epoch_write *w,
                 GArray *undo, GError **error)
{
  if (undo) {
    struct wtc_undo u = { w->offset, w->length, g_malloc (MAX (w->length, 1)) };
    if (!wtc_target_read (t, w->offset, u.old, w->length, error)) {
      g_free (u.old);
      return false;
    }
    g_array_append_val (undo, u);
  }
  if (w->data)
    return wtc_target_write (t, w->offset, w->data, w->length, error);
  return wtc_target_zero (t, w->offset, w->length, error);
}

bool
wtc_undo_all (struct wt_image *t, GArray *undo, GError **error)
{
  for (guint i = undo->len; i-- > 0;) {
    const struct wtc_undo *u = &g_array_index (undo, struct wtc_undo, i);
    if (!wtc_target_write (t, u->offset, u->old, u->length, error))
      return false;
  }
  g_array_set_size (undo, 0);
  return true;
}
