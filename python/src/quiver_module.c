/* quiver._quiver, the module: its state, multi-phase initialisation and the
 * method tables of the concept files (see qvpy.h for the map).
 *
 * A new concept (a file python/src/<concept>.c) exposes
 * `PyMethodDef qvpy_<concept>_methods[]` (declared in qvpy.h) and is one line
 * in `method_tables` below; if it defines types or needs state, it also
 * gets a qvpy_<concept>_exec function run from module_exec. */
#define QVPY_IMPORT_NUMPY
#include "qvpy.h"

#include <string.h>

#include "quiver/version.h"

QvPyState *qvpy_state(PyObject *module) {
  return PyModule_GetState(module);
}

QvPyState *qvpy_state_of(PyObject *obj) {
  return PyType_GetModuleState(Py_TYPE(obj));
}

PyTypeObject *qvpy_add_type(PyObject *module, PyType_Spec *spec, bool add) {
  PyObject *type = PyType_FromModuleAndSpec(module, spec, NULL);
  if (!type) return NULL;
  const char *dot = strrchr(spec->name, '.');
  if (add && PyModule_AddObjectRef(module, dot ? dot + 1 : spec->name, type) < 0) {
    Py_DECREF(type);
    return NULL;
  }
  return (PyTypeObject *)type; /* the state's reference */
}

void qvpy_free_instance(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type); /* instances of heap types hold their type */
}

static PyMethodDef *const method_tables[] = {qvpy_tensor_methods, qvpy_sparse_methods,
                                             qvpy_io_methods, qvpy_records_methods,
                                             qvpy_table_tensor_methods, qvpy_tensor_column_methods,
                                             qvpy_sparse_column_methods, qvpy_flight_methods,
                                             qvpy_dlpack_methods, qvpy_batch_methods,
                                             qvpy_npy_methods, qvpy_json_methods,
                                             qvpy_device_methods,
                                             qvpy_validate_methods, qvpy_cast_methods};

static int module_exec(PyObject *m) {
  import_array1(-1);
  QvPyState *qs = qvpy_state(m);
  memset(qs, 0, sizeof *qs);
  if (qvpy_errors_exec(m, qs) < 0 || qvpy_tensor_exec(m, qs) < 0 || qvpy_sparse_exec(m, qs) < 0 ||
      qvpy_io_exec(m, qs) < 0 || qvpy_records_exec(m, qs) < 0)
    return -1;
  /* the library's version (quiver/version.h), which is the package's */
  if (PyModule_AddStringConstant(m, "__version__", qv_version()) < 0) return -1;
  for (size_t i = 0; i < sizeof method_tables / sizeof method_tables[0]; i++)
    if (PyModule_AddFunctions(m, method_tables[i]) < 0) return -1;
  return 0;
}

#define QVPY_STATE_OBJECTS(X)                                                                   \
  X(Error) X(InvalidError) X(NotSupportedError) X(CapacityError) X(InputOutputError)            \
  X(OutOfMemoryError) X(TensorType) X(SparseType) X(ReaderType) X(MessageIterType)

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  QvPyState *qs = qvpy_state(m);
  if (!qs) return 0;
#define VISIT(f) Py_VISIT(qs->f);
  QVPY_STATE_OBJECTS(VISIT)
#undef VISIT
  return 0;
}

static int module_clear(PyObject *m) {
  QvPyState *qs = qvpy_state(m);
  if (!qs) return 0;
#define CLEAR(f) Py_CLEAR(qs->f);
  QVPY_STATE_OBJECTS(CLEAR)
#undef CLEAR
  return 0;
}

static void module_free(void *m) {
  module_clear(m);
}

/* Python's slots are void pointers, functions included (ISO C leaves the
 * conversion to the platform; every platform CPython runs on allows it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, (void *)module_exec}, {0, NULL}};
#pragma GCC diagnostic pop

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_quiver",
    .m_doc = "quiver's C extension (see the quiver package).",
    .m_size = sizeof(QvPyState),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__quiver(void) {
  return PyModuleDef_Init(&module_def);
}
