"""The structs of the Arrow C Data Interface and C Device Data Interface as
ctypes types, and the PyCapsule calls, for the tests that consume quiver's
exports or produce capsules by hand (test_exports, test_device)."""
import ctypes

c_int64, c_int32, c_void_p = ctypes.c_int64, ctypes.c_int32, ctypes.c_void_p


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p),
                        ("metadata", c_void_p), ("flags", c_int64), ("n_children", c_int64),
                        ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
                        ("dictionary", ctypes.POINTER(ArrowSchema)), ("release", c_void_p),
                        ("private_data", c_void_p)]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [("length", c_int64), ("null_count", c_int64), ("offset", c_int64),
                       ("n_buffers", c_int64), ("n_children", c_int64),
                       ("buffers", ctypes.POINTER(c_void_p)),
                       ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
                       ("dictionary", ctypes.POINTER(ArrowArray)), ("release", c_void_p),
                       ("private_data", c_void_p)]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArray), ("device_id", c_int64), ("device_type", c_int32),
                ("sync_event", c_void_p), ("reserved", c_int64 * 3)]


class ArrowArrayStream(ctypes.Structure):
    pass


# get_last_error returns a pointer (c_void_p): a Python callback cannot
# return a c_char_p that outlives the call
ArrowArrayStream._fields_ = [
    ("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                    ctypes.POINTER(ArrowSchema))),
    ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                  ctypes.POINTER(ArrowArray))),
    ("get_last_error", ctypes.CFUNCTYPE(c_void_p, ctypes.POINTER(ArrowArrayStream))),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))),
    ("private_data", c_void_p)]


class ArrowDeviceArrayStream(ctypes.Structure):
    pass


GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream),
                              ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream),
                            ctypes.POINTER(ArrowDeviceArray))
GET_ERROR = ctypes.CFUNCTYPE(c_void_p, ctypes.POINTER(ArrowDeviceArrayStream))
STREAM_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowDeviceArrayStream))
ArrowDeviceArrayStream._fields_ = [("device_type", c_int32), ("get_schema", GET_SCHEMA),
                                   ("get_next", GET_NEXT), ("get_last_error", GET_ERROR),
                                   ("release", STREAM_RELEASE), ("private_data", c_void_p)]
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))

capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_name = ctypes.pythonapi.PyCapsule_GetName
capsule_name.restype = ctypes.c_char_p
capsule_name.argtypes = [ctypes.py_object]
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
