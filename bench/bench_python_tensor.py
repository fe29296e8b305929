"""The speed figures of #24 (tensors in tables from Python, tables as tensors,
DLPack), each a ratio against a same-run reference:

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python_tensor.py [TMPDIR]
    ... bench_python_tensor.py --smoke [TMPDIR]   tiny sizes: checks that it runs

1. read_tensor_column of a 1 GiB arrow.fixed_shape_tensor column against the
   same of a 1 MiB one: zero-copy, so the same microseconds (target: ratio ~1).
2. write_tensor_column of a 1 GiB C-contiguous array against
   numpy.ndarray.tofile of the same bytes, both ways in the same run:
   fsync=False against plain tofile (neither fsyncs), and the default
   (durable) against tofile into a temporary + fsync + rename + fsync of the
   directory (the writer's durability); target: at most 1.2x each.
3. table_to_tensor of 10^7 rows x 8 float64 columns, column-major and
   row-major, with the default threads (every CPU) and with threads=1,
   against a memcpy of the 640 MB output (numpy.copyto of one pre-faulted
   array into another; targets for the default: at most 1.2x column-major,
   2x row-major), and against the same memcpy into a fresh buffer: the floor
   of any call that returns a new array, since the kernel faults in and
   zeroes its pages first; and table_to_tensor(out=) into a pre-faulted
   array of each order (written before, reused from run to run, as a caller
   reusing a buffer does), against the same pre-faulted memcpy: the
   comparison the targets make, with no page faults on either side. Each
   also prints the user+sys CPU time of its best run (all threads), which
   other work on the machine distorts less.
4. torch.from_dlpack of a quiver tensor of 1 GiB against one of 1 MiB
   (constant time; skipped without python3-torch).
Times are the best of several runs (files in the page cache); needs about
4 GiB of free disk in TMPDIR and 3 GiB of memory. Run it on a quiet machine.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import quiver


def best(fn, runs, setup=None):
    times = []
    for _ in range(runs):
        if setup:
            setup()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_cpu(fn, runs):
    """best() and the user+sys CPU time of that run (every thread of the
    process): a machine shared with other work stretches wall times much more
    than the CPU a call spends."""
    found = None
    for _ in range(runs):
        c0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        fn()
        t, c1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        if found is None or t < found[0]:
            found = (t, cpu)
    return found


def c_data_table(columns):
    """A minimal producer of __arrow_c_stream__ over NumPy float64 columns
    (one batch), built with ctypes: what pyarrow.table(...) would be."""
    import ctypes

    class ArrowSchema(ctypes.Structure):
        pass

    ArrowSchema._fields_ = [
        ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
        ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
        ("dictionary", ctypes.POINTER(ArrowSchema)),
        ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))),
        ("private_data", ctypes.c_void_p)]

    class ArrowArray(ctypes.Structure):
        pass

    ArrowArray._fields_ = [
        ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
        ("buffers", ctypes.POINTER(ctypes.c_void_p)),
        ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
        ("dictionary", ctypes.POINTER(ArrowArray)),
        ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
        ("private_data", ctypes.c_void_p)]

    class ArrowArrayStream(ctypes.Structure):
        pass

    GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                  ctypes.POINTER(ArrowSchema))
    GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                                ctypes.POINTER(ArrowArray))
    GET_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowArrayStream))
    RELEASE_STREAM = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))
    ArrowArrayStream._fields_ = [("get_schema", GET_SCHEMA), ("get_next", GET_NEXT),
                                 ("get_last_error", GET_ERROR), ("release", RELEASE_STREAM),
                                 ("private_data", ctypes.c_void_p)]
    SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
    ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
    keep = []

    @SCHEMA_RELEASE
    def schema_release(p):
        p.contents.release = SCHEMA_RELEASE()

    @ARRAY_RELEASE
    def array_release(p):
        p.contents.release = ARRAY_RELEASE()

    n = len(columns)
    rows = len(columns[0])

    def fill_schema(out):
        kids = (ctypes.POINTER(ArrowSchema) * n)()
        for i in range(n):
            c = ArrowSchema(format=b"g", name=("c%d" % i).encode(), flags=2,
                            release=schema_release)
            keep.append(c)
            kids[i] = ctypes.pointer(c)
        keep.append(kids)
        out.contents.format = b"+s"
        out.contents.name = b""
        out.contents.metadata = None
        out.contents.flags = 0
        out.contents.n_children = n
        out.contents.children = kids
        out.contents.dictionary = None
        out.contents.release = schema_release

    state = {"sent": False}

    @GET_SCHEMA
    def get_schema(s, out):
        fill_schema(out)
        return 0

    @GET_NEXT
    def get_next(s, out):
        if state["sent"]:
            out.contents.release = ARRAY_RELEASE()
            return 0
        state["sent"] = True
        kids = (ctypes.POINTER(ArrowArray) * n)()
        for i, col in enumerate(columns):
            bufs = (ctypes.c_void_p * 2)(None, col.ctypes.data)
            a = ArrowArray(length=rows, null_count=0, offset=0, n_buffers=2, n_children=0,
                           buffers=bufs, release=array_release)
            keep.extend([bufs, a])
            kids[i] = ctypes.pointer(a)
        keep.append(kids)
        bufs = (ctypes.c_void_p * 1)(None)
        keep.append(bufs)
        out.contents.length = rows
        out.contents.null_count = 0
        out.contents.offset = 0
        out.contents.n_buffers = 1
        out.contents.n_children = n
        out.contents.buffers = bufs
        out.contents.children = kids
        out.contents.dictionary = None
        out.contents.release = array_release
        return 0

    @GET_ERROR
    def get_error(s):
        return None

    @RELEASE_STREAM
    def release(s):
        s.contents.release = RELEASE_STREAM()

    keep.extend([get_schema, get_next, get_error, release, schema_release, array_release])

    class Producer:
        def __arrow_c_stream__(self, requested_schema=None):
            state["sent"] = False
            s = ArrowArrayStream(get_schema=get_schema, get_next=get_next,
                                 get_last_error=get_error, release=release)
            keep.append(s)
            new = ctypes.pythonapi.PyCapsule_New
            new.restype = ctypes.py_object
            new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return new(ctypes.addressof(s), b"arrow_array_stream", None)

    return Producer()


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    args = [a for a in args if a != "--smoke"]
    # the 1 GiB sizes, and tiny ones for a smoke run
    cells, rows, elems = (1 << 11, 10 ** 4, 1 << 18) if smoke else (1 << 20, 10 ** 7, 1 << 27)
    tmp = tempfile.mkdtemp(dir=args[0] if args else None)
    if smoke:
        print("smoke run: tiny sizes, the labels' sizes and the figures mean nothing")
    try:
        # 1. read_tensor_column: 1 MiB against 1 GiB
        small, big = os.path.join(tmp, "col_1mib.arrow"), os.path.join(tmp, "col_1gib.arrow")
        quiver.write_tensor_column(small, np.ones((1 << 10, 16, 8), np.float64))
        quiver.write_tensor_column(big, np.ones((cells, 16, 8), np.float64))
        t_small = best(lambda: quiver.read_tensor_column(small), 200)
        t_big = best(lambda: quiver.read_tensor_column(big), 200)
        print("read_tensor_column 1 MiB: %.1f us   1 GiB: %.1f us   ratio %.2f (target ~1)" % (
            t_small * 1e6, t_big * 1e6, t_big / t_small))

        # 2. write_tensor_column of 1 GiB against tofile of the same bytes.
        # write_tensor_column writes a temporary file (one write(2) of the
        # array's own memory for the body, its blocks preallocated as tofile
        # preallocates them) renamed over the target; by default it fsyncs
        # the file and, after the rename, the directory. Each is timed
        # against the reference with the same durability: fsync=False against
        # plain tofile, the default against tofile into a temporary + fsync +
        # rename + fsync of the directory. Before every run the outputs are
        # removed and the dirty pages written back (os.sync, untimed), so
        # that no run pays for the one before it.
        a = np.random.default_rng(1).random((cells, 16, 8))
        out, ref = os.path.join(tmp, "w.arrow"), os.path.join(tmp, "w.bin")

        def clean():
            for p in (out, ref):
                if os.path.exists(p):
                    os.unlink(p)
            os.sync()

        def tofile_durable():
            part = ref + ".tmp"
            with open(part, "wb") as f:
                a.tofile(f)
                f.flush()
                os.fsync(f.fileno())
            os.rename(part, ref)
            d = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(d)
            finally:
                os.close(d)

        runs = 5
        t_plain = best(lambda: a.tofile(ref), runs, clean)
        t_fast = best(lambda: quiver.write_tensor_column(out, a, fsync=False), runs, clean)
        t_ref = best(tofile_durable, runs, clean)
        t_col = best(lambda: quiver.write_tensor_column(out, a), runs, clean)
        clean()
        print("write_tensor_column 1 GiB, fsync=False: %.3f s   plain ndarray.tofile: %.3f s   "
              "ratio %.2f (target <= 1.2)" % (t_fast, t_plain, t_fast / t_plain))
        print("write_tensor_column 1 GiB, default (fsync): %.3f s   ndarray.tofile + fsync + "
              "rename: %.3f s   ratio %.2f (target <= 1.2)" % (t_col, t_ref, t_col / t_ref))
        del a
        os.unlink(big)

        # 3. table_to_tensor of 10^7 x 8 float64 against a memcpy of the output
        ncols = 8
        rng = np.random.default_rng(2)
        columns = [rng.random(rows) for _ in range(ncols)]
        table = os.path.join(tmp, "table.arrow")
        quiver.write_file(table, c_data_table(columns))
        del columns
        quiver.table_to_tensor(table)  # the mapping in the page cache
        src = np.empty((rows, ncols))
        dst = np.empty((rows, ncols))
        src.fill(1.0)
        dst.fill(0.0)
        t_memcpy, c_memcpy = best_cpu(lambda: np.copyto(dst, src), 5)
        del dst

        # the floor of any call that returns a new array: the same memcpy
        # into a fresh buffer, whose pages the kernel must fault in and zero
        # first (on this project's VM that alone can double the copy)
        def copy_fresh():
            np.copyto(np.empty((rows, ncols)), src)

        t_fresh, c_fresh = best_cpu(copy_fresh, 5)
        del src
        # out=: the caller's buffers, pre-faulted (written once before)
        out_cm = np.empty((rows, ncols), order="F")
        out_rm = np.empty((rows, ncols))
        out_cm.fill(0.0)
        out_rm.fill(0.0)
        # the default (threads=None: every CPU, the targets' case) and one thread
        for label, threads in (("default threads=None (%d CPUs)" % quiver._table_threads(None),
                                None), ("threads=1", 1)):
            t_cm, c_cm = best_cpu(
                lambda: quiver.table_to_tensor(table, row_major=False, threads=threads), 5)
            t_rm, c_rm = best_cpu(lambda: quiver.table_to_tensor(table, threads=threads), 5)
            print("table_to_tensor 10^7 x 8 float64, %s: column-major %.3f s (%.2fx memcpy, "
                  "target <= 1.2)  row-major %.3f s (%.2fx, target <= 2)   pre-faulted memcpy "
                  "%.3f s" % (label, t_cm, t_cm / t_memcpy, t_rm, t_rm / t_memcpy, t_memcpy))
            print("    against memcpy into a fresh buffer (%.3f s, %.2fx the pre-faulted one): "
                  "column-major %.2fx, row-major %.2fx" % (t_fresh, t_fresh / t_memcpy,
                                                           t_cm / t_fresh, t_rm / t_fresh))
            print("    user+sys CPU of those runs: column-major %.3f s, row-major %.3f s, "
                  "pre-faulted memcpy %.3f s, fresh %.3f s" % (c_cm, c_rm, c_memcpy, c_fresh))
            t_cmo, c_cmo = best_cpu(lambda: quiver.table_to_tensor(
                table, row_major=False, threads=threads, out=out_cm), 5)
            t_rmo, c_rmo = best_cpu(lambda: quiver.table_to_tensor(
                table, threads=threads, out=out_rm), 5)
            print("    table_to_tensor(out=pre-faulted array), %s: column-major %.3f s (%.2fx "
                  "pre-faulted memcpy, target <= 1.2)  row-major %.3f s (%.2fx, target <= 2)"
                  % (label, t_cmo, t_cmo / t_memcpy, t_rmo, t_rmo / t_memcpy))
            print("    user+sys CPU of those runs: column-major %.3f s, row-major %.3f s" % (
                c_cmo, c_rmo))
        del out_cm, out_rm
        os.unlink(table)

        # 4. torch.from_dlpack of a quiver tensor: 1 MiB against 1 GiB
        try:
            import torch
        except ImportError:
            print("torch.from_dlpack: skipped (no python3-torch)")
            return
        ts, tb = os.path.join(tmp, "t_1mib.arrow"), os.path.join(tmp, "t_1gib.arrow")
        quiver.write_tensor(ts, np.ones(1 << 17, np.float64))
        quiver.write_tensor(tb, np.ones(elems, np.float64))
        objs = quiver.read_tensor_object(ts), quiver.read_tensor_object(tb)
        t_s = best(lambda: torch.from_dlpack(objs[0]), 1000)
        t_b = best(lambda: torch.from_dlpack(objs[1]), 1000)
        print("torch.from_dlpack 1 MiB: %.1f us   1 GiB: %.1f us   ratio %.2f (target ~1)" % (
            t_s * 1e6, t_b * 1e6, t_b / t_s))
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
