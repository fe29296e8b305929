"""The module itself: exception names and aliases, module state, types that only readers make."""
import importlib.util
import re
import sys

import numpy as np
import pytest

import quiver
from quiver import _quiver


NEW = {
    "InvalidError": ("ArrowInvalid", ValueError),
    "NotSupportedError": ("ArrowNotSupported", ValueError),
    "CapacityError": ("ArrowCapacityError", ValueError),
    "InputOutputError": ("ArrowIOError", OSError),
    "OutOfMemoryError": ("ArrowMemoryError", MemoryError),
}


@pytest.mark.parametrize("name", sorted(NEW))
def test_exception_names(name):
    alias, builtin = NEW[name]
    cls = getattr(quiver, name)
    assert cls.__name__ == name and cls.__module__ == "quiver"
    assert issubclass(cls, quiver.Error) and issubclass(cls, builtin)
    # the 0.4 name is the same class, kept for one release
    assert getattr(quiver, alias) is cls
    assert name in quiver.__all__ and alias not in quiver.__all__


def test_names_do_not_shadow():
    import builtins
    for name in ["Error"] + sorted(NEW):
        assert not name.startswith("Arrow") and not hasattr(builtins, name)


def test_errors_raised_with_new_names():
    with pytest.raises(quiver.InvalidError):
        quiver.read_tensor(b"\xff\xff\xff\xff\x08\x00\x00\x00garbage!")
    with pytest.raises(quiver.NotSupportedError):
        quiver.write_tensor("/nonexistent/x", np.zeros(2, dtype=np.complex64))
    with pytest.raises(quiver.InputOutputError):
        quiver.read_tensor("/nonexistent/quiver-no-such-file")


@pytest.mark.parametrize("cls", [quiver.Tensor, quiver.RecordBatchReader, _quiver._Sparse])
def test_types_only_from_readers(cls):
    with pytest.raises(TypeError):
        cls()


def test_module_state_per_module_object():
    # Multi-phase init: a second module object made from the same extension
    # has its own exception classes and types, and raises its own.
    spec = importlib.util.find_spec("quiver._quiver")
    assert spec is not None and spec.loader is not None
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    assert other is not _quiver and sys.modules["quiver._quiver"] is _quiver
    assert other.InvalidError is not _quiver.InvalidError
    assert other.Tensor is not _quiver.Tensor
    with pytest.raises(other.InvalidError):
        other.read_tensor(b"\xff\xff\xff\xff\x08\x00\x00\x00garbage!")
    try:
        other.read_tensor(b"\xff\xff\xff\xff\x08\x00\x00\x00garbage!")
    except Exception as e:  # noqa: BLE001 - the class is the point
        assert not isinstance(e, _quiver.Error)
    buf = __import__("io").BytesIO()
    other.write_tensor(buf, np.arange(6, dtype=np.int32).reshape(2, 3))
    t = other.read_tensor_object(buf.getvalue())
    assert type(t) is other.Tensor and type(t) is not _quiver.Tensor
    assert t.to_numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    # the first module's readers make the first module's objects
    assert type(_quiver.read_tensor_object(buf.getvalue())) is _quiver.Tensor


def test_version_is_the_headers():
    import os
    import re
    header = os.path.join(os.environ.get("QV_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                          "include", "quiver", "version.h")
    text = open(header).read()
    parts = re.findall(r"#define QV_VERSION_(?:MAJOR|MINOR|PATCH) (\d+)", text)
    assert len(parts) == 3
    assert quiver.__version__ == ".".join(parts)
    assert "__version__" in quiver.__all__


def test_stubs_ship_with_the_package():
    import os
    here = os.path.dirname(quiver.__file__)
    for name in ("py.typed", "__init__.pyi"):
        assert os.path.exists(os.path.join(here, name)), name
    # every public name is declared in the type stubs (__init__.pyi)
    pyi = open(os.path.join(here, "__init__.pyi")).read()
    for name in quiver.__all__:
        assert re.search(r"^(def|class) %s\b|^%s[:= ]" % (name, name), pyi, re.M), name
