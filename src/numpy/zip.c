/* Strict zip reader and record writers (see zip.h). */
#include "numpy/zip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define EXTRA_ZIP64 0x0001u
/* Android's zipalign padding field: 2 bytes of alignment, then zeros. */
#define EXTRA_ALIGN 0xD935u

#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DESCRIPTOR 0x0008u
#define FLAG_STRONG_ENCRYPTION 0x0040u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void wr16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void wr32(uint8_t *p, uint32_t v) {
  wr16(p, (uint16_t)v);
  wr16(p + 2, (uint16_t)(v >> 16));
}
static void wr64(uint8_t *p, uint64_t v) {
  wr32(p, (uint32_t)v);
  wr32(p + 4, (uint32_t)(v >> 32));
}

void qvi_zip_entry_name(const QvZipEntry *e, char *out, size_t out_size) {
  size_t n = e->name_len, room = out_size - 1;
  bool cut = n > room;
  if (cut) n = room - 3;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = e->name[i];
    out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
  }
  if (cut) memcpy(out + n, "...", 3), n += 3;
  out[n] = '\0';
}

static QvStatus bad(QvError *error, const char *why) {
  return qv_error_set(error, QV_EINVAL, "npz: not a valid zip archive: %s", why);
}

/* The zip64 extended information field of an extra area: the 64-bit
 * values replace, in this order, those of *usize, *csize, *offset whose
 * 32-bit field was 0xFFFFFFFF (and the disk number, ignored). Every field
 * must lie inside the area. */
static QvStatus parse_extra(const uint8_t *p, size_t n, uint64_t *usize, uint64_t *csize,
                            uint64_t *offset, bool *zip64, const char *name, QvError *error) {
  *zip64 = false;
  size_t i = 0;
  while (i < n) {
    if (n - i < 4)
      return qv_error_set(error, QV_EINVAL, "npz: member %s: truncated extra field", name);
    uint16_t id = rd16(p + i), len = rd16(p + i + 2);
    if (len > n - i - 4)
      return qv_error_set(error, QV_EINVAL, "npz: member %s: extra field runs past its area",
                          name);
    if (id == EXTRA_ZIP64) {
      if (*zip64)
        return qv_error_set(error, QV_EINVAL, "npz: member %s: two zip64 extra fields", name);
      *zip64 = true;
      const uint8_t *f = p + i + 4;
      size_t need = 0;
      uint64_t *vals[3] = {usize, csize, offset};
      for (int k = 0; k < 3; k++) {
        if (vals[k] == NULL || *vals[k] != 0xFFFFFFFFu) continue;
        if (len < need + 8)
          return qv_error_set(error, QV_EINVAL, "npz: member %s: zip64 extra field too short",
                              name);
        *vals[k] = rd64(f + need);
        need += 8;
      }
    }
    i += 4 + (size_t)len;
  }
  return QV_OK;
}

static int by_offset(const void *x, const void *y) {
  const QvZipEntry *a = *(const QvZipEntry *const *)x, *b = *(const QvZipEntry *const *)y;
  return a->header_offset < b->header_offset ? -1 : a->header_offset > b->header_offset;
}

/* Where the end of central directory record starts: the last signature
 * whose comment reaches exactly the end of the input. */
static bool find_end(const uint8_t *d, size_t size, size_t *at) {
  size_t lowest = size > 22 + 0xFFFF ? size - 22 - 0xFFFF : 0;
  for (size_t pos = size - 22;; pos--) {
    if (rd32(d + pos) == SIG_END && pos + 22 + rd16(d + pos + 20) == size) {
      *at = pos;
      return true;
    }
    if (pos == lowest) return false;
  }
}

/* The local header of e agrees with its central directory entry; sets the
 * data offset and where the member (data descriptor included) ends. */
static QvStatus check_local(const uint8_t *d, uint64_t cd_offset, QvZipEntry *e, uint64_t *end,
                            QvError *error) {
  char name[80];
  qvi_zip_entry_name(e, name, sizeof name);
  uint64_t h = e->header_offset;
  if (h > cd_offset || cd_offset - h < 30)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s: local header at %" PRIu64
                        " lies outside the members' area (which ends at %" PRIu64 ")",
                        name, h, cd_offset);
  const uint8_t *p = d + h;
  if (rd32(p) != SIG_LOCAL)
    return qv_error_set(error, QV_EINVAL, "npz: member %s: no local header at offset %" PRIu64,
                        name, h);
  uint16_t flags = rd16(p + 6), method = rd16(p + 8);
  uint32_t crc = rd32(p + 14);
  uint64_t csize = rd32(p + 18), usize = rd32(p + 22);
  size_t nlen = rd16(p + 26), elen = rd16(p + 28);
  if (cd_offset - h - 30 < nlen + elen)
    return qv_error_set(error, QV_EINVAL, "npz: member %s: local header runs past the members",
                        name);
  const char *what = NULL;
  if (nlen != e->name_len || memcmp(p + 30, e->name, nlen) != 0)
    what = "name";
  else if ((flags & (FLAG_ENCRYPTED | FLAG_DESCRIPTOR)) !=
           (e->flags & (FLAG_ENCRYPTED | FLAG_DESCRIPTOR)))
    what = "flags";
  else if (method != e->method)
    what = "method";
  if (what)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s: local header disagrees with the central directory (%s)",
                        name, what);
  bool zip64 = false;
  QvStatus st = parse_extra(p + 30 + nlen, elen, &usize, &csize, NULL, &zip64, name, error);
  if (st) return st;
  bool descriptor = (e->flags & FLAG_DESCRIPTOR) != 0;
  /* with a data descriptor the local header may leave CRC and sizes 0 */
  if (!(descriptor && crc == 0) && crc != e->crc)
    what = "CRC";
  else if (!(descriptor && csize == 0) && csize != e->csize)
    what = "compressed size";
  else if (!(descriptor && usize == 0) && usize != e->usize)
    what = "size";
  if (what)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s: local header disagrees with the central directory (%s)",
                        name, what);
  e->data_offset = h + 30 + nlen + elen;
  if (e->csize > cd_offset - e->data_offset)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64
                        " compressed bytes, past the end of the members (%" PRIu64 " left)",
                        name, e->csize, cd_offset - e->data_offset);
  *end = e->data_offset + e->csize;
  if (descriptor) {
    /* [signature] crc, csize, usize: 4-byte sizes, 8 with zip64 */
    uint64_t at = *end, left = cd_offset - at;
    if (left >= 4 && rd32(d + at) == SIG_DESCRIPTOR) at += 4, left -= 4;
    size_t w = zip64 ? 8 : 4;
    if (left < 4 + 2 * w)
      return qv_error_set(error, QV_EINVAL, "npz: member %s: data descriptor runs past the members",
                          name);
    const uint8_t *q = d + at;
    uint64_t dc = w == 8 ? rd64(q + 4) : rd32(q + 4), du = w == 8 ? rd64(q + 12) : rd32(q + 8);
    if (rd32(q) != e->crc || dc != e->csize || du != e->usize)
      return qv_error_set(error, QV_EINVAL,
                          "npz: member %s: data descriptor disagrees with the central directory",
                          name);
    *end = at + 4 + 2 * w;
  }
  return QV_OK;
}

QvStatus qvi_zip_open(QvZipArchive *z, const uint8_t *d, size_t size, QvError *error) {
  memset(z, 0, sizeof *z);
  if (size == 0) return bad(error, "empty input");
  if (size < 22) return bad(error, "too short for an end of central directory record");
  size_t end;
  if (!find_end(d, size, &end)) return bad(error, "no end of central directory record");
  const uint8_t *e = d + end;
  uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6), n_here = rd16(e + 8), n = rd16(e + 10);
  uint64_t cd_size = rd32(e + 12), cd_offset = rd32(e + 16);
  uint64_t cd_end = end;
  if (end >= 20 && rd32(d + end - 20) == SIG_LOCATOR64) {
    const uint8_t *l = d + end - 20;
    uint64_t at = rd64(l + 8);
    if (rd32(l + 4) != 0 || rd32(l + 16) > 1) return bad(error, "multi-disk zip64 archive");
    if (at > end - 20 || end - 20 - at < 56 || rd32(d + at) != SIG_END64)
      return bad(error, "no zip64 end record where its locator points");
    const uint8_t *r = d + at;
    if (rd64(r + 4) != end - 20 - at - 12)
      return bad(error, "zip64 end record does not reach its locator");
    disk = rd32(r + 16);
    cd_disk = rd32(r + 20);
    n_here = rd64(r + 24);
    n = rd64(r + 32);
    cd_size = rd64(r + 40);
    cd_offset = rd64(r + 48);
    cd_end = at;
  } else if (n == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
    return bad(error, "zip64 values without a zip64 end record");
  }
  if (disk != 0 || cd_disk != 0 || n_here != n) return bad(error, "multi-disk archive");
  if (cd_offset > cd_end || cd_end - cd_offset != cd_size)
    return bad(error, "the central directory does not end where the end record begins");
  if (n > cd_size / 46) return bad(error, "more entries than the central directory can hold");
  z->data = d;
  z->size = size;
  z->count = (size_t)n;
  z->entries = calloc(n ? (size_t)n : 1, sizeof *z->entries);
  QvZipEntry **order = calloc(n ? (size_t)n : 1, sizeof *order);
  if (z->entries == NULL || order == NULL) {
    free(order);
    qvi_zip_close(z);
    return qv_error_set(error, QV_ENOMEM, "npz: out of memory for %" PRIu64 " entries", n);
  }
  QvStatus st = QV_OK;
  uint64_t at = cd_offset;
  for (size_t i = 0; i < z->count && st == QV_OK; i++) {
    if (cd_end - at < 46 || rd32(d + at) != SIG_CENTRAL) {
      st = bad(error, "truncated or corrupt central directory");
      break;
    }
    const uint8_t *c = d + at;
    QvZipEntry *x = &z->entries[i];
    x->flags = rd16(c + 8);
    x->method = rd16(c + 10);
    x->crc = rd32(c + 16);
    x->csize = rd32(c + 20);
    x->usize = rd32(c + 24);
    size_t nlen = rd16(c + 28), elen = rd16(c + 30), clen = rd16(c + 32);
    uint16_t start_disk = rd16(c + 34);
    x->header_offset = rd32(c + 42);
    if (cd_end - at - 46 < nlen + elen + clen) {
      st = bad(error, "a central directory entry runs past the directory");
      break;
    }
    x->name = c + 46;
    x->name_len = nlen;
    char name[80];
    qvi_zip_entry_name(x, name, sizeof name);
    bool zip64;
    if (nlen == 0) {
      st = bad(error, "a member without a name");
    } else if ((st = parse_extra(c + 46 + nlen, elen, &x->usize, &x->csize, &x->header_offset,
                                 &zip64, name, error))) {
    } else if (start_disk != 0 && start_disk != 0xFFFF) {
      st = bad(error, "multi-disk archive");
    } else if (x->flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) {
      st = qv_error_set(error, QV_ENOTSUP, "npz: member %s is encrypted", name);
    } else if (x->csize == 0xFFFFFFFFu || x->usize == 0xFFFFFFFFu ||
               x->header_offset == 0xFFFFFFFFu) {
      /* values a zip64 field should have replaced (4 GiB - 1 exactly is
       * refused too: writers use zip64 for it) */
      st = qv_error_set(error, QV_EINVAL, "npz: member %s: zip64 sizes without a zip64 field",
                        name);
    }
    order[i] = x;
    at += 46 + nlen + elen + clen;
  }
  if (st == QV_OK && at != cd_end) st = bad(error, "bytes after the last central directory entry");
  uint64_t *ends = st == QV_OK ? calloc(z->count ? z->count : 1, sizeof *ends) : NULL;
  if (st == QV_OK && ends == NULL)
    st = qv_error_set(error, QV_ENOMEM, "npz: out of memory for %" PRIu64 " entries", n);
  for (size_t i = 0; i < z->count && st == QV_OK; i++)
    st = check_local(d, cd_offset, &z->entries[i], &ends[i], error);
  if (st == QV_OK && z->count > 1) {
    qsort(order, z->count, sizeof *order, by_offset);
    for (size_t i = 0; i + 1 < z->count && st == QV_OK; i++) {
      if (ends[order[i] - z->entries] <= order[i + 1]->header_offset) continue;
      char a[80], b[80];
      qvi_zip_entry_name(order[i], a, sizeof a);
      qvi_zip_entry_name(order[i + 1], b, sizeof b);
      st = qv_error_set(error, QV_EINVAL, "npz: members %s and %s overlap", a, b);
    }
  }
  free(ends);
  free(order);
  if (st) qvi_zip_close(z);
  return st;
}

void qvi_zip_close(QvZipArchive *z) {
  if (z == NULL) return;
  free(z->entries);
  memset(z, 0, sizeof *z);
}

/* ---- writing */

/* 1980-01-01 00:00, the DOS epoch NumPy's members carry too. */
#define DOS_TIME 0
#define DOS_DATE ((0 << 9) | (1 << 5) | 1)

static bool needs64(uint64_t v) { return v >= 0xFFFFFFFFu; }

size_t qvi_zip_local_header(uint8_t *out, const QvZipWriteEntry *e, unsigned align) {
  size_t nlen = strlen(e->name);
  bool z64 = needs64(e->usize) || needs64(e->csize);
  size_t elen = z64 ? 20 : 0;
  size_t pad = 0;
  if (align > 1) {
    pad = (align - (size_t)((e->offset + 30 + nlen + elen) % align)) % align;
    /* the padding field needs 4 bytes of header and 2 of alignment */
    while (pad != 0 && pad < 6) pad += align;
  }
  wr32(out, SIG_LOCAL);
  wr16(out + 4, z64 ? 45 : 20);
  wr16(out + 6, 0);
  wr16(out + 8, e->method);
  wr16(out + 10, DOS_TIME);
  wr16(out + 12, DOS_DATE);
  wr32(out + 14, e->crc);
  wr32(out + 18, z64 ? 0xFFFFFFFFu : (uint32_t)e->csize);
  wr32(out + 22, z64 ? 0xFFFFFFFFu : (uint32_t)e->usize);
  wr16(out + 26, (uint16_t)nlen);
  wr16(out + 28, (uint16_t)(elen + pad));
  memcpy(out + 30, e->name, nlen);
  uint8_t *x = out + 30 + nlen;
  if (z64) {
    wr16(x, EXTRA_ZIP64);
    wr16(x + 2, 16);
    wr64(x + 4, e->usize);
    wr64(x + 12, e->csize);
    x += 20;
  }
  if (pad) {
    wr16(x, EXTRA_ALIGN);
    wr16(x + 2, (uint16_t)(pad - 4));
    wr16(x + 4, (uint16_t)align);
    memset(x + 6, 0, pad - 6);
  }
  return 30 + nlen + elen + pad;
}

size_t qvi_zip_central_entry(uint8_t *out, const QvZipWriteEntry *e) {
  size_t nlen = strlen(e->name);
  bool u64 = needs64(e->usize), c64 = needs64(e->csize), o64 = needs64(e->offset);
  size_t elen = (u64 || c64 || o64) ? 4 + 8 * (size_t)(u64 + c64 + o64) : 0;
  wr32(out, SIG_CENTRAL);
  wr16(out + 4, (uint16_t)(3 << 8 | (elen ? 45 : 20))); /* made by: Unix */
  wr16(out + 6, elen ? 45 : 20);
  wr16(out + 8, 0);
  wr16(out + 10, e->method);
  wr16(out + 12, DOS_TIME);
  wr16(out + 14, DOS_DATE);
  wr32(out + 16, e->crc);
  wr32(out + 20, c64 ? 0xFFFFFFFFu : (uint32_t)e->csize);
  wr32(out + 24, u64 ? 0xFFFFFFFFu : (uint32_t)e->usize);
  wr16(out + 28, (uint16_t)nlen);
  wr16(out + 30, (uint16_t)elen);
  wr16(out + 32, 0);                   /* comment */
  wr16(out + 34, 0);                   /* disk */
  wr16(out + 36, 0);                   /* internal attributes */
  wr32(out + 38, 0100644u << 16);      /* a regular file, rw-r--r-- */
  wr32(out + 42, o64 ? 0xFFFFFFFFu : (uint32_t)e->offset);
  memcpy(out + 46, e->name, nlen);
  uint8_t *x = out + 46 + nlen;
  if (elen) {
    wr16(x, EXTRA_ZIP64);
    wr16(x + 2, (uint16_t)(elen - 4));
    x += 4;
    if (u64) wr64(x, e->usize), x += 8;
    if (c64) wr64(x, e->csize), x += 8;
    if (o64) wr64(x, e->offset), x += 8;
  }
  return 46 + nlen + elen;
}

size_t qvi_zip_end_records(uint8_t *out, uint64_t count, uint64_t cd_offset, uint64_t cd_size) {
  bool z64 = count >= 0xFFFF || needs64(cd_offset) || needs64(cd_size);
  size_t n = 0;
  if (z64) {
    uint64_t at = cd_offset + cd_size;
    wr32(out, SIG_END64);
    wr64(out + 4, 44);
    wr16(out + 12, 3 << 8 | 45);
    wr16(out + 14, 45);
    wr32(out + 16, 0);
    wr32(out + 20, 0);
    wr64(out + 24, count);
    wr64(out + 32, count);
    wr64(out + 40, cd_size);
    wr64(out + 48, cd_offset);
    wr32(out + 56, SIG_LOCATOR64);
    wr32(out + 60, 0);
    wr64(out + 64, at);
    wr32(out + 72, 1);
    n = 76;
  }
  uint8_t *e = out + n;
  wr32(e, SIG_END);
  wr16(e + 4, 0);
  wr16(e + 6, 0);
  wr16(e + 8, z64 ? 0xFFFF : (uint16_t)count);
  wr16(e + 10, z64 ? 0xFFFF : (uint16_t)count);
  wr32(e + 12, z64 ? 0xFFFFFFFFu : (uint32_t)cd_size);
  wr32(e + 16, z64 ? 0xFFFFFFFFu : (uint32_t)cd_offset);
  wr16(e + 20, 0);
  return n + 22;
}
