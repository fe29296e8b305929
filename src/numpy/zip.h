/* A strict zip reader and the record writers the .npz writer needs
 * (PKWARE APPNOTE 6.3: central directory, zip64, local headers, data
 * descriptors). The reader hands out where each member's bytes lie inside
 * the archive, so a stored member can be used in place (zero-copy). */
#ifndef QUIVER_NUMPY_ZIP_H
#define QUIVER_NUMPY_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

#define QV_ZIP_STORED 0
#define QV_ZIP_DEFLATED 8

typedef struct QvZipEntry {
  const uint8_t *name; /* inside the archive, not NUL-terminated */
  size_t name_len;
  uint16_t flags;  /* general purpose bits */
  uint16_t method; /* 0 stored, 8 deflated, others are the caller's to refuse */
  uint32_t crc;
  uint64_t csize, usize;
  uint64_t header_offset; /* the local header */
  uint64_t data_offset;   /* the member's first (compressed) byte */
} QvZipEntry;

typedef struct QvZipArchive {
  const uint8_t *data;
  size_t size;
  QvZipEntry *entries;
  size_t count;
} QvZipArchive;

/* Parses data[0, size) and checks it whole before anything is read: one end
 * record (zip64 when present), a central directory that ends where the end
 * records begin, every entry's local header agreeing with the central
 * directory (name, flags, method, CRC and sizes, data descriptors too),
 * every member's bytes inside the archive before the central directory, no
 * two members overlapping, no encryption, no multi-disk archive. Messages
 * start with "npz: " (the only client). z is zeroed on failure. */
QvStatus qvi_zip_open(QvZipArchive *z, const uint8_t *data, size_t size, QvError *error);
void qvi_zip_close(QvZipArchive *z);
/* A member's name for messages: printable ASCII, other bytes as '?',
 * truncated to fit out (at least 8 bytes). */
void qvi_zip_entry_name(const QvZipEntry *e, char *out, size_t out_size);

/* ---- writing (all values little-endian, DOS epoch timestamps) */

/* The largest local header qvi_zip_local_header writes for names of up to
 * QV_ZIP_NAME_MAX bytes. */
#define QV_ZIP_NAME_MAX 255
#define QV_ZIP_LOCAL_MAX (30 + QV_ZIP_NAME_MAX + 20 + 64 + 6)
#define QV_ZIP_CENTRAL_MAX (46 + QV_ZIP_NAME_MAX + 28)
#define QV_ZIP_END_MAX (56 + 20 + 22)

typedef struct QvZipWriteEntry {
  const char *name; /* at most QV_ZIP_NAME_MAX bytes */
  uint16_t method;
  uint32_t crc;
  uint64_t csize, usize;
  uint64_t offset; /* where its local header starts */
} QvZipWriteEntry;

/* The local header of e; with `align` (a power of two <= 64, or 0) an extra
 * field pads it so the member's data starts at a multiple of align in the
 * archive. Returns its length. */
size_t qvi_zip_local_header(uint8_t *out, const QvZipWriteEntry *e, unsigned align);
/* The central directory entry of e; returns its length. */
size_t qvi_zip_central_entry(uint8_t *out, const QvZipWriteEntry *e);
/* The end records (zip64 ones when a count, size or offset needs them).
 * Returns their length. */
size_t qvi_zip_end_records(uint8_t *out, uint64_t count, uint64_t cd_offset, uint64_t cd_size);

#endif
