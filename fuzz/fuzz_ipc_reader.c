/* libFuzzer target: the message reader over arbitrary bytes.
 *
 * The input is read four ways: from memory, from a seekable descriptor
 * (memfd, or a temporary file), from that file by path with pread and one
 * mapping per body (map_each_body) and, when it fits in a pipe's buffer,
 * from a pipe. Besides the sanitizers, the readers check each other: memory,
 * the seekable descriptor and the path must return the same messages and the
 * same final status, and so must the pipe for the stream format (a pipe
 * cannot find a file's footer, so it may read on into it). Errors must be
 * sticky. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "quiver/ipc.h"

/* Largest input written to a pipe in one go: the default pipe buffer, so
 * the write never blocks and no thread is needed. */
#define PIPE_MAX ((size_t)65536)

static volatile unsigned g_sink; /* keeps the body sums alive */

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "fuzz_ipc_reader: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                              \
      abort();                                                                     \
    }                                                                              \
  } while (0)

static int seekable_fd(void) {
  static int fd = -2;
  if (fd == -2) {
#ifdef MFD_CLOEXEC
    fd = memfd_create("fuzz_ipc_reader", MFD_CLOEXEC);
#else
    fd = -1;
#endif
    if (fd < 0) {
      FILE *f = tmpfile();
      fd = f ? dup(fileno(f)) : -1;
      if (f) fclose(f);
    }
  }
  return fd;
}

static bool load_seekable(const uint8_t *data, size_t size) {
  int fd = seekable_fd();
  if (fd < 0 || ftruncate(fd, 0) != 0) return false;
  size_t done = 0;
  while (done < size) {
    ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
    if (k <= 0) return false;
    done += (size_t)k;
  }
  return lseek(fd, 0, SEEK_SET) == 0;
}

/* Pipe holding the whole input with its write end closed; -1 if it cannot. */
static int load_pipe(const uint8_t *data, size_t size) {
  if (size > PIPE_MAX) return -1;
  int p[2];
  if (pipe(p) != 0) return -1;
  fcntl(p[1], F_SETFL, O_NONBLOCK);
  size_t done = 0;
  while (done < size) {
    ssize_t k = write(p[1], data + done, size - done);
    if (k <= 0) {
      close(p[0]);
      close(p[1]);
      return -1;
    }
    done += (size_t)k;
  }
  close(p[1]);
  return p[0];
}

/* A reader over a new source (the reader keeps its own reference). */
static QvStatus open_reader(QvIpcReader **r, QvSource *src, QvStatus st, QvError *err) {
  *r = NULL;
  if (st) return st;
  st = qv_ipc_reader_new(r, src, NULL, err);
  qv_source_free(src);
  return st;
}

static QvStatus open_memory(QvIpcReader **r, const uint8_t *data, size_t size, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, err);
  return open_reader(r, src, st, err);
}

static QvStatus open_fd(QvIpcReader **r, int fd, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_fd(&src, fd, err);
  return open_reader(r, src, st, err);
}

static unsigned body_sum(const QvIpcMessage *m) {
  unsigned s = 0;
  for (int64_t i = 0; i < m->body_length; i++) s += m->body[i];
  return s;
}

static void same_message(const QvIpcMessage *a, const QvIpcMessage *b) {
  CHECK(a->offset == b->offset);
  CHECK(a->legacy_prefix == b->legacy_prefix);
  CHECK(a->metadata_length == b->metadata_length);
  CHECK(a->body_offset == b->body_offset);
  CHECK(a->body_length == b->body_length);
  CHECK(a->message.header_type == b->message.header_type);
  CHECK(memcmp(a->metadata, b->metadata, (size_t)a->metadata_length) == 0);
  CHECK(a->body_length == 0 || memcmp(a->body, b->body, (size_t)a->body_length) == 0);
}

/* Steps a reader and a reference reader (NULL: none) together to the end. */
static void drain(QvIpcReader *r, QvIpcReader *ref, QvStatus *last) {
  QvStatus st, rst = QV_OK;
  QvError err, rerr;
  for (;;) {
    QvIpcMessage m, rm;
    st = qv_ipc_reader_next(r, &m, &err);
    if (ref) {
      rst = qv_ipc_reader_next(ref, &rm, &rerr);
      CHECK(st == rst);
    }
    if (st != QV_OK) break;
    CHECK(m.body_offset == m.offset + (m.legacy_prefix ? 4 : 8) + m.metadata_length);
    g_sink += body_sum(&m);
    if (ref) {
      same_message(&m, &rm);
      qv_ipc_message_reset(&rm);
    }
    qv_ipc_message_reset(&m);
  }
  /* the end, or the error, repeats */
  QvIpcMessage m;
  QvError again;
  CHECK(qv_ipc_reader_next(r, &m, &again) == st);
  CHECK(m.owner == NULL && m.body == NULL);
  if (st != QV_EOS) {
    CHECK(err.code == st && again.code == st);
    CHECK(strcmp(err.message, again.message) == 0);
  }
  *last = st;
}

static void check_footer(QvIpcReader *r, QvIpcReader *ref) {
  QvFooter f, rf;
  int64_t off = 0, roff = 0;
  int32_t len = 0, rlen = 0;
  QvError err;
  QvStatus st = qv_ipc_reader_footer(r, &f, &off, &len, &err);
  if (ref) {
    QvStatus rst = qv_ipc_reader_footer(ref, &rf, &roff, &rlen, &err);
    CHECK(st == rst);
    if (rst == QV_OK) {
      CHECK(off == roff && len == rlen);
      CHECK(f.n_record_batches == rf.n_record_batches);
      CHECK(f.n_dictionaries == rf.n_dictionaries);
      qv_footer_reset(&rf);
    }
  }
  if (st == QV_OK) {
    for (int64_t i = 0; i < f.n_record_batches; i++) g_sink += (unsigned)f.record_batches[i].offset;
    qv_footer_reset(&f);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvError err;
  QvIpcReader *mem = NULL;
  QvStatus mem_open = open_memory(&mem, data, size, &err);
  QvStatus mem_last = QV_OK;
  /* decided from the magic alone, also when opening failed */
  QvIpcFormat format = size >= QV_IPC_MAGIC_SIZE && memcmp(data, QV_IPC_MAGIC, QV_IPC_MAGIC_SIZE) == 0
                           ? QV_IPC_FORMAT_FILE
                           : QV_IPC_FORMAT_STREAM;
  if (mem) CHECK(qv_ipc_reader_format(mem) == format);

  /* seekable descriptor, stepped in lockstep with the memory reader */
  if (load_seekable(data, size)) {
    QvIpcReader *fdr = NULL;
    QvStatus fd_open = open_fd(&fdr, seekable_fd(), &err);
    CHECK(fd_open == mem_open);
    if (fdr) {
      CHECK(qv_ipc_reader_format(fdr) == format);
      QvStatus fd_last;
      drain(fdr, mem, &fd_last);
      mem_last = fd_last;
      if (format == QV_IPC_FORMAT_FILE) check_footer(fdr, mem);
      qv_ipc_reader_free(fdr);
    }
    /* the same file by path: pread for metadata, one mapping per body */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", seekable_fd());
    QvSource *src = NULL;
    QvIpcReader *pathr = NULL, *ref = NULL;
    if (qv_source_new_path(&src, path, &err) == QV_OK) {
      QvIpcReaderOptions o;
      memset(&o, 0, sizeof o);
      o.map_each_body = true;
      QvStatus path_open = qv_ipc_reader_new(&pathr, src, &o, &err);
      qv_source_free(src);
      CHECK(path_open == mem_open);
      if (pathr && open_memory(&ref, data, size, &err) == QV_OK) {
        QvStatus path_last;
        drain(pathr, ref, &path_last);
        CHECK(path_last == mem_last);
        if (format == QV_IPC_FORMAT_FILE) check_footer(pathr, ref);
      }
      qv_ipc_reader_free(ref);
      qv_ipc_reader_free(pathr);
    }
  } else if (mem) {
    drain(mem, NULL, &mem_last);
    if (format == QV_IPC_FORMAT_FILE) check_footer(mem, NULL);
  }
  qv_ipc_reader_free(mem);

  int pfd = load_pipe(data, size);
  if (pfd >= 0) {
    QvIpcReader *pr = NULL;
    QvStatus p_open = open_fd(&pr, pfd, &err);
    if (format == QV_IPC_FORMAT_STREAM) CHECK(p_open == mem_open);
    if (pr) {
      QvStatus p_last;
      if (format == QV_IPC_FORMAT_STREAM && mem_open == QV_OK) {
        QvIpcReader *again = NULL;
        CHECK(open_memory(&again, data, size, &err) == QV_OK);
        drain(pr, again, &p_last);
        CHECK(p_last == mem_last);
        qv_ipc_reader_free(again);
      } else {
        drain(pr, NULL, &p_last);
        QvFooter f;
        CHECK(qv_ipc_reader_footer(pr, &f, NULL, NULL, &err) == QV_EARG);
      }
      qv_ipc_reader_free(pr);
    }
    close(pfd);
  }
  return 0;
}
