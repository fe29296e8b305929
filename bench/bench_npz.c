/* SciPy .npz bridge benchmark (issue 14): `quiver tensor from-npz` /
 * `to-npz` against scipy.sparse.load_npz / save_npz on a 10^7-non-zero
 * 200000 x 100000 float64 CSR matrix (int32 indices; 121 MB stored, 103 MB
 * deflated), all measured in one run:
 *
 *   - SciPy (bench/bench_npz_scipy.py through /usr/bin/python3, which also
 *     builds the matrix): load_npz stored, load_npz stored + writing the
 *     same buffers with NumPy tofile (what an Arrow file of them costs),
 *     load_npz deflated, save_npz stored and deflated;
 *   - the CLI (build/quiver, a child process per run, wall time, output
 *     removed before each run, as tofile's truncation frees its pages too):
 *     from-npz of SciPy's stored and deflated archives, to-npz --stored and
 *     deflated, every CPU (the CLI default) and --threads 1, whose outputs
 *     must be byte-identical;
 *   - the writer's peak memory in process (qv_npz_write to a path, VmHWM
 *     after a /proc/self/clear_refs reset, minus the RSS before, the input
 *     tensor already resident) against the output size;
 *   - the codecs on the very members: zlib (inflate / deflate level 6) and
 *     libdeflate, which decides which one the reader and writer use.
 *
 * from-npz of the stored archive is measured in two pairs (issue 26): both
 * sides durable (quiver's default: fsync, rename, fsync of the directory;
 * SciPy's file fsynced and renamed into place) and neither (--no-fsync;
 * a plain tofile), in DIR and, when given, in DIR2 as well (a real disk
 * next to tmpfs: fsync costs nothing on tmpfs).
 *
 * Usage: bench_npz [DIR [REPS [DIR2]]]; DIR defaults to /dev/shm, REPS to
 * 5, DIR2 to /tmp (none when DIR is /tmp); best of REPS. */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "numpy/zip.h"
#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"

static int reps = 5;
static char dir[512], cli[1024];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const QvError *err) {
  fprintf(stderr, "bench_npz: %s: %s\n", what, err ? err->message : strerror(errno));
  exit(1);
}

static const char *path(const char *name) {
  static char buf[8][640];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 640, "%s/%s", dir, name);
  return p;
}

typedef struct Time {
  double wall, cpu; /* cpu: user + system of every thread */
} Time;

/* Wall and CPU time of one run of the CLI; exits on failure. */
static Time run_cli(const char *const *args) {
  char *argv[16];
  int n = 0;
  argv[n++] = cli;
  for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
  argv[n] = NULL;
  double t = now();
  pid_t pid = fork();
  if (pid == 0) {
    execv(cli, argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) die("fork", NULL);
  t = now() - t;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_npz: quiver %s %s failed\n", args[0], args[1]);
    exit(1);
  }
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  return (Time){t, cpu};
}

/* Best wall time and best CPU time over n runs. */
static Time best_cli(const char *const *args, const char *out, int n) {
  Time b = {1e30, 1e30};
  for (int i = 0; i < n; i++) {
    unlink(out);
    Time t = run_cli(args);
    if (t.wall < b.wall) b.wall = t.wall;
    if (t.cpu < b.cpu) b.cpu = t.cpu;
  }
  return b;
}

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, k) == 0) v = strtol(line + k, NULL, 10);
  fclose(f);
  return v;
}

static bool reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f == NULL) return false;
  bool ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

static uint8_t *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  if (f == NULL) die(p, NULL);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*n ? *n : 1);
  if (b == NULL || fread(b, 1, *n, f) != *n) die(p, NULL);
  fclose(f);
  return b;
}

static bool same_file(const char *a, const char *b) {
  size_t na, nb;
  uint8_t *x = slurp(a, &na), *y = slurp(b, &nb);
  bool same = na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- SciPy */

typedef struct Scipy {
  Time load_stored, load_tofile, load_deflated, save_stored, save_deflated, load_tofile_fsync;
} Scipy;

#define SCIPY_KEYS 6

static bool scipy_run(const char *args, Scipy *s) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/bench_npz_scipy.py '%s' %s 2>&1", dir, args);
  FILE *p = popen(cmd, "r");
  if (p == NULL) return false;
  char line[512];
  while (fgets(line, sizeof line, p)) {
    static const char *const keys[SCIPY_KEYS] = {
        "load_npz_stored",   "load_npz_stored_tofile", "load_npz_deflated",
        "save_npz_stored",   "save_npz_deflated",      "load_npz_stored_tofile_fsync"};
    bool parsed = false;
    for (int k = 0; s && k < SCIPY_KEYS && !parsed; k++) {
      Time *dst[SCIPY_KEYS] = {&s->load_stored, &s->load_tofile,   &s->load_deflated,
                               &s->save_stored, &s->save_deflated, &s->load_tofile_fsync};
      char name[64];
      double w, c;
      if (sscanf(line, "%63s %lf %lf", name, &w, &c) == 3 && strcmp(name, keys[k]) == 0) {
        *dst[k] = (Time){w, c};
        parsed = true;
      }
    }
    if (parsed) continue;
    printf("  (python) %s", line);
  }
  return pclose(p) == 0;
}

/* ---- codecs on the members of deflated.npz */

static double zlib_inflate(const uint8_t *in, size_t n, uint8_t *out, size_t cap) {
  double t = now();
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -15) != Z_OK) die("inflateInit2", NULL);
  z.next_in = (Bytef *)in;
  z.next_out = out;
  size_t left_in = n, left_out = cap;
  int r = Z_OK;
  /* avail_* are 32-bit: feed in slices */
  while (r == Z_OK) {
    z.avail_in = left_in > (1u << 30) ? 1u << 30 : (uInt)left_in;
    z.avail_out = left_out > (1u << 30) ? 1u << 30 : (uInt)left_out;
    uInt ai = z.avail_in, ao = z.avail_out;
    r = inflate(&z, Z_NO_FLUSH);
    left_in -= ai - z.avail_in;
    left_out -= ao - z.avail_out;
  }
  inflateEnd(&z);
  if (r != Z_STREAM_END) die("zlib inflate", NULL);
  return now() - t;
}

static double zlib_deflate(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *got) {
  double t = now();
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) die("deflateInit2", NULL);
  z.next_in = (Bytef *)in;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) die("zlib deflate", NULL);
  *got = z.total_out;
  deflateEnd(&z);
  return now() - t;
}

static void codecs(void) {
  size_t n;
  uint8_t *zip = slurp(path("deflated.npz"), &n);
  QvZipArchive z;
  QvError err;
  if (qvi_zip_open(&z, zip, n, &err)) die("deflated.npz", &err);
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
  double zi = 0, li = 0, zd = 0, ld = 0, raw = 0, zsz = 0, lsz = 0, slice_total = 0;
  for (size_t i = 0; i < z.count; i++) {
    const QvZipEntry *e = &z.entries[i];
    if (e->usize < (1u << 20)) continue; /* the two big members */
    uint8_t *out = malloc(e->usize);
    memset(out, 0, e->usize); /* pre-faulted: the codecs alone */
    const uint8_t *in = zip + e->data_offset;
    double bz = 1e30, bl = 1e30;
    for (int r = 0; r < reps; r++) {
      double t = zlib_inflate(in, e->csize, out, e->usize);
      if (t < bz) bz = t;
      t = now();
      size_t got;
      if (libdeflate_deflate_decompress(d, in, e->csize, out, e->usize, &got) != LIBDEFLATE_SUCCESS)
        die("libdeflate", NULL);
      t = now() - t;
      if (t < bl) bl = t;
    }
    zi += bz;
    li += bl;
    raw += (double)e->usize;
    /* compressing: a 16 MiB slice of each (zlib takes ~10 s for all) */
    size_t slice = e->usize < (16u << 20) ? e->usize : 16u << 20, cap = slice + slice / 8 + 1024;
    uint8_t *buf = malloc(cap);
    memset(buf, 0, cap);
    double cz = 1e30, cl = 1e30;
    size_t gz = 0, gl = 0;
    for (int r = 0; r < (reps + 1) / 2; r++) {
      double t = zlib_deflate(out, slice, buf, cap, &gz);
      if (t < cz) cz = t;
      t = now();
      gl = libdeflate_deflate_compress(c, out, slice, buf, cap);
      t = now() - t;
      if (gl == 0) die("libdeflate compress", NULL);
      if (t < cl) cl = t;
    }
    zd += cz;
    ld += cl;
    zsz += (double)gz;
    lsz += (double)gl;
    slice_total += (double)slice;
    free(buf);
    free(out);
  }
  printf("codecs on the members of deflated.npz (pre-faulted output, one thread):\n");
  printf("  inflate %.0f MB: zlib %.1f ms (%.0f MB/s), libdeflate %.1f ms (%.0f MB/s): "
         "libdeflate %.2fx faster\n",
         raw / 1e6, zi * 1e3, raw / zi / 1e6, li * 1e3, raw / li / 1e6, zi / li);
  printf("  deflate level 6, %.0f MB: zlib %.1f ms (%.0f MB/s, %.1f%%), libdeflate %.1f ms "
         "(%.0f MB/s, %.1f%%): libdeflate %.2fx faster\n",
         slice_total / 1e6, zd * 1e3, slice_total / zd / 1e6, 100 * zsz / slice_total, ld * 1e3,
         slice_total / ld / 1e6, 100 * lsz / slice_total, zd / ld);
  libdeflate_free_decompressor(d);
  libdeflate_free_compressor(c);
  qvi_zip_close(&z);
  free(zip);
}

/* ---- the writer's peak memory */

static double writer_peak(bool stored, long *out_size) {
  size_t n;
  uint8_t *arrow = slurp(path("s.arrow"), &n); /* resident before the reset */
  QvSource *src;
  QvError err;
  QvSparseTensor t;
  if (qv_source_new_memory(&src, arrow, n, NULL, &err) || qv_sparse_read(src, 0, NULL, &t, &err))
    die("s.arrow", &err);
  qv_source_free(src);
  const char *out = path("peak.npz");
  unlink(out);
  if (!reset_peak()) return -1;
  long rss0 = status_kb("VmRSS:");
  QvSink *sink;
  QvNpzWriteOptions o = {.struct_size = sizeof o, .stored = stored,
                         .threads = (int)sysconf(_SC_NPROCESSORS_ONLN)};
  if (qv_sink_new_path(&sink, out, QV_SINK_NO_FSYNC, &err) || qv_npz_write(&t, sink, &o, &err) ||
      qv_sink_finish(sink, &err))
    die("qv_npz_write", &err);
  qv_sink_free(sink);
  long peak = status_kb("VmHWM:") - rss0;
  *out_size = file_size(out);
  unlink(out);
  qv_sparse_reset(&t);
  free(arrow);
  return (double)peak * 1024.0;
}

/* One target: the wall-time ratio (what the target is about), then the
 * CPU-time ratio, which a loaded machine distorts less (quiver's counts
 * every thread it ran). */
static void line(const char *what, Time ours, Time ref, const char *refname, bool faster,
                 double target) {
  double x = faster ? ref.wall / ours.wall : ours.wall / ref.wall;
  double xc = faster ? ref.cpu / ours.cpu : ours.cpu / ref.cpu;
  printf("  %-20s %7.3f s  %5.2fx %s %s %.3f s (target %s %.1fx); CPU %.3f s vs %.3f s: "
         "%.2fx\n",
         what, ours.wall, x, faster ? "faster than" : "the time of", refname, ref.wall,
         faster ? ">=" : "<=", target, ours.cpu, ref.cpu, xc);
}

/* The two from-npz stored pairs in the current `dir` (stored.npz there):
 * durable against durable, scratch against scratch. */
typedef struct StoredPairs {
  Time durable, scratch;
} StoredPairs;

static StoredPairs stored_pairs(void) {
  StoredPairs p;
  p.durable = best_cli((const char *[]){"tensor", "from-npz", path("stored.npz"), path("s.arrow"), NULL},
                       path("s.arrow"), reps);
  p.scratch = best_cli((const char *[]){"tensor", "from-npz", path("stored.npz"), path("s.arrow"),
                                        "--no-fsync", NULL},
                       path("s.arrow"), reps);
  return p;
}

static void stored_lines(const char *where, StoredPairs q, const Scipy *s) {
  printf("  from-npz stored, %s:\n", where);
  line("durable", q.durable, s->load_tofile_fsync, "load_npz+tofile+fsync", true, 1.8);
  line("--no-fsync", q.scratch, s->load_tofile, "load_npz+tofile", true, 1.8);
}

/* The pairs again in DIR2: stored.npz copied there, SciPy and the CLI. */
static bool stored_pairs_in(const char *base2, StoredPairs *q, Scipy *s) {
  char saved[sizeof dir];
  memcpy(saved, dir, sizeof dir);
  size_t n;
  uint8_t *zip = slurp(path("stored.npz"), &n);
  snprintf(dir, sizeof dir, "%s/quiver_bench_npz_%d", base2, (int)getpid());
  bool ok = mkdir(dir, 0700) == 0;
  FILE *f = ok ? fopen(path("stored.npz"), "wb") : NULL;
  ok = f != NULL && fwrite(zip, 1, n, f) == n;
  if (f != NULL && fclose(f) != 0) ok = false;
  free(zip);
  if (ok) {
    char targs[32];
    snprintf(targs, sizeof targs, "stored %d", reps);
    ok = scipy_run(targs, s);
  }
  if (ok) *q = stored_pairs();
  unlink(path("s.arrow"));
  unlink(path("stored.npz"));
  rmdir(dir);
  memcpy(dir, saved, sizeof dir);
  return ok;
}

int main(int argc, char **argv) {
  const char *base = argc > 1 ? argv[1] : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  if (argc > 2 && atoi(argv[2]) > 0) reps = atoi(argv[2]);
  snprintf(dir, sizeof dir, "%s/quiver_bench_npz_%d", base, (int)getpid());
  char self[900];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k <= 0) die("/proc/self/exe", NULL);
  self[k] = '\0';
  *strrchr(self, '/') = '\0';
  snprintf(cli, sizeof cli, "%s/quiver", self);
  if (access(cli, X_OK) != 0) die(cli, NULL);
  if (mkdir(dir, 0700) != 0) die(dir, NULL);
  printf("npz benchmark: 10^7-non-zero 200000 x 100000 float64 CSR (int32 indices), best of %d, "
         "in %s\n", reps, dir);
  if (!scipy_run("make", NULL)) {
    printf("  SciPy not available (/usr/bin/python3 with numpy, scipy): skipped\n");
    rmdir(dir);
    return 0;
  }
  printf("  stored.npz %ld bytes, deflated.npz %ld bytes (scipy.sparse.save_npz)\n",
         file_size(path("stored.npz")), file_size(path("deflated.npz")));
  codecs();

  Scipy s = {0};
  char targs[32];
  snprintf(targs, sizeof targs, "time %d", reps);
  if (!scipy_run(targs, &s)) die("bench_npz_scipy.py time", NULL);

  /* the CLI: every CPU (its default), then one thread */
  StoredPairs sp = stored_pairs(); /* leaves s.arrow, compared below */
  Time fd = best_cli((const char *[]){"tensor", "from-npz", path("deflated.npz"), path("d.arrow"), NULL},
                       path("d.arrow"), reps);
  Time fd1 = best_cli((const char *[]){"tensor", "from-npz", path("deflated.npz"), path("d.arrow"),
                                         "--threads", "1", NULL},
                        path("d.arrow"), reps);
  int wreps = reps > 2 ? reps / 2 : 1;
  Time ts = best_cli((const char *[]){"tensor", "to-npz", path("s.arrow"), path("q_s.npz"), "--stored", NULL},
                       path("q_s.npz"), reps);
  Time td = best_cli((const char *[]){"tensor", "to-npz", path("s.arrow"), path("q_d.npz"), NULL},
                       path("q_d.npz"), wreps);
  unlink(path("q_d1.npz"));
  Time td1 = run_cli((const char *[]){"tensor", "to-npz", path("s.arrow"), path("q_d1.npz"),
                                        "--threads", "1", NULL});
  bool identical = same_file(path("q_d.npz"), path("q_d1.npz"));
  /* quiver's own stored archive: aligned members, read in place */
  Time fq = best_cli((const char *[]){"tensor", "from-npz", path("q_s.npz"), path("q.arrow"), NULL},
                       path("q.arrow"), reps);
  bool same_arrow = same_file(path("s.arrow"), path("d.arrow")) && same_file(path("s.arrow"), path("q.arrow"));
  long out_d = 0, out_s = 0;
  double peak_d = writer_peak(false, &out_d), peak_s = writer_peak(true, &out_s);

  printf("SciPy: load_npz stored %.3f s, + tofile %.3f s (+ fsync, rename %.3f s), load_npz deflated %.3f s, save_npz stored "
         "%.3f s, deflated %.3f s\n",
         s.load_stored.wall, s.load_tofile.wall, s.load_tofile_fsync.wall, s.load_deflated.wall,
         s.save_stored.wall, s.save_deflated.wall);
  printf("quiver (%ld CPUs): from-npz deflated --threads 1 %.3f s (CPU %.3f s); to-npz deflated "
         "--threads 1 %.3f s (output %s the default's); from-npz of quiver's stored archive "
         "(aligned: zero-copy) %.3f s (CPU %.3f s); Arrow outputs %s\n",
         sysconf(_SC_NPROCESSORS_ONLN), fd1.wall, fd1.cpu, td1.wall,
         identical ? "byte-identical to" : "DIFFERS FROM", fq.wall, fq.cpu,
         same_arrow ? "identical" : "DIFFER");
  printf("targets (wall time, best of %d; then CPU time):\n", reps);
  stored_lines(dir, sp, &s);
  /* a real disk next to tmpfs unless DIR is /tmp already */
  const char *base2 = argc > 3 ? argv[3] : strcmp(base, "/tmp") != 0 ? "/tmp" : NULL;
  if (base2 != NULL) {
    StoredPairs sp2;
    Scipy s2 = {0};
    if (!stored_pairs_in(base2, &sp2, &s2)) die(base2, NULL);
    stored_lines(base2, sp2, &s2);
  }
  line("from-npz deflated", fd, s.load_deflated, "load_npz", true, 1.5);
  line("to-npz --stored", ts, s.save_stored, "save_npz stored", false, 1.5);
  line("to-npz deflated", td, s.save_deflated, "save_npz", true, 2.0);
  if (peak_d >= 0)
    printf("  %-20s %7.1f MB %5.2fx the output, %.1f MB (target <= 1.2x)\n", "to-npz peak",
           peak_d / 1e6, peak_d / (double)out_d, (double)out_d / 1e6);
  if (peak_s >= 0)
    printf("  %-20s %7.1f MB %5.2fx the output, %.1f MB (target <= 1.2x)\n", "to-npz --stored peak",
           peak_s / 1e6, peak_s / (double)out_s, (double)out_s / 1e6);
  const char *names[] = {"stored.npz", "deflated.npz", "s.arrow", "d.arrow", "q.arrow",
                         "q_s.npz",    "q_d.npz",      "q_d1.npz"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(path(names[i]));
  rmdir(dir);
  return identical && same_arrow ? 0 : 1;
}
