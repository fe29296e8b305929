"""Arrow's negative integration step: one value of each gold JSON changed.

    gold_change_value.py GOLD_DIR OUT_DIR

For every GOLD_DIR/GROUP/NAME.json.gz, writes OUT_DIR/GROUP__NAME.json with
one value changed and prints "GROUP/NAME WHAT" (WHAT says which value). The
value is one a reader must see: a valid slot reached from a valid top-level
row (through struct, list, map, list-view, union, run-end and dictionary
indirections), changed in place without changing any length (an integer's
lowest bit, a string's first ASCII character, a binary's first hex digit,
an inlined view's first byte), so
the JSON stays well formed and only its values differ. A case without such a
value (no batches, only nulls) gets its first field renamed instead.
"""
import glob
import gzip
import json
import math
import os
import sys


def changed(ftype, v):
    """v changed within its type's range and byte length, or None."""
    name = ftype["name"]
    if name in ("int", "time", "timestamp", "duration") or (
            name == "date" and ftype.get("unit") == "DAY"):
        # xor 1 keeps a two's complement value in range (the maxima are odd)
        return str(int(v) ^ 1) if isinstance(v, str) else v ^ 1
    if name == "interval":
        if isinstance(v, dict):  # DAY_TIME, MONTH_DAY_NANO: change its first part
            k = sorted(v)[0]
            return dict(v, **{k: changed({"name": "int"}, v[k])})
        return v ^ 1
    if name == "decimal":
        i = int(v)
        m = abs(i) ^ 1  # 10^p - 1 is odd: stays within the precision
        return str(-m if i < 0 else m)
    if name == "floatingpoint" and isinstance(v, (int, float)) and math.isfinite(v):
        return v + 1 + abs(v)
    if name == "bool":
        return not v
    if name in ("utf8", "largeutf8", "utf8view") and v and v[0].isascii():
        return ("a" if v[0] != "a" else "b") + v[1:]
    if name in ("binary", "largebinary", "fixedsizebinary", "binaryview") and v:
        return ("1" if v[0] != "1" else "0") + v[1:]
    return None


def valid(col, i):
    validity = col.get("VALIDITY")
    return validity is None or validity[i] == 1


class Case:
    def __init__(self, j):
        self.j = j
        self.dicts = {d["id"]: d["data"]["columns"][0] for d in j.get("dictionaries", [])}

    def change(self, field, col, refs, path):
        """Changes one value reached from slots `refs` of `col`; a description or None."""
        if "dictionary" in field:
            used = sorted({int(col["DATA"][i]) for i in refs if valid(col, i)})
            values = dict(field)
            del values["dictionary"]
            return self.change(values, self.dicts[field["dictionary"]["id"]], used,
                               path + " (dictionary %d)" % field["dictionary"]["id"])
        t = field["type"]
        name = t["name"]
        live = [i for i in refs if valid(col, i)]
        kids = field.get("children", [])
        sub = col.get("children", [])
        if "DATA" in col and name not in ("union", "runendencoded"):
            for i in live:
                v = changed(t, col["DATA"][i])
                if v is not None:
                    col["DATA"][i] = v
                    return "%s slot %d" % (path, i)
            return None
        if "VIEWS" in col:  # an inlined view's bytes (the others point into shared buffers)
            for i in live:
                view = col["VIEWS"][i]
                v = changed(t, view["INLINED"]) if "INLINED" in view else None
                if v is not None:
                    view["INLINED"] = v
                    return "%s slot %d" % (path, i)
            return None
        if name == "struct":
            child_refs = [live] * len(kids)
        elif name in ("list", "largelist", "map"):
            off = [int(o) for o in col["OFFSET"]]
            child_refs = [[k for i in live for k in range(off[i], off[i + 1])]]
        elif name in ("listview", "largelistview"):
            off, size = [int(o) for o in col["OFFSET"]], [int(s) for s in col["SIZE"]]
            child_refs = [[k for i in live for k in range(off[i], off[i] + size[i])]]
        elif name == "fixedsizelist":
            n = t["listSize"]
            child_refs = [[k for i in live for k in range(i * n, (i + 1) * n)]]
        elif name == "union":
            ids = t["typeIds"]
            child_refs = [[] for _ in kids]
            for i in refs:  # a union has no validity of its own
                c = ids.index(col["TYPE_ID"][i])
                child_refs[c].append(int(col["OFFSET"][i]) if "OFFSET" in col else i)
        elif name == "runendencoded":
            ends = [int(e) for e in sub[0]["DATA"]]
            start, runs = 0, []
            for k, e in enumerate(ends):
                if any(start <= i < e for i in refs):
                    runs.append(k)
                start = e
            child_refs = [[], runs]
        else:
            return None
        for k, (f, c) in enumerate(zip(kids, sub)):
            what = self.change(f, c, child_refs[k], "%s.%s" % (path, f["name"]))
            if what:
                return what
        return None

    def run(self):
        fields = self.j["schema"]["fields"]
        for b, batch in enumerate(self.j["batches"]):
            for f, col in zip(fields, batch["columns"]):
                what = self.change(f, col, list(range(batch["count"])),
                                   "batch %d field %s" % (b, f["name"]))
                if what:
                    return what
        if not fields:
            return None
        old = fields[0]["name"]
        fields[0]["name"] = old + "_changed"
        for batch in self.j["batches"]:
            batch["columns"][0]["name"] = old + "_changed"
        return "field 0 renamed from %s (no value to change)" % old


def main(gold, out):
    os.makedirs(out, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(gold, "*", "*.json.gz"))):
        group = os.path.basename(os.path.dirname(path))
        name = os.path.basename(path)[:-len(".json.gz")]
        with gzip.open(path, "rt") as f:
            j = json.load(f)
        what = Case(j).run()
        if what is None:
            print("%s/%s -" % (group, name))
            continue
        with open(os.path.join(out, "%s__%s.json" % (group, name)), "w") as f:
            json.dump(j, f)
        print("%s/%s %s" % (group, name, what))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
