"""Arrow's integration JSON (the cross-implementation test format,
quiver/integration_json.h) from Python: ``read_json`` and ``write_json``."""

from . import _quiver
from ._records import RecordBatch, Schema, Table

__all__ = ["read_json", "write_json"]


def read_json(source):
    """An integration JSON file (a path, bytes-like or binary file object;
    ``.json.gz`` is inflated) as a :class:`quiver.Table` (every batch checked
    in full, as a file's are)."""
    from . import _source
    schema_cap, caps = _quiver._read_json(_source(source))
    schema = Schema(_quiver._schema_fields(schema_cap), schema_cap)
    return Table([RecordBatch(c, schema=schema) for c in caps], schema)


def write_json(dest, source, indent=2, max_output=None, *, fsync=True):
    """Writes record batches as integration JSON (what ``quiver integration
    --mode=arrow-to-json`` writes): ``source`` is any Arrow PyCapsule
    producer (``__arrow_c_device_stream__``, ``__arrow_c_stream__``,
    ``__arrow_c_device_array__``, ``__arrow_c_array__``: a quiver reader,
    Table, RecordBatch, ...) or an Arrow stream or file (path or bytes). ``indent``: spaces per level, or None for one line.
    ``max_output``: the most bytes the text may take (default 16 GiB);
    beyond it nothing is written and CapacityError is raised.
    ``fsync=False``: no fsync of the file and its directory (as
    :func:`quiver.write_tensor`)."""
    from . import _arrow_stream_capsule, read_stream
    stream = _arrow_stream_capsule(source)
    if indent is None:
        indent = -1
    elif not isinstance(indent, int) or indent <= 0:
        raise ValueError(f"indent must be a positive int or None, not {indent!r}")
    if max_output is not None and max_output <= 0:
        raise ValueError("max_output must be positive")
    if stream is None:
        stream = read_stream(source).__arrow_c_stream__()
    _quiver._write_json(dest, stream, indent, max_output or 0, fsync=bool(fsync))
