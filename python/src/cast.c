/* Value casts (quiver/sparse.h qv_sparse_cast, quiver/tensor.h
 * qv_tensor_cast): _sparse_cast(tensor, value_type), behind
 * quiver.write_sparse(..., value_type=). */
#include "qvpy.h"

typedef struct SparseCast {
  const QvSparseTensor *in;
  QvArrowType to;
} SparseCast;

static PyObject *py_sparse_cast(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"tensor", "value_type", NULL};
  PyObject *obj, *vt_obj;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O", kw, qs->SparseType, &obj, &vt_obj))
    return NULL;
  SparseCast c = {&((QvPySparse *)obj)->s, QV_ARROW_NONE};
  if (qvpy_parse_value_type(qs, vt_obj, &c.to) < 0) return NULL;
  if (c.to == QV_ARROW_NONE) {
    Py_INCREF(obj);
    return obj;
  }
  QvPySparse *r = qvpy_sparse_new(qs);
  if (!r) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_sparse_cast(c.in, c.to, &r->s, &err);
  QVPY_END_CALL
  if (st) {
    Py_DECREF(r);
    qv_error_prefix(&err, "value_type %s", qv_arrow_type_name(c.to));
    return qvpy_raise(qs, st, &err);
  }
  return (PyObject *)r;
}

PyMethodDef qvpy_cast_methods[] = {
    {"_sparse_cast", (PyCFunction)(void (*)(void))py_sparse_cast, METH_VARARGS | METH_KEYWORDS,
     "_sparse_cast(tensor, value_type)\n--\n\nA _Sparse with its values cast (exact or refused)."},
    {NULL, NULL, 0, NULL}};
