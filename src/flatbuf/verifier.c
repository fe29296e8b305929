/* Schema-driven FlatBuffers verifier. Everything an accessor may later touch
 * is checked here first: offsets, vtables, lengths, terminators, alignment,
 * required fields, union tags, plus limits on depth and on the number of
 * tables and strings visited (shared sub-objects could otherwise make a small
 * buffer expensive to walk: the work per visit is bounded by the schema, so
 * the total is bounded by max_tables). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "util/errpath.h"

typedef struct Verifier {
  const uint8_t *buf;
  size_t size;
  unsigned depth, max_depth;
  size_t objects, max_tables; /* tables + strings visited, per reference */
  QvError *error;
  /* The path to the current position ("Message.header(RecordBatch).nodes"),
   * kept as frames and spelled out only when a check fails: printing it on
   * every visit was a third of a cheap record batch read. Frames past
   * PATH_FRAMES are counted, not kept (the text would be cut there anyway);
   * the default depth limit (64 tables, up to 3 frames each) fits whole. */
  size_t n_frames;
  struct {
    char kind; /* 'r' root, '.' field, '[' index, '(' union member */
    const char *name;
    size_t index;
  } frames[3 * 64 + 1];
  QvErrPath path; /* the text, made by path_text */
} Verifier;

enum { PATH_FRAMES = sizeof ((Verifier *)0)->frames / sizeof ((Verifier *)0)->frames[0] };

/* Enters a frame; returns what path_pop goes back to. */
static size_t path_push(Verifier *v, char kind, const char *name, size_t index) {
  size_t old = v->n_frames;
  if (old < PATH_FRAMES) {
    v->frames[old].kind = kind;
    v->frames[old].name = name;
    v->frames[old].index = index;
  }
  v->n_frames = old + 1;
  return old;
}

static void path_pop(Verifier *v, size_t old) { v->n_frames = old; }

static const char *path_text(Verifier *v) {
  qvi_errpath_clear(&v->path);
  size_t n = v->n_frames < PATH_FRAMES ? v->n_frames : PATH_FRAMES;
  for (size_t i = 0; i < n; i++) {
    switch (v->frames[i].kind) {
      case 'r': qvi_errpath_push(&v->path, "%s", v->frames[i].name); break;
      case '.': qvi_errpath_push(&v->path, ".%s", v->frames[i].name); break;
      case '[': qvi_errpath_push(&v->path, "[%zu]", v->frames[i].index); break;
      default: qvi_errpath_push(&v->path, "(%s)", v->frames[i].name); break;
    }
  }
  return v->path.text;
}


static bool in_bounds(const Verifier *v, size_t pos, size_t width) {
  return pos <= v->size && width <= v->size - pos;
}

static QvStatus fail(Verifier *v, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static QvStatus fail(Verifier *v, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return qv_error_set(v->error, QV_EINVAL, "%s: %s", path_text(v), msg);
}

/* Follows a uoffset at `pos` (which must be 4-aligned and inside). */
static QvStatus follow(Verifier *v, size_t pos, size_t *target, const char *what) {
  if (pos % 4 != 0) return fail(v, "%s offset at %zu is not 4-byte aligned", what, pos);
  if (!in_bounds(v, pos, 4)) return fail(v, "%s offset at %zu is outside the buffer", what, pos);
  uint32_t rel = qvi_le_u32(v->buf + pos);
  if (rel == 0) return fail(v, "%s offset at %zu is zero", what, pos);
  if ((size_t)rel >= v->size - pos)
    return fail(v, "%s offset %u at %zu points outside the buffer (size %zu)", what, rel, pos,
                v->size);
  *target = pos + rel;
  return QV_OK;
}

static QvStatus verify_table(Verifier *v, size_t pos, const QvFbTableDesc *desc);

static QvStatus count_object(Verifier *v) {
  if (++v->objects > v->max_tables)
    return qv_error_set(v->error, QV_ELIMIT,
                        "%s: more than %zu tables and strings in the buffer (shared "
                        "sub-objects count once per reference)",
                        path_text(v), v->max_tables);
  return QV_OK;
}

static QvStatus verify_string_at(Verifier *v, size_t pos) {
  QvStatus st = count_object(v);
  if (st) return st;
  size_t s = 0;
  st = follow(v, pos, &s, "string");
  if (st) return st;
  if (s % 4 != 0) return fail(v, "string at %zu is not 4-byte aligned", s);
  if (!in_bounds(v, s, 4)) return fail(v, "string length at %zu is outside the buffer", s);
  uint32_t len = qvi_le_u32(v->buf + s);
  if (!in_bounds(v, s + 4, (size_t)len + 1))
    return fail(v, "string of length %u at %zu runs past the end of the buffer", len, s);
  if (v->buf[s + 4 + len] != 0) return fail(v, "string at %zu is not NUL-terminated", s);
  return QV_OK;
}

/* Checks a vector header and extent; returns its element start and count. */
static QvStatus verify_vector_at(Verifier *v, size_t pos, size_t elem_size, size_t align,
                                 size_t *elems, size_t *count) {
  size_t s = 0;
  QvStatus st = follow(v, pos, &s, "vector");
  if (st) return st;
  if (s % 4 != 0) return fail(v, "vector at %zu is not 4-byte aligned", s);
  if (!in_bounds(v, s, 4)) return fail(v, "vector length at %zu is outside the buffer", s);
  uint32_t len = qvi_le_u32(v->buf + s);
  /* an empty vector has no element to misread, and flatc's JSON parser does
   * write empty vectors of 8-byte structs 4-aligned */
  if (len > 0 && align > 4 && (s + 4) % align != 0)
    return fail(v, "vector elements at %zu are not %zu-byte aligned", s + 4, align);
  if ((size_t)len > (v->size - s - 4) / elem_size)
    return fail(v, "vector of %u elements of %zu bytes at %zu runs past the end of the buffer",
                len, elem_size, s);
  *elems = s + 4;
  *count = len;
  return QV_OK;
}

static const char *kind_name(unsigned kind) {
  switch (kind) {
    case QV_FB_SCALAR: return "scalar";
    case QV_FB_STRUCT: return "struct";
    case QV_FB_STRING: return "string";
    case QV_FB_TABLE: return "table";
    case QV_FB_UNION: return "union";
    default: return "vector";
  }
}

/* Field position inside the table, or 0 when absent; checks width. */
static QvStatus field_pos(Verifier *v, size_t table, size_t vt, uint16_t vt_size,
                          uint16_t table_size, unsigned slot, size_t width, size_t align,
                          size_t *out) {
  *out = 0;
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > vt_size) return QV_OK;
  uint16_t off = qvi_le_u16(v->buf + vt + entry);
  if (off == 0) return QV_OK;
  if (off < 4)
    return fail(v, "field at offset %u overlaps its table's vtable offset", off);
  if ((size_t)off + width > table_size)
    return fail(v, "field of %zu bytes at offset %u lies outside its table (%u bytes)", width,
                off, table_size);
  size_t pos = table + off;
  if (align > 1 && pos % align != 0)
    return fail(v, "field at %zu is not %zu-byte aligned", pos, align);
  *out = pos;
  return QV_OK;
}

static QvStatus verify_field(Verifier *v, size_t table, size_t vt, uint16_t vt_size,
                             uint16_t table_size, const QvFbFieldDesc *f) {
  size_t width, align;
  /* a bad description is a programming error, but must not crash or divide
   * by zero on hostile input */
  bool desc_ok = true;
  switch (f->kind) {
    case QV_FB_SCALAR:
      width = align = f->size;
      desc_ok = f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
      break;
    case QV_FB_STRUCT:
      width = f->size;
      align = f->align ? f->align : 1;
      desc_ok = f->size > 0 && (align & (align - 1)) == 0;
      break;
    case QV_FB_VEC_SCALAR:
      width = align = 4;
      desc_ok = f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
      break;
    case QV_FB_VEC_STRUCT:
      width = align = 4;
      desc_ok = f->size > 0 && (f->align & (f->align - 1)) == 0;
      break;
    case QV_FB_TABLE:
    case QV_FB_VEC_TABLE:
      width = align = 4;
      desc_ok = f->table != NULL;
      break;
    case QV_FB_UNION:
      width = align = 4;
      desc_ok = f->slot > 0 && f->union_desc != NULL &&
                (f->union_desc->n_members == 0 || f->union_desc->members != NULL);
      break;
    case QV_FB_STRING:
    case QV_FB_VEC_STRING:
      width = align = 4;
      break;
    default:
      width = align = 4;
      desc_ok = false;
      break;
  }
  if (!desc_ok) return fail(v, "bad field description (kind %u, size %u, align %u)", f->kind,
                            f->size, f->align);
  size_t pos;
  QvStatus st = field_pos(v, table, vt, vt_size, table_size, f->slot, width, align, &pos);
  if (st) return st;

  if (f->kind == QV_FB_UNION) {
    size_t tag_pos;
    st = field_pos(v, table, vt, vt_size, table_size, f->slot - 1u, 1, 1, &tag_pos);
    if (st) return st;
    uint8_t tag = tag_pos ? v->buf[tag_pos] : 0;
    const QvFbUnionDesc *u = f->union_desc;
    if (tag == 0) {
      if (f->required) return fail(v, "required union is NONE");
      return QV_OK; /* a value without a tag is ignored, as flatc does */
    }
    if (tag >= u->n_members || u->members[tag] == NULL)
      return fail(v, "union type %u is not a known %s", tag, u->name);
    if (pos == 0) return fail(v, "union type %u is set but the %s value is missing", tag, u->name);
    size_t target = 0;
    if ((st = follow(v, pos, &target, "table"))) return st;
    size_t old = path_push(v, '(', u->members[tag]->name, 0);
    st = verify_table(v, target, u->members[tag]);
    path_pop(v, old);
    return st;
  }

  if (pos == 0) {
    if (f->required) return fail(v, "required %s field is missing", kind_name(f->kind));
    return QV_OK;
  }

  size_t elems, count;
  switch (f->kind) {
    case QV_FB_SCALAR:
    case QV_FB_STRUCT:
      return QV_OK;
    case QV_FB_STRING:
      return verify_string_at(v, pos);
    case QV_FB_TABLE: {
      size_t target = 0;
      if ((st = follow(v, pos, &target, "table"))) return st;
      return verify_table(v, target, f->table);
    }
    case QV_FB_VEC_SCALAR:
      return verify_vector_at(v, pos, f->size, f->size, &elems, &count);
    case QV_FB_VEC_STRUCT:
      return verify_vector_at(v, pos, f->size, f->align ? f->align : 1, &elems, &count);
    case QV_FB_VEC_STRING:
    case QV_FB_VEC_TABLE:
      if ((st = verify_vector_at(v, pos, 4, 4, &elems, &count))) return st;
      for (size_t i = 0; i < count; i++) {
        size_t old = path_push(v, '[', NULL, i);
        if (f->kind == QV_FB_VEC_STRING) {
          st = verify_string_at(v, elems + 4 * i);
        } else {
          size_t target = 0;
          st = follow(v, elems + 4 * i, &target, "table");
          if (!st) st = verify_table(v, target, f->table);
        }
        path_pop(v, old);
        if (st) return st;
      }
      return QV_OK;
    default:
      return fail(v, "bad field description (kind %u)", f->kind);
  }
}

static QvStatus verify_table(Verifier *v, size_t pos, const QvFbTableDesc *desc) {
  QvStatus st = count_object(v);
  if (st) return st;
  if (v->depth >= v->max_depth)
    return qv_error_set(v->error, QV_ELIMIT, "%s: tables nested deeper than %u",
                        path_text(v), v->max_depth);
  if (pos % 4 != 0) return fail(v, "table at %zu is not 4-byte aligned", pos);
  if (!in_bounds(v, pos, 4)) return fail(v, "table at %zu is outside the buffer", pos);
  int64_t vt = (int64_t)pos - (int64_t)qvi_le_i32(v->buf + pos);
  if (vt < 0 || !in_bounds(v, (size_t)vt, 4))
    return fail(v, "vtable of table at %zu is outside the buffer", pos);
  if (vt % 2 != 0) return fail(v, "vtable at %lld is not 2-byte aligned", (long long)vt);
  uint16_t vt_size = qvi_le_u16(v->buf + vt);
  uint16_t table_size = qvi_le_u16(v->buf + vt + 2);
  if (vt_size < 4 || vt_size % 2 != 0)
    return fail(v, "vtable at %lld has invalid size %u", (long long)vt, vt_size);
  if (!in_bounds(v, (size_t)vt, vt_size))
    return fail(v, "vtable at %lld (%u bytes) runs past the end of the buffer", (long long)vt,
                vt_size);
  if (table_size < 4 || !in_bounds(v, pos, table_size))
    return fail(v, "table at %zu (%u bytes) runs past the end of the buffer", pos, table_size);
  /* Only the entries of described fields are checked (in field_pos), as
   * flatc does: entries of fields unknown to this schema version are never
   * read, and scanning a 32k-entry vtable on every visit of a shared table
   * would cost max_tables * 32k steps. */

  v->depth++;
  for (unsigned i = 0; i < desc->n_fields && st == QV_OK; i++) {
    const QvFbFieldDesc *f = &desc->fields[i];
    size_t old = path_push(v, '.', f->name, 0);
    st = verify_field(v, pos, (size_t)vt, vt_size, table_size, f);
    path_pop(v, old);
  }
  v->depth--;
  return st;
}

QvStatus qvi_fb_verify(const uint8_t *buf, size_t size, const QvFbTableDesc *root,
                      const QvFbVerifyOptions *options, QvError *error) {
  Verifier v; /* not zeroed whole: the frames above n_frames are never read */
  v.n_frames = 0;
  v.depth = 0;
  v.objects = 0;
  v.buf = buf;
  v.size = size;
  v.error = error;
  v.max_depth = options && options->max_depth ? options->max_depth : 64;
  v.max_tables = options && options->max_tables ? options->max_tables : 1000000;
  if (root == NULL)
    return qv_error_set(error, QV_EARG, "FlatBuffers verifier: no root table description");
  if (buf == NULL || size < 8)
    return qv_error_set(error, QV_EINVAL, "%s: buffer of %zu bytes is too small for a FlatBuffer",
                        root->name, size);
  if (size > QV_FB_MAX_SIZE)
    return qv_error_set(error, QV_ELIMIT, "%s: buffer of %zu bytes exceeds the 2 GiB limit",
                        root->name, size);
  path_push(&v, 'r', root->name, 0);
  size_t target = 0;
  QvStatus st = follow(&v, 0, &target, "root");
  if (st) return st;
  return verify_table(&v, target, root);
}
