/* Where a path lives: its mount point, filesystem type and mount options
 * from /proc/self/mountinfo, so manifest paths read from the filesystem's
 * root ("/data/f1") as debugfs and xfs_db name them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void
wtg_unescape (char *s)
{
  char *out = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7'
        && p[3] >= '0' && p[3] <= '7') {
      *out++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else
      *out++ = *p;
  }
  *out = '\0';
}

/* Whether mnt is path or one of its ancestors. */
static size_t
wtg_mount_covers (const char *mnt, const char *path)
{
  size_t n = strlen (mnt);
  if (strcmp (mnt, "/") == 0)
    return 1;
  if (strncmp (mnt, path, n) == 0 && (path[n] == '/' || path[n] == '\0'))
    return n;
  return 0;
}

struct wtg_mount_line {
  char *root, *mnt, *fstype, *opts, *super_opts;
};

/* Split one line: "36 35 98:0 /root /mnt opts [optional...] - type src super". */
static int
wtg_split_mountinfo (char *line, struct wtg_mount_line *ml)
{
  char *fields[6], *save = NULL, *tok = strtok_r (line, " \n", &save);
  int i = 0;
  for (; tok && i < 6; i++, tok = strtok_r (NULL, " \n", &save))
    fields[i] = tok;
  if (i < 6)
    return -1;
  while (tok && strcmp (tok, "-") != 0)
    tok = strtok_r (NULL, " \n", &save);
  char *fstype = tok ? strtok_r (NULL, " \n", &save) : NULL;
  char *source = fstype ? strtok_r (NULL, " \n", &save) : NULL;
  char *super = source ? strtok_r (NULL, " \n", &save) : NULL;
  if (!super)
    return -1;
  ml->root = fields[3];
  ml->mnt = fields[4];
  ml->opts = fields[5];
  ml->fstype = fstype;
  ml->super_opts = super;
  wtg_unescape (ml->root);
  wtg_unescape (ml->mnt);
  return 0;
}

/* Fill run's mount fields for path (absolute, resolved): the longest mount
 * point above it; of several on the same point the last one, the visible
 * one. */
int
wtg_locate (struct wtg_run *run, const char *path)
{
  FILE *fp = fopen ("/proc/self/mountinfo", "re");
  if (!fp)
    return wtg_fail (run, "open: /proc/self/mountinfo: %m (is /proc mounted?)");
  char *line = NULL;
  size_t cap = 0, best = 0;
  unsigned lineno = 0;
  while (getline (&line, &cap, fp) > 0) {
    struct wtg_mount_line ml;
    lineno++;
    if (wtg_split_mountinfo (line, &ml) < 0) {
      fprintf (stderr, "wtrack-guest: /proc/self/mountinfo line %u: unexpected format, skipped\n",
               lineno);
      continue;
    }
    size_t n = wtg_mount_covers (ml.mnt, path);
    if (!n || n < best)
      continue;
    best = n;
    snprintf (run->mount_point, sizeof run->mount_point, "%s", ml.mnt);
    snprintf (run->mount_root, sizeof run->mount_root, "%s", ml.root);
    snprintf (run->fs_type, sizeof run->fs_type, "%s", ml.fstype);
    snprintf (run->mount_opts, sizeof run->mount_opts, "%s,%s", ml.opts, ml.super_opts);
  }
  free (line);
  fclose (fp);
  if (!best)
    return wtg_fail (run, "find mount point: %s: not under any mount in /proc/self/mountinfo",
                     path);
  return 0;
}

/* The path of abs from its filesystem's root: --fs-root stripped if given,
 * else the mount point stripped and the mount's own root put in front. */
int
wtg_fs_path (struct wtg_run *run, const char *abs, char **out)
{
  const char *root = run->opt->fs_root ? run->opt->fs_root : run->mount_point;
  const char *prefix = run->opt->fs_root ? "" : run->mount_root;
  size_t n = wtg_mount_covers (root, abs);
  if (!n)
    return wtg_fail (run, "file path: %s is not under %s%s", abs,
                     run->opt->fs_root ? "--fs-root " : "mount point ", root);
  const char *rel = strcmp (root, "/") == 0 ? abs : abs + n;
  if (strcmp (prefix, "/") == 0)
    prefix = "";
  if (asprintf (out, "%s%s", prefix, *rel ? rel : "/") < 0) {
    *out = NULL;
    return wtg_fail (run, "malloc: path: %m");
  }
  return 0;
}
