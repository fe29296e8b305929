#!/usr/bin/python3
"""An independent big-endian Arrow writer for quiver's tests: stdlib only.

    arrow_swap.py to-big IN OUT        little-endian IPC stream or file IN ->
                                       the same data big-endian in OUT (same
                                       format), Schema.endianness = Big
    arrow_swap.py same-buffers A B     A and B (big-endian, same format) hold
                                       the same messages: header kinds, nodes,
                                       buffer lengths and every buffer's bytes

It shares no code with quiver: its own FlatBuffers reader and writer, its own
walk of the schema, and the swap rules of the Arrow columnar format. Every
fixed-width value is byte-reversed: offsets, sizes, view length and (for
views not inlined) buffer index and offset, run ends (the run-end child's
integers), union offsets, dictionary indices, decimals as whole 16/32-byte
integers, intervals member by member, float16, and every integer, float,
date, time, timestamp and duration width. Bitmaps, bytes, type ids and
inlined view bytes stay as they are. Compressed bodies are refused.
Exit status: 0 ok, 1 the files differ (same-buffers), 2 bad input or usage.
"""
import array
import struct
import sys

# ------------------------------------------------------------ FlatBuffers


class Bad(Exception):
    pass


class Buf:
    """Bounds-checked little-endian reads of one FlatBuffer."""

    def __init__(self, data):
        self.d = bytes(data)

    def unpack(self, fmt, pos):
        n = struct.calcsize(fmt)
        if pos < 0 or pos + n > len(self.d):
            raise Bad("flatbuffer read out of bounds at %d" % pos)
        return struct.unpack_from("<" + fmt, self.d, pos)[0]

    def deref(self, pos):
        return pos + self.unpack("I", pos)


# Field kinds of a table description: ("s", fmt) scalar, ("st", size, align)
# inline struct, ("str",) string, ("vs", fmt) vector of scalars,
# ("vst", size, align) vector of structs, ("vstr",) vector of strings,
# ("t", desc) table, ("vt", desc) vector of tables, ("u", members, tag slot)
# union value (members: tag -> desc).
KV = {0: ("str",), 1: ("str",)}
INT = {0: ("s", "i"), 1: ("s", "?")}
TYPES = {
    1: {}, 2: INT, 3: {0: ("s", "h")}, 4: {}, 5: {}, 6: {},
    7: {0: ("s", "i"), 1: ("s", "i"), 2: ("s", "i")},   # Decimal
    8: {0: ("s", "h")},                                   # Date
    9: {0: ("s", "h"), 1: ("s", "i")},                    # Time
    10: {0: ("s", "h"), 1: ("str",)},                     # Timestamp
    11: {0: ("s", "h")},                                  # Interval
    12: {}, 13: {}, 14: {0: ("s", "h"), 1: ("vs", "i")},  # List, Struct_, Union
    15: {0: ("s", "i")}, 16: {0: ("s", "i")},             # FixedSizeBinary, FixedSizeList
    17: {0: ("s", "?")}, 18: {0: ("s", "h")},             # Map, Duration
    19: {}, 20: {}, 21: {}, 22: {}, 23: {}, 24: {}, 25: {}, 26: {},
}
TYPE_NAMES = {1: "Null", 2: "Int", 3: "FloatingPoint", 4: "Binary", 5: "Utf8", 6: "Bool",
              7: "Decimal", 8: "Date", 9: "Time", 10: "Timestamp", 11: "Interval",
              12: "List", 13: "Struct", 14: "Union", 15: "FixedSizeBinary",
              16: "FixedSizeList", 17: "Map", 18: "Duration", 19: "LargeBinary",
              20: "LargeUtf8", 21: "LargeList", 22: "RunEndEncoded", 23: "BinaryView",
              24: "Utf8View", 25: "ListView", 26: "LargeListView"}
DICT_ENCODING = {0: ("s", "q"), 1: ("t", INT), 2: ("s", "?"), 3: ("s", "h")}
FIELD = {0: ("str",), 1: ("s", "?"), 2: ("s", "B"), 3: ("u", TYPES, 2),
         4: ("t", DICT_ENCODING), 6: ("vt", KV)}
FIELD[5] = ("vt", FIELD)
SCHEMA = {0: ("s", "h"), 1: ("vt", FIELD), 2: ("vt", KV), 3: ("vs", "q")}
RECORD_BATCH = {0: ("s", "q"), 1: ("vst", 16, 8), 2: ("vst", 16, 8),
                3: ("t", {0: ("s", "b"), 1: ("s", "b")}), 4: ("vs", "q")}
DICTIONARY_BATCH = {0: ("s", "q"), 1: ("t", RECORD_BATCH), 2: ("s", "?")}
HEADERS = {1: SCHEMA, 2: DICTIONARY_BATCH, 3: RECORD_BATCH}
MESSAGE = {0: ("s", "h"), 1: ("s", "B"), 2: ("u", HEADERS, 1), 3: ("s", "q"), 4: ("vt", KV)}
FOOTER = {0: ("s", "h"), 1: ("t", SCHEMA), 2: ("vst", 24, 8), 3: ("vst", 24, 8),
          4: ("vt", KV)}


class Table:
    """A decoded table: slot -> (kind, value), only the slots present."""

    def __init__(self, desc):
        self.desc = desc
        self.f = {}

    def get(self, slot, default=None):
        v = self.f.get(slot)
        return default if v is None else v[1]

    def set_scalar(self, slot, fmt, value):
        self.f[slot] = (("s", fmt), value)


def read_table(b, pos, desc, depth=0):
    if depth > 64:
        raise Bad("flatbuffer nested too deeply")
    t = Table(desc)
    vt = pos - b.unpack("i", pos)
    vt_size = b.unpack("H", vt)
    for slot in sorted(desc):
        if 4 + 2 * slot + 2 > vt_size:
            continue
        off = b.unpack("H", vt + 4 + 2 * slot)
        if off == 0:
            continue
        p = pos + off
        kind = desc[slot]
        k = kind[0]
        if k == "s":
            val = b.unpack(kind[1], p)
        elif k == "st":
            val = b.d[p:p + kind[1]]
        elif k == "str":
            q = b.deref(p)
            n = b.unpack("I", q)
            val = b.d[q + 4:q + 4 + n]
        elif k in ("vs", "vst", "vstr", "vt"):
            q = b.deref(p)
            n = b.unpack("I", q)
            if k == "vs":
                w = struct.calcsize(kind[1])
                val = [b.unpack(kind[1], q + 4 + w * i) for i in range(n)]
            elif k == "vst":
                val = b.d[q + 4:q + 4 + n * kind[1]]
                if len(val) != n * kind[1]:
                    raise Bad("struct vector out of bounds")
            elif k == "vstr":
                val = []
                for i in range(n):
                    s = b.deref(q + 4 + 4 * i)
                    val.append(b.d[s + 4:s + 4 + b.unpack("I", s)])
            else:
                val = [read_table(b, b.deref(q + 4 + 4 * i), kind[1], depth + 1)
                       for i in range(n)]
        elif k == "t":
            val = read_table(b, b.deref(p), kind[1], depth + 1)
        elif k == "u":
            tag = t.get(kind[2], 0)
            if tag not in kind[1]:
                raise Bad("union tag %d is not one this tool knows" % tag)
            val = read_table(b, b.deref(p), kind[1][tag], depth + 1)
            kind = ("t", kind[1][tag])
        else:
            raise AssertionError(k)
        t.f[slot] = (kind, val)
    return t


def read_root(data, desc):
    b = Buf(data)
    return read_table(b, b.unpack("I", 0), desc)


class Writer:
    """Front-to-back FlatBuffer writer: a parent before its children, so
    every uoffset points forward, as the format requires."""

    def __init__(self):
        self.b = bytearray(4)  # root uoffset, patched in finish

    def pad_to(self, align, extra=0):
        while (len(self.b) + extra) % align:
            self.b.append(0)

    def patch(self, at, target):
        struct.pack_into("<I", self.b, at, target - at)

    @staticmethod
    def layout(kind):
        """(size, align) of a field's inline bytes."""
        if kind[0] == "s":
            n = struct.calcsize(kind[1])
            return n, n
        if kind[0] == "st":
            return kind[1], kind[2]
        return 4, 4  # uoffset

    def table(self, t):
        slots = sorted(t.f)
        order = sorted(slots, key=lambda s: -self.layout(t.f[s][0])[1])
        offs, off, max_align = {}, 4, 4
        for s in order:
            size, align = self.layout(t.f[s][0])
            off = (off + align - 1) // align * align
            offs[s] = off
            off += size
            max_align = max(max_align, align)
        n = (slots[-1] + 1) if slots else 0
        self.pad_to(2)
        vt = len(self.b)
        self.b += struct.pack("<HH", 4 + 2 * n, off)
        for s in range(n):
            self.b += struct.pack("<H", offs.get(s, 0))
        self.pad_to(max_align)
        pos = len(self.b)
        self.b += bytes(off)
        struct.pack_into("<i", self.b, pos, pos - vt)
        children = []
        for s in slots:
            kind, val = t.f[s]
            at = pos + offs[s]
            if kind[0] == "s":
                struct.pack_into("<" + kind[1], self.b, at, val)
            elif kind[0] == "st":
                self.b[at:at + len(val)] = val
            else:
                children.append((at, kind, val))
        for at, kind, val in children:
            self.patch(at, self.child(kind, val))
        return pos

    def child(self, kind, val):
        k = kind[0]
        if k == "str":
            self.pad_to(4)
            pos = len(self.b)
            self.b += struct.pack("<I", len(val)) + val + b"\0"
            return pos
        if k == "vs":
            w = struct.calcsize(kind[1])
            self.pad_to(max(4, w), 4)
            pos = len(self.b)
            self.b += struct.pack("<I", len(val))
            for v in val:
                self.b += struct.pack("<" + kind[1], v)
            return pos
        if k == "vst":
            self.pad_to(max(4, kind[2]), 4)
            pos = len(self.b)
            self.b += struct.pack("<I", len(val) // kind[1]) + val
            return pos
        if k in ("vt", "vstr"):
            self.pad_to(4)
            pos = len(self.b)
            self.b += struct.pack("<I", len(val)) + bytes(4 * len(val))
            for i, v in enumerate(val):
                target = self.table(v) if k == "vt" else self.child(("str",), v)
                self.patch(pos + 4 + 4 * i, target)
            return pos
        if k == "t":
            return self.table(val)
        raise AssertionError(k)

    def finish(self, root):
        self.patch(0, self.table(root))
        self.pad_to(8)
        return bytes(self.b)


# ------------------------------------------------------------ IPC framing

CONTINUATION = 0xFFFFFFFF
MAGIC = b"ARROW1"


class Message:
    def __init__(self, offset, meta, msg, body):
        self.offset = offset  # of its framing in the input
        self.meta = meta      # the FlatBuffer bytes as framed (with padding)
        self.msg = msg        # decoded Message table
        self.body = body


def read_messages(data, pos, end):
    """Messages of the stream data[pos:end] up to its end-of-stream marker."""
    out = []
    while pos + 4 <= end:
        start = pos
        n = struct.unpack_from("<I", data, pos)[0]
        if n == CONTINUATION:
            if pos + 8 > end:
                raise Bad("message at %d: truncated length" % pos)
            n = struct.unpack_from("<i", data, pos + 4)[0]
            pos += 8
        else:  # pre-0.15 framing: the length alone
            pos += 4
        if n == 0:
            break
        if n < 0 or pos + n > end:
            raise Bad("message at %d: bad metadata length %d" % (pos, n))
        meta = data[pos:pos + n]
        msg = read_root(meta, MESSAGE)
        pos += n
        blen = msg.get(3, 0)
        if blen < 0 or pos + blen > end:
            raise Bad("message body of %d bytes runs past the input" % blen)
        out.append(Message(start, meta, msg, bytearray(data[pos:pos + blen])))
        pos += blen
    return out


def frame(meta, body):
    pad = (-(8 + len(meta))) % 8
    return struct.pack("<Ii", CONTINUATION, len(meta) + pad) + meta + bytes(pad) + bytes(body)


def read_input(data):
    """(is_file, messages, footer Table or None)."""
    if data[:6] == MAGIC:
        if len(data) < 18 or data[-6:] != MAGIC:
            raise Bad("file without its trailing ARROW1 magic")
        flen = struct.unpack_from("<i", data, len(data) - 10)[0]
        fpos = len(data) - 10 - flen
        if flen <= 0 or fpos < 8:
            raise Bad("bad footer length %d" % flen)
        footer = read_root(data[fpos:fpos + flen], FOOTER)
        return True, read_messages(data, 8, fpos), footer
    return False, read_messages(data, 0, len(data)), None


# ------------------------------------------------------------ swap rules


def swap_words(body, off, length, width):
    n = length // width
    if n == 0:
        return
    if width in (2, 4, 8):
        code = {2: "H", 4: "I", 8: "Q"}[width]
        a = array.array(code)
        if a.itemsize != width:
            raise Bad("no %d-byte array type on this Python" % width)
        a.frombytes(bytes(body[off:off + n * width]))
        a.byteswap()
        body[off:off + n * width] = a.tobytes()
    else:  # whole 16- and 32-byte integers (decimals)
        for i in range(off, off + n * width, width):
            body[i:i + width] = body[i:i + width][::-1]


def swap_mdn(body, off, length):
    for i in range(off, off + length // 16 * 16, 16):
        body[i:i + 4] = body[i:i + 4][::-1]
        body[i + 4:i + 8] = body[i + 4:i + 8][::-1]
        body[i + 8:i + 16] = body[i + 8:i + 16][::-1]


def swap_views(body, off, length):
    for i in range(off, off + length // 16 * 16, 16):
        n = struct.unpack_from("<i", body, i)[0]  # read in the input's order
        body[i:i + 4] = body[i:i + 4][::-1]
        if n > 12:  # prefix (bytes), then buffer index and offset
            body[i + 8:i + 12] = body[i + 8:i + 12][::-1]
            body[i + 12:i + 16] = body[i + 12:i + 16][::-1]


def value_width(tag, t):
    """Swap rule of a fixed-width data buffer: 0 none, a width, or a name."""
    if tag == 2:
        return t.get(0, 0) // 8 if t.get(0, 0) > 8 else 0
    if tag == 3:
        return {0: 2, 1: 4, 2: 8}[t.get(0, 0)]
    if tag == 7:
        return t.get(2, 128) // 8
    if tag == 8:
        return 4 if t.get(0, 1) == 0 else 8
    if tag == 9:
        return t.get(1, 32) // 8
    if tag in (10, 18):
        return 8
    if tag == 11:
        return {0: 4, 1: 4, 2: "mdn"}[t.get(0, 0)]
    return 0  # Bool, FixedSizeBinary


class Walk:
    """Buffers of one record batch, node by node in the body's order."""

    def __init__(self, rb, version):
        self.nodes = rb.get(1, b"")
        self.bufs = rb.get(2, b"")
        self.variadic = list(rb.get(4, []))
        self.version = version
        self.rules = []  # per buffer: 0, a width, "mdn" or "view"
        self.n_nodes = 0

    def node(self, field, as_dictionary_values=False):
        self.n_nodes += 1
        dic = field.get(4)
        if dic is not None and not as_dictionary_values:
            it = dic.get(1)
            bw = it.get(0, 32) if it is not None else 32
            self.rules += [0, bw // 8 if bw > 8 else 0]
            return  # the dictionary's children live in its own batches
        tag = field.get(2, 0)
        t = field.get(3)
        children = field.get(5, [])
        big = lambda: 8 if tag in (19, 20, 21, 26) else 4
        if tag == 1:
            pass
        elif tag in (2, 3, 6, 7, 8, 9, 10, 11, 15, 18):
            self.rules += [0, value_width(tag, t)]
        elif tag in (4, 5, 19, 20):
            self.rules += [0, big(), 0]
        elif tag in (23, 24):
            if not self.variadic:
                raise Bad("a view column without its variadicBufferCounts entry")
            self.rules += [0, "view"] + [0] * self.variadic.pop(0)
        elif tag in (12, 17, 21):
            self.rules += [0, big()]
        elif tag in (25, 26):
            self.rules += [0, big(), big()]
        elif tag in (13, 16):
            self.rules += [0]
        elif tag == 14:
            if self.version < 4:  # before V5 unions had a validity bitmap
                self.rules += [0]
            self.rules += [0]
            if t.get(0, 0) == 1:  # dense: int32 offsets
                self.rules += [4]
        elif tag == 22:
            pass  # run ends are the first child's integers
        else:
            raise Bad("type %s is not one this tool swaps" % TYPE_NAMES.get(tag, tag))
        for c in children:
            self.node(c)

    def apply(self, body):
        n_bufs = len(self.bufs) // 16
        if self.n_nodes != len(self.nodes) // 16 or len(self.rules) != n_bufs:
            raise Bad("schema gives %d nodes and %d buffers, the batch has %d and %d"
                      % (self.n_nodes, len(self.rules), len(self.nodes) // 16, n_bufs))
        for i, rule in enumerate(self.rules):
            off, length = struct.unpack_from("<qq", self.bufs, 16 * i)
            if off < 0 or length < 0 or off + length > len(body):
                raise Bad("buffer %d [%d, +%d) is outside the body" % (i, off, length))
            if rule == "view":
                swap_views(body, off, length)
            elif rule == "mdn":
                swap_mdn(body, off, length)
            elif rule:
                swap_words(body, off, length, rule)


def find_dictionary(fields, dict_id):
    for f in fields:
        d = f.get(4)
        if d is not None and d.get(0, 0) == dict_id:
            return f
        found = find_dictionary(f.get(5, []), dict_id)
        if found is not None:
            return found
    return None


def swap_body(m, schema):
    version = m.msg.get(0, 0)
    kind = m.msg.get(1, 0)
    header = m.msg.get(2)
    if kind == 3:
        rb, roots, as_values = header, schema.get(1, []), False
    else:
        rb = header.get(1)
        f = find_dictionary(schema.get(1, []), header.get(0, 0))
        if f is None:
            raise Bad("dictionary batch for id %d, which no field uses" % header.get(0, 0))
        roots, as_values = [f], True
    if rb.get(3) is not None:
        raise Bad("compressed bodies are not supported (decompress first)")
    w = Walk(rb, version)
    for f in roots:
        w.node(f, as_values)
    w.apply(m.body)


def to_big(data):
    is_file, msgs, footer = read_input(data)
    if not msgs or msgs[0].msg.get(1, 0) != 1:
        raise Bad("the first message is not a Schema")
    schema = msgs[0].msg.get(2)
    if schema.get(0, 0) != 0:
        raise Bad("the input is not little-endian")
    schema.set_scalar(0, "h", 1)  # Endianness.Big
    out = bytearray(b"ARROW1\0\0" if is_file else b"")
    blocks = {}  # input message index -> (offset, metadata length, body length)
    for i, m in enumerate(msgs):
        kind = m.msg.get(1, 0)
        if i == 0:
            meta = Writer().finish(m.msg)
        elif kind in (2, 3):
            swap_body(m, schema)
            meta = m.meta
        else:
            raise Bad("message %d: header type %d is not a batch" % (i, kind))
        framed = frame(meta, m.body)
        blocks[i] = (len(out), len(framed) - len(m.body), len(m.body))
        out += framed
    out += struct.pack("<Ii", CONTINUATION, 0)
    if is_file:
        # the footer's blocks point at the new offsets, in its own order
        dicts = [i for i, m in enumerate(msgs) if m.msg.get(1) == 2]
        batches = [i for i, m in enumerate(msgs) if m.msg.get(1) == 3]
        old = {m.offset: i for i, m in enumerate(msgs)}

        def remap(slot, expect):
            raw = footer.get(slot, b"")
            packed = b""
            for k in range(len(raw) // 24):
                off = struct.unpack_from("<q", raw, 24 * k)[0]
                i = old.get(off)
                if i is None or i not in expect:
                    raise Bad("footer block at %d matches no message" % off)
                o, mlen, blen = blocks[i]
                packed += struct.pack("<qi4xq", o, mlen, blen)
            if slot in footer.f:
                footer.f[slot] = (footer.f[slot][0], packed)

        remap(2, dicts)
        remap(3, batches)
        footer.get(1).set_scalar(0, "h", 1)
        fb = Writer().finish(footer)
        out += fb + struct.pack("<i", len(fb)) + MAGIC
    return bytes(out)


def same_buffers(a, b):
    """Differences between two big-endian inputs, as text lines."""
    fa, ma, _ = read_input(a)
    fb, mb, _ = read_input(b)
    diffs = []
    if fa != fb:
        diffs.append("one is a file, the other a stream")
    if len(ma) != len(mb):
        diffs.append("%d messages vs %d" % (len(ma), len(mb)))
    for i, (x, y) in enumerate(zip(ma, mb)):
        kx, ky = x.msg.get(1, 0), y.msg.get(1, 0)
        if kx != ky:
            diffs.append("message %d: header type %d vs %d" % (i, kx, ky))
            continue
        if kx == 1:
            ex, ey = x.msg.get(2).get(0, 0), y.msg.get(2).get(0, 0)
            if ex != 1 or ey != 1:
                diffs.append("schema endianness %d vs %d (want 1, Big)" % (ex, ey))
            continue
        hx, hy = x.msg.get(2), y.msg.get(2)
        if kx == 2:
            if hx.get(0, 0) != hy.get(0, 0) or hx.get(2, False) != hy.get(2, False):
                diffs.append("message %d: dictionary id/isDelta differ" % i)
            hx, hy = hx.get(1), hy.get(1)
        if hx.get(0, 0) != hy.get(0, 0):
            diffs.append("message %d: length %d vs %d" % (i, hx.get(0, 0), hy.get(0, 0)))
        if hx.get(1, b"") != hy.get(1, b""):
            diffs.append("message %d: field nodes differ" % i)
        bx, by = hx.get(2, b""), hy.get(2, b"")
        if len(bx) != len(by):
            diffs.append("message %d: %d buffers vs %d" % (i, len(bx) // 16, len(by) // 16))
            continue
        for k in range(len(bx) // 16):
            ox, lx = struct.unpack_from("<qq", bx, 16 * k)
            oy, ly = struct.unpack_from("<qq", by, 16 * k)
            if lx != ly or x.body[ox:ox + lx] != y.body[oy:oy + ly]:
                diffs.append("message %d: buffer %d differs (%d vs %d bytes)" % (i, k, lx, ly))
    return diffs


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == "to-big":
            with open(argv[2], "rb") as f:
                data = f.read()
            out = to_big(data)
            with open(argv[3], "wb") as f:
                f.write(out)
            return 0
        if len(argv) == 4 and argv[1] == "same-buffers":
            with open(argv[2], "rb") as f:
                a = f.read()
            with open(argv[3], "rb") as f:
                b = f.read()
            diffs = same_buffers(a, b)
            for d in diffs:
                print("arrow_swap: " + d)
            return 1 if diffs else 0
    except (Bad, OSError, KeyError, struct.error) as e:
        print("arrow_swap: %s" % e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
