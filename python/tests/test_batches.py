"""Record batches without pyarrow: iterating readers, .schema, read_all(),
Column.to_numpy() / to_pylist(), len() and slicing.

Values are checked against the integration JSON of Arrow's gold files (a
decoder of the JSON written here, independent of quiver's), against tables
written by the test through quiver's JSON reader, and against a table
written by the apache-arrow npm package."""
import base64
import datetime as dt
import decimal
import gc
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import quiver

GOLD = os.path.join(os.path.dirname(os.environ.get("QV_SOURCE_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..")), "shared", "testdata", "arrow-testing", "integration",
    "cpp-21.0.0")
TEMPORAL = ("date", "time", "timestamp", "duration")


def _gold(name):
    path = os.path.join(GOLD, name)
    if not os.path.exists(path + ".arrow_file"):
        pytest.skip(f"gold file {name} missing ({GOLD})")
    with gzip.open(path + ".json.gz", "rt") as f:
        return path, json.load(f)


# ---- an integration JSON decoder written for the test (Python values as docs/python.md says)

def _decode(field, col, dicts, raw_temporal=False):
    if field.get("dictionary"):
        d = field["dictionary"]
        idx_field = {"name": field["name"], "type": dict(d["indexType"], name="int"), "children": []}
        idx = _decode(idx_field, col, dicts)
        vfield = {k: v for k, v in field.items() if k != "dictionary"}
        values = _decode(vfield, dicts[d["id"]], dicts, raw_temporal)
        return [None if i is None else values[i] for i in idx]
    t = field["type"]
    name = t["name"]
    n = col["count"]
    valid = col.get("VALIDITY", [1] * n)
    kids = field.get("children", [])
    ccols = col.get("children", [])
    if name == "null":
        return [None] * n
    if name in ("int", "floatingpoint", "bool") or (name in TEMPORAL and raw_temporal):
        vals = [int(v) if name != "floatingpoint" and name != "bool" else v for v in col["DATA"]]
        if name == "floatingpoint":
            vals = [float(v) for v in vals]
    elif name in ("utf8", "largeutf8"):
        vals = list(col["DATA"])
    elif name in ("binary", "largebinary", "fixedsizebinary"):
        vals = [bytes.fromhex(v) for v in col["DATA"]]
    elif name in ("utf8view", "binaryview"):
        vals = []
        for v in col["VIEWS"]:
            if "INLINED" in v:
                x = v["INLINED"]
                vals.append(x if name == "utf8view" else bytes.fromhex(x))
            else:
                buf = bytes.fromhex(col["VARIADIC_DATA_BUFFERS"][v["BUFFER_INDEX"]])
                x = buf[v["OFFSET"]:v["OFFSET"] + v["SIZE"]]
                vals.append(x.decode() if name == "utf8view" else x)
    elif name == "decimal":
        ctx = decimal.Context(prec=200)
        vals = [decimal.Decimal(int(v)).scaleb(-t["scale"], ctx) for v in col["DATA"]]
    elif name == "interval":
        if t["unit"] == "YEAR_MONTH":
            vals = list(col["DATA"])
        elif t["unit"] == "DAY_TIME":
            vals = [quiver.DayTimeInterval(v["days"], v["milliseconds"]) for v in col["DATA"]]
        else:
            vals = [quiver.MonthDayNano(v["months"], v["days"], int(v["nanoseconds"]))
                    for v in col["DATA"]]
    elif name in ("list", "largelist", "listview", "largelistview", "fixedsizelist", "map"):
        child = _decode(kids[0], ccols[0], dicts, raw_temporal)
        if name == "fixedsizelist":
            s = t["listSize"]
            vals = [child[i * s:(i + 1) * s] for i in range(n)]
        elif name in ("listview", "largelistview"):
            vals = [child[int(o):int(o) + int(z)] for o, z in zip(col["OFFSET"], col["SIZE"])]
        else:
            o = [int(x) for x in col["OFFSET"]]
            vals = [child[o[i]:o[i + 1]] for i in range(n)]
        if name == "map":
            vals = [[(e[kids[0]["children"][0]["name"]], e[kids[0]["children"][1]["name"]]) for e in v]
                    for v in vals]
    elif name == "struct":
        cols = [_decode(k, c, dicts, raw_temporal) for k, c in zip(kids, ccols)]
        vals = [{k["name"]: c[i] for k, c in zip(kids, cols)} for i in range(n)]
    elif name == "union":
        cols = [_decode(k, c, dicts, raw_temporal) for k, c in zip(kids, ccols)]
        ids = t["typeIds"]
        vals = []
        for i, tid in enumerate(col["TYPE_ID"]):
            j = ids.index(tid)
            vals.append(cols[j][col["OFFSET"][i] if t["mode"] == "DENSE" else i])
        return vals
    elif name == "runendencoded":
        ends = [int(x) for x in _decode(kids[0], ccols[0], dicts)]
        values = _decode(kids[1], ccols[1], dicts, raw_temporal)
        vals, r = [], 0
        for i in range(n):
            while ends[r] <= i:
                r += 1
            vals.append(values[r])
        return vals
    else:
        raise AssertionError(f"the test's decoder has no {name}")
    return [v if ok else None for v, ok in zip(vals, valid)]


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (a != a and b != b) or np.float32(a) == np.float32(b) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def _has_temporal(field):
    if field["type"]["name"] in TEMPORAL:
        return True
    return any(_has_temporal(c) for c in field.get("children", []))


GOLD_NAMES = ["generated_primitive", "generated_binary", "generated_binary_view", "generated_decimal",
              "generated_decimal32", "generated_decimal64", "generated_decimal256",
              "generated_dictionary", "generated_dictionary_unsigned", "generated_nested",
              "generated_recursive_nested", "generated_nested_large_offsets", "generated_map",
              "generated_map_non_canonical", "generated_union", "generated_run_end_encoded",
              "generated_null", "generated_null_trivial", "generated_list_view",
              "generated_large_binary", "generated_interval", "generated_interval_mdn",
              "generated_nested_dictionary", "generated_primitive_zerolength",
              "generated_primitive_no_batches", "generated_duplicate_fieldnames",
              "generated_extension"]


@pytest.mark.parametrize("name", GOLD_NAMES)
@pytest.mark.parametrize("kind", ["arrow_file", "stream"])
def test_gold_values_against_their_json(name, kind):
    path, js = _gold(name)
    dicts = {d["id"]: d["data"]["columns"][0] for d in js.get("dictionaries", [])}
    reader = (quiver.read_file if kind == "arrow_file" else quiver.read_stream)(f"{path}.{kind}")
    fields = js["schema"]["fields"]
    assert reader.schema.names == [f["name"] for f in fields]
    assert [f.nullable for f in reader.schema] == [f["nullable"] for f in fields]
    batches = list(reader)
    assert [len(b) for b in batches] == [b["count"] for b in js["batches"]]
    for b, jb in zip(batches, js["batches"]):
        assert b.num_columns == len(fields)
        for i, (f, c) in enumerate(zip(fields, jb["columns"])):
            got = b.column(i).to_pylist()
            if f["name"] != "" and fields.count(f) == 1:
                assert b.column(f["name"]).name == f["name"]
            assert len(got) == c["count"]
            if not _has_temporal(f):
                want = _decode(f, c, dicts)
                assert _same(got, want), (f["name"], got[:5], want[:5])
    table = reader.read_all()
    assert len(table) == sum(len(b) for b in batches) and len(table.batches) == len(batches)


def test_gold_datetime_values():
    path, js = _gold("generated_datetime")
    reader = quiver.read_file(path + ".arrow_file")
    fields = js["schema"]["fields"]
    for b, jb in zip(reader, js["batches"]):
        for i, (f, c) in enumerate(zip(fields, jb["columns"])):
            col = b.column(i)
            want = _decode(f, c, {}, raw_temporal=True)
            a = col.to_numpy()
            assert a.dtype.kind in "Mm"
            raw = np.ma.getdata(a).view(np.int64)
            unit = f["type"].get("unit")
            for k, w in enumerate(want):
                if w is None:
                    assert np.ma.getmaskarray(a)[k]
                    continue
                assert not np.ma.getmaskarray(a)[k]
                # time32/64 and timestamps keep their unit; date32 is M8[D], date64 M8[ms]
                assert raw[k] == w, (f["name"], unit, k)
        break


# ---- tables written here through quiver's integration JSON reader

def _fill_validity(cols):
    for c in cols:
        c.setdefault("VALIDITY", [1] * c["count"])
        _fill_validity(c.get("children", []))


def _json_table(cli, path, fields, batches, dictionaries=None):
    for b in batches:
        _fill_validity(b["columns"])
    doc = {"schema": {"fields": fields}, "batches": batches}
    if dictionaries:
        doc["dictionaries"] = dictionaries
    with open(f"{path}.json", "w") as f:
        json.dump(doc, f)
    subprocess.run([cli, "integration", "--mode=json-to-arrow", f"--json={path}.json",
                    f"--arrow={path}"], check=True, capture_output=True)
    return str(path)


def _f(name, type_, nullable=True, children=None):
    return {"name": name, "type": type_, "nullable": nullable, "children": children or []}


I32 = {"name": "int", "bitWidth": 32, "isSigned": True}
F64 = {"name": "floatingpoint", "precision": "DOUBLE"}


@pytest.fixture
def simple(tmp_path, cli):
    fields = [_f("i", I32, False), _f("x", F64), _f("s", {"name": "utf8"}),
              _f("p", {"name": "fixedsizelist", "listSize": 2}, False, [_f("item", F64, False)]),
              _f("b", {"name": "bool"})]
    b1 = {"count": 4, "columns": [
        {"name": "i", "count": 4, "DATA": [1, -2, 3, 4]},
        {"name": "x", "count": 4, "VALIDITY": [1, 0, 1, 1], "DATA": [0.5, 0, 2.5, 3.5]},
        {"name": "s", "count": 4, "VALIDITY": [1, 1, 0, 1], "OFFSET": [0, 1, 3, 3, 7],
         "DATA": ["a", "bc", "", "déf"]},  # "déf" is 4 bytes of UTF-8
        {"name": "p", "count": 4, "children": [
            {"name": "item", "count": 8, "DATA": [0, 1, 2, 3, 4, 5, 6, 7]}]},
        {"name": "b", "count": 4, "VALIDITY": [1, 1, 1, 0], "DATA": [True, False, True, False]}]}
    b2 = {"count": 2, "columns": [
        {"name": "i", "count": 2, "DATA": [10, 20]},
        {"name": "x", "count": 2, "VALIDITY": [1, 1], "DATA": [1.0, 2.0]},
        {"name": "s", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 2], "DATA": ["x", "y"]},
        {"name": "p", "count": 2, "children": [{"name": "item", "count": 4, "DATA": [8, 9, 10, 11]}]},
        {"name": "b", "count": 2, "VALIDITY": [1, 1], "DATA": [True, True]}]}
    return _json_table(cli, tmp_path / "simple.arrow", fields, [b1, b2])


def _addr_range(buf):
    base = np.frombuffer(buf, np.uint8).ctypes.data
    return base, base + len(buf)


def test_schema_iteration_and_read_all(simple):
    r = quiver.read_file(simple)
    s = r.schema
    assert s.names == ["i", "x", "s", "p", "b"]
    assert s.types == ["int32", "double", "string", "fixed_size_list<item: double not null>[2]", "bool"]
    assert [f.nullable for f in s] == [False, True, True, False, True]
    assert s["p"].children[0].name == "item" and s["p"].format == "+w:2"
    assert str(s["i"]) == "i: int32 not null"
    batches = list(r)
    assert [len(b) for b in batches] == [4, 2]
    assert list(r)[1].column("i").to_pylist() == [10, 20]  # every pass starts from the start
    b = batches[0]
    assert b.schema == s and b.num_columns == 5 and b.column_names == s.names
    assert b.column("x").to_pylist() == [0.5, None, 2.5, 3.5]
    assert b.column(2).to_pylist() == ["a", "bc", None, "déf"]
    assert b.column(-1).to_pylist() == [True, False, True, None]
    assert b.column("p").to_pylist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    assert b.to_pylist()[1] == {"i": -2, "x": None, "s": "bc", "p": [2.0, 3.0], "b": False}
    assert b.to_pydict()["i"] == [1, -2, 3, 4]
    t = r.read_all()
    assert isinstance(t, quiver.Table) and len(t) == 6 and t.num_columns == 5
    assert t.column("i").to_pylist() == [1, -2, 3, 4, 10, 20]
    assert np.array_equal(t.column("i").to_numpy(), [1, -2, 3, 4, 10, 20])
    assert t[3:5].column("s").to_pylist() == ["déf", "x"]
    assert t.column("i")[4] == 10 and t.column("i")[-1] == 20
    with pytest.raises(KeyError, match="'nope'.*'i', 'x'"):
        b.column("nope")
    with pytest.raises(IndexError):
        b.column(5)


def test_to_numpy_zero_copy_and_nulls(simple):
    data = bytearray(open(simple, "rb").read())
    lo, hi = _addr_range(data)
    b = next(iter(quiver.read_file(data)))
    i = b.column("i").to_numpy()
    assert i.dtype == np.int32 and list(i) == [1, -2, 3, 4]
    assert lo <= i.ctypes.data < hi and not i.flags.writeable  # a view of the caller's buffer
    p = b.column("p").to_numpy()
    assert p.shape == (4, 2) and p.dtype == np.float64 and lo <= p.ctypes.data < hi
    assert np.array_equal(p, np.arange(8.0).reshape(4, 2))
    x = b.column("x").to_numpy()
    assert isinstance(x, np.ma.MaskedArray) and list(np.ma.getmaskarray(x)) == [False, True, False, False]
    assert lo <= np.ma.getdata(x).ctypes.data < hi  # the data is still the view
    assert x[0] == 0.5 and x[3] == 3.5
    with pytest.raises(quiver.InvalidError, match="'x' has 1 null"):
        b.column("x").to_numpy(nulls="raise")
    assert isinstance(b.column("x")[2:].to_numpy(nulls="raise"), np.ndarray)  # no nulls there
    with pytest.raises(ValueError, match="nulls must be"):
        b.column("i").to_numpy(nulls="zero")
    bb = b.column("b").to_numpy()
    assert bb.dtype == np.bool_ and list(np.ma.getdata(bb)[:3]) == [True, False, True]
    assert list(np.ma.getmaskarray(bb)) == [0, 0, 0, 1]
    with pytest.raises(quiver.NotSupportedError, match="use to_pylist"):
        b.column("s").to_numpy()
    assert b.column("x").null_count == 1 and b.column("i").null_count == 0


def test_slicing_batches_and_columns(simple):
    b = next(iter(quiver.read_file(simple)))
    s = b[1:3]
    assert isinstance(s, quiver.RecordBatch) and len(s) == 2
    assert s.column("s").to_pylist() == ["bc", None]
    assert s.slice(1).column("i").to_pylist() == [3]
    c = b.column("i")
    assert len(c) == 4 and c[1:].to_pylist() == [-2, 3, 4] and c[-2] == 3
    full = c.to_numpy()
    part = c[1:3].to_numpy()
    assert part.ctypes.data == full.ctypes.data + 4  # same memory, one row on
    assert b.column("p")[2:].to_numpy().ctypes.data == b.column("p").to_numpy().ctypes.data + 32
    assert b[2:2].num_rows == 0 and b.column("x")[4:].to_pylist() == []
    with pytest.raises(ValueError, match="step 1"):
        c[::2]
    with pytest.raises(IndexError):
        c[4]
    assert list(c) == [1, -2, 3, 4]


def test_temporal_decimal_and_dictionary(tmp_path, cli):
    fields = [_f("d", {"name": "date", "unit": "DAY"}),
              _f("ts", {"name": "timestamp", "unit": "MILLISECOND", "timezone": "UTC"}),
              _f("tn", {"name": "timestamp", "unit": "NANOSECOND"}),
              _f("t32", {"name": "time", "unit": "MILLISECOND", "bitWidth": 32}),
              _f("du", {"name": "duration", "unit": "MICROSECOND"}),
              _f("dec", {"name": "decimal", "precision": 9, "scale": 2, "bitWidth": 128}),
              {"name": "cat", "type": {"name": "utf8"}, "nullable": True, "children": [],
               "dictionary": {"id": 0, "indexType": {"name": "int", "bitWidth": 8, "isSigned": True},
                              "isOrdered": False}},
              {"name": "num", "type": F64, "nullable": True, "children": [],
               "dictionary": {"id": 1, "indexType": {"name": "int", "bitWidth": 16, "isSigned": True},
                              "isOrdered": False}}]
    cols = [{"name": "d", "count": 2, "VALIDITY": [1, 0], "DATA": [19723, 0]},
            {"name": "ts", "count": 2, "VALIDITY": [1, 1], "DATA": ["1704067200123", "0"]},
            {"name": "tn", "count": 2, "VALIDITY": [1, 1], "DATA": ["1500", "-1"]},
            {"name": "t32", "count": 2, "VALIDITY": [1, 1], "DATA": [3723004, 0]},
            {"name": "du", "count": 2, "VALIDITY": [1, 1], "DATA": ["-1500000", "7"]},
            {"name": "dec", "count": 2, "VALIDITY": [1, 1], "DATA": ["-12345", "7"]},
            {"name": "cat", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 0]},
            {"name": "num", "count": 2, "VALIDITY": [0, 1], "DATA": [0, 1]}]
    dicts = [{"id": 0, "data": {"count": 2, "columns": [
        {"name": "DICT0", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 3, 6], "DATA": ["red", "blu"]}]}},
        {"id": 1, "data": {"count": 2, "columns": [
            {"name": "DICT1", "count": 2, "VALIDITY": [1, 1], "DATA": [0.25, 8.0]}]}}]
    path = _json_table(cli, tmp_path / "t.arrow", fields, [{"count": 2, "columns": cols}], dicts)
    r = quiver.read_stream(path)
    assert r.schema.types == ["date32[day]", "timestamp[ms, tz=UTC]", "timestamp[ns]", "time32[ms]",
                              "duration[us]", "decimal128(9, 2)",
                              "dictionary<values=string, indices=int8, ordered=0>",
                              "dictionary<values=double, indices=int16, ordered=0>"]
    b = next(iter(r))
    assert b.column("d").to_pylist() == [dt.date(2024, 1, 1), None]
    utc = dt.timezone.utc
    assert b.column("ts").to_pylist() == [dt.datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=utc),
                                          dt.datetime(1970, 1, 1, tzinfo=utc)]
    # nanoseconds are floored to Python's microseconds
    assert b.column("tn").to_pylist() == [dt.datetime(1970, 1, 1, 0, 0, 0, 1),
                                          dt.datetime(1969, 12, 31, 23, 59, 59, 999999)]
    assert b.column("t32").to_pylist() == [dt.time(1, 2, 3, 4000), dt.time(0)]
    assert b.column("du").to_pylist() == [dt.timedelta(seconds=-1.5), dt.timedelta(microseconds=7)]
    assert b.column("dec").to_pylist() == [decimal.Decimal("-123.45"), decimal.Decimal("0.07")]
    assert b.column("cat").to_pylist() == ["blu", "red"]
    assert b.column("num").to_pylist() == [None, 8.0]
    d = b.column("d").to_numpy()
    assert d.dtype == np.dtype("M8[D]") and d[0] == np.datetime64("2024-01-01")
    assert b.column("ts").to_numpy().dtype == np.dtype("M8[ms]")
    assert b.column("tn").to_numpy()[1] == np.datetime64(-1, "ns")
    assert b.column("t32").to_numpy().dtype == np.dtype("m8[ms]")
    assert b.column("du").to_numpy()[0] == np.timedelta64(-1500000, "us")
    n = b.column("num").to_numpy()
    assert list(np.ma.getmaskarray(n)) == [True, False] and n[1] == 8.0
    with pytest.raises(quiver.NotSupportedError):
        b.column("dec").to_numpy()


def test_lifetime_past_source_reader_and_gc(simple):
    data = bytearray(open(simple, "rb").read())
    r = quiver.read_stream(bytes(data))
    b = next(iter(r))
    col = b.column("p")
    a = col.to_numpy()
    lst = b.column("s")
    del r, b, col
    gc.collect()
    assert np.array_equal(a, np.arange(8.0).reshape(4, 2))
    assert lst.to_pylist() == ["a", "bc", None, "déf"]
    # a path: the mapping lives as long as the array
    a2 = next(iter(quiver.read_file(simple))).column("i").to_numpy()
    gc.collect()
    assert list(a2) == [1, -2, 3, 4]


def test_no_leak_over_10000_reads(simple):
    data = open(simple, "rb").read()

    def cycle():
        for b in quiver.read_stream(data):
            b.column("p").to_numpy()
            b.column("x").to_numpy()
            b.column("s").to_pylist()
        quiver.read_file(data).schema

    for _ in range(200):
        cycle()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(10000):
        cycle()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 256 * 1024, after - before


HOSTILE_CHILD = """
import sys, quiver
count = 0
for path in sys.argv[1:]:
    print(path, flush=True)
    data = open(path, "rb").read()
    for src in (path, data):
        for opener in (quiver.read_stream, quiver.read_file):
            try:
                r = opener(src)
                r.schema
                for b in r:
                    b.schema
                    for c in b.columns:
                        c.to_pylist()
                        c.null_count
                        try:
                            a = c.to_numpy()
                            if a.dtype.kind in "iufb":
                                a.sum()  # touch every byte of the view
                        except quiver.NotSupportedError:
                            pass
                r.read_all()
            except quiver.Error:
                count += 1
        for call in (quiver.read_npy, quiver.read_npz, quiver.read_json, quiver.validate):
            try:
                out = call(src)
                if hasattr(out, "columns"):
                    for c in out.columns:
                        c.to_pylist()
                elif hasattr(out, "sum"):
                    out.sum()
            except quiver.Error:
                count += 1
print("done", count)
"""


def test_hostile_files_through_the_batch_readers(root):
    """The hostile files of the C suite (fuzz corpora, tests/data) through every
    new reader (the batch readers, read_npy, read_npz, read_json, validate), in
    a child interpreter so a crash fails the test: each raises a quiver.Error
    (ValueError/OSError subclasses) or reads."""
    files = []
    for top in ("fuzz/corpus", "tests/data"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, f) for f in sorted(names)]
    assert len(files) > 100, "the fuzz corpora are missing"
    r = subprocess.run([sys.executable, "-c", HOSTILE_CHILD] + files, capture_output=True, text=True,
                       timeout=600)
    last = r.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert r.returncode == 0, "failed (status %d) on %s\n%s" % (r.returncode, last[0], r.stderr[-3000:])
    assert last[0].startswith("done "), r.stdout[-2000:]


JS = r"""
import { tableFromArrays, tableToIPC } from 'apache-arrow';
const t = tableFromArrays({
  i: Int32Array.from([1, -2, 3]),
  f: Float64Array.from([0.5, 1.5, 2.5]),
  s: ['x', 'yy', 'zzz'],
});
process.stdout.write(Buffer.from(tableToIPC(t, 'file')).toString('base64'));
"""


def test_a_table_written_by_arrow_js(root):
    js = os.path.join(root, "tests", "interop", "js")
    if not shutil.which("node") or not os.path.isdir(os.path.join(js, "node_modules", "apache-arrow")):
        pytest.skip("node or the apache-arrow npm package (npm ci in tests/interop/js) is missing")
    r = subprocess.run(["node", "--input-type=module", "-e", JS], cwd=js, capture_output=True,
                       check=True)
    data = base64.b64decode(r.stdout)
    reader = quiver.read_file(data)
    assert reader.schema.names == ["i", "f", "s"]
    assert reader.schema.types[:2] == ["int32", "double"]
    t = reader.read_all()
    assert t.column("i").to_pylist() == [1, -2, 3]
    f = t.column("f").to_numpy()
    assert np.array_equal(f, [0.5, 1.5, 2.5])
    lo, hi = _addr_range(data)
    if len(t.batches) == 1:
        assert lo <= f.ctypes.data < hi
    assert t.column("s").to_pylist() == ["x", "yy", "zzz"]
