/* quiver's exceptions: quiver.Error and one subclass per QvStatus family.
 *
 * The names do not shadow pyarrow's (a program using both tells
 * quiver.InvalidError from pyarrow.ArrowInvalid) nor Python's builtins
 * (IOError, MemoryError). The 0.5 names (ArrowInvalid, ArrowNotSupported,
 * ArrowCapacityError, ArrowIOError, ArrowMemoryError) stay as aliases of the
 * same classes for one release. */
#include "qvpy.h"

PyObject *qvpy_raise(QvPyState *st, QvStatus status, const QvError *err) {
  /* a file object's own exception wins over quiver's message */
  if (qvpy_take_source_exception(err)) return NULL;
  PyObject *type = st->InvalidError;
  switch (status) {
    case QV_EIO: type = st->InputOutputError; break;
    case QV_ENOTSUP: type = st->NotSupportedError; break;
    case QV_ELIMIT: type = st->CapacityError; break;
    case QV_ENOMEM: type = st->OutOfMemoryError; break;
    default: break;
  }
  const char *msg = err && err->message[0] ? err->message : qv_status_name(status);
  PyErr_SetString(type, msg);
  return NULL;
}

/* A new exception class quiver.<name> deriving from Error and `base` (Error
 * itself from Exception), added to the module (and as `alias`, when set). */
static PyObject *new_error(PyObject *m, PyObject *error, const char *name, const char *alias,
                           PyObject *base, const char *doc) {
  char full[64];
  snprintf(full, sizeof full, "quiver.%s", name);
  PyObject *bases = base ? PyTuple_Pack(2, error, base) : PyTuple_Pack(1, PyExc_Exception);
  if (!bases) return NULL;
  PyObject *e = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
  Py_DECREF(bases);
  if (!e) return NULL;
  if (PyModule_AddObjectRef(m, name, e) < 0 || (alias && PyModule_AddObjectRef(m, alias, e) < 0)) {
    Py_DECREF(e);
    return NULL;
  }
  return e; /* the state's reference */
}

int qvpy_errors_exec(PyObject *m, QvPyState *st) {
  if (!(st->Error = new_error(m, NULL, "Error", NULL, NULL, "Base of every quiver exception.")))
    return -1;
  PyObject *e = st->Error;
  if (!(st->InvalidError = new_error(m, e, "InvalidError", "ArrowInvalid", PyExc_ValueError,
                                     "Malformed or truncated input, or an invalid argument.")) ||
      !(st->NotSupportedError = new_error(m, e, "NotSupportedError", "ArrowNotSupported", PyExc_ValueError,
                                          "Well-formed input quiver does not support.")) ||
      !(st->CapacityError = new_error(m, e, "CapacityError", "ArrowCapacityError", PyExc_ValueError,
                                      "A size limit was exceeded.")) ||
      !(st->InputOutputError = new_error(m, e, "InputOutputError", "ArrowIOError", PyExc_OSError,
                                         "Reading or writing failed.")) ||
      !(st->OutOfMemoryError = new_error(m, e, "OutOfMemoryError", "ArrowMemoryError", PyExc_MemoryError,
                                         "Out of memory.")))
    return -1;
  return 0;
}
