"""Record batches from Python without pyarrow: Schema, Field, RecordBatch,
Column, Table and ChunkedColumn over the C half in python/src/batch.c.

A RecordBatch holds the batch the library read (a capsule keeping the file
mapping or the caller's buffer alive); columns and slices are windows on it,
so nothing is copied until values are asked for. ``Column.to_numpy()`` views
the batch's memory where NumPy can (numeric, date64, timestamp, duration,
time64, and fixed-size lists of them); booleans, date32 and time32 are
widened into a new array.

RecordBatch, Column, Table and ChunkedColumn speak the Arrow PyCapsule
interface (``__arrow_c_schema__``, ``__arrow_c_array__``,
``__arrow_c_stream__`` and the device forms): an export shares the batch's memory (a slice exports its
window by offset and length), and outlives the object it came from.
``requested_schema`` is accepted and ignored: quiver hands out the types it
holds, as the interface lets a producer that does not cast (the consumer
checks the schema it gets).
"""

import numpy as _np

from . import _quiver
from ._quiver import InvalidError

__all__ = ["Schema", "Field", "RecordBatch", "Column", "Table", "ChunkedColumn"]


class Field:
    """One field of a schema: ``name``, ``type`` (Arrow C++'s spelling, e.g.
    ``timestamp[ms, tz=UTC]``), ``format`` (the C Data Interface format
    string), ``nullable``, ``metadata`` (dict of str), ``children`` (the
    fields of nested types) and, for a dictionary-encoded field,
    ``dictionary`` (the values' field) and ``ordered``."""

    __slots__ = ("name", "type", "format", "nullable", "metadata", "children", "dictionary",
                 "ordered")

    def __init__(self, d):
        self.name = d["name"]
        self.type = d["type"]
        self.format = d["format"]
        self.nullable = d["nullable"]
        self.metadata = d["metadata"]
        self.children = [Field(c) for c in d["children"]]
        self.dictionary = Field(d["dictionary"]) if d["dictionary"] is not None else None
        self.ordered = d["ordered"]

    def __eq__(self, other):
        if not isinstance(other, Field):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in Field.__slots__)

    def __repr__(self):
        return f"Field({self.name!r}, {self.type!r}{'' if self.nullable else ', nullable=False'})"

    def __str__(self):
        return f"{self.name}: {self.type}{'' if self.nullable else ' not null'}"


class Schema:
    """The fields of a table (``fields``, ``names``, ``types``) and its
    ``metadata`` (dict of str). ``schema[i]`` and ``schema["name"]`` give a
    Field; ``field_index(name)`` its position; ``__arrow_c_schema__()`` the
    schema as an ``arrow_schema`` capsule."""

    __slots__ = ("fields", "metadata", "_capsule")

    def __init__(self, root, capsule=None):
        self.fields = [Field(c) for c in root["children"]]
        self.metadata = root["metadata"]
        # the capsule the dicts came from (a batch's or an arrow_schema one,
        # kept private): what __arrow_c_schema__ copies
        self._capsule = capsule

    def __arrow_c_schema__(self):
        """A PyCapsule ``arrow_schema`` holding a copy of the schema."""
        if self._capsule is None:
            raise InvalidError("this Schema was not read from Arrow data: it has no C schema to export")
        return _quiver._schema_capsule(self._capsule)

    @property
    def names(self):
        return [f.name for f in self.fields]

    @property
    def types(self):
        return [f.type for f in self.fields]

    def field_index(self, name):
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        raise KeyError(f"no column {name!r} (the columns: {', '.join(map(repr, self.names))})")

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.fields[self.field_index(key)]
        return self.fields[key]

    def __len__(self):
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __eq__(self, other):
        if not isinstance(other, Schema):
            return NotImplemented
        return self.fields == other.fields and self.metadata == other.metadata

    def __repr__(self):
        return "Schema(" + ", ".join(str(f) for f in self.fields) + ")"

    def __str__(self):
        return "\n".join(str(f) for f in self.fields)


def _span(n, key):
    """(start, length) of a slice with step 1 over n rows."""
    r = range(n)[key]
    if r.step != 1:
        raise ValueError("only slices with step 1 are supported (they stay views)")
    return r.start, max(len(r), 0)


def _index(n, i):
    i = int(i)
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError(f"row {i} out of range ({n} rows)")
    return i


def _check_nulls_arg(nulls):
    if nulls not in ("mask", "raise"):
        raise ValueError(f"nulls must be 'mask' or 'raise', not {nulls!r}")


def _device_kwargs(kwargs):
    """The device methods' keywords: reserved by the interface for the
    future, so only None is accepted (NotImplementedError otherwise)."""
    for key, value in kwargs.items():
        if value is not None:
            raise NotImplementedError(f"unsupported keyword argument {key!r}")


def _masked(data, mask, nulls, name):
    if mask is None:
        return data
    if nulls == "raise":
        raise InvalidError(f"column {name!r} has {int(mask.sum())} null value(s) "
                           "(to_numpy(nulls='mask') gives a numpy.ma masked array)")
    if data.ndim > 1:
        mask = _np.broadcast_to(mask.reshape((-1,) + (1,) * (data.ndim - 1)), data.shape).copy()
    return _np.ma.MaskedArray(data, mask=mask, copy=False)


class Column:
    """Rows of one column of a RecordBatch (a window: slicing copies nothing).

    ``len()``, ``null_count``, ``name``, ``type``, ``field``; ``col[i]`` is a
    value, ``col[a:b]`` a Column; ``to_numpy()`` and ``to_pylist()``."""

    __slots__ = ("_batch", "_index", "_start", "_length", "field")

    def __init__(self, batch, index, start, length, field):
        self._batch = batch
        self._index = index
        self._start = start
        self._length = length
        self.field = field

    @property
    def name(self):
        return self.field.name

    @property
    def type(self):
        return self.field.type

    def __len__(self):
        return self._length

    @property
    def null_count(self):
        return _quiver._column_null_count(self._batch, self._index, self._start, self._length)

    def __getitem__(self, key):
        if isinstance(key, slice):
            s, n = _span(self._length, key)
            return Column(self._batch, self._index, self._start + s, n, self.field)
        i = _index(self._length, key)
        return _quiver._column_pylist(self._batch, self._index, self._start + i, 1)[0]

    def __iter__(self):
        return iter(self.to_pylist())

    def to_pylist(self):
        """The values as Python objects (None for nulls); see docs/python.md for each type."""
        return _quiver._column_pylist(self._batch, self._index, self._start, self._length)

    def to_numpy(self, nulls="mask"):
        """The values as an ndarray: a read-only view of the batch's memory where
        NumPy can hold the type as it is (numeric, date64, timestamp,
        duration, time64; a fixed-size list column is [rows, size, ...]),
        else a new array (bool, date32, time32, dictionary columns). With
        nulls, ``nulls="mask"`` gives a ``numpy.ma.MaskedArray`` (data still
        viewing the batch) and ``nulls="raise"`` raises InvalidError."""
        _check_nulls_arg(nulls)
        data, mask = _quiver._column_numpy(self._batch, self._index, self._start, self._length)
        return _masked(data, mask, nulls, self.name)

    def __arrow_c_array__(self, requested_schema=None):
        """(``arrow_schema``, ``arrow_array``) PyCapsules: the column's field
        (its metadata, so a tensor column carries ``ARROW:extension:name``
        and ``ARROW:extension:metadata``) and its rows, sharing the batch's
        memory (a slice is its offset and length). ``requested_schema`` is
        ignored (see the module's doc)."""
        return (_quiver._schema_capsule(self._batch, self._index),
                _quiver._export_array(self._batch, self._index, self._start, self._length))

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """As ``__arrow_c_array__``, the array in an ``arrow_device_array``
        capsule (device_type 1, CPU; device_id -1; no sync event)."""
        _device_kwargs(kwargs)
        schema, array = self.__arrow_c_array__(requested_schema)
        return schema, _quiver._device_array(array)

    def __repr__(self):
        return f"<quiver.Column {self.name!r}: {self.type}, {self._length} rows>"


class RecordBatch:
    """One record batch: ``num_rows`` (``len()``), ``num_columns``,
    ``schema``, ``column(name_or_index)``, ``columns``; ``batch[a:b]`` and
    ``slice(offset, length)`` are batches viewing the same memory;
    ``to_pydict()`` and ``to_pylist()`` (rows as dicts)."""

    __slots__ = ("_batch", "_start", "_length", "_schema")

    def __init__(self, capsule, start=None, length=None, schema=None):
        self._batch = capsule
        self._start = 0 if start is None else start
        self._length = _quiver._batch_length(capsule) if length is None else length
        self._schema = schema

    @property
    def schema(self):
        if self._schema is None:
            self._schema = Schema(_quiver._schema_fields(self._batch), self._batch)
        return self._schema

    @property
    def num_rows(self):
        return self._length

    def __len__(self):
        return self._length

    @property
    def num_columns(self):
        return len(self.schema)

    @property
    def column_names(self):
        return self.schema.names

    def _column_index(self, key):
        if isinstance(key, str):
            return self.schema.field_index(key)
        n = self.num_columns
        i = int(key)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"column {key} out of range ({n} columns)")
        return i

    def column(self, key):
        """The column at an index or with a name (the first of that name)."""
        i = self._column_index(key)
        return Column(self._batch, i, self._start, self._length, self.schema.fields[i])

    @property
    def columns(self):
        return [self.column(i) for i in range(self.num_columns)]

    def slice(self, offset=0, length=None):
        if offset < 0 or offset > self._length:
            raise IndexError(f"offset {offset} out of range ({self._length} rows)")
        if length is None or length > self._length - offset:
            length = self._length - offset
        if length < 0:
            raise ValueError("length must be >= 0")
        return RecordBatch(self._batch, self._start + offset, length, self._schema)

    def __getitem__(self, key):
        if isinstance(key, slice):
            s, n = _span(self._length, key)
            return RecordBatch(self._batch, self._start + s, n, self._schema)
        return self.column(key)

    def to_pydict(self):
        return {c.name: c.to_pylist() for c in self.columns}

    def to_pylist(self):
        cols = self.columns
        values = [c.to_pylist() for c in cols]
        names = [c.name for c in cols]
        return [dict(zip(names, row)) for row in zip(*values)] if cols else [{}] * self._length

    def __arrow_c_schema__(self):
        """A PyCapsule ``arrow_schema``: a copy of the batch's schema."""
        return _quiver._schema_capsule(self._batch)

    def __arrow_c_array__(self, requested_schema=None):
        """(``arrow_schema``, ``arrow_array``) PyCapsules of the batch as a
        struct array sharing its memory: a slice exports its window (the
        children's offset and length), no buffer is copied, and the export
        keeps the memory alive after the batch and its reader are gone.
        ``requested_schema`` is ignored (see the module's doc)."""
        return (_quiver._schema_capsule(self._batch),
                _quiver._export_array(self._batch, -1, self._start, self._length))

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """As ``__arrow_c_array__``, the array in an ``arrow_device_array``
        capsule (device_type 1, CPU; device_id -1; no sync event); keywords
        other than None raise NotImplementedError."""
        _device_kwargs(kwargs)
        schema, array = self.__arrow_c_array__(requested_schema)
        return schema, _quiver._device_array(array)

    def __repr__(self):
        return f"<quiver.RecordBatch {self._length} rows: {', '.join(str(f) for f in self.schema)}>"


class ChunkedColumn:
    """One column of a Table: its ``chunks`` (a Column per batch), ``len()``,
    ``null_count``, ``to_numpy()`` (a view when there is one batch, else one
    concatenated copy), ``to_pylist()``, and ``__arrow_c_stream__`` (one
    array per chunk, as the PyCapsule interface streams a chunked array)."""

    __slots__ = ("chunks", "field", "_schema")

    def __init__(self, chunks, field, schema=None):
        self.chunks = chunks
        self.field = field
        # (capsule, column index) of the field's C schema, which a column
        # without chunks (an empty table or slice) still exports
        self._schema = schema

    @property
    def name(self):
        return self.field.name

    @property
    def type(self):
        return self.field.type

    def __len__(self):
        return sum(len(c) for c in self.chunks)

    @property
    def null_count(self):
        return sum(c.null_count for c in self.chunks)

    def __getitem__(self, key):
        if isinstance(key, slice):
            s, n = _span(len(self), key)
            out = []
            for c in self.chunks:
                if n > 0 and s < len(c):
                    take = min(n, len(c) - s)
                    out.append(c[s:s + take])
                    n -= take
                    s = 0
                else:
                    s -= len(c)
            return ChunkedColumn(out, self.field, self._schema_ref())
        i = _index(len(self), key)
        for c in self.chunks:
            if i < len(c):
                return c[i]
            i -= len(c)
        raise IndexError(key)  # not reached

    def __iter__(self):
        return iter(self.to_pylist())

    def to_pylist(self):
        out = []
        for c in self.chunks:
            out.extend(c.to_pylist())
        return out

    def to_numpy(self, nulls="mask"):
        _check_nulls_arg(nulls)
        if len(self.chunks) == 1:
            return self.chunks[0].to_numpy(nulls)
        parts = [c.to_numpy(nulls) for c in self.chunks]
        if not parts:
            raise InvalidError(f"column {self.name!r} has no batches to take a dtype from")
        if any(isinstance(p, _np.ma.MaskedArray) for p in parts):
            return _np.ma.concatenate(parts)
        return _np.concatenate(parts)

    def _schema_ref(self):
        if self._schema is not None:
            return self._schema
        if self.chunks:
            return (self.chunks[0]._batch, self.chunks[0]._index)
        return None

    def __arrow_c_stream__(self, requested_schema=None):
        """A PyCapsule ``arrow_array_stream`` of the column as a chunked
        array: its schema is the column's field (type, nullability and
        metadata, so a tensor column carries ``ARROW:extension:name`` and
        ``ARROW:extension:metadata``), and each chunk is one array sharing
        the batch's memory (a slice as its window), in order; each call makes
        a new stream, which outlives the table and its reader. A chunk whose
        type is not the field's is an InvalidError. ``requested_schema`` is
        ignored (see the module's doc)."""
        ref = self._schema_ref()
        if ref is None:
            raise InvalidError(f"column {self.name!r} has no chunks and no C schema to export")
        return _quiver._windows_stream(_quiver._schema_capsule(*ref),
                                       [(c._batch, c._index, c._start, c._length)
                                        for c in self.chunks])

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        """As ``__arrow_c_stream__``, an ``arrow_device_array_stream`` capsule
        of CPU device arrays (device_type 1, device_id -1, no sync event)."""
        _device_kwargs(kwargs)
        return _quiver._device_stream(self.__arrow_c_stream__(requested_schema))

    def __repr__(self):
        return f"<quiver.ChunkedColumn {self.name!r}: {self.type}, {len(self)} rows, {len(self.chunks)} chunks>"


class Table:
    """Every batch of a reader (``read_all()``): ``batches``, ``schema``,
    ``num_rows`` (``len()``), ``num_columns``, ``column(name_or_index)`` (a
    ChunkedColumn), ``table[a:b]``, ``to_pydict()``, ``to_pylist()``."""

    __slots__ = ("batches", "schema")

    def __init__(self, batches, schema):
        self.batches = batches
        self.schema = schema

    @property
    def num_rows(self):
        return sum(len(b) for b in self.batches)

    def __len__(self):
        return self.num_rows

    @property
    def num_columns(self):
        return len(self.schema)

    @property
    def column_names(self):
        return self.schema.names

    def column(self, key):
        i = self.schema.field_index(key) if isinstance(key, str) else key
        if not isinstance(key, str):
            n = self.num_columns
            i = int(key) + (n if int(key) < 0 else 0)
            if not 0 <= i < n:
                raise IndexError(f"column {key} out of range ({n} columns)")
        where = self.schema._capsule if self.schema._capsule is not None else (
            self.batches[0]._batch if self.batches else None)
        return ChunkedColumn([b.column(i) for b in self.batches], self.schema.fields[i],
                             None if where is None else (where, i))

    @property
    def columns(self):
        return [self.column(i) for i in range(self.num_columns)]

    def __getitem__(self, key):
        if isinstance(key, slice):
            s, n = _span(self.num_rows, key)
            out = []
            for b in self.batches:
                if n > 0 and s < len(b):
                    take = min(n, len(b) - s)
                    out.append(b.slice(s, take))
                    n -= take
                    s = 0
                else:
                    s -= len(b)
            return Table(out, self.schema)
        return self.column(key)

    def __iter__(self):
        return iter(self.batches)

    def to_pydict(self):
        return {c.name: c.to_pylist() for c in self.columns}

    def to_pylist(self):
        out = []
        for b in self.batches:
            out.extend(b.to_pylist())
        return out

    def __arrow_c_schema__(self):
        """A PyCapsule ``arrow_schema``: a copy of the table's schema."""
        if self.schema._capsule is not None:
            return _quiver._schema_capsule(self.schema._capsule)
        if self.batches:
            return _quiver._schema_capsule(self.batches[0]._batch)
        raise InvalidError("this table has no batches and its Schema no C schema to export")

    def __arrow_c_stream__(self, requested_schema=None):
        """A PyCapsule ``arrow_array_stream`` of the table's batches (each
        sharing its memory, slices as their windows), in order; each call
        makes a new stream. A batch whose types are not the schema's is an
        InvalidError. ``requested_schema`` is ignored (see the module's doc)."""
        return _quiver._windows_stream(self.__arrow_c_schema__(),
                                       [(b._batch, -1, b._start, b._length) for b in self.batches])

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        """As ``__arrow_c_stream__``, an ``arrow_device_array_stream`` capsule
        of CPU device arrays (device_type 1, device_id -1, no sync event)."""
        _device_kwargs(kwargs)
        return _quiver._device_stream(self.__arrow_c_stream__(requested_schema))

    def __repr__(self):
        return (f"<quiver.Table {self.num_rows} rows in {len(self.batches)} batches: "
                f"{', '.join(str(f) for f in self.schema)}>")


# ---- the RecordBatchReader's methods (python/src/records.c calls these)

def reader_schema(reader):
    cap = reader.__arrow_c_schema__()
    return Schema(_quiver._schema_fields(cap), cap)


def iter_batches(reader):
    stream = reader.__arrow_c_stream__()
    schema = reader_schema(reader)
    while True:
        b = _quiver._stream_next(stream)
        if b is None:
            return
        yield RecordBatch(b, schema=schema)


def read_all(reader):
    return Table(list(iter_batches(reader)), reader_schema(reader))
