/* A small, strict FlatBuffers reader, verifier and builder.
 *
 * Generic: nothing here knows about Arrow. The wire format is little-endian
 * whatever the host: getters return host values, adders and scalar vectors
 * take host values, and both convert on a big-endian host.
 *
 * Reader: every accessor is bounds-checked against the buffer, so even a
 * buffer that skipped verification cannot make an accessor read outside it;
 * an out-of-bounds or absent field reads as its default / as empty.
 *
 * Verifier: driven by a schema description (QvFbTableDesc) and checks every
 * offset, vtable, vector length, string terminator and alignment up front,
 * with a depth limit and a table-count limit, and reports the first violation
 * with a path ("Message.header: union type 9 is not a known MessageHeader").
 *
 * Builder: back-to-front construction, vtable deduplication, deterministic. */
#ifndef QUIVER_FLATBUF_H
#define QUIVER_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "util/load.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest buffer the layer accepts: FlatBuffers offsets are 32-bit. */
#define QV_FB_MAX_SIZE ((size_t)0x7FFFFFFF)

/* ---------------------------------------------------------------- reader */

typedef struct QvFbTable {
  const uint8_t *buf; /* NULL: absent/invalid table */
  size_t size;
  size_t pos;    /* table start */
  size_t vt;     /* vtable start */
  uint16_t vt_size;
} QvFbTable;

typedef struct QvFbString {
  const char *data; /* NULL when absent; otherwise data[len] == '\0' */
  size_t len;
} QvFbString;

typedef struct QvFbVector {
  const uint8_t *buf; /* NULL when absent */
  size_t size;
  size_t pos; /* first element */
  size_t len; /* element count (clamped so that len*elem_size fits the buffer) */
  size_t elem_size;
} QvFbVector;

/* Root table of a finished buffer (optionally size-prefixed: no). */
bool qvi_fb_root(const uint8_t *buf, size_t size, QvFbTable *out);
static inline bool qvi_fb_table_valid(QvFbTable t) { return t.buf != NULL; }

/* Position of a field's bytes, or 0 when absent / out of bounds. */
size_t qvi_fb_field_pos(QvFbTable t, unsigned slot, size_t width);
bool qvi_fb_has(QvFbTable t, unsigned slot);

uint8_t qvi_fb_u8(QvFbTable t, unsigned slot, uint8_t def);
int8_t qvi_fb_i8(QvFbTable t, unsigned slot, int8_t def);
bool qvi_fb_bool(QvFbTable t, unsigned slot, bool def);
int16_t qvi_fb_i16(QvFbTable t, unsigned slot, int16_t def);
uint16_t qvi_fb_u16(QvFbTable t, unsigned slot, uint16_t def);
int32_t qvi_fb_i32(QvFbTable t, unsigned slot, int32_t def);
uint32_t qvi_fb_u32(QvFbTable t, unsigned slot, uint32_t def);
int64_t qvi_fb_i64(QvFbTable t, unsigned slot, int64_t def);
uint64_t qvi_fb_u64(QvFbTable t, unsigned slot, uint64_t def);
float qvi_fb_f32(QvFbTable t, unsigned slot, float def);
double qvi_fb_f64(QvFbTable t, unsigned slot, double def);

/* Inline struct of `size` bytes: pointer into the buffer, or NULL. Its
 * members are little-endian: read them with qvi_le_* (util/load.h). */
const uint8_t *qvi_fb_struct(QvFbTable t, unsigned slot, size_t size);
QvFbTable qvi_fb_table(QvFbTable t, unsigned slot);
QvFbString qvi_fb_string(QvFbTable t, unsigned slot);
QvFbVector qvi_fb_vector(QvFbTable t, unsigned slot, size_t elem_size);

/* Vector element access; out-of-range index reads as 0 / absent. */
const uint8_t *qvi_fb_vec_at(QvFbVector v, size_t i);
uint8_t qvi_fb_vec_u8(QvFbVector v, size_t i);
int16_t qvi_fb_vec_i16(QvFbVector v, size_t i);
int32_t qvi_fb_vec_i32(QvFbVector v, size_t i);
int64_t qvi_fb_vec_i64(QvFbVector v, size_t i);
double qvi_fb_vec_f64(QvFbVector v, size_t i);
QvFbTable qvi_fb_vec_table(QvFbVector v, size_t i);
QvFbString qvi_fb_vec_string(QvFbVector v, size_t i);


/* -------------------------------------------------------------- verifier */

typedef enum QvFbKind {
  QV_FB_SCALAR,       /* size = 1,2,4,8 */
  QV_FB_STRUCT,       /* size, align */
  QV_FB_STRING,
  QV_FB_TABLE,        /* table = sub-table description */
  QV_FB_VEC_SCALAR,   /* size = element size */
  QV_FB_VEC_STRUCT,   /* size, align of element */
  QV_FB_VEC_STRING,
  QV_FB_VEC_TABLE,    /* table = element description */
  QV_FB_UNION         /* slot is the value slot; its ubyte tag is slot-1 */
} QvFbKind;

struct QvFbTableDesc;

typedef struct QvFbUnionDesc {
  const char *name;                           /* e.g. "MessageHeader" */
  unsigned n_members;                         /* tags 1..n_members-1 */
  const struct QvFbTableDesc *const *members; /* index = tag; NULL = unknown */
} QvFbUnionDesc;

typedef struct QvFbFieldDesc {
  const char *name;
  uint16_t slot;
  uint8_t kind;     /* QvFbKind */
  uint8_t required;
  uint16_t size;    /* scalar / struct / element size */
  uint16_t align;   /* struct alignment */
  const struct QvFbTableDesc *table;
  const QvFbUnionDesc *union_desc;
} QvFbFieldDesc;

typedef struct QvFbTableDesc {
  const char *name;
  unsigned n_fields;
  const QvFbFieldDesc *fields;
} QvFbTableDesc;

typedef struct QvFbVerifyOptions {
  /* nested tables; 0 = default 64 (QV_ELIMIT beyond). The verifier recurses
   * once per level, so this also bounds its stack use. */
  unsigned max_depth;
  /* tables and strings visited, a shared one once per reference; bounds the
   * verification work. 0 = default 1,000,000 (QV_ELIMIT beyond) */
  size_t max_tables;
} QvFbVerifyOptions;

/* Verifies that buf[0..size) is a well-formed FlatBuffer whose root is a
 * `root` table. QV_OK, or QV_EINVAL with the first violation in `error`
 * (QV_ELIMIT for the limits above or a buffer over QV_FB_MAX_SIZE). Fields
 * the description does not list are not checked (they are never read).
 * Alignment is checked relative to buf, as a FlatBuffer's producer aligns
 * it. After QV_OK, every accessor on a described field reads what the
 * verifier checked: nothing present reads as absent. */
QvStatus qvi_fb_verify(const uint8_t *buf, size_t size, const QvFbTableDesc *root,
                      const QvFbVerifyOptions *options, QvError *error);

/* --------------------------------------------------------------- builder */

typedef uint32_t QvFbRef; /* offset from the end of the buffer; 0 = none */

typedef struct QvFbBuilder {
  uint8_t *buf;      /* data occupies buf[cap-used .. cap) */
  size_t cap;
  size_t used;
  size_t min_align;
  /* current table */
  bool in_table;
  size_t table_start_used;
  uint32_t *field_offs; /* per slot: `used` value after the field was written, 0 = absent */
  unsigned n_slots_cap;
  unsigned max_slot_plus1;
  /* written vtables, for deduplication */
  QvFbRef *vtables;
  size_t n_vtables, vtables_cap;
  bool failed; /* allocation failure, size limit or misuse: every later call is a no-op */
  QvStatus fail_status; /* why: QV_ENOMEM, QV_ELIMIT or QV_EARG (first failure wins) */
  bool finished;        /* qvi_fb_finish succeeded: the buffer is sealed */
} QvFbBuilder;

void qvi_fb_builder_init(QvFbBuilder *b);
void qvi_fb_builder_reset(QvFbBuilder *b);

QvFbRef qvi_fb_create_string(QvFbBuilder *b, const char *s, size_t len);
/* Vector of `count` scalars of `elem_size` bytes (1, 2, 4 or 8; anything
 * else is QV_EARG) in host order; stored little-endian. */
QvFbRef qvi_fb_create_vector(QvFbBuilder *b, const void *data, size_t count, size_t elem_size,
                            size_t align);
/* Vector of `count` structs of `elem_size` bytes, given as their wire bytes
 * (members already little-endian: pack them with qvi_st_le_*). */
QvFbRef qvi_fb_create_struct_vector(QvFbBuilder *b, const void *data, size_t count,
                                   size_t elem_size, size_t align);
/* Vector of tables or strings. */
QvFbRef qvi_fb_create_vector_refs(QvFbBuilder *b, const QvFbRef *refs, size_t count);

void qvi_fb_table_start(QvFbBuilder *b);
/* Scalars are omitted when equal to their default (as flatc does; floats
 * compare bitwise, so -0.0 against a 0.0 default is kept). Slots are 0..1000
 * and each may be added once per table. */
void qvi_fb_add_u8(QvFbBuilder *b, unsigned slot, uint8_t v, uint8_t def);
void qvi_fb_add_i8(QvFbBuilder *b, unsigned slot, int8_t v, int8_t def);
void qvi_fb_add_bool(QvFbBuilder *b, unsigned slot, bool v, bool def);
void qvi_fb_add_i16(QvFbBuilder *b, unsigned slot, int16_t v, int16_t def);
void qvi_fb_add_u16(QvFbBuilder *b, unsigned slot, uint16_t v, uint16_t def);
void qvi_fb_add_i32(QvFbBuilder *b, unsigned slot, int32_t v, int32_t def);
void qvi_fb_add_u32(QvFbBuilder *b, unsigned slot, uint32_t v, uint32_t def);
void qvi_fb_add_i64(QvFbBuilder *b, unsigned slot, int64_t v, int64_t def);
void qvi_fb_add_u64(QvFbBuilder *b, unsigned slot, uint64_t v, uint64_t def);
void qvi_fb_add_f32(QvFbBuilder *b, unsigned slot, float v, float def);
void qvi_fb_add_f64(QvFbBuilder *b, unsigned slot, double v, double def);
/* Force a scalar (size 1, 2, 4 or 8, host order) even when it equals its
 * default (e.g. union tags). */
void qvi_fb_add_scalar(QvFbBuilder *b, unsigned slot, const void *v, size_t size);
/* `data` is the struct's wire bytes (members little-endian, see above). */
void qvi_fb_add_struct(QvFbBuilder *b, unsigned slot, const void *data, size_t size, size_t align);
void qvi_fb_add_ref(QvFbBuilder *b, unsigned slot, QvFbRef ref); /* ignored when ref == 0 */
QvFbRef qvi_fb_table_end(QvFbBuilder *b);

/* Writes the root offset. On success *out points into the builder (valid
 * until release) and *out_size is the finished size; the builder is then
 * sealed (further calls fail). Errors: QV_EARG for misuse (an unfinished
 * table, a string/vector/table started inside a table, a bad ref or slot),
 * QV_ENOMEM, QV_ELIMIT when the buffer would exceed QV_FB_MAX_SIZE. */
QvStatus qvi_fb_finish(QvFbBuilder *b, QvFbRef root, const uint8_t **out, size_t *out_size,
                      QvError *error);

#ifdef __cplusplus
}
#endif

#endif
