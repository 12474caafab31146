/* mkseeds: the fuzzers' seed corpora, made with the project's own writers
 * (common/wtlog.c, channel.c, manifest.c), from one small synthetic run.
 *
 *   mkseeds DIR
 *
 * The run: a 64 KiB disk; four files (8 KiB in two extents, 1000 bytes,
 * 1 KiB in an unwritten extent, 100 bytes unmappable); a log with every
 * record type (WRITE, FUA, a FAILED write, ZERO, TRIM, FLUSH, CHANNEL,
 * OPEN, CLOSE); a channel with HELLO, MARKs, a checkpoint manifest and the
 * final one split over several MANIFEST messages, RESULT and TEXT; a disk
 * image where one file sector was overwritten later and one never written,
 * so that the check finds damage of more than one class.
 *
 * Writes DIR/wtlog/{run-data,run-hashes,run-unclosed}.wtlog,
 * DIR/channel/run.bin, DIR/manifest/{stream,final}.bin and
 * DIR/check/{run-data,run-hashes}.bin (fuzz-check's packed form: log,
 * WTFZ_SEP, channel, WTFZ_SEP, disk) and DIR/campaign/NAME.campaign (campaign
 * files, as the README and tests write them), DIR/collect/NAME.bin (a
 * campaign folder's plan.tsv, kernels.tsv and cell.ini, separated by
 * WTFZ_SEP) and DIR/cold/NAME.bin (the cold pass's cold.bin for the run
 * of DIR/check/run-data.bin). The dm-log-writes seed is exported
 * from run-data.wtlog by `wtrack export` (tests/fuzz/fuzz.mk). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "fuzz-util.h"
#include "manifest.h"
#include "sector-hash.h"
#include "wtlog.h"

#define SECTOR WT_SECTOR_SIZE
#define DISK_SIZE (64u << 10)
#define CHANNEL_SIZE (32u << 10)
#define CHUNK 700               /* manifest bytes per MANIFEST message */
#define MAX_MSGS 32

static const char *dir;

static void
die (const char *what, const char *object)
{
  fprintf (stderr, "mkseeds: %s: %s: %s\n", what, object, strerror (errno));
  exit (1);
}

static unsigned char disk[DISK_SIZE];   /* the disk as the log leaves it */

struct channel {
  unsigned char buf[CHANNEL_SIZE];
  uint64_t len;
  uint64_t nmsgs;
  uint64_t at[MAX_MSGS], size[MAX_MSGS];
};

static void
chan_send_flags (struct channel *ch, uint16_t type, uint16_t flags, uint64_t guest_ns,
                 const void *payload, uint32_t len)
{
  if (ch->nmsgs == MAX_MSGS || ch->len + wtch_encoded_size (len) > CHANNEL_SIZE - SECTOR) {
    fprintf (stderr, "mkseeds: the channel is full\n");
    exit (1);
  }
  ch->at[ch->nmsgs] = ch->len;
  ch->size[ch->nmsgs] = wtch_encode (ch->buf + ch->len, type, flags, ch->nmsgs + 1, guest_ns,
                                     payload, len);
  ch->len += ch->size[ch->nmsgs++];
}

static void
chan_send (struct channel *ch, uint16_t type, uint64_t guest_ns, const void *payload,
           uint32_t len)
{
  chan_send_flags (ch, type, 0, guest_ns, payload, len);
}

/* File content: distinct bytes per file and offset. */
static void
file_bytes (uint32_t id, uint64_t off, unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char) ((off + i) * 7 + id * 31 + ((off + i) >> 9));
}

struct files {
  struct wtmf_file f[4];
  struct wtmf_extent ext[5];
  uint64_t hashes[32];
  uint32_t ops[32];
};

/* The expected hashes of a file of size bytes whose content is file_bytes
 * (zero for an unwritten file). */
static void
expect (struct wtmf_file *f, bool zero, uint32_t op)
{
  unsigned char s[SECTOR];
  for (uint64_t i = 0; i < f->nsectors; i++) {
    uint64_t n = f->size - i * SECTOR < SECTOR ? f->size - i * SECTOR : SECTOR;
    memset (s, 0, sizeof s);
    if (!zero)
      file_bytes (f->id, i * SECTOR, s, n);
    f->hashes[i] = wt_sector_hash (s);
    f->ops[i] = op;
  }
}

static void
make_files (struct files *fs)
{
  static char p1[] = "/data/f1", p2[] = "/data/f2", p3[] = "/data/f3", p4[] = "/data/f4";
  fs->ext[0] = (struct wtmf_extent) { 0, 8192, 4096, 0 };
  fs->ext[1] = (struct wtmf_extent) { 4096, 24576, 4096, 0 };
  fs->ext[2] = (struct wtmf_extent) { 0, 40960, 1024, 0 };
  fs->ext[3] = (struct wtmf_extent) { 0, 45056, 1024, WTMF_EXT_UNWRITTEN };
  fs->ext[4] = (struct wtmf_extent) { 0, 0, 100, WTMF_EXT_UNMAPPABLE };
  char *paths[] = { p1, p2, p3, p4 };
  uint64_t sizes[] = { 8192, 1000, 1024, 100 };
  uint32_t nexts[] = { 2, 1, 1, 1 }, e = 0, h = 0;
  for (uint32_t i = 0; i < 4; i++) {
    struct wtmf_file *f = &fs->f[i];
    *f = (struct wtmf_file) {
      .id = i + 1, .path = paths[i], .inode = 12 + i, .size = sizes[i],
      .nextents = nexts[i], .extents = &fs->ext[e],
      .nsectors = wtmf_sectors_of (sizes[i]), .hashes = &fs->hashes[h], .ops = &fs->ops[h],
    };
    e += nexts[i];
    h += f->nsectors;
    expect (f, i == 2, i == 2 ? 0 : i + 1);
  }
}

static void
manifest (struct wtmf_buf *b, const struct files *fs, uint32_t nfiles, uint32_t checkpoint)
{
  static const struct wtmf_op ops[] = {
    { 1000000, 1, WTMF_OP_PWRITE, 0, 8192 },
    { 2000000, 2, WTMF_OP_PWRITE, 0, 1000 },
    { 3000000, 3, WTMF_OP_FALLOCATE, 0, 1024 },
    { 3500000, 4, WTMF_OP_PWRITE, 0, 100 },
    { 4000000, 1, WTMF_OP_FSYNC, 0, 0 },
  };
  uint32_t nops = checkpoint ? 1 : sizeof ops / sizeof ops[0];
  wtmf_buf_header (b, nfiles, nops, checkpoint);
  for (uint32_t i = 0; i < nfiles; i++)
    wtmf_buf_file (b, &fs->f[i]);
  for (uint32_t i = 0; i < nops; i++)
    wtmf_buf_op (b, &ops[i]);
  if (wtmf_buf_finish (b) != 0)
    die ("build", "a manifest");
}

static void
write_file (const char *sub, const char *name, const void *p1, size_t n1, const void *p2,
            size_t n2, const void *p3, size_t n3)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, sub);
  if (mkdir (path, 0755) != 0 && errno != EEXIST)
    die ("mkdir", path);
  snprintf (path, sizeof path, "%s/%s/%s", dir, sub, name);
  FILE *f = fopen (path, "wb");
  if (!f || fwrite (p1, 1, n1, f) != n1
      || (p2 && (fwrite (WTFZ_SEP, 1, WTFZ_SEP_LEN, f) != WTFZ_SEP_LEN
                 || fwrite (p2, 1, n2, f) != n2))
      || (p3 && (fwrite (WTFZ_SEP, 1, WTFZ_SEP_LEN, f) != WTFZ_SEP_LEN
                 || fwrite (p3, 1, n3, f) != n3))
      || fclose (f) != 0)
    die ("write", path);
}

static void
channel (struct channel *ch, const struct files *fs, unsigned char *stream, size_t *stream_len)
{
  static const char hello[] = "kernel=synthetic\nfs=none\nworkload=mkseeds\nseed=1\n";
  static const char result[] = "status=0\nreadback=match\nreadback_bad_sectors=0\n";
  struct wtmf_buf ckpt = { 0 }, final = { 0 };
  manifest (&ckpt, fs, 1, 1);
  manifest (&final, fs, 4, 0);
  chan_send (ch, WTCH_HELLO, 500000, hello, sizeof hello - 1);
  chan_send (ch, WTCH_MARK, 900000, "phase write", 11);
  chan_send (ch, WTCH_MANIFEST, 1500000, ckpt.p, (uint32_t) ckpt.len);
  chan_send (ch, WTCH_MARK, 1600000, "checkpoint 1", 12);
  chan_send (ch, WTCH_TEXT, 1700000, "a note from the guest", 21);
  for (size_t at = 0; at < final.len; at += CHUNK)
    chan_send (ch, WTCH_MANIFEST, 4500000, final.p + at,
               (uint32_t) (final.len - at < CHUNK ? final.len - at : CHUNK));
  chan_send (ch, WTCH_RESULT, 5000000, result, sizeof result - 1);
  static const char trace[] = "# wtrack-trace 1\n# kernel synthetic\n# disk 254,0\n"
    "# enabled block:block_bio_queue\n# missing \n# lost 0=0\n# file /data/f1 12\n"
    "wtrack-guest-80 [000] ..... 5.100000: tracing_mark_write: start\n";
  chan_send_flags (ch, WTCH_TRACE, WTCH_F_TRACE_LAST, 5100000, trace, sizeof trace - 1);
  memcpy (stream, ckpt.p, ckpt.len);
  memcpy (stream + ckpt.len, final.p, final.len);
  *stream_len = ckpt.len + final.len;
  write_file ("manifest", "final.bin", final.p, final.len, NULL, 0, NULL, 0);
  wtmf_buf_free (&ckpt);
  wtmf_buf_free (&final);
}

struct logw {
  struct wtlog_writer *w;
  bool data;
  uint64_t t;
};

static void
log_rec (struct logw *l, uint16_t type, uint16_t flags, uint32_t conn, uint64_t offset,
         uint64_t length, const unsigned char *bytes)
{
  uint64_t hashes[64];
  if (bytes && length && length <= sizeof hashes / sizeof hashes[0] * SECTOR && length % SECTOR == 0)
    wt_sector_hashes (bytes, length / SECTOR, hashes);
  if (l->data && bytes && !(flags & WTLOG_F_FAILED))
    flags |= WTLOG_F_DATA;
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = conn, .t_start = l->t, .t_end = l->t + 300,
    .offset = offset, .length = length,
  };
  l->t += 100000;
  if (wtlog_writer_append (l->w, &rec, hashes, bytes) != 0)
    die ("append", "a log record");
  if (type == WTLOG_WRITE && conn == 1 && !(flags & WTLOG_F_FAILED))
    memcpy (disk + offset, bytes, length);
  if (type == WTLOG_ZERO || type == WTLOG_TRIM)
    memset (disk + offset, 0, length);
}

/* A file range as written to the disk: its bytes, zero-padded to sectors. */
static void
log_file_write (struct logw *l, uint32_t id, uint64_t off, uint64_t disk_at, uint64_t len,
                uint64_t file_size, uint16_t flags)
{
  unsigned char buf[8192] = { 0 };
  file_bytes (id, off, buf, off + len > file_size ? file_size - off : len);
  log_rec (l, WTLOG_WRITE, flags, 1, disk_at, len, buf);
}

static void
write_log (const char *path, const struct channel *ch, bool data, bool closed)
{
  char err[256];
  struct wtlog_header h;
  memset (disk, 0, sizeof disk);
  wtlog_header_init (&h, DISK_SIZE, CHANNEL_SIZE, data, "mkseeds");
  struct logw l = { wtlog_writer_open (path, &h, err, sizeof err), data, 1000000 };
  if (!l.w) {
    fprintf (stderr, "mkseeds: %s\n", err);
    exit (1);
  }
  unsigned char other[SECTOR];
  memset (other, 0xa5, sizeof other);
  log_rec (&l, WTLOG_OPEN, 0, 1, WTLOG_EXPORT_DISK, DISK_SIZE, NULL);
  log_rec (&l, WTLOG_OPEN, 0, 2, WTLOG_EXPORT_CHANNEL, CHANNEL_SIZE, NULL);
  for (uint64_t m = 0; m < 2; m++)       /* HELLO, the first MARK */
    log_rec (&l, WTLOG_CHANNEL, 0, 2, ch->at[m], ch->size[m], ch->buf + ch->at[m]);
  log_file_write (&l, 1, 0, 8192, 4096, 8192, 0);
  log_file_write (&l, 1, 4096, 24576, 3584, 8192, 0);   /* its last sector never */
  log_rec (&l, WTLOG_WRITE, WTLOG_F_FAILED, 1, 16384, SECTOR, other);
  log_rec (&l, WTLOG_FLUSH, 0, 1, 0, 0, NULL);
  for (uint64_t m = 2; m < 5; m++)       /* checkpoint manifest, MARK, TEXT */
    log_rec (&l, WTLOG_CHANNEL, 0, 2, ch->at[m], ch->size[m], ch->buf + ch->at[m]);
  log_file_write (&l, 2, 0, 40960, 1024, 1000, WTLOG_F_FUA);
  log_file_write (&l, 4, 0, 49152, SECTOR, 100, 0);     /* under no extent */
  log_rec (&l, WTLOG_WRITE, 0, 1, 8192 + 2 * SECTOR, SECTOR, other);  /* overwrites */
  log_rec (&l, WTLOG_ZERO, 0, 1, 53248, 4096, NULL);
  log_rec (&l, WTLOG_TRIM, 0, 1, 57344, 4096, NULL);
  log_rec (&l, WTLOG_FLUSH, 0, 1, 0, 0, NULL);
  for (uint64_t m = 5; m < ch->nmsgs; m++)
    log_rec (&l, WTLOG_CHANNEL, 0, 2, ch->at[m], ch->size[m], ch->buf + ch->at[m]);
  if (closed) {
    log_rec (&l, WTLOG_CLOSE, 0, 2, WTLOG_EXPORT_CHANNEL, CHANNEL_SIZE, NULL);
    log_rec (&l, WTLOG_CLOSE, 0, 1, WTLOG_EXPORT_DISK, DISK_SIZE, NULL);
    log_rec (&l, WTLOG_CLOSE, 0, 0, 0, 0, NULL);
  }
  if (wtlog_writer_close (l.w) != 0)
    die ("close", path);
  struct stat st;
  if (!closed && (stat (path, &st) != 0 || truncate (path, st.st_size + 4096) != 0))
    die ("extend", path);     /* space allocated ahead by a killed writer */
}

/* A data=on log whose large writes kept one copy: IN_IMAGE records (no
 * bytes, hashes kept), the SAVED records of what later changes overwrote,
 * a small write, a zero. */
static void
write_in_image_log (const char *path)
{
  char err[256];
  struct wtlog_header h;
  unsigned char bytes[4096];
  uint64_t hashes[8];
  wtlog_header_init (&h, DISK_SIZE, 0, true, "mkseeds");
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  if (!w)
    die ("open", path);
  struct {
    uint16_t type, flags;
    uint64_t offset, length;
  } recs[] = {
    { WTLOG_OPEN, 0, WTLOG_EXPORT_DISK, DISK_SIZE },
    { WTLOG_WRITE, WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED, 8192, 4096 },
    { WTLOG_SAVED, WTLOG_F_DATA, 9216, 1024 },
    { WTLOG_WRITE, WTLOG_F_DATA, 9300, 100 },
    { WTLOG_FLUSH, 0, 0, 0 },
    { WTLOG_WRITE, WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED | WTLOG_F_FUA, 16384, 2048 },
    { WTLOG_SAVED, WTLOG_F_DATA, 16384, 512 },
    { WTLOG_ZERO, 0, 16384, 512 },
    { WTLOG_CLOSE, 0, WTLOG_EXPORT_DISK, DISK_SIZE },
    { WTLOG_CLOSE, 0, 0, 0 },
  };
  for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
    struct wtlog_record rec = {
      .type = recs[i].type, .flags = recs[i].flags, .offset = recs[i].offset,
      .length = recs[i].length, .t_start = 1000 * i, .t_end = 1000 * i + 10,
      .conn = recs[i].type == WTLOG_CLOSE && !recs[i].length ? 0 : 1,
    };
    for (size_t b = 0; b < sizeof bytes; b++)
      bytes[b] = (unsigned char) (i * 41 + b);
    wt_sector_hashes (bytes, sizeof bytes / SECTOR, hashes);
    if (wtlog_writer_append (w, &rec, hashes, bytes) != 0)
      die ("append", path);
  }
  if (wtlog_writer_close (w) != 0)
    die ("close", path);
}

static unsigned char *
slurp (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  static unsigned char buf[1 << 20];
  if (!f)
    die ("open", path);
  *len = fread (buf, 1, sizeof buf, f);
  fclose (f);
  unsigned char *copy = malloc (*len);
  if (!copy)
    die ("malloc", path);
  return memcpy (copy, buf, *len);
}

/* Campaign files as the README and the tests write them: axes, options,
 * variants; a build: kernel and other architectures; a bzImage path. */
static void
campaigns (void)
{
  static const char readme[] =
    "[campaign]\nkernels = debian:bookworm debian:bullseye\nfs = ext4 xfs\n"
    "workloads = linus2006\nseeds = 1-20\nsize = 16M\ndisk-size = 320M\n"
    "sysctl = vm.dirty_ratio=5 vm.dirty_background_ratio=3\n[clean]\n[lossy]\n"
    "plugin-opt = fault=vanish:p=0.002:seed=3\n";
  static const char variants[] =
    "# a comment\n[campaign]\nkernels = debian:trixie build:/tmp/bad.patch+/tmp/b.patch\n"
    "workloads = linus2006 pwrite\nseeds = 3 1-2 7\nsize = 16M\naccel = tcg\n"
    "no-cold = true\ndata-log = false\nmkfs-opts = -b 1024\n[clean]\n[slow]\n"
    "timeout = 5\npasses = 400\n[fast_2+x]\nplugin-opt = fault=vanish:p=0.5 stage=on\n";
  static const char arches[] =
    "[campaign]\nkernels = debian:bookworm/arm64 debian:trixie/ppc64el-64k "
    "debian:bookworm/amd64 debian:bookworm /boot/vmlinuz-6.1.0+\nfs = btrfs ext2 ext3\n"
    "workloads = torrent\nseeds = 1\nsysctl = vm.dirty_bytes=1048576\n";
  write_file ("campaign", "readme.campaign", readme, sizeof readme - 1, NULL, 0, NULL, 0);
  write_file ("campaign", "variants.campaign", variants, sizeof variants - 1, NULL, 0, NULL, 0);
  write_file ("campaign", "arches.campaign", arches, sizeof arches - 1, NULL, 0, NULL, 0);
  /* block sizes as variants: KEY.FS options and a variant's own fs */
  static const char blocks[] =
    "[campaign]\nkernels = debian:trixie\nfs = ext4 xfs btrfs\nworkloads = ops\nseeds = 1-2\n"
    "mkfs-opts.btrfs = --sectorsize 4096\n[4k]\nmkfs-opts.ext4 = -b 4096\n[1k]\nfs = ext4 xfs\n"
    "mkfs-opts.ext4 = -b 1024\nmkfs-opts.xfs = -b size=1024\n";
  write_file ("campaign", "blocks.campaign", blocks, sizeof blocks - 1, NULL, 0, NULL, 0);
}

/* Campaign folders' records as scripts/wtrack-campaign writes them:
 * plan.tsv (wtrack campaign expand --plan), kernels.tsv (SPEC, KERNEL,
 * MODULES, SHA-256, WHY) and the first cell's cell.ini, one of each kind
 * collect tells apart (an empty cell.ini part: none, until-fail). */
#define PLAN_ARGS "--fs\text4\t--workload\tlinus2006\t--seed\t1\t--size\t16M"
#define INI_ARGS "--fs\\text4\\t--workload\\tlinus2006\\t--seed\\t1\\t--size\\t16M"
#define SUM_A "9f2c6d1e0b8a7f5e4d3c2b1a09182736455463728190a1b2c3d4e5f60718293a"
#define SUM_B "0000000000000000000000000000000000000000000000000000000000000001"
#define INI_HEAD(id, status, exit) \
  "[cell]\nid=" id "\nstatus=" status "\nexit=" exit "\nseconds=42\nkernel=debian:bookworm\n" \
  "kernel_path=/root/.cache/wtrack/kernels/vmlinuz-6.1.0-28-amd64\n"

static void
collect_seed (const char *name, const char *plan, const char *kernels, const char *ini)
{
  write_file ("collect", name, plan, strlen (plan), kernels, strlen (kernels), ini, strlen (ini));
}

static void
collect_seeds (void)
{
  static const char plan[] =
    "bookworm.ext4.lossy.linus2006.s1\tdebian:bookworm\text4\tlossy\tlinus2006\t1\t" PLAN_ARGS
    "\t--plugin-opt\tfault=vanish:p=0.002:seed=3\n"
    "bookworm.ext4.clean.linus2006.s1\tdebian:bookworm\text4\tclean\tlinus2006\t1\t" PLAN_ARGS "\n"
    "bullseye.ext4.clean.linus2006.s1\tdebian:bullseye\text4\tclean\tlinus2006\t1\t" PLAN_ARGS "\n";
  static const char kernels[] =
    "debian:bookworm\t/root/.cache/wtrack/kernels/vmlinuz-6.1.0-28-amd64\t"
    "/root/.cache/wtrack/kernels/modules-6.1.0-28-amd64.tar\t" SUM_A "\t\n"
    "debian:bullseye\t-\t-\t-\tget-kernel: no network\n";
  static const char damaged[] =
    INI_HEAD ("bookworm.ext4.lossy.linus2006.s1", "damaged", "1")
    "kernel_sha256=" SUM_A "\nargs=" INI_ARGS "\\t--plugin-opt\\tfault=vanish:p=0.002:seed=3\n"
    "verdict=damaged\npage_size=4096\nblock_size=1024\nbad_sectors=56\n"
    "[classes]\nlost=40\nstale=16\n[timings]\nboot=8.25\nworkload=12.5\ncheck=0.3\n";
  static const char stale[] =
    INI_HEAD ("bookworm.ext4.lossy.linus2006.s1", "clean", "0")
    "kernel_sha256=" SUM_B "\nargs=" INI_ARGS "\\t--plugin-opt\\tfault=vanish:p=0.002:seed=3\n"
    "verdict=clean\nbad_sectors=0\n";
  static const char error[] =
    INI_HEAD ("bookworm.ext4.lossy.linus2006.s1", "error", "3")
    "kernel_sha256=" SUM_A "\nargs=" INI_ARGS "\\t--plugin-opt\\tfault=vanish:p=0.002:seed=3\n"
    "bad_sectors=0\nerror=wtrack-run exit 3: the guest did not finish within 660 s\n";
  static const char lost[] =
    "[cell]\nid=bookworm.ext4.lossy.linus2006.s1\nstatus=error\nlost=true\n"
    "error=the cell's driver died (no result)\n";
  static const char arm_plan[] =
    "bookworm-arm64.xfs.pwrite.s7\tdebian:bookworm/arm64\txfs\t-\tpwrite\t7\t--fs\txfs\t"
    "--workload\tpwrite\t--seed\t7\t--arch\tarm64\t--mkfs-opts\t-L a\\b\n";
  static const char arm_kernels[] =
    "debian:bookworm/arm64\t/k/vmlinuz-6.1.0-28-arm64\t/k/modules-6.1.0-28-arm64.tar\t" SUM_B "\t\n";
  static const char arm_clean[] =
    "[cell]\nid=bookworm-arm64.xfs.pwrite.s7\nstatus=clean\nexit=0\nseconds=97\n"
    "kernel=debian:bookworm/arm64\nkernel_path=/k/vmlinuz-6.1.0-28-arm64\nkernel_sha256=" SUM_B
    "\nargs=--fs\\txfs\\t--workload\\tpwrite\\t--seed\\t7\\t--arch\\tarm64\\t--mkfs-opts\\t-L a\\\\b\n"
    "verdict=clean\npage_size=65536\nbad_sectors=0\n[classes]\n[timings]\nboot=30.5\n";
  collect_seed ("damaged.bin", plan, kernels, damaged);
  collect_seed ("stale.bin", plan, kernels, stale);
  collect_seed ("error.bin", plan, kernels, error);
  collect_seed ("lost.bin", plan, kernels, lost);
  collect_seed ("until-fail.bin", plan, kernels, "");
  collect_seed ("clean-arm64.bin", arm_plan, arm_kernels, arm_clean);
}

/* The cold pass's cold.bin for the seed run, as `wtrack-guest cold` sends
 * it: HELLO, TEXTs for what it could not read, a manifest flagged cold
 * (hashes and extents of what a fresh kernel reads; errnos in the file's
 * error and each sector's op) in MANIFEST messages, and a RESULT with
 * cold_files=. kind 0: /data/f1 read back right, f2 with a differing
 * sector, f3 with an EIO in a sector, f4 failing to open (ENOENT). kind
 * 1: f1 shorter with a sector as disk.img (fuzz-cold's --base) holds it,
 * f2 moved on the disk, f3 unmappable, f4 missing from the manifest.
 * kind 2: the cold kernel could not mount the disk (no manifest). */
static void
cold_seed (const char *name, const struct files *warm, int kind)
{
  static const char hello[] = "version=0.1\nkernel=6.1.0-28-amd64\nfs=ext4\nworkload=cold\n";
  static struct channel ch;
  memset (&ch, 0, sizeof ch);
  chan_send (&ch, WTCH_HELLO, 100000, hello, sizeof hello - 1);
  if (kind == 2) {
    static const char result[] = "status=1\nerror=mount: /dev/vdb: wrong fs type\n";
    chan_send (&ch, WTCH_RESULT, 200000, result, sizeof result - 1);
    write_file ("cold", name, ch.buf, ch.len + SECTOR, NULL, 0, NULL, 0);
    return;
  }
  struct files c = *warm;       /* the cold files: the warm ones, changed */
  static uint64_t hashes[32];
  static uint32_t ops[32];
  memcpy (hashes, warm->hashes, sizeof hashes);
  memset (ops, 0, sizeof ops);
  unsigned char other[SECTOR];
  memset (other, 0xa5, sizeof other);
  uint32_t nfiles = kind == 0 ? 4 : 3;
  for (uint32_t i = 0; i < 4; i++) {
    c.f[i].hashes = hashes + (warm->f[i].hashes - warm->hashes);
    c.f[i].ops = ops + (warm->f[i].ops - warm->ops);
    c.f[i].extents = c.ext + (warm->f[i].extents - warm->ext);
  }
  c.f[1].hashes[1] = wt_sector_hash (other);
  if (kind == 0) {
    c.f[2].ops[1] = EIO;
    c.f[3] = (struct wtmf_file) { .id = 4, .path = warm->f[3].path, .error = ENOENT };
  } else {
    c.f[0].size = 4000;
    c.f[0].nsectors = wtmf_sectors_of (4000);
    c.f[0].nextents = 1;
    c.ext[2].physical = 49152;  /* f2's extent, elsewhere */
    c.f[0].hashes[2] = wt_sector_hash (other);  /* what disk.img (the base) holds */
    c.f[2].hashes[1] = wt_sector_hash (other);
    c.ext[3].flags = WTMF_EXT_UNMAPPABLE;
  }
  struct wtmf_buf b = { 0 };
  wtmf_buf_header_cold (&b, nfiles);
  for (uint32_t i = 0; i < nfiles; i++)
    wtmf_buf_file (&b, &c.f[i]);
  if (wtmf_buf_finish (&b) != 0)
    die ("build", "a cold manifest");
  if (kind == 0)
    chan_send (&ch, WTCH_TEXT, 150000, "cold: /data/f4: No such file or directory", 41);
  for (size_t at = 0; at < b.len; at += CHUNK)
    chan_send (&ch, WTCH_MANIFEST, 300000, b.p + at,
               (uint32_t) (b.len - at < CHUNK ? b.len - at : CHUNK));
  const char *result = kind == 0 ? "status=0\ncold_files=4\ncold_unreadable=2\n"
                                 : "status=0\ncold_files=3\ncold_unreadable=0\n";
  chan_send (&ch, WTCH_RESULT, 400000, result, (uint32_t) strlen (result));
  write_file ("cold", name, ch.buf, ch.len + SECTOR, NULL, 0, NULL, 0);
  wtmf_buf_free (&b);
}

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: mkseeds DIR\n");
    return 2;
  }
  dir = argv[1];
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    die ("mkdir", dir);
  static struct files fs;
  static struct channel ch;
  static unsigned char stream[16384];
  size_t stream_len;
  make_files (&fs);
  channel (&ch, &fs, stream, &stream_len);
  write_file ("channel", "run.bin", ch.buf, ch.len + SECTOR, NULL, 0, NULL, 0);
  write_file ("manifest", "stream.bin", stream, stream_len, NULL, 0, NULL, 0);
  const char *names[] = { "run-data", "run-hashes", "run-unclosed" };
  for (int i = 0; i < 3; i++) {
    char path[4096];
    size_t len;
    snprintf (path, sizeof path, "%s/wtlog", dir);
    if (mkdir (path, 0755) != 0 && errno != EEXIST)
      die ("mkdir", path);
    snprintf (path, sizeof path, "%s/wtlog/%s.wtlog", dir, names[i]);
    write_log (path, &ch, i != 1, i != 2);
    if (i == 2)
      continue;
    /* The disk: what the log wrote, one expected sector lost. */
    memset (disk + 8192 + SECTOR, 0, SECTOR);
    unsigned char *log = slurp (path, &len);
    snprintf (path, sizeof path, "%s.bin", names[i]);
    write_file ("check", path, log, len, ch.buf, ch.len + SECTOR, disk, sizeof disk);
    free (log);
  }
  char in_image[4096];
  snprintf (in_image, sizeof in_image, "%s/wtlog/run-in-image.wtlog", dir);
  write_in_image_log (in_image);
  campaigns ();
  collect_seeds ();
  cold_seed ("cold.bin", &fs, 0);
  cold_seed ("cold-moved.bin", &fs, 1);
  cold_seed ("cold-nomount.bin", &fs, 2);
  return 0;
}
