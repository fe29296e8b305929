#!/usr/bin/env bash
# quiver <-> NumPy through DLPack, with no copy either way: a small ctypes
# shim wraps quiver's DLManagedTensor in a "dltensor" capsule that
# numpy.from_dlpack imports (same address, same values and strides; the
# tensor's owner is released once NumPy lets go), and quiver imports NumPy's
# own capsule (same address; NumPy's deleter runs when the view is reset).
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_python numpy
"$py" -c 'import numpy; numpy.from_dlpack' 2>/dev/null || qv_skip "numpy.from_dlpack not available"
# python cannot load an ASan-instrumented library unless the ASan runtime is
# preloaded into the interpreter itself; the plain build runs this test.
if grep -q '^QV_SANITIZE:BOOL=ON' "$QV_BINARY_DIR/CMakeCache.txt" 2>/dev/null; then
  echo "sanitizer build: python cannot load an ASan-instrumented libquiver.so: skipped (the plain build runs it)"
  exit 77
fi
lib=$(find "$QV_BINARY_DIR" -maxdepth 1 -name 'libquiver.so' | head -n 1)
if [ -z "$lib" ]; then echo "libquiver.so not built"; exit 1; fi
exec "$py" - "$lib" <<'EOF'
import ctypes as C
import gc
import sys

import numpy as np
from checks import Checks

q = C.CDLL(sys.argv[1])
checks = Checks()
check = checks.check



class QvTensor(C.Structure):
    _fields_ = [("type", C.c_int), ("ndim", C.c_int32), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("dim_names", C.c_void_p),
                ("data", C.c_void_p), ("data_size", C.c_int64), ("owner", C.c_void_p),
                ("private_data", C.c_void_p)]


class QvTensorDesc(C.Structure):
    _fields_ = [("type", C.c_int), ("ndim", C.c_int64), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("dim_names", C.c_void_p),
                ("data", C.c_void_p), ("data_size", C.c_int64), ("owner", C.c_void_p),
                ("n_strides", C.c_int64), ("n_dim_names", C.c_int64)]


class QvError(C.Structure):
    _fields_ = [("code", C.c_int), ("message", C.c_char * 1024)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device_type", C.c_int32), ("device_id", C.c_int32),
                ("ndim", C.c_int), ("code", C.c_uint8), ("bits", C.c_uint8),
                ("lanes", C.c_uint16), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    pass


DELETER = C.CFUNCTYPE(None, C.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", DELETER)]

RELEASE = C.CFUNCTYPE(None, C.c_void_p)
q.qv_owner_new.restype = C.c_void_p
q.qv_owner_new.argtypes = [RELEASE, C.c_void_p]
q.qv_owner_free.argtypes = [C.c_void_p]
q.qv_tensor_init.argtypes = [C.POINTER(QvTensor), C.POINTER(QvTensorDesc), C.POINTER(QvError)]
q.qv_tensor_reset.argtypes = [C.POINTER(QvTensor)]
q.qv_tensor_to_dlpack.argtypes = [C.POINTER(QvTensor), C.POINTER(C.POINTER(DLManagedTensor)),
                                  C.POINTER(QvError)]
q.qv_tensor_from_dlpack.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(QvTensor),
                                    C.POINTER(QvError)]

api = C.pythonapi
api.PyCapsule_New.restype = C.py_object
api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
api.PyCapsule_IsValid.restype = C.c_int
api.PyCapsule_IsValid.argtypes = [C.c_void_p, C.c_char_p]
api.PyCapsule_GetPointer.restype = C.c_void_p
api.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
api.PyCapsule_SetName.restype = C.c_int
api.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
raw_get = C.PYFUNCTYPE(C.c_void_p, C.c_void_p, C.c_char_p)(("PyCapsule_GetPointer", api))

NAME = b"dltensor"  # kept alive: the capsule keeps a pointer to it


# The DLPack capsule protocol: a capsule still named "dltensor" when it dies
# was never consumed, so its destructor runs the deleter. The destructor gets
# a raw pointer (a py_object of a dying object would resurrect it).
@C.CFUNCTYPE(None, C.c_void_p)
def capsule_destructor(cap):
    if api.PyCapsule_IsValid(cap, NAME):
        m = C.cast(raw_get(cap, NAME), C.POINTER(DLManagedTensor))
        m.contents.deleter(m)


class Holder:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


TYPES = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
         "uint32": 7, "uint64": 8, "float16": 9, "float32": 10, "float64": 11}
released = []


@RELEASE
def on_release(p):
    released.append(p)


rng = np.random.default_rng(13)
for name, code in TYPES.items():
    dt = np.dtype(name)
    if dt.kind == "f":
        src = rng.standard_normal((3, 4, 5)).astype(dt)
    else:
        info = np.iinfo(dt)
        src = rng.integers(info.min, info.max, size=(3, 4, 5), dtype=dt, endpoint=True)
    for label, view in (("row-major", src), ("transposed", src.transpose(2, 0, 1)),
                        ("strided", src[:, ::2, 1:])):
        what = f"{name} {label}"
        released.clear()
        owner = q.qv_owner_new(on_release, None)
        shape = (C.c_int64 * view.ndim)(*view.shape)
        strides = (C.c_int64 * view.ndim)(*view.strides)
        t = QvTensor()
        err = QvError()
        desc = QvTensorDesc(type=code, ndim=view.ndim, shape=shape, strides=strides,
                            data=view.ctypes.data, data_size=src.nbytes, owner=owner)
        st = q.qv_tensor_init(C.byref(t), C.byref(desc), C.byref(err))
        q.qv_owner_free(owner)  # the tensor holds it
        check(st == 0, f"{what}: qv_tensor_init: {err.message}")
        m = C.POINTER(DLManagedTensor)()
        st = q.qv_tensor_to_dlpack(C.byref(t), C.byref(m), C.byref(err))
        check(st == 0, f"{what}: qv_tensor_to_dlpack: {err.message}")
        q.qv_tensor_reset(C.byref(t))
        addr = m.contents.dl_tensor.data
        cap = api.PyCapsule_New(C.cast(m, C.c_void_p), NAME,
                                C.cast(capsule_destructor, C.c_void_p))
        arr = np.from_dlpack(Holder(cap))
        del cap
        check(arr.dtype == dt, f"{what}: dtype {arr.dtype}")
        check(arr.shape == view.shape, f"{what}: shape {arr.shape}")
        check(arr.strides == view.strides, f"{what}: strides {arr.strides} vs {view.strides}")
        check(arr.ctypes.data == view.ctypes.data == addr, f"{what}: not the same address")
        check(np.array_equal(arr, view, equal_nan=dt.kind == "f"), f"{what}: values differ")
        check(not released, f"{what}: owner released while NumPy holds the array")
        del arr
        gc.collect()
        check(len(released) == 1, f"{what}: owner released {len(released)} times, not once")

    # NumPy's capsule into quiver: same address; NumPy's deleter when reset
    for label, view in (("row-major", src), ("strided", src[::2, :, 1::2])):
        what = f"numpy {name} {label} -> quiver"
        cap = view.__dlpack__()
        ptr = api.PyCapsule_GetPointer(cap, NAME)
        before = sys.getrefcount(view)
        t = QvTensor()
        err = QvError()
        st = q.qv_tensor_from_dlpack(ptr, None, C.byref(t), C.byref(err))
        check(st == 0, f"{what}: {err.message}")
        if st != 0:
            continue
        api.PyCapsule_SetName(cap, b"used_dltensor")  # consumed: quiver owns it now
        del cap
        check(t.data == view.ctypes.data, f"{what}: not the same address")
        check(t.type == code, f"{what}: type {t.type}")
        check([t.shape[i] for i in range(t.ndim)] == list(view.shape), f"{what}: shape")
        check([t.strides[i] for i in range(t.ndim)] == list(view.strides), f"{what}: strides")
        back = np.lib.stride_tricks.as_strided(
            np.frombuffer((C.c_char * t.data_size).from_address(t.data), dtype=dt),
            shape=view.shape, strides=view.strides)
        check(np.array_equal(back, view, equal_nan=dt.kind == "f"), f"{what}: values differ")
        del back
        q.qv_tensor_reset(C.byref(t))
        gc.collect()
        check(sys.getrefcount(view) < before, f"{what}: NumPy's deleter did not run")

# NumPy's reversed view has negative strides: refused, the capsule stays NumPy's
rev = np.arange(10, dtype=np.int32)[::-1]
cap = rev.__dlpack__()
t = QvTensor()
err = QvError()
st = q.qv_tensor_from_dlpack(api.PyCapsule_GetPointer(cap, NAME), None, C.byref(t), C.byref(err))
check(st == 4 and b"negative strides" in err.message,
      f"negative strides: status {st}, {err.message}")
del cap
bools = np.zeros(3, dtype=bool)
try:
    cap = bools.__dlpack__()
except (BufferError, TypeError):
    cap = None  # this NumPy does not export bool
if cap is not None:
    st = q.qv_tensor_from_dlpack(api.PyCapsule_GetPointer(cap, NAME), None, C.byref(t),
                                 C.byref(err))
    check(st == 4 and b"not a quiver value type" in err.message, f"bool: {err.message}")
    del cap

checks.finish("dlpack numpy")
EOF
