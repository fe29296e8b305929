/* quiver.validate(source): the verdict of `quiver validate`, from the same
 * library call (quiver/validate.h). */
#include "qvpy.h"

#include "quiver/validate.h"

typedef struct ValidateCall {
  QvIpcValidateReport report;
  int threads;
} ValidateCall;

static QvStatus validate_call(QvSource *src, void *ctx, QvError *err) {
  ValidateCall *v = ctx;
  QvRbReadOptions o = {.struct_size = sizeof o, .validate = QV_VALIDATE_FULL, .threads = v->threads};
  QvStatus st = qv_ipc_validate(src, &o, &v->report, err);
  /* the CLI's words after the path */
  if (st) qv_error_prefix(err, "%s", st == QV_ENOTSUP ? "not supported" : "invalid");
  return st;
}

static PyObject *py_validate(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "threads", NULL};
  PyObject *source;
  int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i", kw, &source, &threads)) return NULL;
  if (threads < 0 || threads > QV_RB_MAX_THREADS) {
    PyErr_Format(PyExc_ValueError, "threads must be from 0 to %d", QV_RB_MAX_THREADS);
    return NULL;
  }
  ValidateCall v = {.threads = threads};
  if (qvpy_with_source(qs, source, validate_call, &v) < 0) return NULL;
  char text[160];
  qv_ipc_validate_summary(&v.report, text, sizeof text);
  return PyUnicode_FromString(text);
}

PyMethodDef qvpy_validate_methods[] = {
    {"_validate", (PyCFunction)(void (*)(void))py_validate, METH_VARARGS | METH_KEYWORDS,
     "_validate(source, threads=0)\n--\n\nThe verdict of quiver validate for a valid input."},
    {NULL, NULL, 0, NULL}};
