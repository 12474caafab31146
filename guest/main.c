/* wtrack-guest: the command line. Parses options, opens the channel, runs
 * one workload (or sends one message) and always ends with a RESULT. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "channel.h"
#include "channel-writer.h"
#include "guest.h"
#include "ops.h"

#ifndef WTG_VERSION
#define WTG_VERSION "0.1"
#endif

/* Which commands an option applies to. */
enum {
  WTG_C_LINUS = 1, WTG_C_TORRENT = 2, WTG_C_PWRITE = 4, WTG_C_MANIFEST = 8,
  WTG_C_RESULT = 16, WTG_C_MARK = 32, WTG_C_TEXT = 64, WTG_C_COLD = 128,
  WTG_C_OPS = 256, WTG_C_TRACE = 512,
};
#define WTG_C_WORKLOADS (WTG_C_LINUS | WTG_C_TORRENT | WTG_C_PWRITE | WTG_C_OPS)
#define WTG_C_MESSAGES (WTG_C_RESULT | WTG_C_MARK | WTG_C_TEXT)
#define WTG_C_ALL 1023

struct wtg_command {
  const char *name;
  unsigned bit;
  int (*run) (struct wtg_run *run);
};

static const struct wtg_command wtg_commands[] = {
  { "linus2006", WTG_C_LINUS, wtg_linus2006 },
  { "torrent", WTG_C_TORRENT, wtg_torrent },
  { "pwrite", WTG_C_PWRITE, wtg_pwrite },
  { "ops", WTG_C_OPS, wtg_ops },
  { "manifest", WTG_C_MANIFEST, wtg_manifest_files },
  { "cold", WTG_C_COLD, wtg_cold },
  { "result", WTG_C_RESULT, NULL },
  { "mark", WTG_C_MARK, NULL },
  { "text", WTG_C_TEXT, NULL },
  { "trace", WTG_C_TRACE, NULL },
  { NULL, 0, NULL },
};

enum {
  WTG_O_SEED = 256, WTG_O_CHANNEL, WTG_O_CHANNEL_FILE, WTG_O_CHANNEL_TIMEOUT,
  WTG_O_CHECKPOINT, WTG_O_FS_ROOT, WTG_O_MANIFEST_OUT, WTG_O_SIZE, WTG_O_CHUNK,
  WTG_O_PASSES, WTG_O_FILES, WTG_O_PIECE, WTG_O_WINDOWS, WTG_O_THREADS,
  WTG_O_OPS, WTG_O_FSYNC_EVERY, WTG_O_FILL_SYNC_EVERY, WTG_O_STATUS, WTG_O_ERROR, WTG_O_VERBOSE,
  WTG_O_HELP, WTG_O_WARM, WTG_O_OPS_FILE, WTG_O_OP_WEIGHTS, WTG_O_TRACE_MARKER,
  WTG_O_TRACE_HEAD, WTG_O_TRACE_MAX_KB,
};

static const struct option wtg_long_options[] = {
  { "seed", required_argument, NULL, WTG_O_SEED },
  { "channel", required_argument, NULL, WTG_O_CHANNEL },
  { "channel-file", required_argument, NULL, WTG_O_CHANNEL_FILE },
  { "channel-timeout", required_argument, NULL, WTG_O_CHANNEL_TIMEOUT },
  { "checkpoint", no_argument, NULL, WTG_O_CHECKPOINT },
  { "fs-root", required_argument, NULL, WTG_O_FS_ROOT },
  { "manifest-out", required_argument, NULL, WTG_O_MANIFEST_OUT },
  { "size", required_argument, NULL, WTG_O_SIZE },
  { "chunk", required_argument, NULL, WTG_O_CHUNK },
  { "passes", required_argument, NULL, WTG_O_PASSES },
  { "files", required_argument, NULL, WTG_O_FILES },
  { "piece", required_argument, NULL, WTG_O_PIECE },
  { "windows", required_argument, NULL, WTG_O_WINDOWS },
  { "threads", required_argument, NULL, WTG_O_THREADS },
  { "ops", required_argument, NULL, WTG_O_OPS },
  { "fsync-every", required_argument, NULL, WTG_O_FSYNC_EVERY },
  { "fill-sync-every", required_argument, NULL, WTG_O_FILL_SYNC_EVERY },
  { "status", required_argument, NULL, WTG_O_STATUS },
  { "error", required_argument, NULL, WTG_O_ERROR },
  { "verbose", no_argument, NULL, WTG_O_VERBOSE },
  { "help", no_argument, NULL, WTG_O_HELP },
  { "warm", required_argument, NULL, WTG_O_WARM },
  { "ops-file", required_argument, NULL, WTG_O_OPS_FILE },
  { "op-weights", required_argument, NULL, WTG_O_OP_WEIGHTS },
  { "trace-marker", required_argument, NULL, WTG_O_TRACE_MARKER },
  { "trace-head", required_argument, NULL, WTG_O_TRACE_HEAD },
  { "trace-max-kb", required_argument, NULL, WTG_O_TRACE_MAX_KB },
  { NULL, 0, NULL, 0 },
};

/* The commands each option applies to, indexed by WTG_O_* - WTG_O_SEED. */
#define WTG_SCOPE(o) [(o) - WTG_O_SEED]
static const unsigned wtg_option_scope[] = {
  WTG_SCOPE (WTG_O_SEED) = WTG_C_WORKLOADS,
  WTG_SCOPE (WTG_O_CHANNEL) = WTG_C_ALL,
  WTG_SCOPE (WTG_O_CHANNEL_FILE) = WTG_C_ALL,
  WTG_SCOPE (WTG_O_CHANNEL_TIMEOUT) = WTG_C_ALL,
  WTG_SCOPE (WTG_O_CHECKPOINT) = WTG_C_WORKLOADS,
  WTG_SCOPE (WTG_O_FS_ROOT) = WTG_C_WORKLOADS | WTG_C_MANIFEST,
  WTG_SCOPE (WTG_O_MANIFEST_OUT) = WTG_C_WORKLOADS | WTG_C_MANIFEST,
  WTG_SCOPE (WTG_O_SIZE) = WTG_C_WORKLOADS,
  WTG_SCOPE (WTG_O_CHUNK) = WTG_C_LINUS,
  WTG_SCOPE (WTG_O_PASSES) = WTG_C_LINUS,
  WTG_SCOPE (WTG_O_FILES) = WTG_C_TORRENT | WTG_C_PWRITE | WTG_C_OPS,
  WTG_SCOPE (WTG_O_PIECE) = WTG_C_TORRENT,
  WTG_SCOPE (WTG_O_WINDOWS) = WTG_C_TORRENT,
  WTG_SCOPE (WTG_O_THREADS) = WTG_C_TORRENT,
  WTG_SCOPE (WTG_O_OPS) = WTG_C_PWRITE | WTG_C_OPS,
  WTG_SCOPE (WTG_O_FSYNC_EVERY) = WTG_C_PWRITE,
  WTG_SCOPE (WTG_O_FILL_SYNC_EVERY) = WTG_C_PWRITE,
  WTG_SCOPE (WTG_O_STATUS) = WTG_C_RESULT,
  WTG_SCOPE (WTG_O_ERROR) = WTG_C_RESULT,
  WTG_SCOPE (WTG_O_VERBOSE) = WTG_C_ALL,
  WTG_SCOPE (WTG_O_HELP) = WTG_C_ALL,
  WTG_SCOPE (WTG_O_WARM) = WTG_C_COLD,
  WTG_SCOPE (WTG_O_OPS_FILE) = WTG_C_OPS,
  WTG_SCOPE (WTG_O_OP_WEIGHTS) = WTG_C_OPS,
  WTG_SCOPE (WTG_O_TRACE_MARKER) = WTG_C_WORKLOADS,
  WTG_SCOPE (WTG_O_TRACE_HEAD) = WTG_C_TRACE,
  WTG_SCOPE (WTG_O_TRACE_MAX_KB) = WTG_C_TRACE,
};
_Static_assert (WTG_W_COUNT <= sizeof ((struct wtg_options *) 0)->op_weights
                / sizeof (uint32_t), "op_weights holds every op kind");

static void
wtg_usage (FILE *out)
{
  fprintf (out,
"Usage: wtrack-guest WORKLOAD [OPTION]... DIR\n"
"       wtrack-guest manifest [OPTION]... FILE...\n"
"       wtrack-guest cold --warm DEV --channel DEV MOUNT\n"
"       wtrack-guest result --channel DEV --status N [--error TEXT]\n"
"       wtrack-guest mark --channel DEV LABEL...\n"
"       wtrack-guest text --channel DEV TEXT...\n"
"       wtrack-guest trace --channel DEV [--trace-head FILE] [--trace-max-kb N]\n"
"                          TRACEFS DIR\n"
"       wtrack-guest check-args WORKLOAD [OPTION]...\n"
"\n"
"Run a workload in DIR that knows what its files must contain, and report on\n"
"the wtrack channel: HELLO, MARKs, the manifest (per-sector hashes, extents,\n"
"op table) and a RESULT. Any failure still sends a RESULT with the error.\n"
"\n"
"Workloads (files DIR/f1, DIR/f2, ...):\n"
"  linus2006   Linus's Dec 2006 reproducer: one file written through one\n"
"              MAP_SHARED mapping in chunks in random order, each filled with\n"
"              its number; munmap, fadvise(DONTNEED), remap and check\n"
"  torrent     rtorrent's pattern: pieces in random order in 16 KiB blocks\n"
"              through an LRU of 64-page mmap windows, msync(MS_ASYNC) on\n"
"              eviction, ~5%% of pieces rewritten, several threads\n"
"  pwrite      fill sequentially, then random pwrite of 512 B..64 KiB (a\n"
"              quarter unaligned) with periodic fsync of every file\n"
"  ops         a seeded list of ops (doc/ops.md) over small files, each done\n"
"              as the kernel sees it: pwrite, pwritev, write, O_DIRECT dwrite\n"
"              (-s: at the file position), mwrite through a kept MAP_SHARED\n"
"              mapping, msync, munmap, truncate, falloc, fpunch, fzero,\n"
"              fcollapse, finsert, copy_range, reflink, dedupe, fsync,\n"
"              fdatasync, sync_range, syncfs, fadvise, drop_caches; each op\n"
"              is a MARK \"op N LINE\"; a\n"
"              kernel surprise is a MARK \"surprise op N: ...\", counted in\n"
"              RESULT surprises=\n"
"  manifest    only the manifest of existing FILEs (hashes read from them)\n"
"  cold        after a reboot: every file the final manifest on the warm\n"
"              channel DEV lists, read back under MOUNT (size, per-sector\n"
"              hashes, FIEMAP extents), sent as a manifest flagged cold\n"
"\n"
"Common options:\n"
"  --channel DEV          the channel block device (without it and without\n"
"                         --channel-file, messages go nowhere)\n"
"  --channel-file F       a regular file as the channel (created if missing)\n"
"  --channel-timeout SEC  the longest one channel write may take (default 60);\n"
"                         after it the channel is given up, said on stderr\n"
"  --seed N               seed of every byte and choice (default 1)\n"
"  --checkpoint           after each fsync of every file, MARK \"checkpoint K\"\n"
"                         and a manifest with checkpoint K (pwrite)\n"
"  --fs-root PATH         strip PATH from manifest paths (default: the mount\n"
"                         point of DIR, from /proc/self/mountinfo)\n"
"  --manifest-out FILE    also write the final manifest to FILE\n"
"  --size SIZE            bytes per file, K/M/G suffixes (linus2006 100M,\n"
"                         torrent 16M, pwrite 8M; ops 256K, the size limit,\n"
"                         a page multiple)\n"
"  --verbose              print every MARK on stderr\n"
"  --trace-marker FILE    also write every MARK to FILE (tracefs's trace_marker:\n"
"                         wtrack-run --trace)\n"
"  --help                 this text\n"
"linus2006:\n"
"  --chunk SIZE           bytes per chunk (default 1460, a TCP payload)\n"
"  --passes N             passes over all chunks (default 1); pass P stores\n"
"                         chunk number + P * chunk count\n"
"torrent:\n"
"  --files N              files (default 4)\n"
"  --piece SIZE           piece size (default 256K)\n"
"  --windows N            mmap windows kept mapped per thread (default 8)\n"
"  --threads N            writer threads, disjoint pieces (default 2)\n"
"pwrite:\n"
"  --files N              files (default 2)\n"
"  --ops N                random pwrites after the fill (default 1000)\n"
"  --fsync-every N        fsync every file after each N ops (default 100, 0: never)\n"
"  --fill-sync-every N    syncfs after each N blocks (64 KiB) of a file's fill,\n"
"                         so the disk's metadata holds the files as they grow\n"
"                         (default 0: never)\n"
"ops:\n"
"  --files N              files (default 2), empty at the start\n"
"  --ops N                ops to generate (default 400)\n"
"  --op-weights N=W,...   weight of each op kind, of mwrite_eof and dwrite_seq\n"
"                         (doc/ops.md;\n"
"                         ':' may separate too; all=W sets every one);\n"
"                         unknown names and all zero are refused\n"
"  --ops-file FILE        run the ops of FILE (ops.txt syntax) instead\n"
"cold:\n"
"  --warm DEV             the run's channel (read only), holding the manifest\n"
"trace (after a workload, wtrack-run --trace): the kernel's trace text of\n"
"TRACEFS/trace, after a header (init's lines of FILE, the lost events of\n"
"TRACEFS/per_cpu, each file under DIR with its inode), in TRACE messages:\n"
"  --trace-head FILE      init's header lines (\"# disk\", \"# enabled\", ...)\n"
"  --trace-max-kb N       send at most N KiB of trace text, cut at a line's\n"
"                         end; the rest is counted in \"# truncated\" (default\n"
"                         16384, 1..1048576)\n"
"result:\n"
"  --status N             the status to report (default 1)\n"
"  --error TEXT           the error to report\n"
"\n"
"result, mark and text continue the numbering of the messages already in the\n"
"channel. check-args only parses a workload's options (nothing runs, no\n"
"channel; an --ops-file is read and parsed): exit 0 when it takes them, 2\n"
"with the reason on stderr.\n"
"Exit status: 0 done (a read-back mismatch is data, not a failure: see\n"
"RESULT readback=), 1 the workload failed, 2 bad usage, 3 the channel\n"
"failed (the host misses part of the report).\n");
}

static const struct wtg_command *
wtg_find_command (const char *name)
{
  for (const struct wtg_command *c = wtg_commands; c->name; c++)
    if (strcmp (c->name, name) == 0)
      return c;
  return NULL;
}

static int
wtg_parse_u64 (const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  if (*s < '0' || *s > '9')
    return -1;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

static int
wtg_parse_range (const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
  return wtg_parse_u64 (s, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

/* Defaults of each workload. */
static void
wtg_defaults (struct wtg_options *o, unsigned cmd)
{
  o->seed = 1;
  o->channel_timeout = 60;
  o->size = cmd == WTG_C_LINUS ? 100u << 20 : cmd == WTG_C_TORRENT ? 16u << 20
    : cmd == WTG_C_OPS ? 256u << 10 : 8u << 20;
  o->chunk = 1460;
  o->passes = 1;
  o->files = cmd == WTG_C_TORRENT ? 4 : 2;
  o->piece = 256u << 10;
  o->windows = 8;
  o->threads = 2;
  o->ops = cmd == WTG_C_OPS ? 400 : 1000;
  wtg_op_default_weights (o->op_weights);
  o->fsync_every = 100;
  o->status = 1;
  o->trace_max_kb = 16384;
}

/* Apply one option; returns NULL or what is wrong with its value. */
static const char *
wtg_apply_option (struct wtg_options *o, int opt, const char *arg)
{
  uint64_t v;
  switch (opt) {
  case WTG_O_SEED: return wtg_parse_u64 (arg, &o->seed) ? "not a number" : NULL;
  case WTG_O_CHANNEL: o->channel = arg; return NULL;
  case WTG_O_CHANNEL_FILE: o->channel_file = arg; return NULL;
  case WTG_O_CHANNEL_TIMEOUT:
    if (wtg_parse_range (arg, 1, 86400, &v)) return "not a number of seconds in 1..86400";
    o->channel_timeout = (unsigned) v; return NULL;
  case WTG_O_CHECKPOINT: o->checkpoint = true; return NULL;
  case WTG_O_FS_ROOT: o->fs_root = arg; return arg[0] == '/' ? NULL : "not an absolute path";
  case WTG_O_MANIFEST_OUT: o->manifest_out = arg; return NULL;
  case WTG_O_SIZE: return wtg_parse_size (arg, &o->size) ? "not a size (like 4096, 64K, 16M, 1G)" : NULL;
  case WTG_O_CHUNK:
    return wtg_parse_size (arg, &o->chunk) || o->chunk == 0 ? "not a size of at least 1 byte" : NULL;
  case WTG_O_PASSES:
    if (wtg_parse_range (arg, 1, 1000000, &v)) return "not a number in 1..1000000";
    o->passes = (uint32_t) v; return NULL;
  case WTG_O_FILES:
    if (wtg_parse_range (arg, 1, 100000, &v)) return "not a number in 1..100000";
    o->files = (uint32_t) v; return NULL;
  case WTG_O_PIECE:
    return wtg_parse_size (arg, &o->piece) || o->piece == 0 ? "not a size of at least 1 byte" : NULL;
  case WTG_O_WINDOWS:
    if (wtg_parse_range (arg, 1, 65536, &v)) return "not a number in 1..65536";
    o->windows = (uint32_t) v; return NULL;
  case WTG_O_THREADS:
    if (wtg_parse_range (arg, 1, 256, &v)) return "not a number in 1..256";
    o->threads = (uint32_t) v; return NULL;
  case WTG_O_OPS:
    return wtg_parse_u64 (arg, &o->ops) || o->ops > 100000000 ? "not a number in 0..100000000"
      : NULL;
  case WTG_O_FSYNC_EVERY:
    if (wtg_parse_range (arg, 0, UINT32_MAX, &v)) return "not a number";
    o->fsync_every = (uint32_t) v; return NULL;
  case WTG_O_FILL_SYNC_EVERY:
    if (wtg_parse_range (arg, 0, UINT32_MAX, &v)) return "not a number";
    o->fill_sync_every = (uint32_t) v; return NULL;
  case WTG_O_STATUS:
    if (wtg_parse_range (arg, 0, 255, &v)) return "not a number in 0..255";
    o->status = (int) v; return NULL;
  case WTG_O_ERROR: o->error = arg; return NULL;
  case WTG_O_VERBOSE: o->verbose = true; return NULL;
  case WTG_O_WARM: o->warm = arg; return NULL;
  case WTG_O_OPS_FILE: o->ops_file = arg; return NULL;
  case WTG_O_TRACE_MARKER: o->trace_marker = arg; return NULL;
  case WTG_O_TRACE_HEAD: o->trace_head = arg; return NULL;
  case WTG_O_TRACE_MAX_KB:
    if (wtg_parse_range (arg, 1, 1u << 20, &v)) return "not a number of KiB in 1..1048576";
    o->trace_max_kb = v; return NULL;
  case WTG_O_OP_WEIGHTS: {
    static char why[300];
    return wtg_op_parse_weights (arg, o->op_weights, why, sizeof why) ? why : NULL;
  }
  default: return "unknown";
  }
}

/* Parse everything, keeping the first problem in usage_err rather than
 * stopping: the channel named later on the line must still get a RESULT. */
static bool
wtg_parse_options (int argc, char **argv, struct wtg_options *o, unsigned cmd,
                   char *usage_err, size_t errlen)
{
  bool help = false;
  opterr = 0;
  optind = 1;
  int opt, longindex;
  while ((opt = getopt_long (argc, argv, "hv", wtg_long_options, &longindex)) != -1) {
    const char *name = NULL;
    for (const struct option *lo = wtg_long_options; lo->name; lo++)
      if (lo->val == opt)
        name = lo->name;
    if (opt == 'h')
      opt = WTG_O_HELP, name = "help";
    if (opt == 'v')
      opt = WTG_O_VERBOSE, name = "verbose";
    if (opt == '?' || opt == ':' || !name) {
      if (!usage_err[0])
        snprintf (usage_err, errlen, "bad option: %s (see --help)", argv[optind - 1]);
      continue;
    }
    if (opt == WTG_O_HELP) {
      help = true;
      continue;
    }
    const char *why = wtg_apply_option (o, opt, optarg);
    if (why && !usage_err[0])
      snprintf (usage_err, errlen, "option --%s %s: %s", name, optarg ? optarg : "", why);
    if (!(wtg_option_scope[opt - WTG_O_SEED] & cmd) && !usage_err[0])
      snprintf (usage_err, errlen, "option --%s does not apply to %s", name, o->command);
  }
  o->operands = argv + optind;
  o->noperands = argc - optind;
  return help;
}

/* Operand counts and the options some commands need. */
static void
wtg_check_usage (struct wtg_options *o, unsigned cmd, char *usage_err, size_t errlen)
{
  if (usage_err[0])
    return;
  if ((cmd & WTG_C_WORKLOADS) && o->noperands != 1)
    snprintf (usage_err, errlen, "%s: expected one DIR, got %d operands", o->command,
              o->noperands);
  else if ((cmd & (WTG_C_MANIFEST | WTG_C_MARK | WTG_C_TEXT)) && o->noperands < 1)
    snprintf (usage_err, errlen, "%s: nothing given", o->command);
  else if (cmd == WTG_C_COLD && o->noperands != 1)
    snprintf (usage_err, errlen, "cold: expected one MOUNT, got %d operands", o->noperands);
  else if (cmd == WTG_C_COLD && !o->warm)
    snprintf (usage_err, errlen, "cold: needs --warm DEV (the run's channel)");
  else if (cmd == WTG_C_TRACE && o->noperands != 2)
    snprintf (usage_err, errlen, "trace: expected TRACEFS and DIR, got %d operands", o->noperands);
  else if (cmd == WTG_C_TRACE && !o->channel && !o->channel_file)
    snprintf (usage_err, errlen, "trace: needs --channel or --channel-file");
  else if (cmd == WTG_C_RESULT && o->noperands)
    snprintf (usage_err, errlen, "result: unexpected operand: %s", o->operands[0]);
  else if ((cmd & WTG_C_MESSAGES) && !o->channel && !o->channel_file)
    snprintf (usage_err, errlen, "%s: needs --channel or --channel-file", o->command);
  else if (o->channel && o->channel_file)
    snprintf (usage_err, errlen, "--channel and --channel-file: give one");
  if (cmd & WTG_C_WORKLOADS)
    o->dir = o->operands[0];
  /* --fs-root /mnt/ and /mnt are the same root. */
  if (o->fs_root) {
    size_t n = strlen (o->fs_root);
    while (n > 1 && o->fs_root[n - 1] == '/')
      ((char *) o->fs_root)[--n] = '\0';
  }
}

static void
wtg_join_args (struct wtg_options *o, int argc, char **argv)
{
  size_t used = 0;
  o->args[0] = '\0';
  for (int i = 0; i < argc && used + 1 < sizeof o->args; i++)
    used += (size_t) snprintf (o->args + used, sizeof o->args - used, "%s%s",
                               i ? " " : "", argv[i]);
}

/* One line of a key=value payload: newlines in the value would start a
 * line of their own, so they become spaces. */
static void
wtg_kv (char *buf, size_t cap, const char *key, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
wtg_kv (char *buf, size_t cap, const char *key, const char *fmt, ...)
{
  size_t used = strlen (buf);
  if (used + 1 >= cap)
    return;
  int n = snprintf (buf + used, cap - used, "%s=", key);
  if (n < 0 || used + (size_t) n + 1 >= cap)
    return;
  used += (size_t) n;
  char *value = buf + used;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (value, cap - used, fmt, ap);
  va_end (ap);
  for (char *p = value; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  used = strlen (buf);
  if (used + 1 < cap) {
    buf[used] = '\n';
    buf[used + 1] = '\0';
  }
}

static void
wtg_proc_value (const char *path, char *out, size_t cap)
{
  FILE *fp = fopen (path, "re");
  out[0] = '\0';
  if (!fp)
    return;
  if (fgets (out, (int) cap, fp))
    out[strcspn (out, "\n")] = '\0';
  fclose (fp);
}

static void
wtg_send_hello (struct wtg_run *run)
{
  char p[8192] = "", v[64];
  struct utsname u;
  if (uname (&u) < 0)
    memset (&u, 0, sizeof u);
  wtg_kv (p, sizeof p, "version", "%s", WTG_VERSION);
  wtg_kv (p, sizeof p, "kernel", "%s", u.release);
  wtg_kv (p, sizeof p, "kernel_version", "%s", u.version);
  wtg_kv (p, sizeof p, "machine", "%s", u.machine);
  wtg_kv (p, sizeof p, "arch", "%s", WTG_ARCH);
  wtg_kv (p, sizeof p, "workload", "%s", run->opt->command);
  wtg_kv (p, sizeof p, "args", "%s", run->opt->args);
  wtg_kv (p, sizeof p, "seed", "%" PRIu64, run->opt->seed);
  wtg_kv (p, sizeof p, "fs", "%s", run->fs_type[0] ? run->fs_type : "unknown");
  wtg_kv (p, sizeof p, "mount_point", "%s", run->mount_point);
  wtg_kv (p, sizeof p, "mount_opts", "%s", run->mount_opts);
  wtg_kv (p, sizeof p, "dir", "%s", run->dir_abs);
  wtg_kv (p, sizeof p, "cpus", "%ld", sysconf (_SC_NPROCESSORS_ONLN));
  wtg_kv (p, sizeof p, "page_size", "%ld", sysconf (_SC_PAGESIZE));
  /* the file system's block size (ext4's and xfs's block, btrfs's
   * sector): below the page size, one page holds several blocks */
  struct statvfs vfs;
  if (run->dir_abs[0] && statvfs (run->dir_abs, &vfs) == 0 && vfs.f_bsize)
    wtg_kv (p, sizeof p, "block_size", "%lu", (unsigned long) vfs.f_bsize);
  static const char *const sysctls[] = {
    "vm.dirty_ratio", "vm.dirty_background_ratio", "vm.dirty_bytes",
    "vm.dirty_background_bytes", "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
  };
  for (size_t i = 0; i < sizeof sysctls / sizeof sysctls[0]; i++) {
    char path[128];
    snprintf (path, sizeof path, "/proc/sys/%s", sysctls[i]);
    for (char *q = path + strlen ("/proc/sys/"); *q; q++)
      if (*q == '.')
        *q = '/';
    wtg_proc_value (path, v, sizeof v);
    if (v[0])
      wtg_kv (p, sizeof p, sysctls[i], "%s", v);
  }
  wtg_channel_send (run->chan, WTCH_HELLO, p, (uint32_t) strlen (p));
}

static int
wtg_exit_status (struct wtg_run *run, bool usage)
{
  if (run->error[0])
    return usage ? WTG_EXIT_USAGE : WTG_EXIT_FAILED;
  return wtg_channel_broken (run->chan) ? WTG_EXIT_CHANNEL : WTG_EXIT_OK;
}

static void
wtg_send_result (struct wtg_run *run, int status)
{
  static char p[20480];
  p[0] = '\0';
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < run->model.nfiles; i++)
    bytes += run->model.files[i].size;
  wtg_kv (p, sizeof p, "status", "%d", status);
  wtg_kv (p, sizeof p, "error", "%s", run->error);
  wtg_kv (p, sizeof p, "readback", "%s", run->readback ? run->readback : "none");
  wtg_kv (p, sizeof p, "readback_bad_sectors", "%" PRIu64, run->readback_bad_sectors);
  wtg_kv (p, sizeof p, "io_errors", "%" PRIu64, run->io_errors);
  wtg_kv (p, sizeof p, "files", "%" PRIu32, run->model.nfiles);
  wtg_kv (p, sizeof p, "bytes", "%" PRIu64, bytes);
  wtg_kv (p, sizeof p, "ops", "%" PRIu32, run->model.nops);
  wtg_kv (p, sizeof p, "stored_bytes", "%" PRIu64, run->model.bytes_stored);
  wtg_kv (p, sizeof p, "checkpoints", "%" PRIu32, run->checkpoints);
  wtg_kv (p, sizeof p, "elapsed_ns", "%" PRIu64, wtg_now_ns () - run->t0_ns);
  size_t used = strlen (p);
  snprintf (p + used, sizeof p - used, "%s", run->extra);
  wtg_channel_send (run->chan, WTCH_RESULT, p, (uint32_t) strlen (p));
  /* The console's summary names why the host will miss messages, since
   * the RESULT that would say so may not have reached it. */
  const char *error = run->error;
  char channel_error[400] = "";
  if (!error[0] && wtg_channel_broken (run->chan)) {
    snprintf (channel_error, sizeof channel_error, "channel: %s",
              wtg_channel_why (run->chan));
    error = channel_error;
  }
  printf ("wtrack-guest: %s: status=%d readback=%s readback_bad_sectors=%" PRIu64
          " files=%" PRIu32 " bytes=%" PRIu64 " ops=%" PRIu32 " elapsed=%.1fs%s%s\n",
          run->opt->command, status, run->readback ? run->readback : "none",
          run->readback_bad_sectors, run->model.nfiles, bytes, run->model.nops,
          (double) (wtg_now_ns () - run->t0_ns) / 1e9, error[0] ? " error=" : "",
          error);
  fflush (stdout);
}

/* Where the workload's files go: DIR resolved, and the mount it is on. */
static int
wtg_prepare_dir (struct wtg_run *run)
{
  if (!realpath (run->opt->dir, run->dir_abs))
    return wtg_fail (run, "realpath: %s: %m", run->opt->dir);
  return wtg_locate (run, run->dir_abs);
}

static int
wtg_run_workload (struct wtg_run *run, const struct wtg_command *cmd,
                  const char *usage_err)
{
  bool usage = usage_err[0] != '\0';
  int prepared = 0;
  if (usage)
    ;                           /* DIR may be missing: nothing to look at */
  else if (cmd->bit & WTG_C_WORKLOADS)
    prepared = wtg_prepare_dir (run);
  else if (run->opt->noperands && realpath (run->opt->operands[0], run->dir_abs))
    wtg_locate (run, run->dir_abs);     /* for HELLO only; files are located again */
  wtg_send_hello (run);
  if (usage)
    wtg_fail (run, "%s", usage_err);
  else if (prepared == 0) {
    /* cold reports each unreadable sector itself, as a finding */
    bool cold = cmd->bit == WTG_C_COLD;
    if (!cold)
      wtg_kmsg_start (run);
    wtg_trace_marker_open (run);
    wtg_mark (run, "start");
    /* cold sends its own manifest: there is nothing to fsync or model. */
    if (cmd->run (run) == 0 && !cold)
      wtg_finish (run);
    if (!cold)
      wtg_kmsg_finish (run);
  }
  int status = wtg_exit_status (run, usage);
  wtg_send_result (run, status == WTG_EXIT_CHANNEL ? WTG_EXIT_OK : status);
  return wtg_exit_status (run, usage);
}

static void
wtg_join_operands (const struct wtg_options *o, char *out, size_t cap)
{
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < o->noperands && used + 1 < cap; i++)
    used += (size_t) snprintf (out + used, cap - used, "%s%s", i ? " " : "", o->operands[i]);
  if (used >= cap)
    used = cap - 1;
  out[used] = '\0';
}

/* result, mark, text: one message after those already in the channel. */
static int
wtg_run_message (struct wtg_run *run, const struct wtg_command *cmd)
{
  char p[4096] = "";
  if (cmd->bit == WTG_C_RESULT) {
    wtg_kv (p, sizeof p, "status", "%d", run->opt->status);
    wtg_kv (p, sizeof p, "error", "%s", run->opt->error ? run->opt->error : "");
    wtg_kv (p, sizeof p, "source", "%s", "wtrack-guest result");
  } else
    wtg_join_operands (run->opt, p, sizeof p);
  uint16_t type = cmd->bit == WTG_C_RESULT ? WTCH_RESULT : cmd->bit == WTG_C_MARK ? WTCH_MARK
    : WTCH_TEXT;
  if (wtg_channel_send (run->chan, type, p, (uint32_t) strlen (p)) < 0)
    return WTG_EXIT_CHANNEL;
  return WTG_EXIT_OK;
}

static struct wtg_channel *
wtg_open_channel (const struct wtg_options *o)
{
  char err[512];
  const char *path = o->channel ? o->channel : o->channel_file;
  struct wtg_channel *ch = wtg_channel_open (path, o->channel_file != NULL,
                                             o->channel_timeout, err, sizeof err);
  if (!ch)
    fprintf (stderr, "wtrack-guest: %s\n", err);
  return ch;
}

/* A bad line of --ops-file is bad usage on the host, not a failed run
 * after a boot: the file is parsed here as the guest will parse it. */
static void
wtg_check_ops_file (const struct wtg_options *opt, char *usage_err, size_t len)
{
  struct wtg_op_limits lim = { .files = opt->files, .size_limit = opt->size };
  struct wtg_op *ops = NULL;
  uint64_t nops = 0;
  char err[400];
  if (wtg_ops_load_file (opt->ops_file, &lim, &ops, &nops, err, sizeof err) < 0)
    snprintf (usage_err, len, "--ops-file %s: %s", opt->ops_file, err);
  free (ops);
}

/* check-args WORKLOAD [OPTION]...: whether the workload takes these
 * options, as it would parse them in the guest; nothing runs and no
 * channel is opened. wtrack-run --dry-run asks this on the host (the
 * static amd64 build runs there), so a campaign's bad option is refused
 * before any cell boots. */
static int
wtg_check_args (int argc, char **argv)
{
  static struct wtg_options opt;
  char usage_err[512] = "";
  if (argc < 1) {
    fprintf (stderr, "wtrack-guest: check-args: expected WORKLOAD [OPTION]...\n");
    return WTG_EXIT_USAGE;
  }
  const struct wtg_command *cmd = wtg_find_command (argv[0]);
  if (!cmd || !(cmd->bit & WTG_C_WORKLOADS)) {
    fprintf (stderr, "wtrack-guest: check-args: unknown workload: %s\n", argv[0]);
    return WTG_EXIT_USAGE;
  }
  opt.command = argv[0];
  wtg_defaults (&opt, cmd->bit);
  wtg_parse_options (argc, argv, &opt, cmd->bit, usage_err, sizeof usage_err);
  if (!usage_err[0] && opt.noperands)
    snprintf (usage_err, sizeof usage_err, "unexpected operand: %s", opt.operands[0]);
  if (!usage_err[0] && opt.ops_file)
    wtg_check_ops_file (&opt, usage_err, sizeof usage_err);
  if (usage_err[0]) {
    fprintf (stderr, "wtrack-guest: %s: %s\n", argv[0], usage_err);
    return WTG_EXIT_USAGE;
  }
  return WTG_EXIT_OK;
}

int
main (int argc, char **argv)
{
  if (argc < 2) {
    wtg_usage (stderr);
    return WTG_EXIT_USAGE;
  }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0) {
    wtg_usage (stdout);
    return WTG_EXIT_OK;
  }
  if (strcmp (argv[1], "check-args") == 0)
    return wtg_check_args (argc - 2, argv + 2);
  if (strcmp (argv[1], "--version") == 0) {
    printf ("wtrack-guest %s\n", WTG_VERSION);
    return WTG_EXIT_OK;
  }
  static struct wtg_options opt;
  static struct wtg_run run;
  char usage_err[512] = "";
  run.t0_ns = wtg_now_ns ();
  run.opt = &opt;
  run.trace_marker_fd = -1;
  pthread_mutex_init (&run.error_lock, NULL);
  wtg_model_init (&run.model);
  wtg_guard_install ();
  opt.command = argv[1];
  const struct wtg_command *cmd = wtg_find_command (argv[1]);
  if (!cmd)
    snprintf (usage_err, sizeof usage_err, "unknown workload: %s (see --help)", argv[1]);
  unsigned bit = cmd ? cmd->bit : WTG_C_ALL;
  wtg_defaults (&opt, bit);
  wtg_join_args (&opt, argc, argv);
  if (wtg_parse_options (argc - 1, argv + 1, &opt, bit, usage_err, sizeof usage_err)) {
    wtg_usage (stdout);
    return WTG_EXIT_OK;
  }
  wtg_check_usage (&opt, bit, usage_err, sizeof usage_err);
  if (!(run.chan = wtg_open_channel (&opt)))
    return WTG_EXIT_CHANNEL;
  int status;
  if (cmd && (bit & WTG_C_MESSAGES) && usage_err[0]) {
    fprintf (stderr, "wtrack-guest: %s\n", usage_err);
    status = WTG_EXIT_USAGE;
  } else if (cmd && (bit & WTG_C_MESSAGES))
    status = wtg_run_message (&run, cmd);
  else if (cmd && bit == WTG_C_TRACE && usage_err[0]) {
    fprintf (stderr, "wtrack-guest: %s\n", usage_err);
    status = WTG_EXIT_USAGE;
  } else if (cmd && bit == WTG_C_TRACE)
    status = wtg_trace_send (&run);
  else {
    static const struct wtg_command unknown = { "unknown", WTG_C_ALL, NULL };
    status = wtg_run_workload (&run, cmd ? cmd : &unknown, usage_err);
  }
  wtg_channel_close (run.chan);
  wtg_model_free (&run.model);
  return status;
}
