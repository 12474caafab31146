/* manifest FILE...: only the manifest of existing files (of any workload,
 * or none): expected hashes read from the files themselves, no ops. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest.h"

static int
wtg_manifest_add (struct wtg_run *run, const char *arg)
{
  char abs[PATH_MAX];
  if (!realpath (arg, abs))
    return wtg_fail (run, "realpath: %s: %m", arg);
  /* Each file may sit on its own mount. */
  if (!run->opt->fs_root && wtg_locate (run, abs) < 0)
    return -1;
  int fd = open (abs, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return wtg_fail (run, "open: %s: %m", abs);
  struct stat st;
  if (fstat (fd, &st) < 0) {
    wtg_fail (run, "stat: %s: %m", abs);
    close (fd);
    return -1;
  }
  if (!S_ISREG (st.st_mode)) {
    wtg_fail (run, "manifest: %s: not a regular file", abs);
    close (fd);
    return -1;
  }
  struct wtg_file *f = wtg_model_add_file (run, abs, (uint64_t) st.st_size, false);
  if (!f) {
    close (fd);
    return -1;
  }
  f->fd = fd;
  return 0;
}

int
wtg_manifest_files (struct wtg_run *run)
{
  if (run->opt->noperands == 0)
    return wtg_fail (run, "manifest: no FILE given");
  for (int i = 0; i < run->opt->noperands; i++)
    if (wtg_manifest_add (run, run->opt->operands[i]) < 0)
      return -1;
  return 0;
}
