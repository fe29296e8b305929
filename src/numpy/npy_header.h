/* The one .npy header parser (numpy.lib.format), shared by the .npy reader
 * (numeric arrays) and the .npz reader (its 0-d string member format.npy),
 * and what npz.c uses of the .npy reader. */
#ifndef QUIVER_NUMPY_NPY_HEADER_H
#define QUIVER_NUMPY_NPY_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/io.h"
#include "quiver/npy.h"

/* "\x93NUMPY" */
extern const uint8_t qvi_npy_magic[6];
bool qvi_npy_host_big_endian(void);

/* A header's string dtype: 'S<n>' (bytes) or 'U<n>' (UCS-4 code points). */
typedef struct QvNpyString {
  bool present;    /* the dtype is a string dtype (h->type is then unset) */
  int char_size;   /* 1 for S, 4 for U */
  int64_t length;  /* characters per element (>= 1) */
  bool big_endian; /* U only */
} QvNpyString;

/* Parses and validates the preamble and header: exactly the keys descr,
 * fortran_order and shape. Numeric dtypes fill h->type; with `str` non-NULL
 * string dtypes are accepted too and described there (h->data_size then
 * counts their bytes), otherwise they are rejected like every other
 * unsupported dtype. */
QvStatus qvi_npy_header_parse(const uint8_t *data, size_t size, QvNpyHeader *h, QvNpyString *str,
                             QvError *error);

/* A numeric .npy image in memory as a tensor (zero-copy when aligned and in
 * host byte order; `owner`, may be NULL, is retained by a view). *consumed
 * (may be NULL) receives where the array ends. */
QvStatus qvi_npy_read_bytes(const uint8_t *data, size_t size, QvOwner *owner, QvTensor *out,
                           size_t *consumed, QvError *error);
/* As qvi_npy_read_bytes; keep_misaligned: data in host byte order but not
 * aligned to its element size stays a view of `data` (the tensor's data is
 * then misaligned: for callers reading it with unaligned loads only). */
QvStatus qvi_npy_read_bytes_ex(const uint8_t *data, size_t size, QvOwner *owner,
                              bool keep_misaligned, QvTensor *out, size_t *consumed,
                              QvError *error);

/* Reads a whole-input format from a source: `parse` gets every byte of
 * the input (a zero-copy view of memory or a regular file, else everything
 * read from the fd into an aligned buffer) with an owner that keeps them
 * alive (retain it to keep views); errors are prefixed with the source's
 * name. */
typedef QvStatus (*QvNpyParseFn)(const uint8_t *data, size_t size, QvOwner *owner, void *out,
                                 QvError *error);
QvStatus qvi_npy_read_source(QvSource *source, int64_t max_input_size, QvNpyParseFn parse, void *out,
                             QvError *error);

/* The header qv_npy_write writes for t (preamble, dict and padding to a
 * multiple of 64 bytes) in out; *direct: the data is t's memory as it is
 * (contiguous in the order the header says), else qv_npy_write copies it. */
#define QV_NPY_WRITE_HEADER_MAX (2048 + 64)
QvStatus qvi_npy_write_header(const QvTensor *t, uint8_t out[QV_NPY_WRITE_HEADER_MAX], size_t *len,
                             bool *direct, QvError *error);

#endif
