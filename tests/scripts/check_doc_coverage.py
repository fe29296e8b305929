#!/usr/bin/env python3
"""Fails when a QV_API declaration in the given headers has no Doxygen
comment: a /** ... */ (or /*! ... */) block ending on the line right above
it (attributes and #if lines between are allowed), or a //!< / /**< after
it on its first line. A plain /* ... */ comment does not count: Doxygen
does not see it. Prints one line per undocumented declaration:
  header:line: name
Usage: check_doc_coverage.py HEADER..."""
import re
import sys

API = re.compile(r"^\s*QV_API\b")
NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def doc_above(lines, i):
    """Whether a Doxygen block ends directly above line i."""
    j = i - 1
    while j >= 0 and lines[j].strip().startswith(("#if", "#endif", "#else", "#elif")):
        j -= 1
    if j < 0 or not lines[j].rstrip().endswith("*/"):
        return False
    # find the start of that comment
    k = j
    while k >= 0 and "/*" not in lines[k]:
        k -= 1
    if k < 0:
        return False
    start = lines[k][lines[k].index("/*"):]
    return start.startswith(("/**", "/*!")) and not start.startswith("/**/")


def main(paths):
    missing = 0
    count = 0
    for path in paths:
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            if not API.match(line):
                continue
            count += 1
            if "/**<" in line or "//!<" in line or doc_above(lines, i):
                continue
            m = NAME.search(line.split("QV_API", 1)[1])
            print("%s:%d: %s" % (path, i + 1, m.group(1) if m else line.strip()))
            missing += 1
    if missing:
        print("%d of %d QV_API declarations have no Doxygen comment (/** ... */ above them)" % (missing, count))
        return 1
    print("ok: %d QV_API declarations, each with a Doxygen comment" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
